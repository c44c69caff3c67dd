"""Quake's 256-colour palette: where an image's palette comes from, and the built-in one.

A palette is 768 bytes: 256 x (u8 red, u8 green, u8 blue), no header (`gfx/palette.lmp`).

The built-in palette is LibreQuake's `lq1/gfx/palette.lmp` (SHA-256 6b20b5bc...), which is
byte-identical to the standard Quake palette (as embedded by vgio, qpakman and ericw-tools).
LibreQuake is under the BSD-3-Clause licence:

    Copyright (c) 2019-2023 Contributors to the LibreQuake project. All rights reserved.
    Redistribution and use in source and binary forms, with or without modification, are
    permitted provided that the following conditions are met: redistributions of source code
    must retain the above copyright notice, this list of conditions and the following
    disclaimer; redistributions in binary form must reproduce the above copyright notice, this
    list of conditions and the following disclaimer in the documentation and/or other materials
    provided with the distribution; neither the name of the LibreQuake project nor the names of
    its contributors may be used to endorse or promote products derived from this software
    without specific prior written permission.
    THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS" AND ANY EXPRESS
    OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED WARRANTIES OF
    MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE DISCLAIMED. IN NO EVENT SHALL THE
    COPYRIGHT OWNER OR CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL,
    EXEMPLARY, OR CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE
    GOODS OR SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED
    AND ON ANY THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING
    NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE OF THIS SOFTWARE, EVEN IF
    ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
"""

from __future__ import annotations

import os

from ...errors import GamepakError

PALETTE_SIZE = 768
# Indices 224-255 are never shaded by the engine (the colormap maps them to themselves).
FULLBRIGHT_START = 224

_BUILT_IN = (
    "0000000f0f0f1f1f1f2f2f2f3f3f3f4b4b4b5b5b5b6b6b6b7b7b7b8b8b8b9b9b9babababbbbbbbcbcbcbdbdbdbebebeb"
    "0f0b07170f0b1f170b271b0f2f2313372b173f2f174b371b533b1b5b431f634b1f6b531f73571f7b5f238367238f6f23"
    "0b0b0f13131b1b1b272727332f2f3f37374b3f3f574747674f4f735b5b7f63638b6b6b977373a37b7baf8383bb8b8bcb"
    "0000000707000b0b001313001b1b002323002b2b072f2f073737073f3f074747074b4b0b53530b5b5b0b63630b6b6b0f"
    "0700000f00001700001f00002700002f00003700003f00004700004f00005700005f00006700006f00007700007f0000"
    "1313001b1b002323002f2b00372f004337004b3b075743075f47076b4b0b77530f8357138b5b13975f1ba3631faf6723"
    "2313072f170b3b1f0f4b2313572b17632f1f7337237f3b2b8f43339f4f33af632fbf772fcf8f2bdfab27efcb1ffff31b"
    "0b07001b13002b230f372b1347331b533723633f2b6f47337f533f8b5f479b6b53a77b5fb7876bc3937bd3a38be3b397"
    "ab8ba39f7f979373878b677b7f5b6f7753636b4b575f3f4b5737434b2f3743272f371f232b171b231313170b0b0f0707"
    "bb739faf6b8fa35f839757778b4f6b7f4b5f7343536b3b4b5f333f532b3747232b3b1f232f171b231313170b0b0f0707"
    "dbc3bbcbb3a7bfa39baf978ba3877b977b6f876f5f7b63536b57475f4b3b533f33433327372b1f271f171b130f0f0b07"
    "6f837b677b6f5f7367576b5f4f6357475b4f3f5347374b3f2f43372b3b2f2333271f2b1f1723170f1b130b130b070b07"
    "fff31befdf17dbcb13cbb70fbba70fab970b9b83078b73077b63076b53005b47004b37003b2b002b1f001b0f000b0700"
    "0000ff0b0bef1313df1b1bcf2323bf2b2baf2f2f9f2f2f8f2f2f7f2f2f6f2f2f5f2b2b4f23233f1b1b2f13131f0b0b0f"
    "2b00003b00004b07005f07006f0f007f1707931f07a3270bb7330fc34b1bcf632bdb7f3be3974fe7ab5fefbf77f7d38b"
    "a77b3bb79b37c7c337e7e3577fbfffabe7ffd7ffff6700008b0000b30000d70000ff0000fff393fff7c7ffffff9f5b53"
)


def built_in_palette() -> bytes:
    """LibreQuake's palette (identical to Quake's), 768 bytes."""
    return bytes.fromhex("".join(_BUILT_IN))


def read_palette_file(path: str | os.PathLike[str]) -> bytes:
    """A palette from a file: a 768-byte `.lmp`, or the last 768 bytes of a 256-colour PCX
    (Quake II's `pics/colormap.pcx`, after its 0x0C marker)."""
    label = os.fspath(path)
    from ...core.files import read_file

    data = read_file(label, limit=1 << 20, what="the palette")
    return palette_from_bytes(data, label)


