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
from dataclasses import dataclass, field

from .images import ImageError, PaletteImage

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
    frames: list[SpriteFrame] = field(default_factory=list)

    def images(self, data: bytes) -> list[PaletteImage]:
        """Each frame as a palette image (255 transparent)."""
        return [
            PaletteImage(
                frame.name,
                "sprite",
                frame.width,
                frame.height,
                [bytes(data[frame.pixel_offset : frame.pixel_offset + frame.width * frame.height])],
                transparent=255,
                extras={"origin": list(frame.origin), "interval": frame.interval},
            )
            for frame in self.frames
        ]


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

    def single(name: str, group: int | None, interval: float | None) -> None:
        nonlocal position
        if position + FRAME.size > len(data):
            raise ImageError(f"frame {name}: header runs past the end of the file", path=label, offset=position)
        origin_x, origin_y, frame_width, frame_height = FRAME.unpack_from(data, position)
        if frame_width <= 0 or frame_height <= 0 or position + FRAME.size + frame_width * frame_height > len(data):
            raise ImageError(
                f"frame {name}: size {frame_width}x{frame_height} does not fit the file",
                path=label,
                offset=position + 8,
            )
        sprite.frames.append(
            SpriteFrame(name, (origin_x, origin_y), frame_width, frame_height, position + FRAME.size, group, interval)
        )
        position += FRAME.size + frame_width * frame_height

    for slot in range(count):
        if position + 4 > len(data):
            raise ImageError(f"frame {slot}: runs past the end of the file", path=label, offset=position)
        (frame_kind,) = struct.unpack_from("<i", data, position)
        position += 4
        if frame_kind == 0:
            single(f"frame{slot}", None, None)
        elif frame_kind == 1:
            if position + 4 > len(data):
                raise ImageError(f"frame group {slot}: runs past the end of the file", path=label, offset=position)
            (members,) = struct.unpack_from("<i", data, position)
            if not 1 <= members <= (len(data) - position) // (4 + FRAME.size):
                raise ImageError(
                    f"frame group {slot}: count {members} does not fit the file", path=label, offset=position
                )
            intervals = struct.unpack_from(f"<{members}f", data, position + 4)
            position += 4 + 4 * members
            for number, interval in enumerate(intervals):
                single(f"frame{slot}_{number}", slot, interval)
        else:
            raise ImageError(
                f"frame {slot}: kind {frame_kind} is neither 0 (single) nor 1 (group)", path=label, offset=position - 4
            )
    return sprite
