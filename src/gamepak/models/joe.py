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

import os
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import CorruptArchiveError, FormatLimitError

# The header, its checks and the sniffer live in `joe_header` (detection asks them of every
# file without loading the mesh model); they are this module's names too.
from .joe_header import (  # noqa: F401 - this module's names too
    DEFAULT_MAGIC,
    FACE_SIZE,
    FRAME_HEADER,
    HEADER,
    MAX_FACES,
    SNIFF_WINDOW,
    VERSION,
    _expected_size,
    sniff,
)
from .mesh import FrameSequence

if TYPE_CHECKING:
    from .mesh import Frame, Mesh

# uint16 indices: each index space holds at most this many entries.
MAX_INDEX_ENTRIES = 1 << 16


def looks_like_text(data: bytes) -> bool:
    """True when the start of `data` is printable text (VDrift keeps text files named .joe)."""
    head = data[:512]
    if not head:
        return False
    printable = sum(1 for byte in head if 32 <= byte < 127 or byte in (9, 10, 13))
    return printable == len(head)


# Per frame, in the table the reader builds: faces offset, vertex, texcoord, normal counts.
FACES_AT, VERTICES, TEXCOORDS, NORMALS = range(4)
# Frames whose problems are spelled out one by one; the rest are counted.
REPORTED_FRAMES = 5
# Bytes of face data gathered at once when checking every frame's indices.
CHECK_CHUNK = 1 << 19


class FrameList(FrameSequence):
    """Frames 1.. of a JOE file, each built from the file's bytes on first use: a file of many
    frames costs one table of counts, not one set of arrays per frame."""

    def __init__(self, buffer: bytearray, face_count: int, table: Any, end: int, label: str) -> None:
        self._buffer = buffer
        self._face_count = face_count
        self._table = table  # (frames, 4) int64 rows: faces offset, vertex/texcoord/normal counts
        self._end = end  # where the last frame ends
        self._label = label
        self._built: dict[int, Frame] = {}

    def __len__(self) -> int:
        return len(self._table)

    def _frame(self, index: int) -> Frame:
        frame = self._built.get(index)
        if frame is None:
            frame = _frame_at(self._buffer, self._face_count, self._table[index])
            self._built[index] = frame
        return frame

    def stored_bytes(self) -> bytes | None:
        """The frames' bytes as read, while no frame has been handed out (and so edited)."""
        if self._built or not len(self._table):
            return None
        return bytes(self._buffer[int(self._table[0, FACES_AT]) : self._end])


def _frame_at(buffer: bytearray, face_count: int, row: Any) -> Frame:
    """The frame whose faces start at row[FACES_AT]: views into `buffer`, indices converted."""
    import numpy as np

    from .mesh import Frame

    faces_offset = int(row[FACES_AT])
    vertex_count, texcoord_count, normal_count = int(row[VERTICES]), int(row[TEXCOORDS]), int(row[NORMALS])
    raw_faces = np.frombuffer(buffer, "<u2", face_count * 9, faces_offset).reshape(face_count, 3, 3)
    # On disk a face is 3 vertex, 3 normal, 3 texcoord indices; the mesh wants corner-major.
    corners = raw_faces.transpose(0, 2, 1).astype(np.int64)
    positions_at = faces_offset + face_count * FACE_SIZE + FRAME_HEADER.size
    normals_at = positions_at + 12 * vertex_count
    texcoords_at = normals_at + 12 * normal_count
    return Frame(
        np.frombuffer(buffer, "<f4", vertex_count * 3, positions_at).reshape(-1, 3),
        np.frombuffer(buffer, "<f4", normal_count * 3, normals_at).reshape(-1, 3),
        np.frombuffer(buffer, "<f4", texcoord_count * 2, texcoords_at).reshape(-1, 2),
        corners,
        offsets=(positions_at, normals_at, texcoords_at),
    )


