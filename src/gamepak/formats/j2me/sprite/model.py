"""The BSPRITE v3 byte layout read into a `Sprite` and written back (`gameloft-sprites.md` §2).

Every field is kept as stored (frame rects, the counts' high bytes, `first` indices, raw palette
entries, each module's data bytes), so an unchanged sprite writes back byte for byte; a module
whose pixels are edited is re-encoded (`codec`). Reading checks every count against the bytes
left before allocating, every index against its list, and decodes every module, so a sprite
that reads is one the game draws.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ....errors import CorruptArchiveError, FormatLimitError
from . import codec

TYPE_CHECKING = False
if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

VERSION = 0x03DF
# Modules, frames, anims and module images: the only flags Diamond Rush's layout has.
DEFAULT_FLAGS = 0x01010101
SIGNATURE = struct.pack("<HI", VERSION, DEFAULT_FLAGS)
MODULE = struct.Struct("<BB")
FMODULE = struct.Struct("<BbbB")
HEAD = struct.Struct("<HH")
RECT = struct.Struct("<bbBB")
AFRAME = struct.Struct("<BBbbB")
# Frame index an AFrame uses for "no frame" (a blink): drawn as nothing.
NO_FRAME = 255
# What the game's code can load (§2 "Limits"): a writer refuses more.
MAX_PALETTES = 16
MAX_MODULE_PIXELS = 4096
MAX_MODULE_DATA = 0xFFFF
MAX_INDEXED = 256
# Pixels of all modules together that a reader decodes (a hostile sprite of a few KiB could
# otherwise name thousands of 255 x 255 run-length modules): far above any game's.
MAX_SPRITE_PIXELS = 1 << 24
# Frame flags that flip: left-right, top-bottom.
FLIP_X = 0x01
FLIP_Y = 0x02


@dataclass(frozen=True)
class FModule:
    """A module placed in a frame: its index, offset from the frame's origin and flip flags."""

    module: int
    x: int
    y: int
    flags: int


@dataclass(frozen=True)
class Frame:
    """A frame: `count` FModules from `first` (the count as stored: the game uses its low byte)
    and the bounding rect as stored (x, y, w, h), never recomputed."""

    count: int
    first: int
    rect: tuple[int, int, int, int]

    @property
    def used(self) -> range:
        return range(self.first, self.first + (self.count & 0xFF))


@dataclass(frozen=True)
class AFrame:
    """One step of an animation: a frame (255: nothing) for `time` ticks, offset and flags."""

    frame: int
    time: int
    x: int
    y: int
    flags: int


@dataclass(frozen=True)
class Anim:
    """An animation: `count` AFrames from `first` (count as stored, low byte used)."""

    count: int
    first: int

    @property
    def used(self) -> range:
        return range(self.first, self.first + (self.count & 0xFF))


