"""VDrift JOE v3 models (`joe`). All integers little-endian.

File header (16 bytes):

| offset | size | field                                                          |
|--------|------|----------------------------------------------------------------|
| 0      | 4    | magic: `IDP2` (844121161) by convention; real files also hold 0; never checked |
| 4      | 4    | int32 version, must be 3                                       |
| 8      | 4    | int32 num_faces (the same in every frame), at most 32,000      |
| 12     | 4    | int32 num_frames (VDrift reads them all and draws frame 0)     |

Then num_frames frames, each laid out as (note: faces come BEFORE the frame header, and normals
before texture coordinates, whatever the wiki page says):

| size          | field                                                              |
|---------------|--------------------------------------------------------------------|
| 18·num_faces  | faces: uint16 vertexIndex[3], uint16 normalIndex[3], uint16 textureIndex[3] |
| 12            | frame header: int32 num_verts, num_texcoords, num_normals          |
| 12·num_verts  | float32 x, y, z positions                                          |
| 12·num_normals| float32 x, y, z normals                                            |
| 8·num_texcoords | float32 u, v (as VDrift uses them: v is not flipped)             |

Indices are 0-based. num_texcoords may be 0. `.joe` is also the name of small text files in
VDrift's data, so a model is recognised by its version and an exact size match, not its name.
"""

from __future__ import annotations

import struct
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import CorruptArchiveError, FormatLimitError
from ..source import Source

if TYPE_CHECKING:
    from .mesh import Frame, Mesh

HEADER = struct.Struct("<4siii")
FRAME_HEADER = struct.Struct("<iii")
FACE_SIZE = 18
VERSION = 3
DEFAULT_MAGIC = b"IDP2"
MAX_FACES = 32000
# uint16 indices: each index space holds at most this many entries.
MAX_INDEX_ENTRIES = 1 << 16


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
    position = HEADER.size
    for _ in range(frame_count):
        position += faces_size
        raw = read(FRAME_HEADER.size, position)
        if len(raw) < FRAME_HEADER.size:
            return None
        vertex_count, texcoord_count, normal_count = FRAME_HEADER.unpack(raw)
        if min(vertex_count, texcoord_count, normal_count) < 0:
            return None
        position += FRAME_HEADER.size + 12 * vertex_count + 12 * normal_count + 8 * texcoord_count
        if position > file_size:
            return None
    return position


def sniff(source: Source) -> float:
    """0.9 for version 3 with counts whose sizes add up to exactly the file size (there is no
    reliable magic: real files carry IDP2 or 0)."""
    if source.size < HEADER.size:
        return 0.0
    try:
        expected = _expected_size(source.pread, source.size)
    except CorruptArchiveError:
        return 0.0
    if expected != source.size:
        return 0.0
    return 1.0 if source.pread(4, 0) in (DEFAULT_MAGIC, b"\0\0\0\0") else 0.9


def looks_like_text(data: bytes) -> bool:
    """True when the start of `data` is printable text (VDrift keeps text files named .joe)."""
    head = data[:512]
    if not head:
        return False
    printable = sum(1 for byte in head if 32 <= byte < 127 or byte in (9, 10, 13))
    return printable == len(head)


