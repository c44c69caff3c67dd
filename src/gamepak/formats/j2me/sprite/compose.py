"""Frames and animations drawn as Diamond Rush draws them (`gameloft-sprites.md` §5-6):

- a frame is drawn at an origin P; its FModules in stored order, later ones over earlier ones;
- FModule (m, x, y) puts module m's top-left at P + (x, y); the module is mirrored by (frame flags
  XOR FModule flags): 0x01 left-right, 0x02 top-bottom (both: turned 180 degrees);
- a frame drawn flipped left-right mirrors each FModule's box about the origin's vertical line
  (its left edge at P.x - x - w; top-bottom likewise);
- pixels whose palette entry has alpha 0 are not drawn; zero-sized modules are skipped;
- an AFrame draws its frame with (caller's flags XOR its flags) at P + (x, y); frame 255 (or any
  frame the sprite lacks) draws nothing.

Boxes are (left, top, right, bottom) relative to the origin, right/bottom exclusive. The rect a
frame stores is never used here: it may not match its FModules (offsets wrapped mod 256).
"""

from __future__ import annotations

from dataclasses import dataclass

from ....errors import FormatLimitError
from .model import FLIP_X, FLIP_Y, Sprite

TYPE_CHECKING = False
if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

Box = tuple[int, int, int, int]
# Pixels of all the cells of one animation drawn at once (each AFrame's canvas is the union of
# all: 255 AFrames with offsets far apart would otherwise take gigabytes from a few KiB).
MAX_ANIM_PIXELS = 1 << 25
# Ticks of Diamond Rush's main loop: an AFrame's time is this many milliseconds a tick.
TICK_MS = 50


def module_rgba(sprite: Sprite, index: int, palette: int = 0) -> NDArray[np.uint8]:
    """Module `index` as RGBA (h x w x 4) through palette `palette`."""
    return sprite.palette_rgba(palette)[sprite.module_indices(index)]


def _placements(sprite: Sprite, frame: int, flags: int, dx: int = 0, dy: int = 0) -> list[tuple[int, int, int, int]]:
    """(module, left, top, flip flags) of each FModule of `frame` drawn with `flags` at (dx, dy)."""
    placed = []
    for fm_index in sprite.frames[frame].used:
        fm = sprite.fmodules[fm_index]
        width, height = sprite.modules[fm.module]
        if not width or not height:
            continue
        left = -fm.x - width if flags & FLIP_X else fm.x
        top = -fm.y - height if flags & FLIP_Y else fm.y
        placed.append((fm.module, dx + left, dy + top, (flags ^ fm.flags) & (FLIP_X | FLIP_Y)))
    return placed


def _union(boxes: list[Box]) -> Box | None:
    if not boxes:
        return None
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


def frame_box(sprite: Sprite, frame: int, flags: int = 0, dx: int = 0, dy: int = 0) -> Box | None:
    """The box `frame` covers drawn with `flags` at (dx, dy) (None: it draws nothing)."""
    if not 0 <= frame < len(sprite.frames):
        return None
    boxes = []
    for module, left, top, _ in _placements(sprite, frame, flags, dx, dy):
        width, height = sprite.modules[module]
        boxes.append((left, top, left + width, top + height))
    return _union(boxes)


class _Painter:
    """Draws modules onto one RGBA canvas whose pixel (0, 0) sits at `origin` from the box's
    corner; decoded modules are cached per (module, palette)."""

    def __init__(self, sprite: Sprite, palette: int) -> None:
        self.sprite = sprite
        self.palette = palette
        self.cache: dict[int, NDArray[np.uint8]] = {}

    def module(self, index: int) -> NDArray[np.uint8]:
        if index not in self.cache:
            self.cache[index] = module_rgba(self.sprite, index, self.palette)
        return self.cache[index]

    def frame(self, canvas: NDArray[np.uint8], frame: int, flags: int, x: int, y: int) -> None:
        if not 0 <= frame < len(self.sprite.frames):
            return  # 255: nothing (a blink)
        for module, left, top, flip in _placements(self.sprite, frame, flags, x, y):
            pixels = self.module(module)
            if flip & FLIP_X:
                pixels = pixels[:, ::-1]
            if flip & FLIP_Y:
                pixels = pixels[::-1, :]
            height, width = pixels.shape[:2]
            area = canvas[top : top + height, left : left + width]
            opaque = pixels[..., 3] != 0
            area[opaque] = pixels[opaque]


