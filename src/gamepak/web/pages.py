"""What the viewer's pages are built with (`Pages`): templates, places, the preview pool.

Below the routes (`app.Viewer`) and the two large pages (`listing_page`, `file_page`), which
take a `Pages` and never import the app.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any

import anyio
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse

from ..version import __version__
from . import isolate
from .names import shown_name, visible
from .site import Busy, Place, Site
from .strings import NameCache
from .urls import request_segments, segment_url

if TYPE_CHECKING:
    from collections.abc import Callable

# Seconds a preview may take before the page gives up on it (the limits in `previews` bound
# the work itself; this bounds the wait).
PREVIEW_SECONDS = 20.0
# Previews decoding at once: more requests wait rather than fill the memory.
PREVIEW_WORKERS = 2
# How often a waiting preview looks for a free place.
PREVIEW_POLL_SECONDS = 0.02


class Pages:
    """What every page is built with, over one `Site`: its templates, the error text without the
    server's own folder (`public`), the place a URL names (`resolve`), and the preview pool
    (`bounded`)."""

    def __init__(self, site: Site) -> None:
        self.site = site
        # Every value a page shows has its surrogate escapes (bytes that are not UTF-8) shown as
        # \xNN; the templates are read now, so an error page needs no file when files run out.
        self.templates = Environment(
            loader=PackageLoader("gamepak.web", "templates"),
            autoescape=select_autoescape(default=True),
            auto_reload=False,
            finalize=lambda value: visible(value) if isinstance(value, str) else value,
        )
        for template in self.templates.list_templates():
            self.templates.get_template(template)
        # Previews running now, counted by the threads themselves: one given up on still runs,
        # and holds its place until it ends.
        self.previews = threading.BoundedSemaphore(PREVIEW_WORKERS)
        # The names the game's tables give RFG strings, read once (`strings.NameCache`).
        self.names = NameCache()

    def public(self, text: str) -> str:
        """`text` without the served folder's place on the server's disk (messages name packs by
        their path inside ROOT, as the URLs do)."""
        root = self.site.root
        prefix = root if self.site.root_is_pack else root.rstrip(os.sep) + os.sep
        return text.replace(prefix, "" if not self.site.root_is_pack else self.site.label)

    def page(self, template: str, status: int = 200, **values: Any) -> HTMLResponse:
        segments: list[str] = values.pop("segments", [])
        crumbs = [
            {"name": shown_name(name), "url": segment_url("browse", segments[: i + 1])}
            for i, name in enumerate(segments)
        ]
        html = self.templates.get_template(template).render(
            site_label=shown_name(self.site.label), crumbs=crumbs, version=__version__, **values
        )
        # backslashreplace: a page is sent whatever text slipped through.
        return HTMLResponse(html.encode("utf-8", "backslashreplace"), status_code=status)

    async def resolve(self, request: Request, prefix: str, *, as_file: bool = False) -> Place:
        segments = request_segments(request, prefix)
        return await anyio.to_thread.run_sync(lambda: self.site.resolve(segments, as_file=as_file))

    async def bounded(self, work: Callable[..., Any], *args: Any) -> Any:
        """`work(*args)` once one of the PREVIEW_WORKERS places is free, given up on (not
        stopped: a thread cannot be) after PREVIEW_SECONDS in all."""
        slots = self.previews
        # Whoever takes this first frees the place: the thread, once it ends, or the page, if
        # it gives up before the thread has started (the thread then does nothing).
        claim = threading.Lock()

        def run() -> Any:
            if not claim.acquire(blocking=False):
                return None
            try:
                with self.site.keep():  # the packs stay open while the thread reads them
                    return work(*args)
            finally:
                slots.release()

        with anyio.move_on_after(PREVIEW_SECONDS):
            while not slots.acquire(blocking=False):
                await anyio.sleep(PREVIEW_POLL_SECONDS)
            try:
                return await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
            except BaseException:
                if claim.acquire(blocking=False):
                    slots.release()
                raise
        raise Busy(f"the preview was given up after {PREVIEW_SECONDS:g} s ({PREVIEW_WORKERS} previews run at once)")

    async def isolated(self, label: str, work: Callable[..., Any], *args: Any) -> Any:
        """`work(*args)` (a preview that parses: a table, strings, a model, a scene, a file's
        page) in a forked worker process within `isolate.MEMORY_BYTES` of memory, once one of
        the PREVIEW_WORKERS places is free; killed, its place freed, when the page gives up
        (PREVIEW_SECONDS in all, or the request cancelled). `label` names the file in errors.
        Where no worker can be forked (Windows), `bounded` runs it in a thread."""
        if not isolate.available():
            return await self.bounded(work, *args)
        slots = self.previews
        with anyio.move_on_after(PREVIEW_SECONDS):
            while not slots.acquire(blocking=False):
                await anyio.sleep(PREVIEW_POLL_SECONDS)
            worker = None
            try:
                worker = isolate.Worker(work, args, label, isolate.MEMORY_BYTES)
                while not worker.ready():
                    await anyio.sleep(PREVIEW_POLL_SECONDS)
                return await anyio.to_thread.run_sync(worker.result, abandon_on_cancel=True)
            finally:
                if worker is not None:
                    worker.kill()  # done, failed or given up on: it stops here, and its memory goes
                slots.release()
        raise Busy(f"the preview was given up after {PREVIEW_SECONDS:g} s ({PREVIEW_WORKERS} previews run at once)")
