"""Red Faction Guerrilla: packfiles v3 (`.vpp_pc`, `.str2_pc`) and `.asm_pc` container tables.

- `packfile`: the packfile's byte layout and its reader.
- `inflate`: bounded, checkpointed decompression of the packfile's zlib streams.
- `writer`: the packfile writer (reuses stored bytes, keeps `.asm_pc` tables up to date).
- `conventions`: what the game and other tools (Gibbed's, SyncFaction) write in each field.
- `check`: `verify`'s errors and warnings.
- `rebuild`: what a byte-exact rebuild needs (zlib settings, alignment, header values).
- `asm`: the `.asm_pc` format.
"""

from __future__ import annotations

from .packfile import Reader, name_hash, sniff
from .writer import Writer

__all__ = ["Reader", "Writer", "name_hash", "sniff"]
