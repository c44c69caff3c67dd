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
# What drawing every picture of one sprite once (its module sheet, frames and anims: an export,
# a preview) may cost (`drawing_cost`): FModules and AFrames placed, and pixels written. A
# sprite of 2 KiB can name frames of 255 FModules of 255 x 255 pixels each (10 such frames took
# 56 s to export here; 64 KiB of them, hours). The samples' largest draws 1.9 M pixels (mm1.f member 0).
MAX_PLACEMENTS = 1 << 20
MAX_DRAWN_PIXELS = 1 << 26


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


def _moved(box: Box, flags: int, dx: int, dy: int) -> Box:
    """`box` (a frame's, drawn unflipped at the origin) drawn with `flags` at (dx, dy): a flip
    mirrors it about the origin's line, as it mirrors each FModule's box."""
    left, top, right, bottom = box
    if flags & FLIP_X:
        left, right = -right, -left
    if flags & FLIP_Y:
        top, bottom = -bottom, -top
    return (left + dx, top + dy, right + dx, bottom + dy)


def anim_box(sprite: Sprite, anim: int, flags: int = 0, frame_boxes: dict[int, Box | None] | None = None) -> Box | None:
    """The union of the boxes of every AFrame of `anim` after its offset and flip
    (`frame_boxes`: each frame's unflipped box, filled as they are met)."""
    known = {} if frame_boxes is None else frame_boxes
    boxes = []
    for af_index in sprite.anims[anim].used:
        af = sprite.aframes[af_index]
        if af.frame not in known:
            known[af.frame] = frame_box(sprite, af.frame)
        box = known[af.frame]
        if box is not None:
            dx = -af.x if flags & FLIP_X else af.x
            dy = -af.y if flags & FLIP_Y else af.y
            boxes.append(_moved(box, flags ^ af.flags, dx, dy))
    return _union(boxes)


def _area(box: Box | None) -> int:
    return 0 if box is None else (box[2] - box[0]) * (box[3] - box[1])


def drawing_cost(sprite: Sprite) -> int:
    """The pixels drawing every picture of `sprite` once writes (each module's pixels where it
    is placed, each canvas, the module sheet), counted from the boxes, before drawing anything.
    FormatLimitError when the FModules and AFrames to place are past `MAX_PLACEMENTS` (checked
    first from the counts alone: the boxes cost one step each)."""
    from itertools import accumulate

    module_area = [width * height for width, height in sprite.modules]
    # Pixels and FModules of each frame (prefix sums: frames may share FModules), then the same
    # of each AFrame's frame (anims may share AFrames).
    area_before = [0, *accumulate(module_area[fm.module] for fm in sprite.fmodules)]
    frame_area = [area_before[f.used.stop] - area_before[f.first] for f in sprite.frames]
    frame_count = [len(f.used) for f in sprite.frames]

    def of_frame(values: list[int], frame: int) -> int:
        return values[frame] if frame < len(values) else 0

    aframe_area = [0, *accumulate(of_frame(frame_area, af.frame) for af in sprite.aframes)]
    aframe_count = [0, *accumulate(of_frame(frame_count, af.frame) for af in sprite.aframes)]
    placements = sum(frame_count) + sum(
        aframe_count[a.used.stop] - aframe_count[a.first] + len(a.used) for a in sprite.anims
    )
    if placements > MAX_PLACEMENTS:
        raise FormatLimitError(
            f"drawing its {len(sprite.frames)} frames and {len(sprite.anims)} anims places {placements} FModules "
            f"and AFrames, more than gamepak draws ({MAX_PLACEMENTS})"
        )
    boxes: dict[int, Box | None] = {index: frame_box(sprite, index) for index in range(len(sprite.frames))}
    cost = 2 * sum(module_area)  # the sheet: its canvas, then each module
    cost += sum(_area(boxes[index]) + frame_area[index] for index in range(len(sprite.frames)))
    for index, anim in enumerate(sprite.anims):
        canvas = _area(anim_box(sprite, index, 0, boxes)) or 1
        cost += len(anim.used) * canvas + aframe_area[anim.used.stop] - aframe_area[anim.first]
    return cost


def check_drawing(sprite: Sprite, palettes: int = 1) -> int:
    """FormatLimitError when drawing every picture of `sprite` with `palettes` palettes would
    write more than `MAX_DRAWN_PIXELS` pixels (or place too much); else the cost of one palette."""
    cost = drawing_cost(sprite)
    if cost * palettes > MAX_DRAWN_PIXELS:
        with_palettes = f" with {palettes} palettes" if palettes > 1 else ""
        raise FormatLimitError(
            f"drawing its {len(sprite.frames)} frames and {len(sprite.anims)} anims{with_palettes} writes "
            f"{cost * palettes} pixels, more than gamepak draws ({MAX_DRAWN_PIXELS})"
        )
    return cost


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
