"""Quake alias models (`.mdl`, `IDPO` version 6).

Header (84 bytes):

| offset | size | field                                                     |
|--------|------|-----------------------------------------------------------|
| 0      | 4    | ident `IDPO`                                              |
| 4      | 4    | int32 version (6)                                         |
| 8      | 12   | float scale[3]                                            |
| 20     | 12   | float translate[3]                                        |
| 32     | 4    | float bounding radius                                     |
| 36     | 12   | float eye position[3]                                     |
| 48     | 4    | int32 skin count (>= 1)                                   |
| 52     | 8    | int32 skin width, height                                  |
| 60     | 4    | int32 vertex count                                        |
| 64     | 4    | int32 triangle count                                      |
| 68     | 4    | int32 frame count                                         |
| 72     | 4    | int32 sync type                                           |
| 76     | 4    | int32 flags                                               |
| 80     | 4    | float size                                                |

Then, without padding: skins (int32 kind: 0 = u8[w·h]; 1 = int32 n, float intervals[n],
n × u8[w·h]), st-vertices (int32 on-seam, s, t) × vertices, triangles (int32 faces-front,
int32 v[3]) × triangles, frames (int32 kind: 0 = trivertx min, max, char name[16],
trivertx[vertices]; 1 = int32 n, trivertx min, max, float intervals[n], n singles without
kind). A trivertx is u8 x, y, z, normal index (into the 162 `anorms`). Position = scale ·
v + translate. Bytes after the last frame (QMEX blocks of the QME editor) are kept, unread.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

from ...core.lazy import Lazy, NamedLazy
from .images import ImageError, PaletteImage
from .slots import SlotIndex

TYPE_CHECKING = False
if TYPE_CHECKING:
    import numpy as np

HEADER = struct.Struct("<4si3f3ff3fiiiiiiiif")
MAGIC = b"IDPO"
ST_VERTEX = 12
TRIANGLE = 16
TRIVERTX = 4
FRAME_NAME = 16


class ModelFormatError(ImageError):
    """An MDL whose counts or offsets do not fit its bytes."""


@dataclass(slots=True)
class Pose:
    name: str
    offset: int  # of its trivertx array
    group: int | None = None
    interval: float | None = None


@dataclass(slots=True)
class Skin:
    name: str
    offset: int
    group: int | None = None
    interval: float | None = None


@dataclass
class AliasModel:
    scale: tuple[float, float, float]
    translate: tuple[float, float, float]
    radius: float
    skin_width: int
    skin_height: int
    vertex_count: int
    triangle_count: int
    frame_count: int
    sync_type: int
    flags: int
    # Made per skin when read (`slots.Lazy`): a model of many 1x1 skins spends 5 bytes on each.
    skins: Sequence[Skin] = field(default_factory=list)
    poses: list[Pose] = field(default_factory=list)
    st_offset: int = 0
    triangle_offset: int = 0
    end: int = 0
    trailing: int = 0

    def st_vertices(self, data: bytes) -> np.ndarray:
        """(vertices, 3) int32: on-seam, s, t."""
        import numpy as np

        return np.frombuffer(data, "<i4", self.vertex_count * 3, self.st_offset).reshape(-1, 3)

    def triangles(self, data: bytes) -> np.ndarray:
        """(triangles, 4) int32: faces-front, v0, v1, v2 (indices checked when read)."""
        import numpy as np

        return np.frombuffer(data, "<i4", self.triangle_count * 4, self.triangle_offset).reshape(-1, 4)

    def pose_vertices(self, data: bytes, pose: int) -> np.ndarray:
        """(vertices, 4) uint8 packed vertices of one pose."""
        import numpy as np

        return np.frombuffer(data, np.uint8, self.vertex_count * 4, self.poses[pose].offset).reshape(-1, 4)

    def skin_images(self, data: bytes) -> Sequence[PaletteImage]:
        """Each skin (group members included) as an opaque palette image, made when read."""
        size = self.skin_width * self.skin_height
        skins = self.skins

        def image(index: int) -> PaletteImage:
            skin = skins[index]
            return PaletteImage(
                skin.name, "skin", self.skin_width, self.skin_height, [bytes(data[skin.offset : skin.offset + size])]
            )

        # The names without the pixels: an export names every skin's file before making any.
        names = skins.names if isinstance(skins, NamedLazy) else [skin.name for skin in skins]
        return NamedLazy(len(skins), image, names)

    def summary(self) -> dict[str, object]:
        return {
            "skins": len(self.skins),
            "skin_size": f"{self.skin_width}x{self.skin_height}",
            "vertices": self.vertex_count,
            "triangles": self.triangle_count,
            "frames": self.frame_count,
            "poses": len(self.poses),
            "frame_names": [pose.name for pose in self.poses],
            "flags": self.flags,
            "trailing_bytes": self.trailing,
        }


def _skin(index: SlotIndex, number: int) -> Skin:
    offset, slot, member, interval = index.locate(number)
    return Skin(index.name("skin", slot, member), offset, None if member is None else slot, interval)


def read(data: bytes, label: str) -> AliasModel:
    """Walk an MDL's sections, checking every count against the bytes left before using it."""
    size = len(data)
    if size < HEADER.size:
        raise ModelFormatError(f"MDL is {size} bytes, shorter than its 84-byte header", path=label, offset=0)
    fields = HEADER.unpack_from(data)
    ident, version = fields[0], fields[1]
    if ident != MAGIC:
        raise ModelFormatError(f"not a Quake model (ident {ident!r}, expected b'IDPO')", path=label, offset=0)
    if version != 6:
        raise ModelFormatError(f"MDL version {version} is not supported (only 6)", path=label, offset=4)
    scale, translate, radius = fields[2:5], fields[5:8], fields[8]
    skins, width, height, vertices, triangles, frames, sync, flags = fields[12:20]
    left = size - HEADER.size
    for name, value, offset, unit in (
        ("skin width", width, 52, 1),
        ("skin height", height, 56, 1),
        ("skin count", skins, 48, 4),
        ("vertex count", vertices, 60, ST_VERTEX),
        ("triangle count", triangles, 64, TRIANGLE),
        ("frame count", frames, 68, 4),
    ):
        if value < 1 or value > left // unit:
            raise ModelFormatError(f"{name} {value} does not fit the {size}-byte file", path=label, offset=offset)
    if width * height > left:
        raise ModelFormatError(f"skin {width}x{height} does not fit the {size}-byte file", path=label, offset=52)
    model = AliasModel(tuple(scale), tuple(translate), radius, width, height, vertices, triangles, frames, sync, flags)  # type: ignore[arg-type]
    position = HEADER.size
    skin_size = width * height
    index = SlotIndex(data)

    def need(count: int, what: str) -> None:
        if position + count > size:
            raise ModelFormatError(
                f"{what} needs {count} bytes, {size - position} are left", path=label, offset=position
            )

    def int_at(what: str) -> int:
        nonlocal position
        need(4, what)
        (value,) = struct.unpack_from("<i", data, position)
        position += 4
        return int(value)

    for slot in range(skins):
        kind = int_at(f"skin {slot} kind")
        if kind == 0:
            need(skin_size, f"skin {slot}")
            index.add_slot(None)
            index.add_image(position)
            position += skin_size
        elif kind == 1:
            start = position
            count = int_at(f"skin group {slot} count")
            if count < 1 or count > (size - position) // (4 + skin_size):
                raise ModelFormatError(
                    f"skin group {slot}: count {count} does not fit the file", path=label, offset=start
                )
            index.add_slot(position)
            position += 4 * count
            index.offsets.extend(range(position, position + count * skin_size, skin_size))
            position += count * skin_size
        else:
            raise ModelFormatError(f"skin {slot}: kind {kind} is neither 0 nor 1", path=label, offset=position - 4)
    model.skins = NamedLazy(
        len(index), lambda number: _skin(index, number), Lazy(len(index), lambda number: index.name_of("skin", number))
    )
    need(vertices * ST_VERTEX, "st-vertices")
    model.st_offset = position
    position += vertices * ST_VERTEX
    need(triangles * TRIANGLE, "triangles")
    model.triangle_offset = position
    position += triangles * TRIANGLE
    indices = model.triangles(data)[:, 1:]
    if indices.size and (int(indices.min()) < 0 or int(indices.max()) >= vertices):
        bad = int(((indices < 0) | (indices >= vertices)).any(axis=1).argmax())
        raise ModelFormatError(
            f"triangle {bad}: vertex index out of range (0..{vertices - 1})",
            path=label,
            offset=model.triangle_offset + bad * TRIANGLE + 4,
        )
    single = 2 * TRIVERTX + FRAME_NAME + vertices * TRIVERTX
    for slot in range(frames):
        kind = int_at(f"frame {slot} kind")
        if kind == 0:
            need(single, f"frame {slot}")
            name = data[position + 8 : position + 24].partition(b"\0")[0].decode("latin-1")
            model.poses.append(Pose(name, position + 24))
            position += single
        elif kind == 1:
            start = position
            count = int_at(f"frame group {slot} count")
            if count < 1 or count > (size - position) // (single + 4):
                raise ModelFormatError(
                    f"frame group {slot}: count {count} does not fit the file", path=label, offset=start
                )
            position += 2 * TRIVERTX
            intervals = struct.unpack_from(f"<{count}f", data, position)
            position += 4 * count
            for number in range(count):
                need(single, f"frame group {slot} pose {number}")
                name = data[position + 8 : position + 24].partition(b"\0")[0].decode("latin-1")
                model.poses.append(Pose(name, position + 24, slot, intervals[number]))
                position += single
        else:
            raise ModelFormatError(f"frame {slot}: kind {kind} is neither 0 nor 1", path=label, offset=position - 4)
    model.end = position
    model.trailing = size - position
    return model
