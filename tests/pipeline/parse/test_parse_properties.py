"""Property tests for skillbook.pipeline.parse.skill_file: total, deterministic, line-ending blind."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillbook.model import ParsedSkillFile
from skillbook.pipeline.parse.skill_file import parse_skill_text

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Pieces that make YAML and the line parser work hard: indicators, quotes, block
# scalars, flow brackets, anchors, tabs, odd line breaks and control characters.
_TOKENS = [
    "name",
    "description",
    "metadata",
    "user-invocable",
    "command-dispatch",
    "command-tool",
    ": ",
    ":",
    "- ",
    "-\t",
    "? ",
    "|",
    "|-",
    ">",
    '"',
    "'",
    "[",
    "]",
    "{",
    "}",
    ",",
    "#",
    " #",
    "&a ",
    "*a",
    "!!str ",
    "!",
    "  ",
    "\t",
    "\n",
    "\n  ",
    "\n---",
    "...",
    "yes",
    "true",
    "null",
    "~",
    "1.0",
    "0x1F",
    ".inf",
    '{"openclaw": {"emoji": "x", "install": [{"kind": "brew", "formula": "jq"}]}}',
    "{openclaw: {requires: {bins: 'a, b'}}}",
    "tool",
    "é",
    "🎨",
    "\u2028",
    "\x85",
    "\x07",
    "\ufeff",
]

frontmatter_texts = st.builds(
    lambda parts, body: "---\n" + "".join(parts) + "\n---\n" + body,
    st.lists(st.one_of(st.sampled_from(_TOKENS), st.text(max_size=8)), max_size=40),
    st.text(max_size=20),
)
any_text = st.one_of(st.text(), frontmatter_texts)


@SETTINGS
@given(any_text)
def test_never_raises_on_text(text: str) -> None:
    parsed = parse_skill_text(text)
    assert isinstance(parsed, ParsedSkillFile)
    assert all(
        isinstance(k, str) and isinstance(v, str) for k, v in parsed.frontmatter.values.items()
    )


@SETTINGS
@given(st.one_of(st.binary(), frontmatter_texts.map(lambda t: t.encode("utf-8", "surrogatepass"))))
def test_never_raises_on_bytes(data: bytes) -> None:
    assert isinstance(parse_skill_text(data), ParsedSkillFile)


@SETTINGS
@given(st.lists(st.sampled_from(["\x80", "\xff", "\xc3", "\x00", "a", "\n", "---\n"]), max_size=30))
def test_never_raises_on_broken_utf8(parts: list[str]) -> None:
    data = "".join(parts).encode("latin-1")
    assert isinstance(parse_skill_text(data), ParsedSkillFile)


def _observable(parsed: ParsedSkillFile) -> tuple[object, ...]:
    return (
        dict(parsed.frontmatter.values),
        parsed.frontmatter.yaml_ok,
        parsed.metadata.to_json() if parsed.metadata is not None else None,
        parsed.invocation,
        parsed.dispatch,
        parsed.body,
        parsed.has_frontmatter,
        [(d.code, d.line) for d in parsed.diagnostics],
    )


@SETTINGS
@given(any_text.map(lambda t: t.replace("\r", "")))
def test_crlf_and_lf_give_the_same_result(text: str) -> None:
    lf = parse_skill_text(text)
    crlf = parse_skill_text(text.replace("\n", "\r\n"))
    assert repr(_observable(lf)) == repr(_observable(crlf))
    assert dict(lf.frontmatter.lines) == dict(crlf.frontmatter.lines)


@SETTINGS
@given(any_text)
def test_parsing_is_deterministic(text: str) -> None:
    # repr() so that NaN values (`.nan`) compare equal to themselves.
    assert repr(parse_skill_text(text)) == repr(parse_skill_text(text))


@SETTINGS
@given(frontmatter_texts)
def test_text_and_its_utf8_bytes_agree(text: str) -> None:
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        return
    assert repr(parse_skill_text(text)) == repr(parse_skill_text(data))
