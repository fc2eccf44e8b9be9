"""A small world for the result cache: a workspace, a config, a private PATH and state
dir, and ``skillbook prompt`` run through the real entry point in this process.

Changes made by a test get a unique past modification time (:meth:`World.bump`):
after a real build, anything that changes later has a timestamp at least
:data:`~skillbook.pipeline.cache.footprint.RACY_NS` newer than the one recorded; tests make that
true without sleeping, and turn the racy rule off for files they have just written.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

from factories import isolated_env, stub_bins, write_file, write_skill

from skillbook.cli import entry
from skillbook.pipeline.cache import result_store

_TIMES = itertools.count(1_600_000_000_000_000_000, 1_000_000_000)
BINS_META = 'metadata: {"openclaw": {"requires": {"bins": ["tool"]}}}'
ENV_META = 'metadata: {"openclaw": {"requires": {"env": ["FOO"]}}}'


@dataclass
class World:
    base: Path
    env: dict[str, str] = field(default_factory=dict)
    #: ``--compat`` of every run (None: the default profile).
    compat: str | None = None

    @property
    def ws(self) -> Path:
        return self.base / "ws"

    @property
    def skills(self) -> Path:
        return self.ws / "skills"

    @property
    def config(self) -> Path:
        return self.base / "openclaw.json"

    @property
    def bin(self) -> Path:
        return self.base / "bin"

    @classmethod
    def make(cls, base: Path, compat: str | None = None) -> World:
        world = cls(base, compat=compat)
        world.env = isolated_env(base, path=str(world.bin), LANG="C.UTF-8")
        (base / "home").mkdir(parents=True, exist_ok=True)
        stub_bins(world.bin, ["other"])
        write_skill(world.skills / "alpha", description="Alpha does a.")
        write_skill(world.skills / "beta", description="Beta needs tool.", raw=BINS_META)
        write_skill(world.skills / "gamma", description="Gamma needs FOO.", raw=ENV_META)
        write_file(world.config, "{}\n")
        world.bump(*world.base.rglob("*"), world.base)
        return world

    def args(self, *extra: str) -> list[str]:
        compat = ["--compat", self.compat] if self.compat else []
        return [*compat, "-w", str(self.ws), "-c", str(self.config), "prompt", *extra]

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        """This world's environment and working folder, restored afterwards."""
        before = os.getcwd()
        with mock.patch.dict(os.environ, self.env, clear=True):
            os.chdir(self.base)
            try:
                yield
            finally:
                os.chdir(before)

    def run(self, *args: str) -> str:
        """``skillbook <args>`` through :func:`skillbook.cli.entry.main`; its stdout."""
        out = io.StringIO()
        with self.active(), contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            entry.main(list(args))
        return out.getvalue()

    def prompt(self, *extra: str) -> str:
        return self.run(*self.args(*extra))

    def fresh(self, *extra: str) -> str:
        """The prompt of a build that reuses nothing (``--no-cache``)."""
        return self.run(*self.args("--no-cache", *extra))

    def cached(self, *extra: str) -> str | None:
        """What the fast path would print now, or None when it would not answer."""
        with self.active():
            folder = result_store.results_folder(os.environ)
            assert folder is not None
            key = result_store.invocation_key(self.args(*extra), os.getcwd())
            return entry.cached_output(folder, key, os.environ)

    def stored(self) -> list[Path]:
        return sorted((self.base / "state" / "cache" / "results").glob("*.result"))

    def bump_alone(self, path: Path) -> None:
        """A unique modification time for ``path`` only: an edit in place leaves its
        folder as it was."""
        t = next(_TIMES)
        os.utime(path, ns=(t, t))

    def bump(self, *paths: Path) -> None:
        """Give each path (and its folder) a modification time no other change had."""
        for path in paths:
            for target in (path, path.parent):
                if os.path.lexists(target) and not os.path.islink(target):
                    t = next(_TIMES)
                    os.utime(target, ns=(t, t))


def fake_module(path: Path) -> contextlib.AbstractContextManager[object]:
    """A module loaded from ``path`` while the block runs (a stand-in for a source file)."""
    module = type(sys)("skillbook_fake_module_for_tests")
    module.__file__ = str(path)
    return mock.patch.dict(sys.modules, {module.__name__: module})
