"""No function of the core is ranked above C on radon's cyclomatic-complexity scale.

The core is what every other part stands on: ``base``, ``config``, ``pipeline`` and the
three shared modules (``errors``, ``diagnostics``, ``model``). Issue 19 cut its D-F
functions into named steps; this keeps new ones from growing back. Ranks as radon's
``cc`` command gives them (A 1-5, B 6-10, C 11-20, D 21-30, E 31-40, F 41+);
functions, methods and nested functions are all checked.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from radon.complexity import cc_rank, cc_visit
from radon.visitors import Class, Function

import skillbook

PACKAGE = Path(skillbook.__file__).resolve().parent
CORE = ("base", "config", "pipeline", "errors.py", "diagnostics.py", "model.py")
#: The worst rank allowed.
WORST = "C"


def core_files() -> list[Path]:
    files: list[Path] = []
    for name in CORE:
        part = PACKAGE / name
        files += sorted(part.rglob("*.py")) if part.is_dir() else [part]
    return files


def _functions(blocks: list[Function | Class]) -> Iterator[Function]:
    for block in blocks:
        if isinstance(block, Class):
            yield from _functions(list(block.methods) + list(block.inner_classes))
        else:
            yield block
            yield from _functions(list(block.closures))


def too_complex(source: str) -> list[str]:
    """``name (rank complexity) line N`` for every function of ``source`` above C."""
    # cc_visit lists a class's methods both on their own and under the class: once each.
    functions = {(f.lineno, f.fullname): f for f in _functions(cc_visit(source))}
    return [
        f"{f.fullname} ({cc_rank(f.complexity)} {f.complexity}) line {f.lineno}"
        for _, f in sorted(functions.items())
        if cc_rank(f.complexity) > WORST
    ]


def test_the_core_is_where_it_is_looked_for() -> None:
    files = core_files()
    assert all(f.is_file() for f in files)
    assert PACKAGE / "pipeline" / "parse" / "yaml_core.py" in files
    assert len(files) > 50


def test_no_core_function_is_ranked_above_c() -> None:
    found = [
        f"{path.relative_to(PACKAGE.parent)}: {item}"
        for path in core_files()
        for item in too_complex(path.read_text(encoding="utf-8"))
    ]
    assert not found, (
        "functions above complexity C (radon cc); cut them into named steps:\n  "
        + "\n  ".join(found)
    )


def test_the_check_sees_methods_and_nested_functions() -> None:
    # 21 branches: complexity 22 (D); 19 branches: 20, still C.
    branches = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(21))
    source = (
        f"def plain(x):\n{branches}"
        f"class Holder:\n    def method(self, x):\n{_indent(branches)}"
        "    class Inner:\n"
        f"        def deep(self, x):\n{_indent(_indent(branches))}"
        f"def outer():\n    def inner(x):\n{_indent(branches)}    return inner\n"
        f"def fine(x):\n{branches[: branches.index('    if x == 19')]}"
    )
    lines = source.splitlines()

    def line_of(text: str) -> int:
        return next(n for n, line in enumerate(lines, 1) if line.strip().startswith(text))

    assert too_complex(source) == [
        "plain (D 22) line 1",
        f"Holder.method (D 22) line {line_of('def method')}",
        f"Inner.deep (D 22) line {line_of('def deep')}",
        f"inner (D 22) line {line_of('def inner')}",
    ]


def _indent(text: str) -> str:
    return "".join("    " + line + "\n" for line in text.splitlines())
