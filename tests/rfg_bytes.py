"""RFG packfile v3 bytes built by hand from the spec (../shared/specs/rfg-packfile-v3.md), for
tests that must not depend on the writer under test: the 2048-byte header, entry records, and
the blocks each aligned to 2048 bytes."""

from __future__ import annotations

import struct

from gamepak.formats.rfg.records import name_hash

MAGIC = 0x51890ACE
VERSION = 3
# magic, version, short name, path name, padding, flags, padding, entry count, file size,
# entries block size, names block size, data size, compressed data size, runtime bytes
HEADER = struct.Struct("<II65s256s3sI4sIIIIII12s")
# name offset, runtime, data offset, name hash, data size, compressed data size, runtime
ENTRY = struct.Struct("<IIIIIII")
NOT_COMPRESSED = 0xFFFFFFFF


def align(value: int, alignment: int = 2048) -> int:
    """`value` rounded up to a multiple of `alignment`."""
    return -(-value // alignment) * alignment if alignment > 1 else value


def header(
    *,
    flags: int,
    count: int,
    file_size: int,
    entries_size: int,
    names_size: int,
    data_size: int,
    compressed_size: int,
    short_name: bytes = b"",
    path_name: bytes = b"",
) -> bytes:
    """The header block, padded to 2048 bytes."""
    packed = HEADER.pack(
        MAGIC,
        VERSION,
        short_name,
        path_name,
        b"",
        flags,
        b"",
        count,
        file_size,
        entries_size,
        names_size,
        data_size,
        compressed_size,
        b"",
    )
    return packed.ljust(2048, b"\0")


def entry(name_offset: int, data_offset: int, name: bytes, size: int, stored: int) -> bytes:
    """One entry record (the name hash computed from `name`)."""
    return ENTRY.pack(name_offset, 0, data_offset, name_hash(name), size, stored, 0)


def assemble(
    *,
    flags: int,
    count: int,
    entry_block: bytes,
    names: bytes,
    block: bytes,
    data_size: int,
    compressed_size: int,
    short_name: bytes = b"",
    path_name: bytes = b"",
) -> bytes:
    """A whole packfile: header, entries, names (each block aligned to 2048), then the data."""
    head_size = 2048 + align(len(entry_block)) + align(len(names))
    return (
        header(
            flags=flags,
            count=count,
            file_size=head_size + len(block),
            entries_size=len(entry_block),
            names_size=len(names),
            data_size=data_size,
            compressed_size=compressed_size,
            short_name=short_name,
            path_name=path_name,
        )
        + entry_block.ljust(align(len(entry_block)), b"\0")
        + names.ljust(align(len(names)), b"\0")
        + block
    )
