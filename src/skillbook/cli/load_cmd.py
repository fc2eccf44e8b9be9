"""``skillbook load NAME...|--all``: copy bundled or managed skills into the workspace."""

from __future__ import annotations

import sys

import click

from skillbook.cli.context import (
    ERR_PATH,
    ERR_SKILL,
    ERR_USAGE,
    EXIT_FINDINGS,
    EXIT_OK,
    Context,
    emit_json,
    emit_lines,
    error_code,
    fail,
)
from skillbook.distribution.sync import SyncError
from skillbook.distribution.sync.load import LOAD_SOURCES, LoadOutcome, load_skills
from skillbook.errors import SkillNotFound
from skillbook.model import Source

_FROM = {
    "any": LOAD_SOURCES,
    "bundled": (Source.BUNDLED.value,),
    "managed": (Source.MANAGED.value,),
}
_SOURCE_WORD = {Source.BUNDLED.value: "bundled", Source.MANAGED.value: "managed"}


EXAMPLES = """\b
Examples:
  skillbook load weather
      copy the bundled weather skill into skills/weather to edit it
  skillbook load --all --from bundled
      every bundled skill (copies you edited are left alone)"""


@click.command("load", epilog=EXAMPLES)
@click.argument("names", nargs=-1, metavar="NAME...")
@click.option("--all", "load_all", is_flag=True, help="Load every bundled and managed skill.")
@click.option(
    "--force", is_flag=True, help="Overwrite copies you edited (your changes are discarded)."
)
@click.option(
    "--from",
    "from_",
    type=click.Choice(tuple(_FROM)),
    default="any",
    show_default=True,
    help="Where to copy from (any: managed, then bundled).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the outcomes as JSON.")
@click.pass_obj
def load_cmd(
    obj: Context, names: tuple[str, ...], load_all: bool, force: bool, from_: str, as_json: bool
) -> None:
    """Copy bundled or managed skills into WORKSPACE/skills so you can edit them.

    The copy shadows the original. A copy you have not edited is refreshed when the
    original changes; an edited one is left alone (exit 1) unless --force.
    """
    if not names and not load_all:
        fail("Provide a skill name or use --all.", error=ERR_USAGE)
    if names and load_all:
        fail("Use either skill names or --all.", error=ERR_USAGE)
    book = obj.book()
    try:
        outcomes = load_skills(book, list(names) or None, force=force, sources=_FROM[from_])
    except SkillNotFound as exc:
        which = from_ if from_ != "any" else "bundled or managed"
        fail(f'no {which} skill "{exc.name}"', error=ERR_SKILL)
    except SyncError as exc:
        fail(str(exc), error=error_code(exc))
    except OSError as exc:
        fail(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "), error=ERR_PATH)
    if as_json:
        emit_json({"skills": [o.to_json() for o in outcomes]})
    elif not outcomes:
        emit_lines(["No bundled or managed skills to load."])
    else:
        emit_lines([_line(o) for o in outcomes])
    sys.exit(EXIT_OK if all(o.ok for o in outcomes) else EXIT_FINDINGS)


def _line(o: LoadOutcome) -> str:
    where = f"skills/{o.folder.name}"
    origin = _SOURCE_WORD.get(o.source, o.source)
    changed = ", ".join(o.changed)
    if o.action == "loaded":
        return f"✓ {o.name}: loaded into {where} (from {origin})"
    if o.action == "refreshed":
        return f"✓ {o.name}: refreshed {where} (the {origin} original changed; your copy was not edited)"
    if o.action == "unchanged":
        return f"= {o.name}: {where} is up to date"
    if o.action == "replaced":
        return f"! {o.name}: replaced {where}; discarded your changes to {changed}"
    return (
        f"✗ {o.name}: {where} was edited ({changed}); not overwritten. Use --force to replace it."
    )
