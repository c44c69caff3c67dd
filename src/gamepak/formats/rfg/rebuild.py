"""What a byte-exact rebuild of a packfile needs: the zlib settings, alignment and header values
the original's writer chose (`Reader.layout()`), and whether the linked zlib can reproduce them."""

from __future__ import annotations

import zlib

from ...core.archive import Entry, decode_name
from ...core.layout import align_up, fill_bytes, terminated_offsets
from .inflate import Inflater
from .records import ENTRY, RUNTIME_OFFSET, U32

# `typing` and `hashlib` cost milliseconds at import; hashlib is needed only by `classic_zlib`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .view import PackfileView

# sha256 of classic zlib's output for `_probe_input()` (level → digest), compressed with
# compressobj(level, DEFLATED, 15, 8, 0) and one sync flush. zlib-ng and others differ.
_CLASSIC_ZLIB_DIGESTS = {
    1: "34a765ddb1851f35fcb92560a118b4cc6d2c11b078b0070b85e8bd5dd6e02f18",
    6: "cfd3e4eb307009d105e84b3d419412c49c78763b1f211f5662e5b6a791e70643",
    9: "5ef7177b99759a5b319f94734af32e820b8c84e2bc3fc0afea317986deecbb47",
}
_classic_zlib: bool | None = None


def _probe_input() -> bytes:
    return b"".join(b"%d:%s;" % (index, b"rfg" * (index % 7)) for index in range(300))


def classic_zlib() -> bool:
    """Whether the linked zlib reproduces classic zlib's bytes (checked once)."""
    global _classic_zlib
    if _classic_zlib is None:
        import hashlib

        data = _probe_input()
        matches = "ng" not in zlib.ZLIB_RUNTIME_VERSION.lower()
        for level, digest in _CLASSIC_ZLIB_DIGESTS.items():
            compressor = zlib.compressobj(level, zlib.DEFLATED, 15, 8, 0)
            out = compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH)
            matches = matches and hashlib.sha256(out).hexdigest() == digest
        _classic_zlib = matches
    return _classic_zlib


def detect_alignment(reader: PackfileView) -> int | None:
    """The alignment of members inside the condensed data, or None if irregular."""
    entries = reader.infolist()
    for alignment in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096):
        position = 0
        fits = True
        for entry in entries:
            position = align_up(position, alignment)
            relative = entry.offset if reader.flags == 3 else entry.offset - reader.data_start
            if relative != position:
                fits = False
                break
            position += entry.size
        if fits:
            return alignment
    return None


def probe_pieces(reader: PackfileView, limit: int) -> list[tuple[bytes, bytes, bool, bool]]:
    """(plain, compressed, complete, starts a new stream) per chunk, from the start, until
    about `limit` plain bytes: what `_detect_zlib` recompresses."""
    pieces: list[tuple[bytes, bytes, bool, bool]] = []
    entries = reader.infolist()
    total = 0
    inflater: Inflater | None = None
    for index, entry in enumerate(entries):
        if total >= limit:
            break
        if reader.condensed:
            following = entries[index + 1].offset if index + 1 < len(entries) else entry.offset + entry.size
            span = max(following - entry.offset, entry.size)
            if inflater is None:
                inflater = reader.new_inflater(entry)
        else:
            span = entry.size
            inflater = reader.new_inflater(entry)
        take = min(span, limit - total)
        probe = Entry(entry.name, take, entry.offset, None, entry.index)
        plain = b"".join(inflater.read_range(probe))
        stored = entry.stored_size or 0
        compressed = reader._source.pread(min(stored, 2 * take + 4096), reader.chunk_start(entry))
        complete = take == span and len(compressed) == stored
        pieces.append((plain, compressed, complete, not reader.condensed or index == 0))
        total += take
    return pieces


def detect_zlib(reader: PackfileView) -> dict[str, Any] | None:
    """The zlib settings that reproduce the stored compressed bytes (tried on the first
    chunks, up to 1 MiB of data, after a quick first pass over 64 KiB), or None when no
    tried setting does."""
    pieces = probe_pieces(reader, 1 << 20)
    if not pieces or not pieces[0][1]:
        return {"level": 9, "strategy": 0, "mem_level": 8, "window_bits": 15}
    head = pieces[0][1]
    if len(head) < 2 or (head[0] & 0x0F) != 8 or not 8 <= (head[0] >> 4) + 8 <= 15:
        return None
    window_bits = (head[0] >> 4) + 8
    flush = zlib.Z_SYNC_FLUSH if reader.condensed or not stream_finished(reader) else zlib.Z_FINISH
    # zlib's header says which group of levels wrote it: try those first.
    order = {0: [1, 0], 1: [2, 3, 4, 5], 2: [6], 3: [9, 7, 8]}[head[1] >> 6]
    order += [level for level in range(10) if level not in order]

    def reproduces(level: int, strategy: int, mem_level: int, limit: int) -> bool:
        compressor: Any = None
        used = 0
        for plain, compressed, complete, new_stream in pieces:
            if compressor is None or new_stream:
                compressor = zlib.compressobj(level, zlib.DEFLATED, window_bits, mem_level, strategy)
            if used + len(plain) > limit:
                plain, complete = plain[: limit - used], False
            out = compressor.compress(plain)
            used += len(plain)
            if complete:
                if out + compressor.flush(flush) != compressed:
                    return False
            elif not compressed.startswith(out):
                return False
            if used >= limit or not complete:
                return True
        return True

    for strategy in (0, 1, 2, 3, 4):
        for level in order:
            for mem_level in (8, 9, 7, 6, 5, 4, 3, 2, 1):
                quick = reproduces(level, strategy, mem_level, 64 << 10)
                if quick and reproduces(level, strategy, mem_level, 1 << 30):
                    return {
                        "level": level,
                        "strategy": strategy,
                        "mem_level": mem_level,
                        "window_bits": window_bits,
                    }
    return None


