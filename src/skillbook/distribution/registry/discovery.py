"""A registry's API base from its site's ``/.well-known/clawhub.json`` (clawhub-api.md §1.3).

Input: a site URL (``--site``, ``CLAWHUB_SITE``, ``CLAWDHUB_SITE``). Output: a
:class:`Discovered` (``apiBase``, or the legacy ``registry``; ``authBase`` and
``minCliVersion`` when sent), or None: as the ``clawhub`` CLI does, ``GET
<site>/.well-known/clawhub.json`` then ``…/clawdhub.json`` with ``Accept:
application/json``; a non-2xx answer moves on to the next, and a document that is not
``{"apiBase": string, …}`` or ``{"registry": string, …}`` counts as none (the caller
moves on to the next source of the base URL). Never retried: discovery is a hint.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from skillbook.distribution.registry import RegistryError
from skillbook.distribution.registry.endpoint import normalize_base_url

if TYPE_CHECKING:
    import httpx

__all__ = ["WELL_KNOWN", "Discovered", "discover"]

WELL_KNOWN: Final = ("/.well-known/clawhub.json", "/.well-known/clawdhub.json")
_MAX_BYTES: Final = 64 * 1024


@dataclass(frozen=True, slots=True)
class Discovered:
    api_base: str
    #: The document it came from (for ``registryReason``).
    url: str
    auth_base: str | None = None
    min_cli_version: str | None = None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def discover(site: str, http: httpx.Client, *, timeout: float = 15.0) -> Discovered | None:
    """The site's discovery document, or None (see the module docstring)."""
    import httpx

    base = normalize_base_url(site)
    for path in WELL_KNOWN:
        url = base + path
        try:
            response = http.get(url, headers={"Accept": "application/json"}, timeout=timeout)
        except httpx.HTTPError:
            continue
        if not response.is_success:
            continue
        try:
            raw = json.loads(response.content[:_MAX_BYTES].decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return None
        if not isinstance(raw, dict):
            return None
        api = _text(raw.get("apiBase")) or _text(raw.get("registry"))
        if api is None:
            return None
        try:
            api = normalize_base_url(api)
        except RegistryError:
            return None
        return Discovered(api, url, _text(raw.get("authBase")), _text(raw.get("minCliVersion")))
    return None