@dataclass
class Sprite:
    """A BSPRITE: its header, modules (w, h and encoded data), FModules, frames, AFrames, anims,
    palettes (raw entries) and the encoding. `pixel_format`, `colours` and `encoding` are None
    when the sprite has no modules (the game then reads nothing after the anims)."""

    version: int = VERSION
    flags: int = DEFAULT_FLAGS
    modules: list[tuple[int, int]] = field(default_factory=list)
    fmodules: list[FModule] = field(default_factory=list)
    frames: list[Frame] = field(default_factory=list)
    aframes: list[AFrame] = field(default_factory=list)
    anims: list[Anim] = field(default_factory=list)
    pixel_format: int | None = None
    colours: int = 0
    palettes: list[list[int]] = field(default_factory=list)
    encoding: int | None = None
    module_data: list[bytes] = field(default_factory=list)

    # -- pixels ---------------------------------------------------------------------------

    def module_indices(self, index: int) -> NDArray[np.uint8]:
        """Module `index`'s palette indices (h x w)."""
        width, height = self.modules[index]
        assert self.encoding is not None
        return codec.decode(self.encoding, self.module_data[index], width, height, self.colours)

    def set_module_indices(self, index: int, indices: NDArray[np.uint8]) -> bool:
        """Replace module `index`'s pixels (its size becomes the array's): re-encoded, unless they
        are the pixels it holds (its stored bytes are kept). True when the module changed."""
        import numpy as np

        height, width = indices.shape
        if not (0 < width < 256 and 0 < height < 256):
            raise FormatLimitError(f"module {index}: {width}x{height} pixels, a module is 1..255 each way")
        if (width, height) == self.modules[index] and np.array_equal(self.module_indices(index), indices):
            return False
        assert self.encoding is not None
        try:
            data = codec.encode(self.encoding, indices, self.colours)
        except ValueError as exc:
            raise FormatLimitError(f"module {index}: {exc}") from None
        self.modules[index] = (width, height)
        self.module_data[index] = data
        return True

    def palette_rgba(self, palette: int = 0) -> NDArray[np.uint8]:
        """Palette `palette` as RGBA rows."""
        assert self.pixel_format is not None
        return codec.palette_rgba(self.pixel_format, self.palettes[palette])

    # -- names ---------------------------------------------------------------------------

    @property
    def encoding_name(self) -> str | None:
        return None if self.encoding is None else codec.ENCODINGS.get(self.encoding, f"0x{self.encoding:04x}")

    @property
    def pixel_format_name(self) -> str | None:
        if self.pixel_format is None:
            return None
        return codec.PIXEL_FORMATS.get(self.pixel_format, f"0x{self.pixel_format:04x}")

    # -- bytes ---------------------------------------------------------------------------

    def check_limits(self) -> None:
        """Refuse what the game cannot load (§2 "Limits"): a writer of edited sprites calls this."""
        if len(self.palettes) > MAX_PALETTES:
            raise FormatLimitError(f"{len(self.palettes)} palettes: the game holds at most {MAX_PALETTES}")
        for index, (width, height) in enumerate(self.modules):
            if width * height > MAX_MODULE_PIXELS:
                raise FormatLimitError(
                    f"module {index}: {width}x{height} = {width * height} pixels, the game decodes at most "
                    f"{MAX_MODULE_PIXELS}"
                )
        total = sum(len(data) for data in self.module_data)
        if total > MAX_MODULE_DATA:
            raise FormatLimitError(
                f"{total} bytes of module data: the game keeps offsets in 16 bits (at most {MAX_MODULE_DATA})"
            )
        _check_references(self, FormatLimitError)

    def _check_fields(self) -> None:
        """Refuse what the layout's fields cannot hold (counts are u16, palette counts u8)."""
        for what, items in (
            ("modules", self.modules),
            ("FModules", self.fmodules),
            ("frames", self.frames),
            ("AFrames", self.aframes),
            ("anims", self.anims),
        ):
            if len(items) > 0xFFFF:
                raise FormatLimitError(f"{len(items)} {what}: a sprite's count holds at most 65535")
        if len(self.palettes) > 0xFF or self.colours > 0xFF:
            raise FormatLimitError(
                f"{len(self.palettes)} palettes of {self.colours} colours: both counts are one byte (at most 255)"
            )
        if any(len(palette) != self.colours for palette in self.palettes):
            raise FormatLimitError(f"every palette must hold {self.colours} colours")
        for index, data in enumerate(self.module_data):
            if len(data) > 0xFFFF:
                raise FormatLimitError(f"module {index}: {len(data)} bytes of data, its size field holds 65535")

    def to_bytes(self) -> bytes:
        """The sprite's bytes, in the layout it was read from (FormatLimitError for what its
        fields cannot hold)."""
        self._check_fields()
        out = bytearray(struct.pack("<HI", self.version, self.flags))
        out += struct.pack("<H", len(self.modules))
        for width, height in self.modules:
            out += MODULE.pack(width, height)
        out += struct.pack("<H", len(self.fmodules))
        for fm in self.fmodules:
            out += FMODULE.pack(fm.module, fm.x, fm.y, fm.flags)
        out += struct.pack("<H", len(self.frames))
        for frame in self.frames:
            out += HEAD.pack(frame.count, frame.first)
        for frame in self.frames:
            out += RECT.pack(*frame.rect)
        out += struct.pack("<H", len(self.aframes))
        for af in self.aframes:
            out += AFRAME.pack(af.frame, af.time, af.x, af.y, af.flags)
        out += struct.pack("<H", len(self.anims))
        for anim in self.anims:
            out += HEAD.pack(anim.count, anim.first)
        if self.modules:
            assert self.pixel_format is not None and self.encoding is not None
            out += struct.pack("<HBB", self.pixel_format, len(self.palettes), self.colours)
            entry = "<I" if self.pixel_format == 0x8888 else "<H"
            for palette in self.palettes:
                out += b"".join(struct.pack(entry, value) for value in palette)
            out += struct.pack("<H", self.encoding)
            for data in self.module_data:
                out += struct.pack("<H", len(data)) + data
        return bytes(out)

    def copy(self) -> Sprite:
        return replace(
            self,
            modules=list(self.modules),
            fmodules=list(self.fmodules),
            frames=list(self.frames),
            aframes=list(self.aframes),
            anims=list(self.anims),
            palettes=[list(p) for p in self.palettes],
            module_data=list(self.module_data),
        )