def palette_from_bytes(data: bytes, label: str) -> bytes:
    """The 768 palette bytes in `data` (a palette.lmp, or a PCX ending with its palette)."""
    if len(data) == PALETTE_SIZE:
        return bytes(data)
    if data[:1] == b"\x0a" and len(data) > PALETTE_SIZE and data[-PALETTE_SIZE - 1] == 0x0C:
        return bytes(data[-PALETTE_SIZE:])
    raise GamepakError(f"{label}: offset 0: a palette is 768 bytes (or a 256-colour PCX), not {len(data)} bytes")


def palette_file_beside(path: str | os.PathLike[str]) -> str | None:
    """The palette file a Quake game folder keeps near `path`: `palette.lmp`, `gfx/palette.lmp`
    or `../gfx/palette.lmp` from its folder (a map in `id1/maps/` finds `id1/gfx/palette.lmp`)."""
    folder = os.path.dirname(os.path.abspath(os.fspath(path)))
    for candidate in ("palette.lmp", os.path.join("gfx", "palette.lmp"), os.path.join("..", "gfx", "palette.lmp")):
        full = os.path.join(folder, candidate)
        if os.path.isfile(full):
            return full
    return None


def palette_beside(path: str | os.PathLike[str]) -> bytes | None:
    """The palette of `palette_file_beside(path)`, if there is one."""
    found = palette_file_beside(path)
    return read_palette_file(found) if found is not None else None


def find_palette(path: str | os.PathLike[str], override: str | os.PathLike[str] | None = None) -> bytes:
    """The palette for images read from `path`: `override` (a file) first, then one beside it
    (`palette_beside`), then the built-in one."""
    if override:
        return read_palette_file(override)
    return palette_beside(path) or built_in_palette()


# -- Quake II ------------------------------------------------------------------------------------

# Quake II keeps its palette at the end of `pics/colormap.pcx`; a `.wal` sits in
# `baseq2/textures/<set>/`, two folders below `baseq2/`.
COLORMAP = ("pics", "colormap.pcx")
COLORMAP_LEVELS = 4
QUAKE2_PALETTE_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "quake2-palette.hex")


def quake2_palette() -> bytes | None:
    """The Quake II palette gamepak ships (`data/quake2-palette.hex`, a clearly marked data
    file: see its header), or None while that file holds no palette."""
    try:
        with open(QUAKE2_PALETTE_DATA, encoding="ascii") as handle:
            digits = "".join(line.strip() for line in handle if line.strip() and not line.lstrip().startswith("#"))
    except OSError:
        return None
    if not digits:
        return None
    try:
        data = bytes.fromhex(digits)
    except ValueError:
        raise GamepakError(f"{QUAKE2_PALETTE_DATA}: not hex digits (a damaged installation)") from None
    if len(data) != PALETTE_SIZE:
        raise GamepakError(f"{QUAKE2_PALETTE_DATA}: {len(data)} bytes, not {PALETTE_SIZE} (a damaged installation)")
    return data


def colormap_near(path: str | os.PathLike[str]) -> str | None:
    """The game's `pics/colormap.pcx` for a Quake II file at `path`: in its folder or up to
    COLORMAP_LEVELS folders above (`baseq2/textures/e1u1/floor.wal` finds
    `baseq2/pics/colormap.pcx`), or None."""
    folder = os.path.dirname(os.path.abspath(os.fspath(path)))
    for _level in range(COLORMAP_LEVELS + 1):
        candidate = os.path.join(folder, *COLORMAP)
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return None


def quake2_palette_for(
    path: str | os.PathLike[str], override: str | os.PathLike[str] | None = None
) -> tuple[bytes, str]:
    """(palette, where it came from) for Quake II images read from `path`: `override` first,
    then the game's `pics/colormap.pcx` near it (`colormap_near`), then the one gamepak ships
    (`quake2_palette`); a GamepakError when none is found, since Quake 1's would draw the
    image in the wrong colours."""
    if override:
        return read_palette_file(override), f"{os.fspath(override)} (--palette)"
    found = colormap_near(path)
    if found is not None:
        return read_palette_file(found), found
    shipped = quake2_palette()
    if shipped is not None:
        return shipped, "Quake II's palette (built in; no pics/colormap.pcx found)"
    raise GamepakError(
        f"{os.fspath(path)}: a Quake II image needs Quake II's palette: no pics/colormap.pcx found near it, "
        "and this gamepak ships none; give --palette baseq2/pics/colormap.pcx"
    )


# The fullbright indices as bytes: `bytes.translate(None, ...)` deletes them in one C pass.
_FULLBRIGHT_BYTES = bytes(range(FULLBRIGHT_START, 256))


def colour_shares(pixels: bytes, transparent: int | None, own_palette: bool) -> tuple[float, float | None]:
    """(share of `pixels` drawn clear, share drawn in fullbright colours) of an 8-bit image:
    clear pixels are its `transparent` index; fullbrights are 224-255 not clear, and None for
    an image with its own palette (WAD3), which has no fullbright range."""
    if not pixels:
        return 0.0, None if own_palette else 0.0
    total = len(pixels)
    clear = pixels.count(transparent) if transparent is not None else 0
    if own_palette:
        return clear / total, None
    glowing = total - len(pixels.translate(None, _FULLBRIGHT_BYTES))
    if transparent is not None and transparent >= FULLBRIGHT_START:
        glowing -= clear
    return clear / total, glowing / total
