"""``skillbook select`` on an unchanged catalog: a saved selector, no build.

A ``select`` process used to load the book, build every skill's document, tokenize
the catalog for BM25, read the embedding index and load both models (about 3 s of
CPU on 1,000 skills) to rank one request. :mod:`skillbook.cli.entry` sends a
``select`` call whose options this module understands (:func:`select_call`) here
first: when a selector saved by an earlier run of the same command line
(:mod:`skillbook.selection.saved`) still has its footprint
(:func:`skillbook.pipeline.cache.footprint.still_valid`: every skill file, folder,
config file, variable, binary lookup, model file and module file the build read is
unchanged), it ranks with that selector and prints through the same code as the
command (:mod:`skillbook.cli.select_output`). Otherwise the command runs as always,
recorded, and its selectors are saved for the next call (:func:`run_recorded`).

Imports only what ranking needs, never click or the pipeline's loader: a catalog of
up to :data:`~skillbook.selection.plain.PLAIN_MAX` skills is ranked without numpy
(:mod:`skillbook.selection.plain`), a larger one (or a request the plain path does
not settle) by the restored numpy selector.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any


__all__ = ["Call", "answer", "run_recorded", "select_call"]

#: Global options (before ``select``) that take a value.
GLOBAL_VALUES = frozenset(
    {"--workspace", "-w", "--config", "-c", "--agent", "-a", "--mode", "--compat", "--color"}
)
BACKENDS = ("hybrid", "bm25", "embedding")
_KEY_PREFIX = "skillbook-select"


class Call:
    """A ``select`` command line this module understands."""

    __slots__ = ("as_json", "backend", "color", "include_ineligible", "key_args", "request", "top")

    def __init__(self) -> None:
        self.request = ""
        self.top: int | None = None
        self.backend: str | None = None
        self.include_ineligible = False
        self.as_json = False
        self.color = "auto"
        #: The arguments with the request left out: what a saved selector answers.
        self.key_args: list[str] = []


def select_call(args: Sequence[str]) -> Call | None:
    """``args`` parsed when they are ``[global options] select [options] REQUEST``
    with options this module knows, else None (click handles the rest)."""
    call = Call()
    i = 0
    while i < len(args) and args[i] != "select":
        name, eq, value = args[i].partition("=")
        if name not in GLOBAL_VALUES or (eq and not name.startswith("--")):
            return None
        if not eq:
            i += 1
            if i >= len(args):
                return None
            value = args[i]
        if name == "--color":
            call.color = value
        call.key_args += [name, value]
        i += 1
    if i >= len(args):
        return None
    call.key_args.append("select")
    requests: list[str] = []
    i += 1
    while i < len(args):
        arg = args[i]
        name, eq, value = arg.partition("=")
        if name in ("--top", "-k", "--backend"):
            if eq and name == "-k":
                return None
            if not eq:
                i += 1
                if i >= len(args):
                    return None
                value = args[i]
            if name == "--backend":
                if value not in BACKENDS:
                    return None
                call.backend = value
            else:
                if not value.isascii() or not value.isdigit() or not 1 <= int(value) <= 100:
                    return None
                call.top = int(value)
            call.key_args += [name, value]
        elif arg == "--include-ineligible":
            call.include_ineligible = True
            call.key_args.append(arg)
        elif arg == "--json":
            call.as_json = True
        elif arg.startswith("-") or requests:
            return None  # another option, "--", or a second argument: click decides
        else:
            requests.append(arg)
        i += 1
    if len(requests) != 1 or call.color not in ("auto", "always", "never"):
        return None
    call.request = requests[0]
    return call


def invocation_key(call: Call, cwd: str) -> str:
    return "\0".join([_KEY_PREFIX, cwd, *call.key_args])


# --------------------------------------------------------------------------- the fast path


def answer(call: Call, results: str, cwd: str, env: Mapping[str, str]) -> bool:
    """Print the ranking from a saved selector when its footprint holds; False when
    there is none to use (nothing is printed then)."""
    from skillbook.pipeline.cache import footprint
    from skillbook.selection import saved

    key = invocation_key(call, cwd)
    found = saved.read_header(saved.selector_file(results, key), key)
    if found is None:
        return False
    header, data, start = found
    if not footprint.still_valid(header.get("record") or {}, env):
        return False
    from skillbook.selection._blas import start_single_threaded

    start_single_threaded()  # before numpy's import: half of its CPU was BLAS threads
    try:
        output = _ranked(call, header, data, start, results)
    except Exception:  # a damaged saved file must never stop the command: rebuild
        return False
    if output is None:
        return False
    from skillbook.cli.select_output import write

    write(output, call.color)
    return True


def _ranked(
    call: Call, header: dict[str, Any], data: Any, start: int, results: str
) -> dict[str, Any] | list[str] | None:
    from skillbook.selection import plain

    if len(header.get("names", ())) <= plain.PLAIN_MAX:
        loaded = plain.load(header, data, start)
        if loaded is not None:
            try:
                return _output(call, loaded)
            except plain.Unsupported:
                pass  # a request the plain path does not settle: numpy ranks it
    from skillbook.selection import saved

    numpy_loaded = saved.load(header, data, start, weights_cache=saved.model_cache(results))
    if numpy_loaded is None:
        return None
    return _output(call, numpy_loaded)


def _output(call: Call, loaded: Any) -> dict[str, Any] | list[str]:
    """The ranking of ``call`` by a saved file's selectors (plain or numpy ones)."""
    from skillbook.cli.select_output import render
    from skillbook.selection import saved

    extra = loaded.extra
    selector = loaded.selectors["selector"]
    why = {w["name"]: _Why(w) for w in extra["why"]}
    eligible = loaded.groups["eligible"]
    selection = selector.select(call.request, top_k=call.top)
    limit = call.top or _top_k(selector)
    blocked: list[tuple[float, Any]] = []
    if call.include_ineligible:
        blocked = _matching(selection, eligible, why, limit)
    elif why:
        wide = loaded.selectors["everyone"].select(call.request, top_k=call.top)
        blocked = _matching(wide, eligible, why, limit)
    problems = [saved.diagnostic(d) for d in extra["problems"]]
    return render(
        call.request,
        selection,
        channels=selector.channels,
        default_top=_top_k(selector),
        top=call.top,
        why=why,  # type: ignore[arg-type]
        blocked=blocked,
        diagnostics=[*problems, *_diagnostics(selector)],
        include_ineligible=call.include_ineligible,
        as_json=call.as_json,
    )


