"""The page of one file (`/browse/<path>`, or `?view=file`): its preview, textures at a chosen mip
level, pictures drawn at a size that fits the page, and where a pack's member is stored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from . import previews
from . import strings as strings_view
from .names import shown_name, shown_path
from .site import Place
from .urls import check_number, check_offset, segment_url

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from .pages import Pages

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


async def file_page(viewer: Pages, request: Request, place: Place) -> Response:
    """The page of `place`, a file or a member, its preview made in the viewer's preview pool."""
    params = request.query_params
    offset = check_offset(params.get("offset"))
    zoom = params.get("zoom") == "1"
    mip = check_number(params.get("mip"), "mip")
    preview = await viewer.isolated(place.path, previews.preview, place, offset)
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
    return viewer.page(
        "file.html",
        segments=place.segments,
        title=shown_name(place.name),
        heading=shown_path(place.segments),
        name=shown_name(place.name),
        size=place.size,
        fields=fields,
        preview=preview,
        problems=[viewer.public(problem) for problem in place.problems],
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
        table_url=segment_url("table", place.segments) if _has_table_page(place.name) else None,
    )


def _has_table_page(name: str) -> bool:
    """Whether a file is of a content kind the table page shows (the content registry's)."""
    from ..content import of_member

    return any(kind.family.preview == "table" for kind in of_member(name, probe=False))
