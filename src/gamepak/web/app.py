"""The web application of `gamepak serve`: Starlette routes over `Site`, Jinja2 pages.

URLs: `/browse/<path>` (a page for every folder, pack, nested pack and member), `/raw/<path>`
(a member's bytes, as a download), `/image/<path>`, `/texture/<path>?name=`, `/model/<path>`
(previews), `/search?q=`. `<path>` is the path inside ROOT followed by the member path, each
segment percent-encoded; the segments are taken from the raw request path, so an encoded `/` or
`..` stays one segment and is refused.

Safety: only GET and HEAD; a Host header that is not the server's own is refused (DNS
rebinding); every response carries a strict Content-Security-Policy (scripts only from
/static/, no inline script) and `nosniff`; names reach pages only through Jinja2's escaping;
errors become a page, never a traceback; previews run in a small pool with a time limit, and
those that parse (tables, strings, models, scenes, a file's page) in a forked worker process
with a memory cap, killed when the page gives up (`isolate`).

Here: `Viewer` (the routes and the error pages) and `create_app`. What pages are built with
(templates, the preview pool) is `pages.Pages`; the two large pages are built in `listing_page`
and `file_page`, URLs in `urls`, the headers and host check in `security`.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..errors import GamepakError, MemberNotFoundError
from ..formats.rfg.peg.reader import TextureNotFoundError
from . import previews
from . import strings as strings_view
from .file_page import file_page
from .listing_page import listing_page, parsed_parts, scene_of
from .names import name_of_shown, shown_name, shown_path
from .pages import Pages
from .security import Guard, allowed_hosts
from .site import Busy, NotFound, Place, Refused, Row, Site, transient_os_error
from .urls import attachment, check_number, check_offset, segment_url

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from starlette.types import ASGIApp


class ViewerApp(Starlette):
    """Starlette with `Guard` around everything, its own error handling included."""

    def __init__(self, site: Site, **options: Any) -> None:
        self.site = site
        super().__init__(**options)

    def build_middleware_stack(self) -> ASGIApp:
        return Guard(super().build_middleware_stack(), self.site.session)


class Viewer(Pages):
    """The routes, over one `Site` (the page helpers and the preview pool: `pages.Pages`)."""

    # -- pages -----------------------------------------------------------------------------------
    async def home(self, request: Request) -> Response:
        return RedirectResponse("/browse/", status_code=302)

    async def browse(self, request: Request) -> Response:
        as_file = request.query_params.get("view") == "file"
        place = await self.resolve(request, "browse", as_file=as_file)
        if place.kind == "file":
            return await file_page(self, request, place)
        strings, scene = await parsed_parts(self, place)
        return await anyio.to_thread.run_sync(listing_page, self, request, place, strings, scene)

    async def search(self, request: Request) -> Response:
        query = request.query_params.get("q", "").strip()
        found: list[tuple[str, Row]] = []
        how = "type a name or a glob (*.tga, zone*/*.str2_pc)"
        if query:
            from .search import search_site  # only this page and a filtered listing search

            found, how = await anyio.to_thread.run_sync(search_site, self.site, query)
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
        offset = check_offset(request.query_params.get("offset"))
        root = None if self.site.root_is_pack else self.site.root
        # The tables' names the server kept go to the worker with the fork; the first page
        # beside these tables reads them in its worker and sends them back to be kept.
        names = await anyio.to_thread.run_sync(self.names.names_for, place, root)
        shown = await self.isolated(place.path, strings_view.page_strings, place, names, query, offset)
        if shown.names is not None:
            self.names.keep(names.key, shown.names)

        def page_url(start: int) -> str:
            return "?" + urlencode({**({"q": query} if query else {}), "offset": start})

        return self.page(
            "strings.html",
            segments=place.segments,
            title=f"strings of {shown_name(place.name)}",
            heading=shown_path(place.segments),
            what=shown.what,
            rows=shown.rows,
            total=shown.total,
            matched=shown.matched,
            query=query,
            file_url=segment_url("browse", place.segments),
            previous_url=page_url(max(0, offset - strings_view.PAGE_ROWS)) if offset > 0 else None,
            next_url=page_url(offset + strings_view.PAGE_ROWS)
            if offset + strings_view.PAGE_ROWS < shown.matched
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

        headers = {"content-disposition": attachment(place.name), "content-length": str(size)}
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
        mip = check_number(request.query_params.get("mip"), "mip")
        data = await self.bounded(previews.texture_png, place, name, mip)
        return Response(data, media_type="image/png")

    async def table(self, request: Request) -> Response:
        """An RFG `.xtbl` as rows and columns: paged, filtered (`q`), one row by its `key`."""
        from ..ops.tables import table_view

        place = await self.resolve(request, "table", as_file=True)
        params = request.query_params
        offset = check_offset(params.get("offset"))
        view = await self.isolated(
            place.path, _table_view, place, table_view, params.get("q", ""), params.get("key"), offset
        )
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
        data = await self.isolated(place.path, previews.model_glb, place)
        return Response(data, media_type="model/gltf-binary")

    async def scene(self, request: Request) -> Response:
        place = await self.resolve(request, "scene")
        if place.kind != "folder" or place.disk_path is None or not previews.is_scene(place.disk_path):
            raise HTTPException(404, "not a VDrift track or car folder")
        _, data = await scene_of(self, place)
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