def is_sprite(head: bytes) -> bool:
    """Whether bytes start like a Diamond Rush sprite (version 0x03DF, flags 0x01010101)."""
    return head[:6] == SIGNATURE


class _Reader:
    """A cursor over a sprite's bytes whose errors name the file, member, offset and field."""

    def __init__(self, data: bytes, path: str | None, member: str | None) -> None:
        self.data = data
        self.at = 0
        self.path = path
        self.member = member

    def fail(self, message: str, at: int | None = None) -> CorruptArchiveError:
        return CorruptArchiveError(
            f"sprite: {message}", path=self.path, offset=self.at if at is None else at, member=self.member
        )

    def take(self, size: int, what: str) -> bytes:
        if self.at + size > len(self.data):
            raise self.fail(f"{what} needs {size} bytes, {len(self.data) - self.at} left in the sprite")
        chunk = self.data[self.at : self.at + size]
        self.at += size
        return chunk

    def unpack(self, fmt: str, what: str) -> tuple[int, ...]:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), what))

    def table(self, record: struct.Struct, count: int, what: str) -> list[tuple[int, ...]]:
        # The count is checked against the bytes left before anything is allocated.
        return list(record.iter_unpack(self.take(record.size * count, f"{count} {what}")))


def read_sprite(data: bytes, path: str | None = None, member: str | None = None) -> Sprite:
    """Parse a sprite (a whole pack member). Bad data raises CorruptArchiveError naming `path`,
    `member`, the offset in the sprite and the field."""
    reader = _Reader(data, path, member)
    version, flags = reader.unpack("<HI", "the header")
    if version != VERSION:
        raise reader.fail(f"version 0x{version:04x}: only BSPRITE v3 (0x03df) is read", 0)
    if flags != DEFAULT_FLAGS:
        raise reader.fail(
            f"flags 0x{flags:08x}: only 0x{DEFAULT_FLAGS:08x} (modules, frames, anims, module images; Diamond "
            "Rush's layout) is read; other flags change the layout",
            2,
        )
    sprite = Sprite(version, flags)
    (count,) = reader.unpack("<H", "the module count")
    sprite.modules = [(w, h) for w, h in reader.table(MODULE, count, "module sizes")]
    (count,) = reader.unpack("<H", "the FModule count")
    sprite.fmodules = [FModule(*row) for row in reader.table(FMODULE, count, "FModules")]
    (count,) = reader.unpack("<H", "the frame count")
    heads = reader.table(HEAD, count, "frame heads")
    rects = reader.table(RECT, count, "frame rects")
    sprite.frames = [Frame(c, f, (x, y, w, h)) for (c, f), (x, y, w, h) in zip(heads, rects)]
    (count,) = reader.unpack("<H", "the AFrame count")
    sprite.aframes = [AFrame(*row) for row in reader.table(AFRAME, count, "AFrames")]
    (count,) = reader.unpack("<H", "the anim count")
    sprite.anims = [Anim(c, f) for c, f in reader.table(HEAD, count, "anim heads")]
    references_at = reader.at
    if sprite.modules:
        _read_images(reader, sprite)
    if reader.at != len(data):
        raise reader.fail(f"{len(data) - reader.at} bytes after the sprite's end")
    _check_references(sprite, lambda message: reader.fail(message, references_at))
    return sprite


