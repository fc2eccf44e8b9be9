"""Change notifications of ``skillbook serve``: watching the served skills, telling clients.

Input: the server's :class:`~skillbook.mcp._catalog.SkillCatalog` (its session's
version bumps and watcher) and the served states it builds. Output: ``resources`` and
``prompts`` list-changed and ``resources/updated`` events on the subscription bus
(``subscriptions/listen`` streams, protocol 2026-07-28), the same list changes on every
remembered handshake-era session, and the rescans that keep the served state fresh
while the server runs. Mixed into :class:`~skillbook.mcp.server.SkillServer`; it never
answers a request itself.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
)

from skillbook.mcp._catalog import ServedState, SkillCatalog
from skillbook.mcp._wire import Views, is_modern

_log = logging.getLogger("skillbook.mcp")

#: Handshake-era sessions remembered for list-changed notifications (oldest dropped).
DEFAULT_MAX_LEGACY_SESSIONS = 256
#: How long start-up waits for the skill watcher to be armed.
WATCH_READY_TIMEOUT_S = 5.0


class ChangeNotifier:
    """The change notifier of a server (see the module docstring).

    The server sets these attributes in its ``__init__`` and provides :meth:`state`
    and :meth:`_views`."""

    catalog: SkillCatalog
    bus: InMemorySubscriptionBus
    instructions: str | None
    _owns_session: bool
    _legacy: list[Any]
    _wake: anyio.Event | None
    _notifying: bool
    _refreshing: bool
    _asked: bool

    if TYPE_CHECKING:  # provided by the server class

        async def state(self, max_age_s: float | None = None) -> ServedState: ...

        def _views(self, state: ServedState) -> Views: ...

    async def _remember_legacy_session(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method == "notifications/initialized" and not is_modern(ctx):
            self._legacy.append(ctx.session)
            del self._legacy[:-DEFAULT_MAX_LEGACY_SESSIONS]
        return result

    def _on_bump(self, token: anyio.lowlevel.EventLoopToken) -> Callable[[object], None]:
        def wake(_event: object) -> None:
            event = self._wake
            if event is None:
                return
            try:
                anyio.from_thread.run_sync(event.set, token=token)
            except RuntimeError:
                event.set()  # bumped from the event loop's own thread

        return wake

    async def notify_changes(self, old: ServedState, new: ServedState) -> None:
        """Publish what differs between two states (list changes, updated files)."""
        events: list[ServerEvent] = []
        legacy: list[str] = []
        if self._views(old).resources != self._views(new).resources:
            events.append(ResourcesListChanged())
            legacy.append("resources")
        if self._views(old).prompts != self._views(new).prompts:
            events.append(PromptsListChanged())
            legacy.append("prompts")
        before, after = old.digests(), new.digests()
        events.extend(ResourceUpdated(uri=u) for u, d in before.items() if after.get(u) != d)
        for event in events:
            await self.bus.publish(event)
        for session in list(self._legacy):
            try:
                if "resources" in legacy:
                    await session.send_resource_list_changed()
                if "prompts" in legacy:
                    await session.send_prompt_list_changed()
            except Exception as err:  # a closed session: forget it
                _log.debug("dropping a closed MCP session: %s", err, exc_info=err)
                self._legacy.remove(session)

    async def _notify_loop(self, baseline: ServedState) -> None:
        interval = self.catalog.rescan_interval_s
        while True:
            assert self._wake is not None
            # Woken by the watcher, or every rescan interval: the walk of the skill
            # folders runs here, off the request path (supporting-file edits too).
            woken = False
            with anyio.move_on_after(interval if interval > 0 else None):
                await self._wake.wait()
                woken = True
            self._wake = anyio.Event()
            if not woken and not self._asked:
                continue  # idle: nobody asked since the last walk, so do not walk
            self._asked = False
            state = await anyio.to_thread.run_sync(self.catalog.current)
            self.instructions = state.instructions or None
            if state is not baseline:
                await self.notify_changes(baseline, state)
            baseline = state

    @asynccontextmanager
    async def _lifespan(self, _server: object) -> AsyncIterator[dict[str, Any]]:
        """Runs the change notifier while the server runs (once, however many entries)."""
        if self._notifying:
            yield {}
            return
        self._notifying = True
        self._wake = anyio.Event()
        unsubscribe = self.catalog.session.versions.subscribe(
            self._on_bump(anyio.lowlevel.current_token())
        )
        try:
            # A held state as old as a request may answer from is the baseline: a
            # slow start (a loaded machine) does not walk every skill folder again.
            baseline = await self.state(max_age_s=2 * self.catalog.rescan_interval_s)
            watcher = self.catalog.session.watcher
            if watcher is not None:
                # From here on no change is missed: the OS watches are in place.
                await anyio.to_thread.run_sync(watcher.wait_ready, WATCH_READY_TIMEOUT_S)
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._notify_loop, baseline)
                self._refreshing = True
                yield {}
                tg.cancel_scope.cancel()
        finally:
            unsubscribe()
            self._wake = None
            self._notifying = False
            self._refreshing = False
            if self._owns_session:
                self.catalog.session.close()
