"""Red Faction Guerrilla packfile v3: the byte layout and its records, shared by the reader
(`packfile`), the writer, the checker and the rebuilder.

All integers are little-endian u32.

| offset | size  | field                                                               |
|--------|-------|---------------------------------------------------------------------|
| 0      | 4     | magic 0x51890ACE                                                    |
| 4      | 4     | version, 3                                                          |
| 8      | 65    | ShortName (NUL-padded; the game ignores it)                         |
| 73     | 256   | PathName (NUL-padded; other packers write a message here)           |
| 329    | 3     | padding                                                             |
| 332    | 4     | Flags: bit 0 compressed, bit 1 condensed                            |
| 336    | 4     | padding                                                             |
| 340    | 4     | NumberOfEntries N                                                   |
| 344    | 4     | FileSize (0xFFFFFFFF when the file exceeds 4 GiB)                   |
| 348    | 4     | EntryBlockSize = 28·N (without padding)                             |
| 352    | 4     | NameBlockSize = Σ(len(name)+1) (without padding)                    |
| 356    | 4     | DataSize                                                            |
| 360    | 4     | CompressedDataSize (0xFFFFFFFF when not compressed)                 |
| 364    | 12    | runtime junk in game files (written as zeros)                       |
| 376    |       | zero padding to 2048                                                |
| 2048   | 28·N  | entries: NameOffset, pad, DataOffset, NameHash, DataSize, CompressedDataSize, pad |
| E      |       | names, NUL-terminated; E = 2048 + align(28·N, 2048)                 |
| D      |       | data; D = E + align(NameBlockSize, 2048)                            |

NameHash is not CRC32: `h = 0; for each byte c of name.lower(): h = rotl32(h, 6) ^ c`.
Names are looked up ignoring case.
"""

from __future__ import annotations

import struct

from ...core.layout import terminated_offsets

MAGIC = 0x51890ACE
VERSION = 3
# magic, version, ShortName, PathName, pad, Flags, pad, N, FileSize, EntryBlockSize,
# NameBlockSize, DataSize, CompressedDataSize, runtime bytes
HEADER = struct.Struct("<II65s256s3sI4sIIIIII12s")
# NameOffset, pad, DataOffset, NameHash, DataSize, CompressedDataSize, pad
ENTRY = struct.Struct("<IIIIIII")
HEADER_BLOCK = 2048
BLOCK_ALIGN = 2048
NO_SIZE = 0xFFFFFFFF
U32 = 0xFFFFFFFF
RUNTIME_OFFSET = 364
# Offsets of the header's size fields (for problems that point at them).
FIELD_OFFSETS = {
    "file_size": 344,
    "entry_block_size": 348,
    "name_block_size": 352,
    "data_size": 356,
    "compressed_data_size": 360,
}
FLAG_COMPRESSED = 1
FLAG_CONDENSED = 2
MODE_NAMES = {0: "plain", 1: "compressed", 2: "condensed", 3: "compressed+condensed"}


def name_hash(name: bytes) -> int:
    """The packfile's NameHash of a stored name: rotate left 6, xor each lower-cased byte."""
    value = 0
    for byte in name.lower():
        value = (((value << 6) | (value >> 26)) & U32) ^ byte
    return value


def name_block(raw_names: list[bytes], recorded: list[int] | None = None) -> tuple[bytes, list[int]]:
    """The name block and where each name starts in it: at the `recorded` offsets (an exact
    rebuild of a pack whose names share or overlap bytes) while every name still reads back
    from its offset, else one after another."""
    if recorded is not None and len(recorded) == len(raw_names):
        block = bytearray()
        for raw, offset in zip(raw_names, recorded, strict=True):
            end = offset + len(raw) + 1
            block.extend(bytes(max(0, end - len(block))))
            block[offset:end] = raw + b"\0"
        if all(block[offset : offset + len(raw) + 1] == raw + b"\0" for raw, offset in zip(raw_names, recorded)):
            return bytes(block), [int(offset) for offset in recorded]
    return b"".join(raw + b"\0" for raw in raw_names), terminated_offsets(raw_names)
