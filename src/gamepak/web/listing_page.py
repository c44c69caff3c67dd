"""The page of a folder, a pack or a nested pack (`/browse/<path>`): its members sorted, filtered
and paged, a pack's header and, on request, its check; a text pack's strings and a VDrift
scene's summary above the list.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import anyio

from ..errors import GamepakError
from . import previews
from .names import shown_name, shown_path
from .site import Place, Row
from .urls import segment_url

if TYPE_CHECKING:
    from collections.abc import Callable

    from starlette.requests import Request
    from starlette.responses import Response

    from .pages import Pages

# Rows per listing page: a 100,000-member folder is 200 pages of a few hundred kB each.
PAGE_ROWS = 500
COLUMNS = [("name", "name"), ("size", "size"), ("stored", "stored"), ("type", "type")]


async def parsed_parts(viewer: Pages, place: Place) -> tuple[list[str] | None, dict[str, Any] | None]:
    """What a listing shows that means parsing a file, parsed in a preview worker (`Pages.isolated`):
    (a J2ME text pack's strings, a VDrift track's or car's scene summary), None where none."""

    def look() -> tuple[Place | None, bool]:
        archive = place.archive
        text_pack = None
        if archive is not None and archive.format_name.startswith("j2me"):
            text_pack = viewer.site.resolve(place.segments, as_file=True)
        return text_pack, place.kind == "folder" and place.disk_path is not None and previews.is_scene(place.disk_path)

    text_pack, is_scene = await anyio.to_thread.run_sync(look)
    strings = scene = None
    if text_pack is not None:
        strings = await viewer.isolated(text_pack.path, previews.j2me_strings, text_pack)
    if is_scene:
        # A VDrift track or car: the whole scene above its files (its counts now; the viewer
        # fetches the glTF from /scene/).
        try:
            summary, _ = await scene_of(viewer, place)
            scene = dict(summary, url=segment_url("scene", place.segments), error=None)
        except GamepakError as exc:
            scene = {"error": viewer.public(str(exc))}
    return strings, scene


async def scene_of(viewer: Pages, place: Place) -> tuple[dict[str, Any], bytes]:
    """(summary, glTF) of the track or car at `place` (a folder on disk): as kept, else built
    in a preview worker and kept, so the listing and the 3D view's fetch build it once."""
    folder = place.disk_path
    assert folder is not None
    built = await anyio.to_thread.run_sync(previews.kept_scene, folder)
    if built is None:
        built = await viewer.isolated(place.path, previews.build_scene, folder, viewer.site.root)
        await anyio.to_thread.run_sync(previews.keep_scene, folder, built)
    return built  # type: ignore[no-any-return]


def listing_page(
    viewer: Pages,
    request: Request,
    place: Place,
    strings: list[str] | None = None,
    scene: dict[str, Any] | None = None,
) -> Response:
    """The page of `place`, a folder or a pack (run in a thread: it reads the folder or the pack);
    `strings` and `scene`: its `parsed_parts`."""
    params = request.query_params
    sort = params.get("sort", "name")
    if sort not in dict(COLUMNS):
        sort = "name"
    order = "desc" if params.get("order") == "desc" else "asc"
    text_filter = params.get("filter", "")
    rows = viewer.site.rows(place)
    total = len(rows)
    if text_filter:
        from .search import name_matcher  # only a filtered listing needs the glob

        matches = name_matcher(text_filter)
        rows = [row for row in rows if matches(row.name)]
    if sort == "type" and place.node is not None:
        rows = viewer.site.classify(place, rows)  # the type column holds what members are
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
    shown = viewer.site.classify(place, rows[(page - 1) * PAGE_ROWS : page * PAGE_ROWS])

    def query(**changes: Any) -> str:
        values = {"sort": sort, "order": order, "filter": text_filter, "page": page} | changes
        return "?" + urlencode({k: v for k, v in values.items() if v not in ("", None)})

    sort_urls = {
        column: query(sort=column, order="desc" if sort == column and order == "asc" else "asc", page=1)
        for column, _ in COLUMNS
    }
    info = header = check = None
    archive = place.archive
    if archive is not None:
        from ..ops.inspect import info_details

        info = info_details(place.path, archive)
        header = [(name, _field_text(value)) for name, value in info.pop("header").items()]
        if params.get("check"):
            check = _check_summary(archive, viewer.public)
    from .wad_gallery import wad_gallery

    gallery = wad_gallery(place) if page == 1 and not text_filter else None  # a WAD's pictures
    heading = shown_path(place.segments) or shown_name(viewer.site.label)
    return viewer.page(
        "listing.html",
        scene=scene,
        segments=place.segments,
        title=shown_name(place.name or viewer.site.label),
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
        gallery=gallery,
        problems=[viewer.public(problem) for problem in place.problems],
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
    from ..core.entry import split_problems

    problems = archive.check()
    errors, warnings_found = split_problems(problems)
    summary = f"{len(archive)} members: {len(errors)} errors, {len(warnings_found)} warnings"
    return {
        "ok": not errors,
        "summary": ("OK: " if not errors else "FAILED: ") + summary,
        "problems": [{"severity": p.severity, "message": public(p.message)} for p in problems[:200]],
    }
