"""The format-neutral mesh that sits between every model reader and writer.

A `Mesh` keeps three separately indexed attribute arrays, the way JOE and OBJ store them:

| attribute   | array shape | dtype   |
|-------------|-------------|---------|
| positions   | (V, 3)      | float32 |
| normals     | (N, 3)      | float32 (N may be 0: no normals) |
| texcoords   | (T, 2)      | float32 (T may be 0: no texture coordinates) |
| corners     | (F, 3, 3)   | int64: faces x 3 corners x (position, normal, texcoord) index |

When an attribute array is empty its indices in `corners` mean nothing (JOE files keep zeros
there) and are never checked. Renderers and glTF/PLY need one index per vertex: `unique_vertices`
turns the corner triples into unique (position, normal, texcoord) vertices.

A JOE file may hold several frames; frame 0 is the mesh itself and the others live in
`extra_frames` (a JOE reader builds them only when used). `magic` keeps the first four bytes of
a JOE file so that re-writing it gives the same bytes back.

Axes: a `Mesh` holds coordinates as VDrift does, **Z up** (+Y forward). Files whose convention
is Y up (glTF always; OBJ as Blender writes and reads it by default) are turned on the way in and
out with `to_up_axis` / `from_up_axis`: (x, y, z) Z-up is (x, z, -y) Y-up, a rotation, so
handedness and face winding are kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

from ..core.arrays import sorted_unique
from ..errors import GamepakError

if TYPE_CHECKING:
    import numpy as np

ATTRIBUTES = ("positions", "normals", "texcoords")
UP_AXES = ("y", "z")


class ModelError(GamepakError):
    """A model that gamepak cannot read, check or write (bad data, or past a format's limits)."""


def _array(values: Any, kind: str, row_shape: tuple[int, ...]) -> np.ndarray:
    """`values` as a C-contiguous array of `kind` ("f": float32, "i": int64) with rows of
    `row_shape`; an array that already is one is kept as it is (batch readers make thousands
    of meshes, and the conversions would be most of their cost)."""
    import numpy as np

    if type(values) is np.ndarray:
        dtype = values.dtype
        usable = dtype.kind == kind and dtype.itemsize == (4 if kind == "f" else 8) and dtype.isnative
        if usable and values.shape[1:] == row_shape and values.flags.c_contiguous:
            return values
    return np.ascontiguousarray(values, dtype=np.float32 if kind == "f" else np.int64).reshape(-1, *row_shape)


@dataclass
class Frame:
    """One configuration of a model: attribute arrays and the faces that index them."""

    positions: np.ndarray
    normals: np.ndarray
    texcoords: np.ndarray
    corners: np.ndarray
    # Byte offsets of the positions, normals and texcoords arrays in the file read, when known
    # (errors then name the byte of a bad value).
    offsets: tuple[int, int, int] | None = None

    def __post_init__(self) -> None:
        self.positions = _array(self.positions, "f", (3,))
        self.normals = _array(self.normals, "f", (3,))
        self.texcoords = _array(self.texcoords, "f", (2,))
        self.corners = _array(self.corners, "i", (3, 3))

    @property
    def face_count(self) -> int:
        return int(self.corners.shape[0])

    def bad_indices(self) -> list[tuple[int, int, int, int]]:
        """(face, corner, attribute number, index) of the first index past its array, per
        attribute; empty when every index fits. Empty attribute arrays are not checked."""
        import numpy as np

        found = []
        for kind, name in enumerate(ATTRIBUTES):
            count = len(getattr(self, name))
            if count == 0 and kind > 0:
                continue
            column = self.corners[:, :, kind]
            bad = np.flatnonzero(((column < 0) | (column >= count)).ravel())
            if bad.size:
                first = int(bad[0])
                found.append((first // 3, first % 3, kind, int(column.ravel()[first])))
        return found

    def check_indices(self) -> None:
        """Raise `ModelError` for the first index past its array."""
        for face, corner, kind, index in self.bad_indices():
            count = len(getattr(self, ATTRIBUTES[kind]))
            raise ModelError(
                f"face {face} corner {corner}: {ATTRIBUTES[kind][:-1]} index {index} is past the "
                f"{count} {ATTRIBUTES[kind]}"
            )

    def non_finite(self) -> list[str]:
        """Sentences naming attribute arrays that hold NaN or infinite values (with the byte
        offset of the first bad value when the frame knows where it was read from)."""
        import numpy as np

        problems = []
        for kind, name in enumerate(ATTRIBUTES):
            values = getattr(self, name)
            bad_rows = np.flatnonzero(~np.isfinite(values).all(axis=1))
            if bad_rows.size:
                first = int(bad_rows[0])
                problems.append(
                    f"{bad_rows.size} of the {len(values)} {name} are NaN or infinite "
                    f"(first: {name[:-1]} {first}{self._byte(kind, first)})"
                )
        return problems

    def _byte(self, kind: int, row: int) -> str:
        if self.offsets is None:
            return ""
        return f" at byte {self.offsets[kind] + row * 4 * (2 if kind == 2 else 3)}"

    def first_non_finite(self) -> str | None:
        """The first NaN or infinite value as a phrase (`position 2 (nan, 0, 1) at byte 58`),
        or None when every value is finite."""
        import numpy as np

        for kind, name in enumerate(ATTRIBUTES):
            values = getattr(self, name)
            bad_rows = np.flatnonzero(~np.isfinite(values).all(axis=1))
            if bad_rows.size:
                row = int(bad_rows[0])
                shown = ", ".join(f"{value:g}" for value in values[row].tolist())
                return f"{name[:-1]} {row} ({shown}){self._byte(kind, row)}"
        return None

    def corner_values(self) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """Per-corner attribute values (F, 3, k): what a renderer sees, whatever the indexing.
        None for an attribute the frame does not have."""
        positions = self.positions[self.corners[:, :, 0]]
        normals = self.normals[self.corners[:, :, 1]] if len(self.normals) else None
        texcoords = self.texcoords[self.corners[:, :, 2]] if len(self.texcoords) else None
        return positions, normals, texcoords

    def face_normals(self) -> np.ndarray:
        """Unit geometric normal of every face (counter-clockwise front); (0, 0, 1) for
        degenerate faces."""
        return triangle_normals(self.positions[self.corners[:, :, 0]])

    def unique_vertices(self) -> tuple[np.ndarray, np.ndarray]:
        """(unique (position, normal, texcoord) index triples (U, 3), per-corner vertex number
        (F*3,)): the vertex list a renderer or glTF needs. Missing attributes index 0."""
        import numpy as np

        triples = self.corners.reshape(-1, 3).copy()
        if not len(self.normals):
            triples[:, 1] = 0
        if not len(self.texcoords):
            triples[:, 2] = 0
        if not len(triples):
            return np.zeros((0, 3), dtype=np.int64), np.zeros(0, dtype=np.int64)
        spans = triples.max(axis=0) + 1
        if triples.min() >= 0 and int(spans[0]) * int(spans[1]) * int(spans[2]) < 1 << 62:
            # One integer per triple sorts as the rows do, and np.unique of a 1-D array is
            # several times faster than its row-wise form (which a 2,000-object scene feels).
            keys = (triples[:, 0] * spans[1] + triples[:, 1]) * spans[2] + triples[:, 2]
            unique_keys, inverse = np.unique(keys, return_inverse=True)
            unique = np.stack(
                [unique_keys // (spans[1] * spans[2]), unique_keys // spans[2] % spans[1], unique_keys % spans[2]],
                axis=1,
            )
            return unique, inverse.reshape(-1)
        unique, inverse = np.unique(triples, axis=0, return_inverse=True)
        return unique, inverse.reshape(-1)

    def bounds(self) -> tuple[list[float], list[float]] | None:
        """(minimum, maximum) of the positions the faces use, ignoring non-finite values."""
        import numpy as np

        if not self.face_count:
            return None
        used = self.positions[sorted_unique(self.corners[:, :, 0])]
        used = used[np.isfinite(used).all(axis=1)]
        if not len(used):
            return None
        return used.min(axis=0).tolist(), used.max(axis=0).tolist()


@dataclass
class Mesh(Frame):
    """A model: frame 0's arrays, any further frames, and what a writer needs to reproduce the
    source file exactly."""

    extra_frames: Sequence[Frame] = field(default_factory=list)
    # The 4 magic bytes a JOE file carried; None writes the default (IDP2).
    magic: bytes | None = None
    name: str = ""
    # Problems found while reading that did not stop it (non-finite values, ...).
    issues: list[str] = field(default_factory=list)
    # The file (or ARCHIVE:MEMBER) the mesh was read from, for messages.
    source: str = ""

    @property
    def frames(self) -> list[Frame]:
        """Every frame, frame 0 (this mesh) first."""
        return [self, *self.extra_frames]

    @property
    def frame_count(self) -> int:
        """How many frames the mesh has (without building the extra ones)."""
        return 1 + len(self.extra_frames)

    def _derived(
        self,
        positions: Any,
        normals: Any,
        texcoords: Any,
        corners: Any,
        *,
        offsets: tuple[int, int, int] | None = None,
        extra_frames: Sequence[Frame] = (),
    ) -> Mesh:
        """A mesh made from this one's arrays changed: the same magic, name, issues and source."""
        return Mesh(
            positions,
            normals,
            texcoords,
            corners,
            offsets,
            extra_frames=list(extra_frames) if isinstance(extra_frames, tuple) else extra_frames,
            magic=self.magic,
            name=self.name,
            issues=list(self.issues),
            source=self.source,
        )

    def require_finite(self, what: str) -> None:
        """Raise `ModelError` when frame 0 holds a NaN or infinite value, naming the file, the
        value and its byte offset: `what` (e.g. "glTF") cannot store it."""
        first = self.first_non_finite()
        if first is not None:
            label = self.source or self.name or "the model"
            raise ModelError(
                f"{label}: frame 0: {first} is NaN or infinite, which {what} cannot hold (fix the value in the source)"
            )

    def to_up_axis(self, up: str) -> Mesh:
        """This mesh (Z up) with its coordinates turned for a file whose up axis is `up`."""
        return self._turned(up, z_up_to_y_up)

    def from_up_axis(self, up: str) -> Mesh:
        """This mesh, read from a file whose up axis is `up`, turned to Z up."""
        return self._turned(up, y_up_to_z_up)

    def _turned(self, up: str, turn: Any) -> Mesh:
        if up not in UP_AXES:
            raise ModelError(f"unknown up axis {up!r}; use one of {', '.join(UP_AXES)}")
        if up == "z":
            return self
        return self._derived(
            turn(self.positions),
            turn(self.normals),
            self.texcoords,
            self.corners,
            offsets=self.offsets,
            extra_frames=TurnedFrames(self.extra_frames, turn),
        )

    def merged_duplicates(self) -> Mesh:
        """A copy in which values repeated in an attribute array are stored once (bit for bit
        equal), in the order of their first appearance; unused values are kept. An array
        without repeats keeps its indexing. Frame 0 only."""
        import numpy as np

        arrays = []
        corners = self.corners.copy()
        for kind, name in enumerate(ATTRIBUTES):
            values = getattr(self, name)
            if len(values) < 2:
                arrays.append(values)
                continue
            rows = np.ascontiguousarray(values).view(np.dtype((np.void, values.dtype.itemsize * values.shape[1])))
            _, first, inverse = np.unique(rows.ravel(), return_index=True, return_inverse=True)
            if len(first) == len(values):
                arrays.append(values)
                continue
            order = np.argsort(first)  # unique values by first appearance
            rank = np.empty_like(order)
            rank[order] = np.arange(len(order))
            arrays.append(values[first[order]])
            if len(corners):
                column = corners[:, :, kind]
                corners[:, :, kind] = rank[inverse.reshape(-1)[column]]
        return self._derived(arrays[0], arrays[1], arrays[2], corners)

    @classmethod
    def from_vertices(
        cls,
        positions: Any,
        indices: Any,
        normals: Any | None = None,
        texcoords: Any | None = None,
        **fields: Any,
    ) -> Mesh:
        """A mesh from renderer-style data: one index per corner into vertex arrays that share
        that index (as glTF and PLY store them). `indices` is (F, 3)."""
        import numpy as np

        indices = np.asarray(indices, dtype=np.int64).reshape(-1, 3)
        positions = np.asarray(positions, dtype=np.float32).reshape(-1, 3)
        corners = np.repeat(indices[:, :, None], 3, axis=2)
        normal_array = np.zeros((0, 3), np.float32) if normals is None else normals
        texcoord_array = np.zeros((0, 2), np.float32) if texcoords is None else texcoords
        if normals is None:
            corners[:, :, 1] = 0
        if texcoords is None:
            corners[:, :, 2] = 0
        mesh = cls(positions, normal_array, texcoord_array, corners, **fields)
        if len(mesh.normals) and len(mesh.normals) != len(mesh.positions):
            raise ModelError(f"{len(mesh.normals)} normals for {len(mesh.positions)} vertices")
        if len(mesh.texcoords) and len(mesh.texcoords) != len(mesh.positions):
            raise ModelError(f"{len(mesh.texcoords)} texture coordinates for {len(mesh.positions)} vertices")
        return mesh

    def compacted(self) -> Mesh:
        """A copy with duplicate values merged in each attribute array (and unused ones
        dropped), so each index space is as small as the data allows. Frame 0 only."""
        import numpy as np

        arrays = []
        corners = self.corners.copy()
        for kind, name in enumerate(ATTRIBUTES):
            values = getattr(self, name)
            if not len(values) or not len(corners):
                arrays.append(values[:0] if not len(corners) else values)
                if not len(values):
                    corners[:, :, kind] = 0
                continue
            used = values[corners[:, :, kind].ravel()]
            unique, inverse = np.unique(used, axis=0, return_inverse=True)
            arrays.append(unique)
            corners[:, :, kind] = inverse.reshape(-1, 3)
        return self._derived(arrays[0], arrays[1], arrays[2], corners)

    def with_normals(self) -> Mesh:
        """This mesh if it has normals, else a copy with one flat normal per face (JOE models
        need normals: VDrift lights with them)."""
        import numpy as np

        if len(self.normals) or not self.face_count:
            return self
        corners = self.corners.copy()
        corners[:, :, 1] = np.arange(self.face_count)[:, None]
        return self._derived(
            self.positions,
            self.face_normals().astype(np.float32),
            self.texcoords,
            corners,
            extra_frames=self.extra_frames,
        )

    def summary(self) -> dict[str, Any]:
        """Counts, bounds, texture coordinate range and issues, JSON-able."""
        import numpy as np

        bounds = self.bounds()
        texcoord_range = None
        if len(self.texcoords) and self.face_count:
            used = self.texcoords[sorted_unique(self.corners[:, :, 2])]
            used = used[np.isfinite(used).all(axis=1)]
            if len(used):
                texcoord_range = {"min": used.min(axis=0).tolist(), "max": used.max(axis=0).tolist()}
        unique, _ = self.unique_vertices()
        # The reader listed every frame's problems; frame 0 may have been edited since.
        issues = list(self.issues)
        issues.extend(problem for problem in self.non_finite() if problem not in issues)
        return {
            "name": self.name,
            "frames": self.frame_count,
            "faces": self.face_count,
            "positions": len(self.positions),
            "normals": len(self.normals),
            "texcoords": len(self.texcoords),
            "render_vertices": len(unique),
            "bounds": None if bounds is None else {"min": bounds[0], "max": bounds[1]},
            "texcoord_range": texcoord_range,
            "magic": None if self.magic is None else self.magic.hex(),
            "issues": issues,
        }


class FrameSequence(Sequence[Frame]):
    """Frames made on use: subclasses give `__len__` and `_frame(index)` (0 <= index < len);
    indexing (negative, slices) is handled here."""

    def __len__(self) -> int:
        raise NotImplementedError

    def _frame(self, index: int) -> Frame:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> Frame: ...

    @overload
    def __getitem__(self, index: slice) -> list[Frame]: ...

    def __getitem__(self, index: int | slice) -> Frame | list[Frame]:
        if isinstance(index, slice):
            return [self._frame(number) for number in range(*index.indices(len(self)))]
        count = len(self)
        position = index + count if index < 0 else index
        if not 0 <= position < count:
            raise IndexError(f"frame {index + 1} of a model with {count + 1} frames")
        return self._frame(position)


class TurnedFrames(FrameSequence):
    """Frames whose positions and normals are turned when a frame is used (a mesh of many
    frames turned for a file that keeps only the first costs nothing for the others)."""

    def __init__(self, frames: Sequence[Frame], turn: Any) -> None:
        self._frames = frames
        self._turn = turn

    def __len__(self) -> int:
        return len(self._frames)

    def _frame(self, index: int) -> Frame:
        frame = self._frames[index]
        turn = self._turn
        return Frame(turn(frame.positions), turn(frame.normals), frame.texcoords, frame.corners, frame.offsets)


def triangle_normals(triangles: np.ndarray) -> np.ndarray:
    """Unit geometric normal of each triangle ((F, 3, 3) corner positions, counter-clockwise
    front); (0, 0, 1) for degenerate ones."""
    import numpy as np

    corners = triangles.astype(np.float64)
    cross = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    length = np.linalg.norm(cross, axis=1)
    result = np.zeros_like(cross)
    result[:, 2] = 1.0
    good = np.isfinite(length) & (length > 0)
    result[good] = cross[good] / length[good, None]
    return result


def normalised(vectors: np.ndarray, fallback: np.ndarray | None = None) -> np.ndarray:
    """Unit-length copies of `vectors`; rows of zero or non-finite length take the row of
    `fallback` (or +Z)."""
    import numpy as np

    values = vectors.astype(np.float64)
    length = np.linalg.norm(values, axis=1)
    good = np.isfinite(length) & (length > 1e-12)
    result = np.empty_like(values)
    result[good] = values[good] / length[good, None]
    if fallback is None:
        result[~good] = (0.0, 0.0, 1.0)
    else:
        result[~good] = fallback[~good]
    return result.astype(np.float32)


def z_up_to_y_up(vectors: np.ndarray) -> np.ndarray:
    """(x, y, z) Z-up -> (x, z, -y) Y-up: a rotation, so handedness and winding are kept."""
    import numpy as np

    return np.stack([vectors[:, 0], vectors[:, 2], -vectors[:, 1]], axis=1).astype(np.float32).reshape(-1, 3)


def y_up_to_z_up(vectors: np.ndarray) -> np.ndarray:
    """The inverse of `z_up_to_y_up`."""
    import numpy as np

    return np.stack([vectors[:, 0], -vectors[:, 2], vectors[:, 1]], axis=1).astype(np.float32).reshape(-1, 3)
