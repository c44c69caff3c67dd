"""Quake sprites (`.spr`, `IDSP` version 1).

Header (36 bytes):

| offset | size | field                                                  |
|--------|------|--------------------------------------------------------|
| 0      | 4    | ident `IDSP`                                           |
| 4      | 4    | int32 version (1)                                      |
| 8      | 4    | int32 type (0 parallel-upright ... 4 parallel-oriented)|
| 12     | 4    | float bounding radius                                  |
| 16     | 8    | int32 width, height (largest frame)                    |
| 24     | 4    | int32 frame count (>= 1)                               |
| 28     | 4    | float beam length                                      |
| 32     | 4    | int32 sync type                                        |

Then `frame count` frames, each an int32 kind: 0 single = int32 origin x, y, int32 width,
height, u8 pixels[w·h] (255 transparent); 1 group = int32 n, float intervals[n], then n single
frames without their kind field.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

from ...core.lazy import Lazy, NamedLazy
from .images import ImageError, PaletteImage
from .slots import SlotIndex

HEADER = struct.Struct("<4siifiiifi")
FRAME = struct.Struct("<iiii")
MAGIC = b"IDSP"
TYPES = ("parallel-upright", "facing-upright", "parallel", "oriented", "parallel-oriented")


@dataclass(slots=True)
class SpriteFrame:
    """One picture of a sprite: where its pixels are in the file, its origin, its group."""

    name: str
    origin: tuple[int, int]
    width: int
    height: int
    pixel_offset: int
    group: int | None = None
    interval: float | None = None


@dataclass
class Sprite:
    version: int
    sprite_type: int
    radius: float
    width: int
    height: int
    sync_type: int
    # Made per frame when read (`slots.Lazy`): a sprite of many 1x1 frames spends 21 bytes on each.
    frames: Sequence[SpriteFrame] = field(default_factory=list)

    def images(self, data: bytes) -> Sequence[PaletteImage]:
        """Each frame as a palette image (255 transparent), made when read."""
        frames = self.frames

        def image(index: int) -> PaletteImage:
            frame = frames[index]
            return PaletteImage(
                frame.name,
                "sprite",
                frame.width,
                frame.height,
                [bytes(data[frame.pixel_offset : frame.pixel_offset + frame.width * frame.height])],
                transparent=255,
                extras={"origin": list(frame.origin), "interval": frame.interval},
            )

        # The names without the pixels: an export names every frame's file before making any.
        names = frames.names if isinstance(frames, NamedLazy) else [frame.name for frame in frames]
        return NamedLazy(len(frames), image, names)


def _frame(index: SlotIndex, data: bytes, number: int) -> SpriteFrame:
    offset, slot, member, interval = index.locate(number)
    origin_x, origin_y, width, height = FRAME.unpack_from(data, offset)
    name = index.name("frame", slot, member)
    group = None if member is None else slot
    return SpriteFrame(name, (origin_x, origin_y), width, height, offset + FRAME.size, group, interval)


def read(data: bytes, label: str) -> Sprite:
    """The sprite's header and where each frame's pixels are; every count and size is checked
    against the data before anything is allocated."""
    if len(data) < HEADER.size:
        raise ImageError(f"sprite is {len(data)} bytes, shorter than its 36-byte header", path=label, offset=0)
    ident, version, kind, radius, width, height, count, _beam, sync = HEADER.unpack_from(data)
    if ident != MAGIC:
        raise ImageError(f"not a Quake sprite (ident {ident!r}, expected b'IDSP')", path=label, offset=0)
    if version != 1:
        raise ImageError(f"sprite version {version} is not supported (only 1)", path=label, offset=4)
    if not 1 <= count <= (len(data) - HEADER.size) // 4:
        raise ImageError(f"frame count {count} does not fit the {len(data)}-byte file", path=label, offset=24)
    sprite = Sprite(version, kind, radius, width, height, sync)
    position = HEADER.size
    index = SlotIndex(data)

    def single(name: str) -> None:
        nonlocal position
        if position + FRAME.size > len(data):
            raise ImageError(f"frame {name}: header runs past the end of the file", path=label, offset=position)
        _x, _y, frame_width, frame_height = FRAME.unpack_from(data, position)
        if frame_width <= 0 or frame_height <= 0 or position + FRAME.size + frame_width * frame_height > len(data):
            raise ImageError(
                f"frame {name}: size {frame_width}x{frame_height} does not fit the file",
                path=label,
                offset=position + 8,
            )
        index.add_image(position)
        position += FRAME.size + frame_width * frame_height

    for slot in range(count):
        if position + 4 > len(data):
            raise ImageError(f"frame {slot}: runs past the end of the file", path=label, offset=position)
        (frame_kind,) = struct.unpack_from("<i", data, position)
        position += 4
        if frame_kind == 0:
            index.add_slot(None)
            single(f"frame{slot}")
        elif frame_kind == 1:
            if position + 4 > len(data):
                raise ImageError(f"frame group {slot}: runs past the end of the file", path=label, offset=position)
            (members,) = struct.unpack_from("<i", data, position)
            if not 1 <= members <= (len(data) - position) // (4 + FRAME.size):
                raise ImageError(
                    f"frame group {slot}: count {members} does not fit the file", path=label, offset=position
                )
            index.add_slot(position + 4)
            position += 4 + 4 * members
            for number in range(members):
                single(f"frame{slot}_{number}")
        else:
            raise ImageError(
                f"frame {slot}: kind {frame_kind} is neither 0 (single) nor 1 (group)", path=label, offset=position - 4
            )
    sprite.frames = NamedLazy(
        len(index),
        lambda number: _frame(index, data, number),
        Lazy(len(index), lambda number: index.name_of("frame", number)),
    )
    return sprite