def read(data: bytes, *, path: str | None = None, name: str = "") -> Mesh:
    """Parse a JOE v3 model. Raises `CorruptArchiveError` (with the file and offset) for data
    that contradicts the format; NaN or infinite values are reported with a warning and in
    `mesh.issues`."""
    import numpy as np

    from .mesh import Frame, Mesh

    label = path or name or "<bytes>"

    def corrupt(message: str, offset: int) -> CorruptArchiveError:
        return CorruptArchiveError(message, path=label, offset=offset)

    # A private, writable copy: the mesh's arrays are views into it and may be edited.
    buffer = bytearray(data)
    size = len(buffer)
    if size < HEADER.size:
        if looks_like_text(data):
            raise corrupt("looks like a text file, not a JOE model", 0)
        raise corrupt(f"too short for a JOE header ({size} bytes, need {HEADER.size})", 0)
    magic, version, face_count, frame_count = HEADER.unpack_from(data, 0)
    if version != VERSION:
        if looks_like_text(data):
            raise corrupt("looks like a text file, not a JOE model", 0)
        raise corrupt(f"JOE version {version} is not supported (only version 3)", 4)
    if face_count < 0:
        raise corrupt(f"negative face count {face_count}", 8)
    if face_count > MAX_FACES:
        raise corrupt(f"{face_count} faces: JOE models hold at most {MAX_FACES}", 8)
    if frame_count < 1:
        raise corrupt(f"frame count {frame_count}: a model needs at least one frame", 12)
    faces_size = face_count * FACE_SIZE
    if HEADER.size + frame_count * (faces_size + FRAME_HEADER.size) > size:
        raise corrupt(f"{frame_count} frames of {face_count} faces need more than the file's {size} bytes", 12)

    face_dtype = np.dtype("<u2")
    float_dtype = np.dtype("<f4")
    frames: list[Frame] = []
    issues: list[str] = []
    position = HEADER.size
    for frame_number in range(frame_count):
        faces_offset = position
        header_offset = faces_offset + faces_size
        if header_offset + FRAME_HEADER.size > size:
            raise corrupt(f"frame {frame_number}: faces and frame header run past the end of the file", faces_offset)
        vertex_count, texcoord_count, normal_count = FRAME_HEADER.unpack_from(data, header_offset)
        for field_number, (what, count) in enumerate(
            (("vertex", vertex_count), ("texcoord", texcoord_count), ("normal", normal_count))
        ):
            if count < 0:
                raise corrupt(f"frame {frame_number}: negative {what} count {count}", header_offset + 4 * field_number)
        arrays_offset = header_offset + FRAME_HEADER.size
        arrays_size = 12 * vertex_count + 12 * normal_count + 8 * texcoord_count
        # Check against the file before numpy allocates anything.
        if arrays_offset + arrays_size > size:
            raise corrupt(
                f"frame {frame_number}: {vertex_count} vertices, {normal_count} normals and "
                f"{texcoord_count} texcoords ({arrays_size} bytes) run past the end of the file "
                f"({size} bytes)",
                header_offset,
            )
        # On disk a face is 3 vertex, 3 normal, 3 texcoord indices; the mesh wants corner-major.
        raw_faces = np.frombuffer(buffer, face_dtype, face_count * 9, faces_offset).reshape(face_count, 3, 3)
        corners = raw_faces.transpose(0, 2, 1).astype(np.int64)
        offset = arrays_offset
        positions = np.frombuffer(buffer, float_dtype, vertex_count * 3, offset).reshape(-1, 3)
        offset += 12 * vertex_count
        normals = np.frombuffer(buffer, float_dtype, normal_count * 3, offset).reshape(-1, 3)
        offset += 12 * normal_count
        texcoords = np.frombuffer(buffer, float_dtype, texcoord_count * 2, offset).reshape(-1, 2)
        offset += 8 * texcoord_count
        frame = Frame(positions, normals, texcoords, corners)
        for face, corner, kind, index in frame.bad_indices():
            what = ("vertex", "normal", "texcoord")[kind]
            count = (vertex_count, normal_count, texcoord_count)[kind]
            raise corrupt(
                f"frame {frame_number} face {face} corner {corner}: {what} index {index} is past the "
                f"{count} {what}{'es' if what == 'vertex' else 's'}".replace("vertexes", "vertices"),
                faces_offset + face * FACE_SIZE + kind * 6 + corner * 2,
            )
        for problem in frame.non_finite():
            issues.append(f"frame {frame_number}: {problem}" if frame_number else problem)
        frames.append(frame)
        position = offset
    if position != size:
        issues.append(f"{size - position} bytes after the last frame are ignored")
    for issue in issues:
        warnings.warn(f"{label}: {issue}", stacklevel=2)
    first = frames[0]
    return Mesh(
        first.positions,
        first.normals,
        first.texcoords,
        first.corners,
        extra_frames=frames[1:],
        magic=magic,
        name=name,
        issues=issues,
    )


def write(mesh: Mesh) -> bytes:
    """The JOE v3 bytes of `mesh` (every frame). Keeps the mesh's magic (IDP2 when it has
    none). Raises `FormatLimitError` for more than 32,000 faces or an index space past 65,536
    entries, and `ModelError` for an index past its array."""
    import numpy as np

    frames = mesh.frames
    face_count = mesh.face_count
    if face_count > MAX_FACES:
        raise FormatLimitError(f"{face_count} faces: JOE models hold at most {MAX_FACES} (split the model)")
    magic = mesh.magic if mesh.magic is not None else DEFAULT_MAGIC
    if len(magic) != 4:
        raise FormatLimitError(f"a JOE magic is 4 bytes, not {len(magic)}")
    parts = [HEADER.pack(magic, VERSION, face_count, len(frames))]
    for frame_number, frame in enumerate(frames):
        if frame.face_count != face_count:
            raise FormatLimitError(
                f"frame {frame_number} has {frame.face_count} faces, frame 0 {face_count}: "
                "JOE frames share one face count"
            )
        arrays = (("positions", frame.positions), ("normals", frame.normals), ("texcoords", frame.texcoords))
        for name, values in arrays:
            if len(values) > MAX_INDEX_ENTRIES:
                raise FormatLimitError(
                    f"{len(values)} {name}: JOE's 16-bit indices reach at most {MAX_INDEX_ENTRIES} (split the model)"
                )
        frame.check_indices()
        corners = frame.corners
        if corners.size and (corners.min() < 0 or corners.max() >= MAX_INDEX_ENTRIES):
            # Ignored indices of empty arrays must still fit in 16 bits.
            raise FormatLimitError("an index does not fit JOE's unsigned 16 bits")
        parts.append(np.ascontiguousarray(corners.transpose(0, 2, 1), dtype="<u2").tobytes())
        parts.append(FRAME_HEADER.pack(len(frame.positions), len(frame.texcoords), len(frame.normals)))
        for values in (frame.positions, frame.normals, frame.texcoords):
            parts.append(np.ascontiguousarray(values, dtype="<f4").tobytes())
    return b"".join(parts)