def _top_k(selector: Any) -> int:
    settings = getattr(selector, "settings", None)
    return int(settings.top_k if settings is not None else selector.top_k)


def _diagnostics(selector: Any) -> list[Any]:
    from skillbook.selection import saved

    found = selector.diagnostics
    return [saved.diagnostic(d) if isinstance(d, dict) else d for d in found]


def _matching(
    selection: Any, eligible: Sequence[Any], why: dict[str, Any], top_k: int
) -> list[tuple[float, Any]]:
    """:func:`skillbook.selection.eligibility.matching_ineligible` (whose module
    imports ``dataclasses``, more CPU than this ranking's arithmetic)."""
    ok = {id(s) for s in eligible}
    return [
        (c.score, why[c.name])
        for c in selection.ranked[:top_k]
        if c.score >= selection.threshold and id(c.skill) not in ok and c.name in why
    ]


class _Why:
    """A saved :class:`~skillbook.selection.eligibility.NotEligible`: what the output uses."""

    __slots__ = ("_json", "name", "reasons", "status")

    def __init__(self, saved: dict[str, Any]) -> None:
        self._json = saved
        self.name = str(saved["name"])
        self.status = str(saved["status"])
        self.reasons = tuple(str(r) for r in saved["reasons"])

    def to_json(self) -> dict[str, Any]:
        return dict(self._json)


# --------------------------------------------------------------------------- recording


def run_recorded(call: Call, args: list[str], results: str, cwd: str) -> None:
    """Run the command line as always, recorded; save its selectors when it succeeds."""
    from skillbook.cli.app import main as run
    from skillbook.pipeline.cache import footprint

    with footprint.recording() as fp:
        try:
            run(args)
        except SystemExit as exc:
            if exc.code in (None, 0):
                _keep(call, fp, results, cwd)
            raise
        _keep(call, fp, results, cwd)


def _keep(call: Call, fp: footprint.Footprint, results: str, cwd: str) -> None:
    from skillbook.cli.select_output import offered

    if not offered:
        return
    selector, everyone, eligible, why, problems = offered
    offered.clear()
    from skillbook.selection import saved

    roles = {"selector": selector}
    if everyone is not None:
        roles["everyone"] = everyone
    if not all(saved.saveable(s) for s in roles.values()):
        return
    record = fp.record()
    if record is None:
        return
    key = invocation_key(call, cwd)
    saved.save(
        saved.selector_file(results, key),
        key,
        roles,
        {
            "why": [w.to_json() for w in why.values()],
            "problems": [d.to_dict() for d in problems],
        },
        record,
        groups={"eligible": eligible},
        models=saved.model_cache(results),
    )


if TYPE_CHECKING:
    from skillbook.pipeline.cache import footprint