@dataclass
class Picture:
    """An RGBA image and where the origin sits in it (pixels from its top-left corner)."""

    rgba: NDArray[np.uint8]
    origin: tuple[int, int]


def compose_frame(sprite: Sprite, frame: int, palette: int = 0, flags: int = 0) -> Picture | None:
    """Frame `frame` drawn with `flags`, cropped to the box its FModules cover (None: empty)."""
    import numpy as np

    box = frame_box(sprite, frame, flags)
    if box is None:
        return None
    left, top, right, bottom = box
    canvas = np.zeros((bottom - top, right - left, 4), dtype=np.uint8)
    _Painter(sprite, palette).frame(canvas, frame, flags, -left, -top)
    return Picture(canvas, (-left, -top))


def anim_box(sprite: Sprite, anim: int, flags: int = 0) -> Box | None:
    """The union of the boxes of every AFrame of `anim` after its offset and flip."""
    boxes = []
    for af_index in sprite.anims[anim].used:
        af = sprite.aframes[af_index]
        dx = -af.x if flags & FLIP_X else af.x
        dy = -af.y if flags & FLIP_Y else af.y
        box = frame_box(sprite, af.frame, flags ^ af.flags, dx, dy)
        if box is not None:
            boxes.append(box)
    return _union(boxes)


@dataclass
class Animation:
    """An animation's cells on one canvas (the origin at the same place in each) and each
    cell's time in ticks (0: held for good)."""

    cells: list[NDArray[np.uint8]]
    times: list[int]
    origin: tuple[int, int]


def compose_anim(sprite: Sprite, anim: int, palette: int = 0, flags: int = 0) -> Animation:
    """Every AFrame of `anim` drawn on a canvas that holds them all; an anim that draws nothing
    has 1 x 1 transparent cells."""
    import numpy as np

    box = anim_box(sprite, anim, flags) or (0, 0, 1, 1)
    left, top, right, bottom = box
    cells_count = len(sprite.anims[anim].used)
    if cells_count * (right - left) * (bottom - top) > MAX_ANIM_PIXELS:
        raise FormatLimitError(
            f"anim {anim}: {cells_count} cells of {right - left}x{bottom - top} pixels, more than gamepak draws "
            f"at once ({MAX_ANIM_PIXELS} pixels)"
        )
    painter = _Painter(sprite, palette)
    cells, times = [], []
    for af_index in sprite.anims[anim].used:
        af = sprite.aframes[af_index]
        dx = -af.x if flags & FLIP_X else af.x
        dy = -af.y if flags & FLIP_Y else af.y
        canvas = np.zeros((bottom - top, right - left, 4), dtype=np.uint8)
        painter.frame(canvas, af.frame, flags ^ af.flags, dx - left, dy - top)
        cells.append(canvas)
        times.append(af.time)
    return Animation(cells, times, (-left, -top))


def contact_sheet(sprite: Sprite, palette: int = 0, gap: int = 1) -> tuple[NDArray[np.uint8], list[Box]]:
    """Every module side by side in rows (about square), and each module's rectangle in it
    (left, top, right, bottom)."""
    import math

    import numpy as np

    sizes = sprite.modules
    if not sizes:
        return np.zeros((1, 1, 4), dtype=np.uint8), []
    area = sum((w + gap) * (h + gap) for w, h in sizes)
    row_width = max(max(w for w, _ in sizes), int(math.sqrt(area) * 1.2))
    rects: list[Box] = []
    x = y = row_height = 0
    for width, height in sizes:
        if x and x + width > row_width:
            x, y, row_height = 0, y + row_height + gap, 0
        rects.append((x, y, x + width, y + height))
        x += width + gap
        row_height = max(row_height, height)
    sheet = np.zeros((max(r[3] for r in rects) or 1, max(r[2] for r in rects) or 1, 4), dtype=np.uint8)
    painter = _Painter(sprite, palette)
    for index, (left, top, right, bottom) in enumerate(rects):
        if right > left and bottom > top:
            sheet[top:bottom, left:right] = painter.module(index)
    return sheet, rects
