"""The `Peg` object: a CPU + GPU pair parsed, checked, decoded and written back."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ....errors import CorruptArchiveError, GamepakError
from .layout import (
    ENTRY,
    HEADER,
    SIGNATURE,
    VERSION,
    ZERO_RUNTIME,
    PegTexture,
    PixelFormat,
    align,
    chain_size,
    max_mips,
)
from .partners import GPU_PARTNERS, partner_path

if TYPE_CHECKING:
    import numpy as np


class TextureNotFoundError(GamepakError, KeyError):
    """No texture of that name in the peg."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "texture not found"


class Peg:
    """A peg v10 texture set. Build with `Peg.parse` or `Peg.open`; see the package docstring."""

    def __init__(
        self, name: str, header: dict[str, int], textures: list[PegTexture], frames: list[bytes], order: str = "BGRA"
    ) -> None:
        self.name = name
        self.header = header
        self.textures = textures
        self._frames = frames  # each texture's frame bytes (chain + what the frame size adds)
        self.order = order
        # The GPU partner's path (`open`) or member path (`sources.iter_pegs`), as found by the
        # partner rule (case ignored): where the GPU bytes go back to. "" when not known.
        self.gpu_name = ""

    # -- reading -------------------------------------------------------------------------
    @classmethod
    def open(cls, cpu_path: str | os.PathLike[str], order: str = "BGRA") -> Peg:
        """Open a CPU file and its GPU partner (same stem, `.gpeg_pc`/`.gvbm_pc`) beside it."""
        cpu = Path(cpu_path)
        partner = GPU_PARTNERS.get(cpu.suffix.lower())
        if partner is None:
            raise CorruptArchiveError("not a peg CPU file (.cpeg_pc or .cvbm_pc)", path=cpu)
        gpu = partner_path(cpu)
        if gpu is None:
            raise CorruptArchiveError(f"GPU partner {cpu.with_suffix(partner).name} not found beside it", path=cpu)
        from ....core.files import read_file

        peg = cls.parse(read_file(cpu), read_file(gpu), name=str(cpu), order=order)
        peg.gpu_name = str(gpu)
        return peg

    @classmethod
    def parse(cls, cpu: bytes, gpu: bytes, name: str = "<cpeg_pc>", order: str = "BGRA") -> Peg:
        """Parse a pair; every inconsistent field raises CorruptArchiveError naming it."""
        if order not in ("BGRA", "RGBA"):
            raise GamepakError(f"channel order must be BGRA or RGBA, not {order!r}")
        header, textures = read_entries(cpu, name, len(gpu))
        peg = cls(name, header, textures, [], order)
        # The layout is checked before any frame is copied: entries whose frames overlap (every
        # one naming the whole GPU file, say) would otherwise copy the file once per entry.
        offsets, expected = peg._gpu_layout()
        if expected != len(gpu) or [t.data_offset for t in textures] != offsets:
            raise CorruptArchiveError(
                "data offsets: textures are not laid out one after another at the "
                f"alignment ({expected} bytes expected, the GPU file has {len(gpu)})",
                path=name,
            )
        peg._frames = [gpu[texture.data_offset : texture.data_offset + texture.frame_size] for texture in textures]
        return peg

    # -- looking up ----------------------------------------------------------------------
    def texture(self, name: str) -> PegTexture:
        """The texture called `name` (with or without its `.tga`); TextureNotFoundError if none."""
        return self.textures[self._index(name)]

    def _index(self, name: str) -> int:
        """The position of the first texture called `name` (its full name or its stem), from a
        table built once per set of textures: export and import look every texture up by name,
        which a scan per look-up made quadratic (minutes for a peg of 30,000 textures). A hit
        is checked against the texture at that position, and a miss scans, so a table made
        stale by a texture renamed or moved by hand is never believed."""
        lookup = self.__dict__.get("_lookup")
        if lookup is None or lookup[0] != len(self.textures):
            table: dict[str, int] = {}
            for index, texture in enumerate(self.textures):
                table.setdefault(texture.name, index)
                table.setdefault(texture.name.rsplit(".", 1)[0], index)
            lookup = (len(self.textures), table)
            self.__dict__["_lookup"] = lookup
        hit = lookup[1].get(name)
        if hit is not None and hit < len(self.textures):
            texture = self.textures[hit]
            if name in (texture.name, texture.name.rsplit(".", 1)[0]):
                return int(hit)
        for index, texture in enumerate(self.textures):
            if name in (texture.name, texture.name.rsplit(".", 1)[0]):
                self.__dict__.pop("_lookup", None)
                return index
        raise TextureNotFoundError(f"{self.name}: no texture named {name!r}")

    def _position(self, texture: PegTexture) -> int:
        """The position of `texture` itself in the list (by identity)."""
        index = self._index(texture.name)
        if self.textures[index] is texture:
            return index
        return next(i for i, candidate in enumerate(self.textures) if candidate is texture)

    def mip_data(self, name: str) -> bytes:
        """The stored mip chain of one texture, exactly (no padding)."""
        texture = self.texture(name)
        return self._frames[self._position(texture)][: texture.chain_size]

    def read_image(self, name: str) -> np.ndarray:
        """The top mip as an RGBA uint8 array of shape (height, width, 4)."""
        from .pixels import decode

        texture = self.texture(name)
        return decode(texture.format, self.mip_data(name), texture.width, texture.height, self.order)

    def read_pil(self, name: str) -> Any:
        """The top mip as a Pillow RGBA image."""
        from PIL import Image

        return Image.fromarray(self.read_image(name), "RGBA")

    # -- changing ------------------------------------------------------------------------
    @classmethod
    def new(cls, name: str = "<cpeg_pc>", alignment: int = 16, order: str = "BGRA") -> Peg:
        """An empty peg (PC, flags 0) to add textures to."""
        return cls(name, {"platform": 0, "flags": 0, "alignment": alignment}, [], [], order)

    def _check_size(self, fmt: PixelFormat, width: int, height: int, what: str) -> None:
        if fmt.is_block and (width % 4 or height % 4):
            raise GamepakError(
                f"{what}: {fmt.label} needs a width and height that are multiples of 4, not {width}x{height}"
            )
        if not (0 < width < 65536 and 0 < height < 65536):
            raise GamepakError(f"{what}: {width}x{height} does not fit a peg entry")

    def replace_data(
        self, name: str, chain: bytes, width: int | None = None, height: int | None = None, mips: int | None = None
    ) -> None:
        """Store an already-encoded mip chain (e.g. a DDS's data) for a texture, as is."""
        texture = self.texture(name)
        width, height = width or texture.width, height or texture.height
        mips = mips or texture.mips
        beyond = texture.frame_size - align(texture.chain_size, self.header["alignment"])
        if beyond > 0 and any(self._frames[self._position(texture)][-beyond:]):
            # Cube map faces or animation frames after the chain: a new chain would drop them.
            raise GamepakError(
                f"{self.name}: {texture.name}: its frame holds {beyond} bytes after the mip chain "
                f"(flags 0x{texture.flags:04x}: cube map faces or animation frames?); gamepak does not "
                "write those, and replacing the texture would drop them"
            )
        self._check_size(texture.format, width, height, f"{self.name}: {texture.name}")
        need = chain_size(texture.format, width, height, mips)
        if len(chain) != need or mips > max_mips(width, height):
            raise GamepakError(
                f"{self.name}: {texture.name}: {len(chain)} bytes given, "
                f"{mips} mips of {texture.format.label} {width}x{height} "
                f"take {need}"
            )
        exact = texture.frame_size == texture.chain_size and texture.chain_size % self.header["alignment"] != 0
        if (width, height) != (texture.width, texture.height):
            texture.source_width, texture.source_height = width, height
        texture.width, texture.height, texture.mips = width, height, mips
        # keep the convention the entry used: exact chain, or rounded up to the alignment
        texture.frame_size = need if exact else align(need, self.header["alignment"])
        self._frames[self._position(texture)] = chain + bytes(texture.frame_size - need)

    def encode_image(self, name: str, rgba: Any, mips: int | None = None) -> tuple[bytes, int, int, int]:
        """An RGBA image (array or Pillow image) encoded into the texture's format, mips
        regenerated, without storing it: (chain, width, height, mips), what `replace_data`
        takes. An import compares the chain with `mip_data` to tell an image that encodes to
        the stored bytes (an edited PNG imported once already) from a real change."""
        import numpy as np

        from .pixels import encode_chain

        texture = self.texture(name)
        pixels = np.asarray(rgba.convert("RGBA") if hasattr(rgba, "convert") else rgba, dtype=np.uint8)
        if pixels.ndim != 3 or pixels.shape[2] != 4:
            raise GamepakError(f"{self.name}: {texture.name}: an RGBA image is needed")
        height, width = pixels.shape[:2]
        self._check_size(texture.format, width, height, f"{self.name}: {texture.name}")
        mips = mips or min(texture.mips, max_mips(width, height))
        return encode_chain(texture.format, pixels, mips, self.order), width, height, mips

    def replace_image(self, name: str, rgba: Any, mips: int | None = None) -> None:
        """Encode an RGBA image (array or Pillow image) into the texture's format, mips
        regenerated; the size may change (mips then default to what the old count allows)."""
        self.replace_data(name, *self.encode_image(name, rgba, mips))

    def add_texture(
        self, name: str, rgba: Any, fmt: PixelFormat = PixelFormat.DXT5, mips: int | None = None, flags: int = 0
    ) -> PegTexture:
        """Append a new texture (name gets `.tga` if it has no extension)."""
        import numpy as np

        name = self.new_texture_name(name)
        pixels = np.asarray(rgba.convert("RGBA") if hasattr(rgba, "convert") else rgba, dtype=np.uint8)
        height, width = pixels.shape[:2]
        self._check_size(fmt, width, height, f"{self.name}: {name}")
        texture = PegTexture(name, width, height, fmt, 1, flags, 0, 0, width, height, 0, 0, 1, 0, 1)
        self.textures.append(texture)
        self._frames.append(b"")
        try:
            self.replace_image(name, pixels, mips or max_mips(width, height))
        except GamepakError:
            self.textures.pop()
            self._frames.pop()
            raise
        return texture

    def new_texture_name(self, name: str) -> str:
        """`name` as a new texture would store it (`.tga` added when it has no extension), or a
        GamepakError: the name rule every writer of names applies (`core.names.check_new_name`:
        no separators, no traversal, not empty, not too long for export's file name, no
        case-only duplicate: the game ignores case), ASCII as the name block is, a name Windows
        can hold as a file, and no other texture exporting to the same file (`wall.tga` and
        `wall.dds` are both `wall.png`)."""
        from ....core.names import NAME_MAX, check_new_name, windows_name_problem
        from ....errors import UnsafePathError

        if isinstance(name, str) and name and "." not in name:
            name += ".tga"
        what = f"{self.name}: texture name {name!r}"
        try:
            check_new_name(name, [t.name for t in self.textures], flat=True, ignore_case=True)
            # export writes STEM.png / STEM.dds: that file name must fit the file systems' too
            check_new_name(name.rsplit(".", 1)[0] + ".png", flat=True, max_bytes=NAME_MAX)
        except UnsafePathError as exc:
            raise GamepakError(f"{what}: {exc.reason}") from None
        problem = windows_name_problem(name)
        if problem is not None:
            raise GamepakError(f"{what}: {problem}")
        if not name.isascii():
            raise GamepakError(f"{what}: the name block holds ASCII only")
        stem = name.rsplit(".", 1)[0].lower()
        if not stem:
            raise GamepakError(f"{what}: nothing before the extension (export names files by it)")
        for texture in self.textures:
            if texture.name.rsplit(".", 1)[0].lower() == stem:
                raise GamepakError(f"{what}: exports to the same file as {texture.name!r}")
        return name

    def remove_texture(self, name: str) -> None:
        """Drop a texture; later ones move down (offsets are recomputed on writing)."""
        index = self._index(name)
        del self.textures[index]
        del self._frames[index]
        self.__dict__.pop("_lookup", None)

    def to_dds(self, name: str) -> bytes:
        """A DDS file of the texture: every mip, exactly the stored data."""
        from .dds import dds_bytes

        texture = self.texture(name)
        return dds_bytes(texture, self.mip_data(name), self.order)

    # -- writing -------------------------------------------------------------------------
    def _gpu_layout(self) -> tuple[list[int], int]:
        alignment = self.header["alignment"]
        offsets, end = [], 0
        for texture in self.textures:
            offsets.append(end)
            end += align(texture.frame_size, alignment)
        return offsets, end

    def to_bytes(self) -> tuple[bytes, bytes]:
        """(CPU bytes, GPU bytes); an unchanged pair comes back byte for byte."""
        offsets, gpu_size = self._gpu_layout()
        alignment = self.header["alignment"]
        gpu = bytearray()
        for texture, frame, offset in zip(self.textures, self._frames, offsets, strict=True):
            texture.data_offset = offset
            gpu += frame
            gpu += bytes(align(len(frame), alignment) - len(frame))
        names = b"".join(t.name.encode("ascii") + b"\0" for t in self.textures)
        cpu_size = HEADER.size + ENTRY.size * len(self.textures) + len(names)
        out = bytearray(
            HEADER.pack(
                SIGNATURE,
                VERSION,
                self.header["platform"],
                cpu_size,
                gpu_size,
                len(self.textures),
                self.header["flags"],
                len(self.textures),
                alignment,
            )
        )
        for t in self.textures:
            out += ENTRY.pack(
                t.data_offset,
                t.width,
                t.height,
                t.format,
                t.source_width,
                t.anim_tiles_width,
                t.anim_tiles_height,
                t.frame_count,
                t.flags,
                t.name_offset,
                t.source_height,
                t.fps,
                t.mips,
                t.frame_size,
                t.runtime,
            )
        return bytes(out + names), bytes(gpu)


