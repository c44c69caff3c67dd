"""The web application of `gamepak serve`: Starlette routes over `Site`, Jinja2 pages.

URLs: `/browse/<path>` (a page for every folder, pack, nested pack and member), `/raw/<path>`
(a member's bytes, as a download), `/image/<path>`, `/texture/<path>?name=`, `/model/<path>`
(previews), `/search?q=`. `<path>` is the path inside ROOT followed by the member path, each
segment percent-encoded; the segments are taken from the raw request path, so an encoded `/` or
`..` stays one segment and is refused.

Safety: only GET and HEAD; a Host header that is not the server's own is refused (DNS
rebinding); every response carries a strict Content-Security-Policy (scripts only from
/static/, no inline script) and `nosniff`; names reach pages only through Jinja2's escaping;
errors become a page, never a traceback; previews run in a small pool with a time limit.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import threading
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote_to_bytes, urlencode

import anyio
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..errors import GamepakError, MemberNotFoundError
from ..formats.rfg.peg.reader import TextureNotFoundError
from ..version import __version__
from . import previews
from . import strings as strings_view
from .names import name_of_shown, shown_name, shown_path, visible
from .site import Busy, NotFound, Place, Refused, Row, Site, name_matcher, transient_os_error

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Rows per listing page: a 100,000-member folder is 200 pages of a few hundred kB each.
PAGE_ROWS = 500
# Seconds a preview may take before the page gives up on it (the limits in `previews` bound
# the work itself; this bounds the wait).
PREVIEW_SECONDS = 20.0
# Previews decoding at once: more requests wait rather than fill the memory.
PREVIEW_WORKERS = 2
# How often a waiting preview looks for a free place.
PREVIEW_POLL_SECONDS = 0.02

# connect-src allows blob: because three.js fetches a glTF's embedded textures (a scene's) from
# blob URLs the page itself makes of the model it downloaded; nothing from elsewhere.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; "
    "media-src 'self'; connect-src 'self' blob:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]
SECURITY_HEADER_NAMES = {name for name, _ in SECURITY_HEADERS}
COLUMNS = [("name", "name"), ("size", "size"), ("stored", "stored"), ("type", "type")]
LOOPBACK_NAMES = ["127.0.0.1", "localhost", "::1", "[::1]"]


class Guard:
    """The outermost ASGI layer: `SECURITY_HEADERS` on every response, errors included (Starlette
    sends its 500 page from outside the middleware list), and no exception past it: the 500 page
    has been sent and its one line written (`Viewer.internal_error`), so the server has nothing
    to print; if even that page could not be made, a fixed one is sent."""

    def __init__(self, app: ASGIApp, session: Callable[[], contextlib.AbstractContextManager[None]]) -> None:
        self.app = app
        self.session = session

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        with self.session():  # the packs a request uses stay open until its last byte is sent
            await self._guarded(scope, receive, send)

    async def _guarded(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = [(k, v) for k, v in message.get("headers", []) if k not in SECURITY_HEADER_NAMES]
                message["headers"] = headers + SECURITY_HEADERS
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception as exc:  # the last line of defence: a page, never a traceback
            if started:
                return
            sys.stderr.write(f"gamepak serve: internal error: {type(exc).__name__}: {exc}\n")
            body = b"<!doctype html><title>error</title><h1>Internal error</h1><p>The page could not be made.</p>"
            headers = [(b"content-type", b"text/html; charset=utf-8"), (b"content-length", str(len(body)).encode())]
            await send({"type": "http.response.start", "status": 500, "headers": headers + SECURITY_HEADERS})
            await send({"type": "http.response.body", "body": body})


class ViewerApp(Starlette):
    """Starlette with `Guard` around everything, its own error handling included."""

    def __init__(self, site: Site, **options: Any) -> None:
        self.site = site
        super().__init__(**options)

    def build_middleware_stack(self) -> ASGIApp:
        return Guard(super().build_middleware_stack(), self.site.session)


def segment_url(kind: str, segments: list[str]) -> str:
    """`/<kind>/` followed by each segment as `shown_name` writes it, percent-encoded: URLs are
    UTF-8, and a name that is not is carried by its visible escapes."""
    return f"/{kind}/" + "/".join(quote(shown_name(segment), safe="") for segment in segments)


def request_segments(request: Request, prefix: str) -> list[str]:
    """The names of the segments after `/<prefix>` in the raw request path (one trailing `/`
    allowed); a percent-escape that is not UTF-8, or a backslash that escapes nothing, is 400."""
    raw = request.scope.get("raw_path") or request.url.path.encode()
    raw = raw.split(b"?", 1)[0]
    rest = raw[len(prefix) + 1 :]
    if rest.startswith(b"/"):
        rest = rest[1:]
    if rest.endswith(b"/"):
        rest = rest[:-1]
    if not rest:
        return []
    segments = []
    for part in rest.split(b"/"):
        try:
            segments.append(name_of_shown(unquote_to_bytes(part).decode("utf-8")))
        except UnicodeDecodeError:
            shown = part.decode("ascii", "backslashreplace")
            raise HTTPException(
                400, f"{shown}: a percent-escape that is not UTF-8 (a name that is not UTF-8 is written \\xNN)"
            ) from None
        except ValueError as exc:
            raise HTTPException(400, str(exc)) from None
    return segments


def _check_offset(value: str | None) -> int:
    return _check_number(value, "offset")


def _check_number(value: str | None, what: str) -> int:
    try:
        return max(0, int(value or 0))
    except ValueError:
        raise HTTPException(400, f"{what} must be a number") from None


# The box a picture is fitted in, and the size up to which a small one is enlarged (by whole
# pixels, drawn sharp by the style).
FIT_PIXELS = 512
ENLARGE_TO = 256


def shown_size(width: int, height: int) -> tuple[int, int]:
    """The size a picture of width x height is drawn at on its page, at its own aspect ratio:
    small ones enlarged by a whole factor, large ones fitted in FIT_PIXELS x FIT_PIXELS (the
    style shrinks them further on a narrow page, keeping the ratio)."""
    longest = max(width, height, 1)
    if longest <= ENLARGE_TO:
        scale = max(1, ENLARGE_TO // longest)
        return width * scale, height * scale
    if longest <= FIT_PIXELS:
        return width, height
    return max(1, round(width * FIT_PIXELS / longest)), max(1, round(height * FIT_PIXELS / longest))


class Viewer:
    """The routes, over one `Site`."""

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

    # -- helpers ---------------------------------------------------------------------------------
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

    # -- pages -----------------------------------------------------------------------------------
    async def home(self, request: Request) -> Response:
        return RedirectResponse("/browse/", status_code=302)

    async def browse(self, request: Request) -> Response:
        as_file = request.query_params.get("view") == "file"
        place = await self.resolve(request, "browse", as_file=as_file)
        if place.kind == "file":
            return await self.file_page(request, place)
        return await anyio.to_thread.run_sync(self.listing_page, request, place)

    def listing_page(self, request: Request, place: Place) -> Response:
        params = request.query_params
        sort = params.get("sort", "name")
        if sort not in dict(COLUMNS):
            sort = "name"
        order = "desc" if params.get("order") == "desc" else "asc"
        text_filter = params.get("filter", "")
        rows = self.site.rows(place)
        total = len(rows)
        if text_filter:
            matches = name_matcher(text_filter)
            rows = [row for row in rows if matches(row.name)]
        if sort == "type" and place.node is not None:
            rows = self.site.classify(place, rows)  # the type column holds what members are
        rows.sort(key=_sort_key(sort), reverse=order == "desc")
        if sort == "name" and order == "asc":
            # Folders first, as file managers show them; a nested pack counts once it has been
            # looked at, which pages must not depend on, so only plain folders are put first.
            rows.sort(key=lambda row: not row.is_folder or (row.node is not None and row.node.entry is not None))
        pages = max(1, math.ceil(len(rows) / PAGE_ROWS))
        try:
            page = min(max(1, int(params.get("page", "1"))), pages)
        except ValueError:
            page = 1
        shown = self.site.classify(place, rows[(page - 1) * PAGE_ROWS : page * PAGE_ROWS])

        def query(**changes: Any) -> str:
            values = {"sort": sort, "order": order, "filter": text_filter, "page": page} | changes
            return "?" + urlencode({k: v for k, v in values.items() if v not in ("", None)})

        sort_urls = {
            column: query(sort=column, order="desc" if sort == column and order == "asc" else "asc", page=1)
            for column, _ in COLUMNS
        }
        info = header = check = strings = None
        archive = place.archive
        if archive is not None:
            from ..ops.inspect import info_details

            info = info_details(place.path, archive)
            header = [(name, _field_text(value)) for name, value in info.pop("header").items()]
            if params.get("check"):
                check = _check_summary(archive, self.public)
            if archive.format_name.startswith("j2me"):  # a text pack: its strings, decoded
                strings = previews.j2me_strings(self.site.resolve(place.segments, as_file=True))
        scene = None
        if place.kind == "folder" and place.disk_path is not None and previews.is_scene(place.disk_path):
            # A VDrift track or car: the whole scene above its files (its counts now; the
            # viewer fetches the glTF from /scene/, built once for both).
            try:
                summary, _ = previews.scene(place.disk_path, self.site.root)
                scene = dict(summary, url=segment_url("scene", place.segments), error=None)
            except GamepakError as exc:
                scene = {"error": self.public(str(exc))}
        heading = shown_path(place.segments) or shown_name(self.site.label)
        return self.page(
            "listing.html",
            scene=scene,
            segments=place.segments,
            title=shown_name(place.name or self.site.label),
            heading=heading + ("" if place.kind == "pack" else "/"),
            info=info,
            header=header,
            check=check,
            strings=strings,
            strings_url=(
                segment_url("strings", place.segments)
                if archive is not None and (strings or archive.format_name == "rfglocatext")
                else None
            ),
            check_url=query(check=1) + "#check",
            problems=[self.public(problem) for problem in place.problems],
            rows=[_row_values(row, place.segments) for row in shown],
            columns=COLUMNS,
            sort=sort,
            order=order,
            filter=text_filter,
            sort_urls=sort_urls,
            page=page,
            pages=pages,
            page_url=lambda number: query(page=number),
            shown_count=len(rows),
            total_count=total,
        )

    async def file_page(self, request: Request, place: Place) -> Response:
        params = request.query_params
        offset = _check_offset(params.get("offset"))
        zoom = params.get("zoom") == "1"
        mip = _check_number(params.get("mip"), "mip")
        preview = await self.bounded(previews.preview, place, offset)
        most_mips = 1
        if preview.textures:  # a peg, a WAD lump, a map's textures under its 3D view
            for texture in preview.textures:
                level = min(mip, texture["mips"] - 1)
                width, height = max(1, texture["width"] >> level), max(1, texture["height"] >> level)
                texture["mip"], texture["mip_width"], texture["mip_height"] = level, width, height
                shown = (width, height) if zoom else shown_size(texture["width"], texture["height"])
                texture["shown_width"], texture["shown_height"] = shown
                query = {"name": shown_name(texture["name"])} | ({"mip": level} if level else {})
                texture["url"] = segment_url("texture", place.segments) + "?" + urlencode(query)
                texture["name"] = shown_name(texture["name"])
                most_mips = max(most_mips, texture["mips"])
        if preview.kind == "image" and "width" in preview.data:
            width, height = preview.data["width"], preview.data["height"]
            preview.data["shown_width"], preview.data["shown_height"] = (
                (width, height) if zoom else shown_size(width, height)
            )

        def view_url(**changes: int) -> str:
            values = {"zoom": int(zoom), "mip": mip} | changes
            query = urlencode({key: value for key, value in values.items() if value})
            return "?" + query if query else "?"

        fields: list[tuple[str, Any]] = []
        entry = place.entry
        if entry is not None and place.node is not None and place.node.archive is not None:
            holder = place.node.archive
            fields = [
                ("stored size", entry.size if entry.stored_size is None else entry.stored_size),
                ("offset", entry.offset),
                ("compression", holder.member_compression(entry)),
                ("index", entry.index),
                ("in pack", f"{holder.format_name}"),
            ]
        return self.page(
            "file.html",
            segments=place.segments,
            title=shown_name(place.name),
            heading=shown_path(place.segments),
            name=shown_name(place.name),
            size=place.size,
            fields=fields,
            preview=preview,
            problems=[self.public(problem) for problem in place.problems],
            raw_url=segment_url("raw", place.segments),
            image_url=segment_url("image", place.segments),
            model_url=segment_url("model", place.segments),
            zoom=zoom,
            mip=mip,
            most_mips=most_mips,
            view_url=view_url,
            strings_url=segment_url("strings", place.segments)
            if strings_view.has_strings_page(place.name, preview.kind)
            else None,
        )

    async def search(self, request: Request) -> Response:
        query = request.query_params.get("q", "").strip()
        found: list[tuple[str, Row]] = []
        how = "type a name or a glob (*.tga, zone*/*.str2_pc)"
        if query:
            found, how = await anyio.to_thread.run_sync(self.site.search, query)
        results = [
            {
                "path": shown_path(path.split("/")),
                "url": segment_url("browse", path.split("/")),
                "size": row.size,
                "type": row.type,
            }
            for path, row in found
        ]
        return self.page("search.html", title=f"search {query}", query=query, results=results, how=how)

    async def strings(self, request: Request) -> Response:
        """Every string of a localization file or a J2ME text pack (web.strings), `?q=` filtered."""
        place = await self.resolve(request, "strings", as_file=True)
        if place.kind != "file":
            raise HTTPException(404, "a folder has no strings")
        query = request.query_params.get("q", "").strip()
        offset = _check_offset(request.query_params.get("offset"))
        what, rows = await self.bounded(strings_view.read_strings, place)
        found = strings_view.matching(rows, query)

        def page_url(start: int) -> str:
            return "?" + urlencode({**({"q": query} if query else {}), "offset": start})

        return self.page(
            "strings.html",
            segments=place.segments,
            title=f"strings of {shown_name(place.name)}",
            heading=shown_path(place.segments),
            what=what,
            rows=found[offset : offset + strings_view.PAGE_ROWS],
            total=len(rows),
            matched=len(found),
            query=query,
            file_url=segment_url("browse", place.segments),
            previous_url=page_url(max(0, offset - strings_view.PAGE_ROWS)) if offset > 0 else None,
            next_url=page_url(offset + strings_view.PAGE_ROWS)
            if offset + strings_view.PAGE_ROWS < len(found)
            else None,
        )

    # -- bytes -----------------------------------------------------------------------------------
    async def raw(self, request: Request) -> Response:
        place = await self.resolve(request, "raw", as_file=True)
        if place.kind != "file":
            raise HTTPException(404, "a folder has no bytes")
        media_type = await anyio.to_thread.run_sync(previews.content_type, place)
        size = place.size
        stream = await anyio.to_thread.run_sync(place.open)

        def chunks() -> Iterator[bytes]:
            with stream:
                while chunk := stream.read(1 << 20):
                    yield chunk

        disposition = "attachment; filename*=UTF-8''" + quote(place.name, safe="", errors="surrogateescape")
        headers = {"content-disposition": disposition, "content-length": str(size)}
        if place.node is not None and place.node.archive is not None and place.entry is not None:
            # A compressed member's size is what it inflates to; a stream that stops short of it
            # would hang the client waiting for the rest.
            headers.pop("content-length")
        return StreamingResponse(chunks(), media_type=media_type, headers=headers)

    async def image(self, request: Request) -> Response:
        place = await self.resolve(request, "image", as_file=True)
        data, media_type = await self.bounded(previews.image_bytes, place)
        return Response(data, media_type=media_type)

    async def texture(self, request: Request) -> Response:
        place = await self.resolve(request, "texture", as_file=True)
        try:
            name = name_of_shown(request.query_params.get("name", ""))
        except ValueError as exc:
            raise HTTPException(400, str(exc)) from None
        mip = _check_number(request.query_params.get("mip"), "mip")
        data = await self.bounded(previews.texture_png, place, name, mip)
        return Response(data, media_type="image/png")

    async def table(self, request: Request) -> Response:
        """An RFG `.xtbl` as rows and columns: paged, filtered (`q`), one row by its `key`."""
        from ..ops.tables import table_view

        place = await self.resolve(request, "table", as_file=True)
        params = request.query_params
        offset = _check_offset(params.get("offset"))
        view = await self.bounded(_table_view, place, table_view, params.get("q", ""), params.get("key"), offset)
        here = segment_url("table", place.segments)
        folder = segment_url("table", place.segments[:-1]).rstrip("/")

        def query(**changes: Any) -> str:
            values = {"q": params.get("q", ""), "key": params.get("key"), "offset": offset, **changes}
            return here + "?" + urlencode({name: value for name, value in values.items() if value not in (None, "", 0)})

        view["previous_url"] = query(offset=max(0, offset - view["limit"])) if offset else None
        more = offset + view["limit"] < view["matching"]
        view["next_url"] = query(offset=offset + view["limit"]) if more else None
        return self.page(
            "table.html",
            title=place.name,
            heading=place.path,
            file_url=segment_url("browse", place.segments),
            folder_url=folder,
            query_text=params.get("q", ""),
            **view,
        )

    async def model(self, request: Request) -> Response:
        place = await self.resolve(request, "model", as_file=True)
        data = await self.bounded(previews.model_glb, place)
        return Response(data, media_type="model/gltf-binary")

    async def scene(self, request: Request) -> Response:
        place = await self.resolve(request, "scene")
        if place.kind != "folder" or place.disk_path is None or not previews.is_scene(place.disk_path):
            raise HTTPException(404, "not a VDrift track or car folder")
        _, data = await self.bounded(previews.scene, place.disk_path, self.site.root)
        return Response(data, media_type="model/gltf-binary")

    # -- errors ----------------------------------------------------------------------------------
    async def refused(self, request: Request, exc: Exception) -> Response:
        return self.page("error.html", 403, title="refused", heading="Refused", message=self.public(str(exc)))

    async def not_found(self, request: Request, exc: Exception) -> Response:
        return self.page("error.html", 404, title="not found", heading="Not found", message=self.public(str(exc)))

    async def unreadable(self, request: Request, exc: Exception) -> Response:
        raw_url = None
        if request.url.path.startswith("/browse/") and request.query_params.get("view") != "file":
            raw_url = request.url.path + "?view=file"
        if transient_os_error(exc) is not None:
            return await self.busy(request, exc)
        message = str(exc)
        if isinstance(exc, OSError) and exc.strerror:  # the reason, and the file by its place in ROOT
            message = f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
        return self.page(
            "error.html", 422, title="cannot read", heading="Cannot read", message=self.public(message), raw_url=raw_url
        )

    async def busy(self, request: Request, exc: Exception) -> Response:
        shortage = transient_os_error(exc)
        message = str(exc) if shortage is None or isinstance(exc, GamepakError) else shortage.strerror
        response = self.page(
            "error.html", 503, title="busy", heading="Busy, try again", message=self.public(str(message))
        )
        response.headers["retry-after"] = "2"
        return response

    async def http_error(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        response = self.page(
            "error.html", exc.status_code, title="error", heading=f"Error {exc.status_code}", message=exc.detail
        )
        if exc.headers:
            response.headers.update(exc.headers)
        return response

    async def internal_error(self, request: Request, exc: Exception) -> Response:
        # One line on the server's console; the page names the error, never a traceback.
        sys.stderr.write(f"gamepak serve: {request.url.path}: internal error: {type(exc).__name__}: {exc}\n")
        return self.page(
            "error.html",
            500,
            title="error",
            heading="Internal error",
            message=self.public(f"{type(exc).__name__}: {exc}"),
        )


def _table_view(place: Place, view: Callable[..., dict[str, Any]], query: str, key: str | None, offset: int) -> Any:
    """Read a table member (bounded) and make one page of it."""
    from ..formats.rfg.xtbl.xmldoc import MAX_XML_BYTES

    if place.size > MAX_XML_BYTES:
        raise Refused(f"{place.name}: {place.size} bytes, more than a table holds")
    with place.open() as stream:
        data = stream.read(MAX_XML_BYTES + 1)
    return view(data, place.name, query=query, key=key, offset=offset)


def _sort_key(column: str) -> Callable[[Row], Any]:
    if column == "size":
        return lambda row: (row.size is None, row.size or 0, row.name)
    if column == "stored":
        return lambda row: (row.stored_size is None, row.stored_size or 0, row.name)
    if column == "type":
        return lambda row: (row.type, row.name)
    return lambda row: row.name.lower()


def _row_values(row: Row, parent: list[str]) -> dict[str, Any]:
    return {
        "name": shown_name(row.name),
        "url": segment_url("browse", parent + [row.name]) + ("/" if row.is_folder else ""),
        "is_folder": row.is_folder,
        "size": row.size,
        "stored_size": row.stored_size,
        "type": row.type,
    }


def _field_text(value: Any) -> str:
    """A header field on one line; long lists (an .asm_pc's containers) are counted, not shown."""
    if isinstance(value, list) and len(value) > 8:
        return f"{len(value)} records"
    text = str(value)
    return text if len(text) <= 400 else text[:400] + "…"


def _check_summary(archive: Any, public: Callable[[str], str]) -> dict[str, Any]:
    from ..ops.inspect import split_problems

    problems = archive.check()
    errors, warnings_found = split_problems(problems)
    summary = f"{len(archive)} members: {len(errors)} errors, {len(warnings_found)} warnings"
    return {
        "ok": not errors,
        "summary": ("OK: " if not errors else "FAILED: ") + summary,
        "problems": [{"severity": p.severity, "message": public(p.message)} for p in problems[:200]],
    }


def allowed_hosts(host: str, extra: list[str] | None = None) -> list[str]:
    """The Host header values the server answers: its loopback names, the address it listens
    on and, for a wildcard address, the machine's name; plus `extra`."""
    import socket

    names = list(LOOPBACK_NAMES)
    if host not in ("0.0.0.0", "::", ""):
        names.append(host if ":" not in host else f"[{host}]")
    else:
        hostname = socket.gethostname()
        names += [hostname, socket.getfqdn()]
        with contextlib.suppress(OSError):  # a name the resolver does not know: the others remain
            names += socket.gethostbyname_ex(hostname)[2]
    return list(dict.fromkeys(names + (extra or [])))


def create_app(
    root: str | os.PathLike[str],
    *,
    host: str = "127.0.0.1",
    catalog: str | None = None,
    extra_hosts: list[str] | None = None,
) -> Starlette:
    """The ASGI application serving ROOT (a folder or one pack), read-only."""
    viewer = Viewer(Site(os.fspath(root), catalog=catalog))
    get = ["GET"]  # Starlette answers HEAD for GET routes; every other method is 405
    routes = [
        Route("/", viewer.home, methods=get),
        Route("/browse", viewer.browse, methods=get),
        Route("/browse/{path:path}", viewer.browse, methods=get),
        Route("/raw/{path:path}", viewer.raw, methods=get),
        Route("/image/{path:path}", viewer.image, methods=get),
        Route("/texture/{path:path}", viewer.texture, methods=get),
        Route("/model/{path:path}", viewer.model, methods=get),
        Route("/scene/{path:path}", viewer.scene, methods=get),
        Route("/table/{path:path}", viewer.table, methods=get),
        Route("/search", viewer.search, methods=get),
        Route("/strings/{path:path}", viewer.strings, methods=get),
        Mount("/static", StaticFiles(packages=[("gamepak.web", "static")]), name="static"),
    ]
    middleware = [
        Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts(host, extra_hosts)),
    ]
    handlers: dict[Any, Any] = {
        Refused: viewer.refused,
        NotFound: viewer.not_found,
        MemberNotFoundError: viewer.not_found,
        TextureNotFoundError: viewer.not_found,
        Busy: viewer.busy,
        GamepakError: viewer.unreadable,
        OSError: viewer.unreadable,  # a file the server may not read (permissions, vanished)
        HTTPException: viewer.http_error,
        Exception: viewer.internal_error,
    }
    return ViewerApp(viewer.site, routes=routes, middleware=middleware, exception_handlers=handlers)
