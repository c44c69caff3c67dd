"""The header of VDrift JOE v3 models and the check that a file is one (`sniff`): what detection
asks of every file, kept apart from the reader (`joe`) so that asking loads no mesh model.
The byte layout is in `joe`'s docstring."""

from __future__ import annotations

import struct

from ..errors import CorruptArchiveError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from ..core.source import Source

HEADER = struct.Struct("<4siii")
FRAME_HEADER = struct.Struct("<iii")
FACE_SIZE = 18
VERSION = 3
DEFAULT_MAGIC = b"IDP2"
MAX_FACES = 32000
SNIFF_WINDOW = 1 << 20


def _expected_size(read: Callable[[int, int], bytes], file_size: int) -> int | None:
    """The file size the header and frame headers imply, or None if they are impossible."""
    head = read(HEADER.size, 0)
    if len(head) < HEADER.size:
        return None
    _, version, face_count, frame_count = HEADER.unpack(head)
    if version != VERSION or not 0 <= face_count <= MAX_FACES or frame_count < 1:
        return None
    faces_size = face_count * FACE_SIZE
    # Every frame is at least its faces and header: refuse counts the file cannot hold before
    # walking them.
    if HEADER.size + frame_count * (faces_size + FRAME_HEADER.size) > file_size:
        return None
    window, window_start = b"", 0
    position = HEADER.size
    for _ in range(frame_count):
        position += faces_size
        if position + FRAME_HEADER.size > window_start + len(window):
            # Frame headers are read through a window: one read per MiB, not one per frame.
            window_start, window = position, read(SNIFF_WINDOW, position)
        if position + FRAME_HEADER.size > window_start + len(window):
            return None
        vertex_count, texcoord_count, normal_count = FRAME_HEADER.unpack_from(window, position - window_start)
        if min(vertex_count, texcoord_count, normal_count) < 0:
            return None
        position += FRAME_HEADER.size + 12 * vertex_count + 12 * normal_count + 8 * texcoord_count
        if position > file_size:
            return None
    return position


def sniff(source: Source, *, trailing: bool = False) -> float:
    """0.9 for version 3 with counts whose sizes add up to exactly the file size (there is no
    reliable magic: real files carry IDP2 or 0). With `trailing`, bytes after the model are
    allowed when the file carries one of those magics (0.8)."""
    if source.size < HEADER.size:
        return 0.0
    try:
        expected = _expected_size(source.pread, source.size)
    except CorruptArchiveError:
        return 0.0
    known_magic = source.pread(4, 0) in (DEFAULT_MAGIC, b"\0\0\0\0")
    if expected != source.size:
        return 0.8 if trailing and known_magic and expected is not None and expected < source.size else 0.0
    return 1.0 if known_magic else 0.9
