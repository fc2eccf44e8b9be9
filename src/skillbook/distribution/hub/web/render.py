"""A skill's Markdown as HTML a registry page can show: rendered, then sanitised.

Input: Markdown text written by whoever published the skill (hostile until shown
otherwise) and :class:`Links`, which says where the skill's own files are served.
Output: an HTML fragment that holds only allowlisted elements and attributes.

Two layers, so that a mistake in one is caught by the other: markdown-it renders
CommonMark (tables, strikethrough; raw HTML passes through, as READMEs use a little of
it) and nh3 (ammonia) then keeps only the allowlist below. What never survives:
``script``, ``style``, ``iframe``, ``object``, ``embed``, ``form`` elements, inline
``svg`` and ``math`` (their whole content goes too), event and ``style`` attributes,
``id``/``name`` (DOM clobbering), and any URL but ``http``, ``https``, ``mailto`` and
paths inside the skill. Images load only from the skill's own files (through the
registry's file route); an image elsewhere becomes a plain link, so showing a page
never makes the reader's browser fetch from a host the skill chose.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote, unquote, urlencode, urlsplit

import nh3
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

__all__ = ["ALLOWED_TAGS", "Links", "render_markdown"]

ALLOWED_TAGS: Final = frozenset(
    {
        "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "details", "div", "dl",
        "dt", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li",
        "mark", "ol", "p", "pre", "q", "s", "samp", "small", "span", "strong", "sub",
        "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
    }
)  # fmt: skip

#: Elements removed with everything inside them (the rest lose only their tags).
_DROPPED_WITH_CONTENT: Final = frozenset(
    {
        "script", "style", "iframe", "frame", "frameset", "object", "embed", "svg", "math",
        "template", "noscript", "noembed", "noframes", "textarea", "title", "xmp", "select",
        "button", "form", "applet", "audio", "video", "canvas", "head",
    }
)  # fmt: skip

_ATTRIBUTES: Final = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title", "width", "height"},
    "abbr": {"title"},
    "ol": {"start"},
    "td": {"align", "colspan", "rowspan"},
    "th": {"align", "colspan", "rowspan"},
    "details": {"open"},
}

_SCHEMES: Final = frozenset({"http", "https", "mailto"})

#: Image types a browser shows in ``<img>`` (an SVG there runs no script).
_IMAGE_SUFFIXES: Final = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".avif", ".svg", ".bmp")


@dataclass(frozen=True, slots=True)
class Links:
    """Where the files of the version being shown are served.

    ``files`` are the version's paths; a relative link to one of them opens the
    file viewer, a relative image loads the file itself.
    """

    slug: str
    version: str
    files: frozenset[str] = frozenset()

    def viewer(self, path: str) -> str:
        query = urlencode({"version": self.version})
        return f"/skills/{quote(self.slug)}/files/{quote(path)}?{query}"

    def raw(self, path: str) -> str:
        query = urlencode({"path": path, "version": self.version})
        return f"/api/v1/skills/{quote(self.slug)}/file?{query}"

    def inside(self, url: str) -> str | None:
        """The skill file a relative ``url`` names (from ``SKILL.md`` at the root), or None."""
        parts = urlsplit(url)
        if parts.scheme or parts.netloc or not parts.path or url.startswith(("/", "\\")):
            return None
        path = posixpath.normpath(unquote(parts.path))
        if path.startswith("../") or path in ("..", "."):
            return None
        return path if path in self.files else None


def _url_filter(links: Links | None) -> nh3.Cleaner:
    def allowed(element: str, attribute: str, value: str) -> str | None:
        # Called for every kept attribute; a URL is decided here, whatever it looks like.
        if element == "a" and attribute == "href":
            return _href(value, links)
        if element == "img" and attribute == "src":
            inside = links.inside(value) if links is not None else None
            if inside is None or not inside.lower().endswith(_IMAGE_SUFFIXES):
                return None
            return links.raw(inside) if links is not None else None
        return value

    return nh3.Cleaner(
        tags=set(ALLOWED_TAGS),
        clean_content_tags=set(_DROPPED_WITH_CONTENT),
        attributes={k: set(v) for k, v in _ATTRIBUTES.items()},
        attribute_filter=allowed,
        url_schemes=set(_SCHEMES),
        link_rel="nofollow noopener noreferrer",
        strip_comments=True,
    )


def _href(value: str, links: Links | None) -> str | None:
    url = value.strip()
    if url.startswith("#"):
        return url
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme in _SCHEMES and (scheme == "mailto" or parts.netloc):
        return url
    if scheme or url.startswith(("//", "\\", "/")):
        # Other schemes, and links that leave the skill's pages (protocol-relative,
        # site-absolute): not something a skill decides for the registry's pages.
        return None
    inside = links.inside(url) if links is not None else None
    if links is None or inside is None:
        return None
    return links.viewer(inside) + (f"#{parts.fragment}" if parts.fragment else "")


def _image_as_link(
    self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    """A Markdown image: shown when it is one of the skill's files, else a link to it."""
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = self.renderInlineAsText(token.children or [], options, env)
    links: Links | None = env.get("links")
    inside = links.inside(src) if links is not None else None
    if inside is not None and inside.lower().endswith(_IMAGE_SUFFIXES):
        return f'<img src="{_attr(src)}" alt="{_attr(alt)}">'
    label = _attr(alt or src)
    return f'<a href="{_attr(src)}">image: {label}</a>'


def _heading(
    self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    """A heading moved down ``env["heading_offset"]`` levels: the page has its own."""
    token = tokens[idx]
    level = min(6, int(token.tag[1]) + int(env.get("heading_offset", 0)))
    token.tag = f"h{level}"
    return self.renderToken(tokens, idx, options, env)


def _attr(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")
    )


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.add_render_rule("image", _image_as_link)
    md.add_render_rule("heading_open", _heading)
    md.add_render_rule("heading_close", _heading)
    return md


_MD: Final = _parser()


def render_markdown(text: str, links: Links | None = None, *, heading_offset: int = 0) -> str:
    """``text`` as sanitised HTML; relative links resolve against ``links``' files, and
    headings move down ``heading_offset`` levels (at most to ``h6``)."""
    html = _MD.render(text, {"links": links, "heading_offset": heading_offset})
    return _url_filter(links).clean(html)
