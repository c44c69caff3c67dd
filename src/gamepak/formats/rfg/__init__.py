"""Red Faction Guerrilla: packfiles v3 (`.vpp_pc`, `.str2_pc`) and `.asm_pc` container tables.

- `packfile`: the packfile's byte layout and its reader.
- `inflate`: bounded, checkpointed decompression of the packfile's zlib streams.
- `writer`: the packfile writer (keeps `.asm_pc` tables up to date).
- `reuse`: the writer's copies of stored compressed bytes (flags 1, and flags 3's one stream).
- `options`: the writer's option checkers.
- `conventions`: what the game and other tools (Gibbed's, SyncFaction) write in each field.
- `check`: `verify`'s errors and warnings.
- `rebuild`: what a byte-exact rebuild needs (zlib settings, alignment, header values).
- `asm`: the `.asm_pc` format.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .packfile import Reader, check_name, sniff
    from .records import name_hash
    from .writer import Writer

__all__ = ["Reader", "Writer", "check_name", "name_hash", "sniff"]


def __getattr__(name: str) -> object:
    # The reader loads when a pack is opened, the writer (and the `.asm_pc` and rebuild modules
    # it needs) only when something writes: the other RFG formats (`.rfglocatext`, `.xtbl`)
    # live in this package and load without either.
    if name in ("Reader", "check_name", "sniff"):
        from . import packfile

        return getattr(packfile, name)
    if name == "name_hash":
        from .records import name_hash

        return name_hash
    if name == "Writer":
        from .writer import Writer

        return Writer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
