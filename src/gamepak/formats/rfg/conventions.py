"""What the known writers of RFG packfiles put in the fields that do not decide where data is.

A packfile's data is found from its entries' sizes (and, in condensed modes, DataOffsets); the
header's size fields are bookkeeping that each writer fills in its own way. gamepak reads all of
these, and `verify` reports a field that differs from the game's own convention as a *warning*
naming the likely writer, never as corruption.

- ShortName / PathName: the game leaves them empty; Gibbed's Volition tools write a message
  ("Created using Gibbed's Volition Tools", ...); SyncFaction leaves them empty.
- CompressedDataSize when not compressed: the game and Gibbed's tools write 0xFFFFFFFF;
  SyncFaction / RFGM.Archiver writes 0x00FFFFFF in the header.
- Mode 1 (compressed only) DataSize: gamepak writes the sum of the member sizes; SyncFaction adds
  the 2048-byte padding it writes after each compressed member but the last.
- Mode 3 (compressed + condensed): the game sync-flushes after each member and never finishes the
  stream, so the entries' compressed sizes add up to the header's. SyncFaction flushes after each
  member too, but measures a member's compressed size before what follows its flush (padding, and
  the final block and Adler-32 it writes at the end), so its sizes add up to less than the
  header's CompressedDataSize (e.g. 678 vs 691): the stream is read as one, through the header's size.
- The 12 bytes at 364 hold runtime junk in game files; other tools write zeros.

gamepak writes the game's convention (zeros for the runtime bytes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.layout import align_up
from .records import BLOCK_ALIGN, NO_SIZE

if TYPE_CHECKING:
    from .view import PackfileView

GAME = "the game"
GIBBED = "Gibbed's Volition tools"
SYNCFACTION = "SyncFaction / RFGM.Archiver"
# What each writer stores for "not compressed" in CompressedDataSize fields.
NOT_COMPRESSED = {NO_SIZE: GAME, 0x00FFFFFF: SYNCFACTION}


def likely_writer(reader: PackfileView) -> str | None:
    """The tool that probably wrote this packfile, from its fingerprints (None: the game's own
    convention, or unknown)."""
    text = reader.short_name_field + reader.path_name_field
    if b"Gibbed" in text:
        return GIBBED
    if reader.compressed_size_field == 0x00FFFFFF:
        return SYNCFACTION
    if reader.flags == 1 and reader.data_size_field == mode1_data_sizes(reader).get(SYNCFACTION):
        return SYNCFACTION
    if reader.flags == 3 and not reader.solid_stream()[1]:
        return SYNCFACTION
    return None


def mode1_data_sizes(reader: PackfileView) -> dict[str, int]:
    """The DataSize each known writer stores in a compressed-only (mode 1) pack."""
    entries = reader.infolist()
    members = sum(entry.size for entry in entries)
    padding = sum(align_up(entry.stored_size or 0, BLOCK_ALIGN) - (entry.stored_size or 0) for entry in entries[:-1])
    return {GAME: members, SYNCFACTION: members + padding}


def writer_note(writer: str | None) -> str:
    """' (written by X?)' for a message, or '' when the writer is unknown."""
    return f" ({writer} writes this)" if writer else ""