def _read_images(reader: _Reader, sprite: Sprite) -> None:
    (pixel_format,) = reader.unpack("<H", "the pixel format")
    if pixel_format not in codec.PIXEL_FORMATS:
        raise reader.fail(f"unknown pixel format 0x{pixel_format:04x} (8888, 4444, 1555 or 0565)", reader.at - 2)
    counts_at = reader.at
    palettes, colours = reader.unpack("<BB", "the palette counts")
    entry = "<I" if pixel_format == 0x8888 else "<H"
    size = codec.entry_size(pixel_format)
    raw = reader.take(palettes * colours * size, f"{palettes} palettes of {colours} colours")
    values = [value for (value,) in struct.iter_unpack(entry, raw)]
    sprite.pixel_format = pixel_format
    sprite.colours = colours
    sprite.palettes = [values[p * colours : (p + 1) * colours] for p in range(palettes)]
    encoding_at = reader.at
    (encoding,) = reader.unpack("<H", "the encoding")
    if encoding not in codec.ENCODINGS:
        names = ", ".join(codec.ENCODINGS.values())
        raise reader.fail(f"unknown module encoding 0x{encoding:04x} ({names})", encoding_at)
    sprite.encoding = encoding
    pixels = sum(width * height for width, height in sprite.modules)
    if pixels > MAX_SPRITE_PIXELS:
        raise reader.fail(f"the modules hold {pixels} pixels, more than gamepak decodes ({MAX_SPRITE_PIXELS})", 8)
    if not palettes:
        raise reader.fail("no palette: the modules' colours are undefined", counts_at)
    if not colours:
        # Only modules without pixels could use them; their export would hold no palette to import.
        raise reader.fail(f"{palettes} palettes of 0 colours: the modules' colours are undefined", counts_at + 1)
    for index, (width, height) in enumerate(sprite.modules):
        (size,) = reader.unpack("<H", f"module {index}'s data size")
        start = reader.at
        data = reader.take(size, f"module {index}'s data")
        try:
            codec.decode(encoding, data, width, height, colours)
        except codec.DecodeError as exc:
            raise reader.fail(
                f"module {index} ({width}x{height} {codec.ENCODINGS[encoding]}): {exc}", start + exc.offset
            ) from None
        sprite.module_data.append(data)


def _check_references(sprite: Sprite, bad: Callable[[str], Exception]) -> None:
    """Every FModule's module, every frame's and anim's range, every AFrame's frame (255 is
    "nothing") inside its list."""

    for index, fm in enumerate(sprite.fmodules):
        if fm.module >= len(sprite.modules):
            raise bad(f"FModule {index} names module {fm.module}, the sprite has {len(sprite.modules)}")
    for index, frame in enumerate(sprite.frames):
        if frame.used.stop > len(sprite.fmodules):
            raise bad(
                f"frame {index} uses FModules {frame.first}..{frame.used.stop - 1}, the sprite has "
                f"{len(sprite.fmodules)}"
            )
    for index, af in enumerate(sprite.aframes):
        if af.frame >= len(sprite.frames) and af.frame != NO_FRAME:
            raise bad(f"AFrame {index} names frame {af.frame}, the sprite has {len(sprite.frames)}")
    for index, anim in enumerate(sprite.anims):
        if anim.used.stop > len(sprite.aframes):
            raise bad(
                f"anim {index} uses AFrames {anim.first}..{anim.used.stop - 1}, the sprite has {len(sprite.aframes)}"
            )
