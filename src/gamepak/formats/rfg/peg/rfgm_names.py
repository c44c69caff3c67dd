"""The file and folder names RFGM (rfg-modding's tools) gives exported pegs and textures, read
back to the names gamepak's own export uses.

- RFGM today, a texture:
  `heat_map_enemy__index_0__pegAlign_16__texMips_4__texFmt_pcDxt1__texFlags_none__texSize_32x32__texSrc_32x32_.dds`
  (and `.png`), in a folder named after its peg: `xray_effect__index_1__pegAlign_16_.cpeg_pc/`
- RFGM.Archiver (older): `00000 heat_map_enemy.tga PcDxt1 4.dds` (order, name, format, mips)
- gamepak: `heat_map_enemy.dds` in `xray_effect.cpeg_pc/` (a pack's export) or the folder itself

RFGM's current form is `STEM` followed by `__KEY_VALUE` properties (the first one `__index_N`)
and a closing `_` before the extension; the properties only repeat what the peg says (index,
alignment, mips, format, flags, size), so matching goes by `STEM` (the texture's name without
`.tga`, case ignored as the game ignores it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# `STEM__index_N` then `__key_value` properties, a closing `_`, then the extension.
_CURRENT = re.compile(r"(?P<stem>.+?)__index_(?P<index>\d+)(?:__[A-Za-z0-9]+_[^_]*)*_(?P<ext>\.[^.]+)?")
# RFGM.Archiver's older texture names: `{order:05} {name} {format} {mips}.{dds|png}`.
_ARCHIVER = re.compile(r"\d+ (?P<name>.+) \w+ \d+(?P<ext>\.(?:dds|png))", re.IGNORECASE)


def plain_name(file_name: str) -> str | None:
    """The name gamepak's export would give a file or folder RFGM named (`heat_map_enemy.dds`,
    `xray_effect.cpeg_pc`), or None when `file_name` is not one of RFGM's names. The older
    Archiver names keep the texture's full name (`heat_map_enemy.tga.dds`)."""
    match = _CURRENT.fullmatch(file_name)
    if match is not None:
        return match["stem"] + (match["ext"] or "")
    match = _ARCHIVER.fullmatch(file_name)
    if match is not None:
        return match["name"] + match["ext"]
    return None


def rfgm_textures(present: Iterable[str]) -> dict[str, list[str]]:
    """The files among `present` that RFGM named after a texture, by the texture's name in
    lower case without `.tga` (several per name when a DDS and a PNG were both written)."""
    found: dict[str, list[str]] = {}
    for file_name in sorted(present):
        plain = plain_name(file_name)
        if plain is None or "." not in plain:
            continue
        stem = plain.rsplit(".", 1)[0].lower()
        if stem.endswith(".tga"):
            stem = stem[: -len(".tga")]
        found.setdefault(stem, []).append(file_name)
    return found
