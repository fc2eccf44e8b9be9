"""``skillbook usage``: how often each skill was read and run, stale skills, and pins.

Counts come from recorded sessions (``<state dir>/experience/usage.json``). A skill
unused for ``skills.experience.staleAfterDays`` days is stale (``skillbook check``
reports it too); a pinned skill never is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from skillbook.cli.context import Context, emit_json, emit_lines
from skillbook.cli.render import clean
from skillbook.experience.engine import Experience

if TYPE_CHECKING:
    from skillbook.experience.usage import StaleSkill
    from skillbook.pipeline.book import SkillBook


@click.command("usage")
@click.option(
    "--json", "as_json", is_flag=True, help="Print counters, pins and stale skills as JSON."
)
@click.option(
    "--pin", "pin", metavar="NAME", multiple=True, help="Pin a skill: never report it as stale."
)
@click.option("--unpin", "unpin", metavar="NAME", multiple=True, help="Remove a pin.")
@click.pass_obj
def usage_cmd(obj: Context, as_json: bool, pin: tuple[str, ...], unpin: tuple[str, ...]) -> None:
    """Show how often each skill was read and run, and which are stale; pin skills."""
    exp = Experience(obj.book())
    for name in pin:
        exp.usage.pin(name)
    for name in unpin:
        exp.usage.pin(name, on=False)
    report = exp.usage.load()
    stale = exp.stale()
    pinned = sorted({*report.pinned, *exp.config.pinned})
    if as_json:
        emit_json({**report.to_json(), "pinned": pinned, "stale": [s.to_json() for s in stale]})
        return
    lines = [f"Usage since {report.since or '(no session recorded yet)'}"]
    for name, used in sorted(
        report.skills.items(), key=lambda kv: (-kv[1].reads - kv[1].runs, kv[0])
    ):
        lines.append(
            clean(
                f"  {name}: read {used.reads}×, ran {used.runs}×, last used {used.last_used or '-'}"
            )
        )
    if pinned:
        lines.append("Pinned: " + ", ".join(pinned))
    if stale:
        days = exp.config.stale_after_days
        lines.append(f"Stale (unused for {days} days or more):")
        lines += [clean(f"  {s.name} ({s.idle_days} days)") for s in stale]
    emit_lines(lines)


def stale_section(book: SkillBook) -> tuple[list[StaleSkill], list[str]]:
    """``skillbook check``'s stale skills: the values, and the lines of its text section."""
    exp = Experience(book)
    stale = exp.stale()
    if not stale:
        return stale, []
    days = exp.config.stale_after_days
    lines = [
        "",
        f"Not used for {days} days or more (stale; `skillbook usage --pin NAME` keeps one):",
    ]
    lines += [clean(f"  {s.name} ({s.idle_days} days, {s.source})") for s in stale]
    return stale, lines
