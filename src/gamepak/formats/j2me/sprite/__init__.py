"""Gameloft's BSPRITE v3 sprites (Diamond Rush's `.f` packs and `demoSpr.bin`): modules (small
indexed images), frames (modules placed and flipped), animations (timed frames) and palettes,
read, drawn and written back byte for byte. The full write-up: `gameloft-sprites.md`.

| field        | type                                        | notes                               |
|--------------|---------------------------------------------|-------------------------------------|
| version      | u16                                         | 0x03DF                              |
| flags        | u32                                         | 0x01010101 (others change the layout: refused) |
| nModules     | u16, then nModules x (u8 w, u8 h)           |                                     |
| nFModules    | u16, then x (u8 module, s8 x, s8 y, u8 flags) | all frames' FModules              |
| nFrames      | u16, then x (u16 count, u16 first), then x (s8 x, s8 y, u8 w, u8 h) | heads, then rects |
| nAFrames     | u16, then x (u8 frame, u8 time, s8 x, s8 y, u8 flags) |                           |
| nAnims       | u16, then x (u16 count, u16 first)          |                                     |
| pixel format | u16 (only when nModules > 0, as all below)  | 0x8888, 0x4444, 0x5515, 0x6505      |
| nPalettes    | u8; nColours u8; palettes (u32 for 8888, else u16 entries) |                      |
| encoding     | u16                                         | I2, I4, I16, I256, I127RLE, I256RLE, I64RLE |
| module data  | nModules x (u16 size, data)                 |                                     |

All little-endian. `model` reads and writes the layout, `codec` the module encodings and colour
formats, `compose` draws frames and animations as the game does.
"""

from __future__ import annotations

from .model import AFrame, Anim, FModule, Frame, Sprite, is_sprite, read_sprite

__all__ = ["AFrame", "Anim", "FModule", "Frame", "Sprite", "is_sprite", "read_sprite"]
