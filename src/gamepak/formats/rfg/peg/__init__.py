"""Red Faction Guerrilla textures: peg v10 (`.cpeg_pc`/`.gpeg_pc`, `.cvbm_pc`/`.gvbm_pc`).

A texture set is a pair: the CPU file (header, entries, names) and the GPU file (every
texture's mip chain, largest level first, each chain padded to the alignment). The byte
layout is in `layout`; pixel codecs in `pixels`. Spec: ../shared/specs/rfg-peg.md.

Public API (small on purpose; the CLI, the web viewer and the catalog use only this):

    from gamepak.formats.rfg.peg import Peg, PegTexture, PixelFormat

    peg = Peg.parse(cpu_bytes, gpu_bytes, name="xray_effect.cpeg_pc")
    peg = Peg.open("dir/xray_effect.cpeg_pc")       # GPU partner found beside it by stem
    peg.textures                  -> list[PegTexture] (name, width, height, format, mips, flags)
    peg.texture("heat_map_enemy.tga") / peg.texture("heat_map_enemy")   (KeyError-like if absent)
    peg.read_image(name)          -> numpy uint8 array (height, width, 4), RGBA, top mip
    peg.read_pil(name)            -> PIL.Image.Image "RGBA"
    peg.mip_data(name)            -> bytes: the stored mip chain, exactly
    peg.to_bytes()                -> (cpu_bytes, gpu_bytes); byte-exact for an unchanged pair

Every malformed field raises `CorruptArchiveError` naming the file and the field; counts and
sizes are checked against the file sizes before anything is allocated from them.

Channel order of format 407 (8888) is disputed; `Peg.parse(..., order="BGRA")` is the default
(Gibbed's reading: B, G, R, A in memory, as D3D's A8R8G8B8); pass order="RGBA" for RFGM's.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .layout import PegTexture, PixelFormat
    from .reader import Peg

__all__ = ["Peg", "PegTexture", "PixelFormat"]
# Loaded on first use: `verify` asks `partners` whether a file is a peg's CPU file on every run,
# and importing this package first must not bring the reader and its layout (dataclasses,
# pathlib, typing: twice Python's own start-up) into commands that read no peg.
_LAZY = {"Peg": ".reader", "PegTexture": ".layout", "PixelFormat": ".layout"}


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(__import__(f"{__name__}{_LAZY[name]}", fromlist=[name]), name)
    globals()[name] = value
    return value