def _frame_end(
    header_offset: int,
    counts: tuple[int, int, int],
    frame_number: int,
    size: int,
    corrupt: Callable[[str, int], Exception],
) -> int:
    """Where a frame whose header (vertex, texcoord, normal counts) lies at `header_offset`
    ends, its counts checked against a file of `size` bytes before anything is allocated."""
    vertex_count, texcoord_count, normal_count = counts
    if min(counts) < 0:
        names = ("vertex", "texcoord", "normal")
        field_number = next(n for n, count in enumerate(counts) if count < 0)
        raise corrupt(
            f"frame {frame_number}: negative {names[field_number]} count {counts[field_number]}",
            header_offset + 4 * field_number,
        )
    arrays_size = 12 * vertex_count + 12 * normal_count + 8 * texcoord_count
    end = header_offset + FRAME_HEADER.size + arrays_size
    if end > size:
        raise corrupt(
            f"frame {frame_number}: {vertex_count} vertices, {normal_count} normals and "
            f"{texcoord_count} texcoords ({arrays_size} bytes) run past the end of the file ({size} bytes)",
            header_offset,
        )
    return end


def _frame_table(data: bytes, face_count: int, frame_count: int, corrupt: Callable[[str, int], Exception]) -> Any:
    """(frame_count, 4) rows of faces offset and counts, every count checked against the file
    size before anything is allocated for it; and where the last frame ends."""
    import numpy as np

    size = len(data)
    faces_size = face_count * FACE_SIZE
    uniform = _uniform_frame_table(data, face_count, frame_count)
    if uniform is not None:
        return uniform
    rows: list[tuple[int, int, int, int]] = []
    position = HEADER.size
    unpack = FRAME_HEADER.unpack_from
    for frame_number in range(frame_count):
        header_offset = position + faces_size
        if header_offset + FRAME_HEADER.size > size:
            raise corrupt(f"frame {frame_number}: faces and frame header run past the end of the file", position)
        counts = unpack(data, header_offset)
        end = _frame_end(header_offset, counts, frame_number, size, corrupt)
        rows.append((position, *counts))
        position = end
    return np.array(rows, dtype=np.int64).reshape(-1, 4), position


def _uniform_frame_table(data: bytes, face_count: int, frame_count: int) -> tuple[Any, int] | None:
    """The frame table at numpy speed when every frame has frame 0's counts (animations do),
    else None."""
    import numpy as np

    faces_size = face_count * FACE_SIZE
    first_header = HEADER.size + faces_size
    if first_header + FRAME_HEADER.size > len(data):
        return None
    counts = FRAME_HEADER.unpack_from(data, first_header)
    vertex_count, texcoord_count, normal_count = counts
    if min(counts) < 0:
        return None
    frame_size = faces_size + FRAME_HEADER.size + 12 * vertex_count + 12 * normal_count + 8 * texcoord_count
    end = HEADER.size + frame_count * frame_size
    if end > len(data):
        return None
    if frame_count == 1:
        return np.array([[HEADER.size, vertex_count, texcoord_count, normal_count]], dtype=np.int64), end
    starts = HEADER.size + frame_size * np.arange(frame_count, dtype=np.int64)
    whole = np.frombuffer(data, np.uint8, end)
    # Every frame header, seen through one strided view of the file (nothing gathered).
    header_bytes = np.lib.stride_tricks.as_strided(
        whole[first_header:], shape=(frame_count, FRAME_HEADER.size), strides=(frame_size, 1), writeable=False
    )
    headers = np.ascontiguousarray(header_bytes).view("<i4")
    if not (headers == np.array(counts, dtype="<i4")).all():
        return None
    table = np.empty((frame_count, 4), dtype=np.int64)
    table[:, FACES_AT] = starts
    table[:, VERTICES], table[:, TEXCOORDS], table[:, NORMALS] = vertex_count, texcoord_count, normal_count
    return table, end


