"""What `info` and `verify` report about a pack, as plain data for the CLI and the web viewer."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: `typing` costs milliseconds at start-up
    from typing import Any

    from ..core.archive import Archive, Problem


def info_details(path: str, opened: Archive) -> dict[str, Any]:
    """What `gamepak info` shows, as a dictionary."""
    from ..core.registry import get_format

    entries = opened.infolist()
    return {
        "file": path,
        "format": opened.format_name,
        "description": get_format(opened.format_name).description,
        "file_size": opened.size,
        # The keys every --json shares: `members` a count, `size` and `stored_size` bytes.
        "members": len(entries),
        "size": sum(e.size for e in entries),
        # Members without a separate stored size are stored as they are.
        "stored_size": sum(e.size if e.stored_size is None else e.stored_size for e in entries),
        "header": opened.header_fields(),
    }


def check_loose_peg(path: str) -> tuple[list[Problem], int]:
    """`verify` of a loose RFG peg pair, the CPU file `path` and its GPU partner beside it:
    (problems, texture count). The pair is read as the game reads it (header, entries, names,
    each texture's frame inside the GPU file); what does not hold is an error."""
    from ..core.archive import Problem
    from ..errors import GamepakError
    from ..formats.rfg.peg import Peg

    try:
        peg = Peg.open(path)
    except GamepakError as exc:
        return [Problem(str(exc), offset=getattr(exc, "offset", None))], 0
    return [], len(peg.textures)