def stream_finished(reader: PackfileView) -> bool:
    """Whether per-member streams (flags 1) end with a final block."""
    entries = [entry for entry in reader.infolist() if entry.stored_size]
    if reader.flags != 1 or not entries:
        return True
    first = entries[0]
    inflater = reader.new_inflater(first)
    for _ in inflater.read_range(first):
        pass
    inflater.drain()
    return inflater.finished


def packfile_layout(reader: PackfileView) -> dict[str, Any]:
    """The writer options (and, for unchanged members, the exact hints) that rebuild the file."""
    entries = reader.infolist()
    options: dict[str, Any] = {
        "flags": reader.flags,
        "short_name": decode_name(reader.short_name_field.partition(b"\0")[0]),
        "path_name": decode_name(reader.path_name_field.partition(b"\0")[0]),
        "runtime": reader.runtime.hex() if any(reader.runtime) else None,
    }
    exact: dict[str, Any] = {"sizes": [entry.size for entry in entries], "file_size": reader.size}
    if reader.condensed:
        alignment = detect_alignment(reader)
        options["align"] = alignment or 1
        if alignment is None:
            exact["offsets"] = [entry.offset - (0 if reader.flags == 3 else reader.data_start) for entry in entries]
    if reader.flags == 3 and entries and not reader.solid_stream()[1]:
        # Another tool's stream (its chunk sizes do not add up): gamepak cannot reproduce its
        # compressed bytes, so a rebuild is a clean pack in the game's convention. (An empty
        # pack has no stream to distrust: its header fields and trailing bytes are kept.)
        options.update(level=9, strategy=0, mem_level=8, window_bits=15)
        return {"options": options, "exact": {}}
    if reader.compressed:
        settings = detect_zlib(reader)
        if settings is None:
            exact["zlib_unmatched"] = True
        else:
            options.update(settings)
        if reader.flags == 1:
            options["finish"] = stream_finished(reader)
    # Header fields and entry fields that differ from what the writer computes.
    overrides: dict[str, Any] = {}
    expected = reader.expected_sizes()
    for field, value in (
        ("entry_block_size", reader.entry_block_size),
        ("name_block_size", reader.name_block_size),
        ("data_size", reader.data_size_field),
        ("compressed_data_size", reader.compressed_size_field),
    ):
        if value != min(expected[field], U32) and not (expected[field] > U32 and value == U32):
            overrides[field] = value
    if reader.file_size_field != min(reader.size, U32):
        overrides["file_size"] = reader.file_size_field
    exact["header"] = overrides
    exact["data_offsets"] = data_offset_overrides(reader)
    # Header bytes the options reproduce are covered; anything else non-zero (text after a
    # name's NUL, junk in the padding) goes to `fill`.
    covered = [(0, 8), (332, 4), (340, 24), (RUNTIME_OFFSET, len(reader.runtime))]
    if any(record[1] or record[6] for record in reader.records):
        # Non-zero bytes in the two entry fields the writer leaves zero go to `fill`.
        for index in range(len(entries)):
            at = reader.entries_start + ENTRY.size * index
            covered += [(at, 4), (at + 8, 16)]
    else:
        covered.append((reader.entries_start, ENTRY.size * len(entries)))
    for start, raw in ((8, reader.short_name_field), (73, reader.path_name_field)):
        text = raw.partition(b"\0")[0]
        if raw == text.ljust(len(raw), b"\0"):
            covered.append((start, len(raw)))
    canonical_names = all(
        record[0] == offset for record, offset in zip(reader.records, terminated_offsets(reader.raw_names))
    ) and reader.name_block_size == sum(len(raw) + 1 for raw in reader.raw_names)
    if canonical_names:
        covered.append((reader.names_start, reader.name_block_size))
    else:
        exact["name_offsets"] = [record[0] for record in reader.records]
    if reader.flags == 3:
        covered.append((reader.data_start, max(0, min(reader.data_end(), reader.size) - reader.data_start)))
    else:
        # Each member's own bytes: the padding between them is the writer's zeros, so junk
        # there goes to `fill` too.
        for entry in entries:
            covered.append((entry.offset, (entry.stored_size or 0) if reader.compressed else entry.size))
    exact["fill"] = fill_bytes(reader._source, covered)
    return {"options": options, "exact": exact}


def data_offset_overrides(reader: PackfileView) -> dict[str, int]:
    """Raw DataOffset values the writer would not produce (mode 1 positions, odd tools)."""
    overrides = {}
    for entry, record in zip(reader.infolist(), reader.records):
        if reader.flags == 3:
            want = entry.offset
        else:
            want = entry.offset - reader.data_start
        if record[2] != want & U32:
            overrides[str(entry.index)] = record[2]
    return overrides
