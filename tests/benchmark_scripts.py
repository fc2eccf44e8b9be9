"""The scripts of ``benchmarks/`` as modules, for the tests that check what they measure.

The scripts are not a package (each runs as ``python benchmarks/<name>.py``), so a test
loads one by path. The module is registered under its name before it runs, because
dataclasses (and pickling) look their module up in ``sys.modules``; the ``benchmarks``
folder goes on ``sys.path``, because the scripts import their helpers
(``corpus_skills``) as top-level modules, as they do when run.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def benchmark_script(name: str) -> ModuleType:
    """``benchmarks/<name>.py``, loaded once per process."""
    loaded = sys.modules.get(name)
    if loaded is not None and getattr(loaded, "__file__", None) == str(BENCHMARKS / f"{name}.py"):
        return loaded
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
