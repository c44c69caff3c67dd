"""Where the images of a sprite or a model's skins lie, kept in flat arrays.

Sprites (`.spr`) and alias models (`.mdl`) hold their pictures in slots: a slot is one image,
or a group of n images that follow n float32 intervals. A file of many 1x1 images spends 5
(skins) to 21 (frames) bytes on each, so one Python object per image costs 30-150 times the
file; this index costs 8 bytes per image and 16 per slot, and makes each image's description
when it is asked for.

| array             | one per | holds                                                       |
|-------------------|---------|-------------------------------------------------------------|
| `offsets`         | image   | where the image's record starts in the file                 |
| `first_image`     | slot    | the index of the slot's first image                         |
| `interval_offset` | slot    | where the group's intervals start, -1 for a single image    |
"""

from __future__ import annotations

import struct
from array import array
from bisect import bisect_right

INTERVAL = struct.Struct("<f")


class SlotIndex:
    """Each image's offset, and for each slot its first image and (groups) its intervals."""

    __slots__ = ("data", "first_image", "interval_offset", "offsets")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.offsets = array("q")
        self.first_image = array("q")
        self.interval_offset = array("q")

    def __len__(self) -> int:
        return len(self.offsets)

    def add_slot(self, intervals: int | None) -> None:
        """Start a slot: a single image (`intervals` None) or a group whose intervals start at
        `intervals`; its images follow with `add_image`."""
        self.first_image.append(len(self.offsets))
        self.interval_offset.append(-1 if intervals is None else intervals)

    def add_image(self, offset: int) -> None:
        self.offsets.append(offset)

    def locate(self, index: int) -> tuple[int, int, int | None, float | None]:
        """(offset, slot, number in its group or None, interval or None) of image `index`."""
        if index < 0:
            index += len(self.offsets)
        if not 0 <= index < len(self.offsets):
            raise IndexError("image index out of range")
        slot = bisect_right(self.first_image, index) - 1
        intervals = self.interval_offset[slot]
        if intervals < 0:
            return self.offsets[index], slot, None, None
        number = index - self.first_image[slot]
        (interval,) = INTERVAL.unpack_from(self.data, intervals + 4 * number)
        return self.offsets[index], slot, number, interval

    def name_of(self, prefix: str, index: int) -> str:
        """The name of image `index` (`name`), from the index alone: no interval read."""
        slot = bisect_right(self.first_image, index) - 1
        if self.interval_offset[slot] < 0:
            return self.name(prefix, slot, None)
        return self.name(prefix, slot, index - self.first_image[slot])

    def name(self, prefix: str, slot: int, number: int | None) -> str:
        """`skin3`, or `skin3_0` for the first image of the group in slot 3."""
        return f"{prefix}{slot}" if number is None else f"{prefix}{slot}_{number}"