def _first_bad_index_frame(buffer: bytearray, face_count: int, table: Any) -> int | None:
    """The first frame with an index past its array, checked for all frames at once."""
    import numpy as np

    if not face_count:
        return None
    if len(table) == 1:
        # One frame (nearly every model): its faces are one array already; a scene reads
        # thousands of such models, where the general path's set-up is most of the cost.
        faces = np.frombuffer(buffer, "<u2", face_count * 9, int(table[0, FACES_AT])).reshape(face_count, 3, 3)
        largest = faces.max(axis=(0, 2))
        for kind, column in enumerate((VERTICES, NORMALS, TEXCOORDS)):
            count = int(table[0, column])
            if largest[kind] >= count and (count > 0 or kind == 0):
                return 0
        return None
    whole = np.frombuffer(buffer, np.uint8)
    face_bytes = np.arange(face_count * FACE_SIZE)
    chunk = max(1, CHECK_CHUNK // (face_count * FACE_SIZE))
    for start in range(0, len(table), chunk):
        rows = table[start : start + chunk]
        gathered = whole[rows[:, FACES_AT, None] + face_bytes]
        faces = gathered.view("<u2").reshape(len(rows), face_count, 3, 3)  # kinds x corners
        for kind, column in enumerate((VERTICES, NORMALS, TEXCOORDS)):
            counts = rows[:, column]
            largest = faces[:, :, kind, :].reshape(len(rows), -1).max(axis=1)
            bad = (largest >= counts) & ((counts > 0) | (kind == 0))
            if bad.any():
                return start + int(np.flatnonzero(bad)[0])
    return None


# Floats looked at in one step when checking frames for NaN and infinite values.
CHECK_FLOATS = 1 << 20


def _bad_index_error(
    buffer: bytearray,
    face_count: int,
    table: Any,
    bad_frame: int,
    first_frame: int,
    base: int,
    corrupt: Callable[[str, int], Exception],
) -> Exception:
    """The error for the first index past its array in row `bad_frame` of `table` (frames read
    into `buffer` from the file's offset `base`, the first of them frame `first_frame`): the
    frame, face, corner and index, at the index's own offset in the file. `read` and
    `scan_file` (a window at a time) both say it so."""
    frame = _frame_at(buffer, face_count, table[bad_frame])
    face, corner, kind, index = frame.bad_indices()[0]
    what = ("vertex", "normal", "texcoord")[kind]
    count = len((frame.positions, frame.normals, frame.texcoords)[kind])
    plural = "vertices" if what == "vertex" else f"{what}s"
    return corrupt(
        f"frame {first_frame + bad_frame} face {face} corner {corner}: {what} index {index} is past the "
        f"{count} {plural}",
        base + int(table[bad_frame, FACES_AT]) + face * FACE_SIZE + kind * 6 + corner * 2,
    )


def _non_finite_frames(buffer: bytearray, face_count: int, table: Any) -> Any:
    """The numbers of the frames holding a NaN or infinite value, found for all frames at once."""
    import numpy as np

    floats_at = table[:, FACES_AT] + face_count * FACE_SIZE + FRAME_HEADER.size
    float_counts = 3 * table[:, VERTICES] + 3 * table[:, NORMALS] + 2 * table[:, TEXCOORDS]
    if len(table) == 1 and float_counts[0] <= CHECK_FLOATS:
        start, count = int(floats_at[0]), int(float_counts[0])
        if start % 4 == 0:
            values = np.frombuffer(buffer, "<f4", count, start)
        else:
            values = np.frombuffer(bytes(buffer[start : start + 4 * count]), "<f4")
        return np.zeros(0, np.int64) if np.isfinite(values).all() else np.zeros(1, np.int64)
    bad_frames = np.zeros(len(table), dtype=bool)
    # A frame's floats are 4-byte aligned to its own start: one view of the file per alignment.
    for alignment in range(4):
        chosen = (floats_at % 4 == alignment) & (float_counts > 0)
        if not chosen.any():
            continue
        usable = (len(buffer) - alignment) // 4
        values = np.frombuffer(buffer, "<f4", usable, alignment)
        rows = np.flatnonzero(chosen)
        firsts = (floats_at[rows] - alignment) // 4
        ends = firsts + float_counts[rows]
        # Frames in file order, a run of them at a time: the counts of non-finite values cost
        # a few bytes per float of the run, not of the whole file (a 70 MB model is 17 M floats).
        start = 0
        while start < len(rows):
            stop = start + 1
            while stop < len(rows) and ends[stop] - firsts[start] <= CHECK_FLOATS:
                stop += 1
            low = int(firsts[start])
            span = values[low : int(ends[stop - 1])]
            running = np.zeros(len(span) + 1, dtype=np.int64 if len(span) >= 1 << 31 else np.int32)
            np.cumsum(~np.isfinite(span), out=running[1:])
            bad_frames[rows[start:stop]] = running[ends[start:stop] - low] > running[firsts[start:stop] - low]
            start = stop
    return np.flatnonzero(bad_frames)


def read(data: bytes, *, path: str | None = None, name: str = "") -> Mesh:
    """Parse a JOE v3 model. Raises `CorruptArchiveError` (with the file and offset) for data
    that contradicts the format; NaN or infinite values are reported with a warning and in
    `mesh.issues`. Frames after the first are built when used (`mesh.extra_frames`)."""
    from .mesh import Mesh

    label = path or name or "<bytes>"

    def corrupt(message: str, offset: int) -> CorruptArchiveError:
        return CorruptArchiveError(message, path=label, offset=offset)

    size = len(data)
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
    if HEADER.size + frame_count * (face_count * FACE_SIZE + FRAME_HEADER.size) > size:
        raise corrupt(f"{frame_count} frames of {face_count} faces need more than the file's {size} bytes", 12)
    table, end = _frame_table(data, face_count, frame_count, corrupt)
    # A private, writable copy: the mesh's arrays are views into it and may be edited.
    from ..core.source import OwnedBuffer

    buffer = data if isinstance(data, OwnedBuffer) else bytearray(data)

    bad_frame = _first_bad_index_frame(buffer, face_count, table)
    if bad_frame is not None:
        raise _bad_index_error(buffer, face_count, table, bad_frame, 0, 0, corrupt)
    issues: list[str] = []
    bad_frames = _non_finite_frames(buffer, face_count, table)
    for frame_number in bad_frames[:REPORTED_FRAMES].tolist():
        frame = _frame_at(buffer, face_count, table[frame_number])
        for problem in frame.non_finite():
            issues.append(f"frame {frame_number}: {problem}" if frame_number else problem)
    if len(bad_frames) > REPORTED_FRAMES:
        issues.append(f"{len(bad_frames) - REPORTED_FRAMES} more frames hold NaN or infinite values")
    if end != size:
        issues.append(f"{size - end} bytes after the last frame are ignored")
    for issue in issues:
        warnings.warn(f"{label}: {issue}", stacklevel=2)
    first = _frame_at(buffer, face_count, table[0])
    return Mesh(
        first.positions,
        first.normals,
        first.texcoords,
        first.corners,
        first.offsets,
        extra_frames=FrameList(buffer, face_count, table[1:], end, label),
        magic=magic,
        name=name,
        issues=issues,
        source=label,
    )


# Bytes of a JOE file looked at at once by `scan_file` (a frame larger than this is read whole).
SCAN_WINDOW = 8 << 20


class UnreadFrames(FrameSequence):
    """Frames 1.. of a model scanned by `scan_file`: counted and checked, not kept."""

    def __init__(self, count: int, label: str) -> None:
        self._count = count
        self._label = label

    def __len__(self) -> int:
        return self._count

    def _frame(self, index: int) -> Frame:
        from ..errors import GamepakError

        raise GamepakError(f"{self._label}: frame {index + 1} was checked, not kept (load the model to use it)")


def scan_file(path: str, *, name: str = "") -> Mesh:
    """The model at `path` as `read` gives it, frame 0 only (later frames are counted as
    `extra_frames` but not kept): every frame is checked as `read` checks it (the same errors
    and issues), a window of SCAN_WINDOW bytes at a time, so that what `gamepak model info`
    prints costs about the window, not the file."""
    import numpy as np

    def corrupt(message: str, offset: int) -> CorruptArchiveError:
        return CorruptArchiveError(message, path=path, offset=offset)

    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        head = handle.read(HEADER.size)
        if len(head) < HEADER.size or HEADER.unpack_from(head, 0)[1] != VERSION:
            return read(head + handle.read(SNIFF_WINDOW), path=path, name=name)  # read's own error
        magic, _, face_count, frame_count = HEADER.unpack_from(head, 0)
        if face_count < 0 or face_count > MAX_FACES or frame_count < 1:
            return read(head, path=path, name=name)  # read's own error for these fields
        faces_size = face_count * FACE_SIZE
        if HEADER.size + frame_count * (faces_size + FRAME_HEADER.size) > size:
            raise corrupt(f"{frame_count} frames of {face_count} faces need more than the file's {size} bytes", 12)

        def frame_end(position: int, counts: tuple[int, int, int], frame_number: int) -> int:
            return _frame_end(position + faces_size, counts, frame_number, size, corrupt)

        def read_at(offset: int, count: int) -> bytearray:
            handle.seek(offset)
            data = bytearray(count)
            del data[handle.readinto(data) :]
            return data

        first_frame = b""
        non_finite: list[tuple[int, list[str]]] = []
        non_finite_count = 0
        position = HEADER.size
        done = 0
        want = SCAN_WINDOW
        while done < frame_count:
            window = read_at(position, want)
            rows: list[tuple[int, int, int, int]] = []
            cursor = position
            while done + len(rows) < frame_count:
                header_offset = cursor + faces_size
                if header_offset + FRAME_HEADER.size > size:
                    raise corrupt(
                        f"frame {done + len(rows)}: faces and frame header run past the end of the file", cursor
                    )
                if header_offset + FRAME_HEADER.size > position + len(window):
                    break
                counts = FRAME_HEADER.unpack_from(window, header_offset - position)
                end = frame_end(cursor, counts, done + len(rows))
                if end > position + len(window):
                    break
                rows.append((cursor - position, counts[0], counts[1], counts[2]))
                cursor = end
            if not rows:
                # One frame larger than the window: read it whole.
                counts = FRAME_HEADER.unpack(read_at(position + faces_size, FRAME_HEADER.size))
                want = frame_end(position, counts, done) - position
                continue
            want = SCAN_WINDOW
            table = np.array(rows, dtype=np.int64).reshape(-1, 4)
            bad_frame = _first_bad_index_frame(window, face_count, table)
            if bad_frame is not None:
                raise _bad_index_error(window, face_count, table, bad_frame, done, position, corrupt)
            for frame_number in _non_finite_frames(window, face_count, table).tolist():
                non_finite_count += 1
                if len(non_finite) < REPORTED_FRAMES:
                    frame = _frame_at(window, face_count, table[frame_number])
                    if frame.offsets is not None:  # the file's byte offsets, not the window's
                        frame.offsets = (
                            frame.offsets[0] + position,
                            frame.offsets[1] + position,
                            frame.offsets[2] + position,
                        )
                    problems = frame.non_finite()
                    non_finite.append((done + frame_number, problems))
            if done == 0:
                first_frame = bytes(window[: rows[1][0] if len(rows) > 1 else cursor - position])
            done += len(rows)
            position = cursor
            del window
    issues = [
        f"frame {number}: {problem}" if number else problem for number, problems in non_finite for problem in problems
    ]
    if non_finite_count > REPORTED_FRAMES:
        issues.append(f"{non_finite_count - REPORTED_FRAMES} more frames hold NaN or infinite values")
    if position != size:
        issues.append(f"{size - position} bytes after the last frame are ignored")
    # Frame 0 alone, read as a one-frame file: its arrays as `read` makes them.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mesh = read(HEADER.pack(magic, VERSION, face_count, 1) + first_frame, path=path, name=name)
    for issue in issues:
        warnings.warn(f"{path}: {issue}", stacklevel=2)
    mesh.issues = issues
    mesh.extra_frames = UnreadFrames(frame_count - 1, path)
    return mesh


def write(mesh: Mesh) -> bytes:
    """The JOE v3 bytes of `mesh` (every frame). Keeps the mesh's magic (IDP2 when it has
    none). Raises `FormatLimitError` for more than 32,000 faces or an index space past 65,536
    entries, and `ModelError` for an index past its array."""
    import numpy as np

    face_count = mesh.face_count
    if face_count > MAX_FACES:
        raise FormatLimitError(f"{face_count} faces: JOE models hold at most {MAX_FACES} (split the model)")
    magic = mesh.magic if mesh.magic is not None else DEFAULT_MAGIC
    if len(magic) != 4:
        raise FormatLimitError(f"a JOE magic is 4 bytes, not {len(magic)}")
    parts = [HEADER.pack(magic, VERSION, face_count, mesh.frame_count)]
    extra = mesh.extra_frames
    stored = extra.stored_bytes() if isinstance(extra, FrameList) and extra._face_count == face_count else None
    for frame_number, frame in enumerate(mesh.frames if stored is None else [mesh]):
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
    if stored is not None:
        parts.append(stored)  # frames nobody touched: their bytes as read
    return b"".join(parts)