def read_entries(
    cpu: bytes, name: str = "<cpeg_pc>", gpu_file_size: int | None = None
) -> tuple[dict[str, int], list[PegTexture]]:
    """The header fields and textures a CPU file describes, every field checked (the GPU file's
    size against the header's when `gpu_file_size` is given, else offsets against the header's
    GPU size). Enough to list textures without the GPU file (the catalog does)."""

    def bad(field: str, problem: str, offset: int | None = None) -> CorruptArchiveError:
        return CorruptArchiveError(f"{field}: {problem}", path=name, offset=offset)

    if len(cpu) < HEADER.size:
        raise bad("header", f"file is {len(cpu)} bytes, the header needs {HEADER.size}", 0)
    sig, version, platform, cpu_size, gpu_size, bitmaps, flags, count, alignment = HEADER.unpack_from(cpu)
    if sig != SIGNATURE:
        hint = " (byte-swapped: a console file)" if sig == SIGNATURE[::-1] else ""
        raise bad("signature", f"{sig!r} is not {SIGNATURE!r}{hint}", 0)
    if version != VERSION:
        raise bad("version", f"{version}, only peg v10 is known", 4)
    if cpu_size != len(cpu):
        raise bad("CPU file size", f"header says {cpu_size}, the file has {len(cpu)}", 8)
    if gpu_file_size is not None and gpu_size != gpu_file_size:
        raise bad("GPU file size", f"header says {gpu_size}, the GPU file has {gpu_file_size}", 12)
    if alignment == 0 or alignment & (alignment - 1):
        raise bad("alignment", f"{alignment} is not a power of two", 22)
    if bitmaps != count:
        raise bad("entry count", f"{count} entries but {bitmaps} bitmaps (animation frames are not supported)", 20)
    names_start = HEADER.size + ENTRY.size * count
    if names_start > len(cpu):
        raise bad("entry count", f"{count} entries need {names_start} bytes, the file has {len(cpu)}", 20)
    names = cpu[names_start:].split(b"\0")
    if len(names) != count + 1 or names[-1]:
        raise bad("names", f"expected {count} NUL-terminated names and nothing after them", names_start)
    textures: list[PegTexture] = []
    for index in range(count):
        at = HEADER.size + ENTRY.size * index
        (
            offset,
            width,
            height,
            fmt,
            source_width,
            tiles_w,
            tiles_h,
            frame_count,
            tflags,
            name_offset,
            source_height,
            fps,
            mips,
            frame_size,
            runtime,
        ) = ENTRY.unpack_from(cpu, at)
        label = f"entry {index}"
        try:
            pixel_format = PixelFormat(fmt)
        except ValueError:
            raise bad(f"{label} pixel format", f"unknown format {fmt}", at + 8) from None
        if width == 0 or height == 0:
            raise bad(f"{label} size", f"{width}x{height}", at + 4)
        if not 1 <= mips <= max_mips(width, height):
            raise bad(
                f"{label} mip levels", f"{mips} for {width}x{height} (at most {max_mips(width, height)})", at + 0x1B
            )
        need = chain_size(pixel_format, width, height, mips)
        if frame_size < need:
            raise bad(f"{label} frame size", f"{frame_size} is less than the {need} bytes of the mip chain", at + 0x1C)
        if offset + frame_size > gpu_size:
            raise bad(
                f"{label} data offset",
                f"{offset} + frame size {frame_size} runs past the GPU file ({gpu_size} bytes)",
                at,
            )
        try:
            text = names[index].decode("ascii")
        except UnicodeDecodeError:
            raise bad(f"{label} name", "not ASCII", names_start) from None
        textures.append(
            PegTexture(
                text,
                width,
                height,
                pixel_format,
                mips,
                tflags,
                offset,
                frame_size,
                source_width,
                source_height,
                tiles_w,
                tiles_h,
                frame_count,
                name_offset,
                fps,
                # The usual all-zero field shared: a peg of 65,535 tiny textures holds one.
                ZERO_RUNTIME if runtime == ZERO_RUNTIME else runtime,
            )
        )
    return {"platform": platform, "flags": flags, "alignment": alignment}, textures
