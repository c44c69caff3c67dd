"""Quake WAD2 (and Half-Life WAD3) texture and picture archives (`wad`).

| offset | size | field                                                              |
|--------|------|--------------------------------------------------------------------|
| 0      | 4    | magic `WAD2` (Quake, Hexen II) or `WAD3` (Half-Life)               |
| 4      | 4    | int32 lump count                                                   |
| 8      | 4    | int32 directory offset (absolute)                                  |
| dir    | 32·N | entries, below                                                     |

Directory entry (32 bytes):

| offset | size | field                                                              |
|--------|------|--------------------------------------------------------------------|
| 0      | 4    | int32 data offset (absolute)                                       |
| 4      | 4    | int32 stored size                                                  |
| 8      | 4    | int32 full size (= stored size: no file uses compression)          |
| 12     | 1    | type: 0x40 palette, 0x42 qpic, 0x44 miptex (WAD3: 0x43), ...       |
| 13     | 1    | compression: 0 (1 = LZSS is never used; refused)                   |
| 14     | 2    | padding, 0                                                         |
| 16     | 16   | name, NUL-terminated (15 bytes at most)                            |

Names are case-insensitive (the engine lower-cases both sides) and the first of two equal names
wins. The `CONCHARS` lump of gfx.wad is type 0x44 but raw 128x128 pixels: a lump's kind is told
by its name first, then its type. qpakman packs lump data from offset 12 in directory order with
the directory last; the writer does the same. Unchanged files rebuild byte for byte from a
manifest (types, name fields with bytes after the NUL, filler).
"""

from __future__ import annotations

import struct

from ...core.archive import Archive, Entry, FixedRecordNames, encode_name
from ...core.registry import made_on_first_use
from ...core.source import Source
from ...errors import FormatLimitError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from ...core.archive import PendingMember
    from ...core.writer import ArchiveWriter, Output

HEADER = struct.Struct("<4sii")
ENTRY = struct.Struct("<iiiBBH16s")
POSITION_FIELDS = struct.Struct("<iiiBBH16x")
NAME_START = 16
NAME_FIELD = 16
MAX_NAME_BYTES = NAME_FIELD - 1
MAGICS = (b"WAD2", b"WAD3")

TYPE_PALETTE = 0x40
TYPE_QPIC = 0x42
TYPE_WAD3_MIPTEX = 0x43
TYPE_MIPTEX = 0x44
TYPE_NAMES = {0x40: "palette", 0x41: "qtex", 0x42: "qpic", 0x43: "sound", 0x44: "miptex", 0x46: "font"}
# Lumps that carry a miptex type code but hold raw pixels (qpakman treats both so).
RAW_PIXEL_LUMPS = {"conchars": (128, 128), "tinyfont": (128, 32)}


def lump_kind(name: str, lump_type: int, wad3: bool = False) -> str:
    """What a lump holds: "palette", "qpic", "miptex", "conchars" (raw console font) or "raw"."""
    lowered = name.lower()
    if lowered in RAW_PIXEL_LUMPS:
        return "conchars" if lowered == "conchars" else "raw"
    if lump_type == (TYPE_WAD3_MIPTEX if wad3 else TYPE_MIPTEX):
        return "miptex"
    if lump_type == TYPE_QPIC:
        return "qpic"
    if lump_type == TYPE_PALETTE:
        return "palette"
    return "raw"


class WadEntry(Entry):
    """A lump: an `Entry` with its type code and compression byte."""

    __slots__ = ("compression", "kind", "lump_type")

    def __init__(self, name: str, size: int, offset: int, index: int, lump_type: int, compression: int, kind: str):
        super().__init__(name, size, offset, None, index)
        self.lump_type = lump_type
        self.compression = compression
        self.kind = kind

    def to_dict(self) -> dict[str, Any]:
        row = super().to_dict()
        row["type"] = self.lump_type
        row["kind"] = self.kind
        return row


def sniff(source: Source) -> float:
    """1.0 for a WAD2/WAD3 header whose directory lies inside the file."""
    head = source.pread(HEADER.size, 0)
    if len(head) < HEADER.size or head[:4] not in MAGICS:
        return 0.0
    _, count, directory_offset = HEADER.unpack(head)
    if count < 0 or directory_offset < 0 or directory_offset + count * ENTRY.size > source.size:
        return 0.5
    return 1.0


def infer_type(name: str, head: bytes, size: int, wad3: bool = False) -> int:
    """The type code a new lump gets from its name, its first 40 bytes and its size: miptex
    when its header and mip offsets fit its size, qpic when 8 + w·h is its size, palette for a
    768-byte `palette`; anything else is stored as miptex type (qpakman's default)."""
    lowered = name.lower()
    miptex_type = TYPE_WAD3_MIPTEX if wad3 else TYPE_MIPTEX
    if lowered in RAW_PIXEL_LUMPS:
        return TYPE_MIPTEX
    if len(head) >= 40:
        width, height, *offsets = struct.unpack_from("<II4I", head, 16)
        pixels = width * height
        shaped = width and height and width % 8 == 0 and height % 8 == 0 and offsets[0] == 40
        if shaped and 40 + pixels * 85 // 64 <= size and offsets[3] + pixels // 64 <= size:
            return miptex_type
    if len(head) >= 8:
        width, height = struct.unpack_from("<ii", head)
        if width > 0 and height > 0 and 8 + width * height == size:
            return TYPE_QPIC
    if lowered == "palette" and size == 768:
        return TYPE_PALETTE
    return miptex_type


class Reader(FixedRecordNames, Archive):
    """A WAD2 or WAD3 file opened for reading; members are its lumps."""

    format_name = "wad"
    duplicate_wins = "first"
    case_insensitive = True

    def _load(self) -> None:
        header = self._source.read_exact(HEADER.size, 0, "WAD header")
        self.magic, count, self.directory_offset = HEADER.unpack(header)
        if self.magic not in MAGICS:
            raise self.corrupt(f"not a WAD file (magic {self.magic!r}, expected b'WAD2' or b'WAD3')", 0)
        if count < 0:
            raise self.corrupt(f"lump count {count} is negative", 4)
        if self.directory_offset < 0:
            raise self.corrupt(f"directory offset {self.directory_offset} is negative", 8)
        if self.directory_offset + count * ENTRY.size > self._source.size:
            raise self.corrupt(
                f"lump count {count} at directory offset {self.directory_offset} needs "
                f"{count * ENTRY.size} bytes of directory, past the end of the file ({self._source.size} bytes)",
                4,
            )
        self.wad3 = self.magic == b"WAD3"
        raw = self._source.read_exact(count * ENTRY.size, self.directory_offset, "WAD directory")
        self._keep_directory(raw, ENTRY.size, NAME_START, NAME_FIELD)
        for index, (offset, size, _full_size, _type, compression, _pad) in enumerate(POSITION_FIELDS.iter_unpack(raw)):
            where = self.directory_offset + index * ENTRY.size
            if offset < 0 or size < 0 or offset + size > self._source.size:
                raise self.corrupt(
                    f"lump {index}: data offset {offset} + size {size} lies outside the file "
                    f"({self._source.size} bytes)",
                    where,
                )
            if compression:
                raise self.corrupt(
                    f"lump {index}: compression {compression} (LZSS) is not supported: no engine reads it", where + 13
                )

    def _build_entries(self) -> list[Entry]:
        return [
            WadEntry(name, size, offset, index, lump_type, compression, lump_kind(name, lump_type, self.wad3))
            for index, (name, (offset, size, _full, lump_type, compression, _pad)) in enumerate(
                zip(self._names, POSITION_FIELDS.iter_unpack(self._directory))
            )
        ]

    def iter_lumps(self) -> Iterator[WadEntry]:
        """Each lump's entry in order, made as it is asked for and not kept unless `infolist`
        kept them already (a WAD of 100,000 tiny pictures would hold ~270 bytes a lump)."""
        if self._entries is not None:
            yield from self._entries  # type: ignore[misc]
            return
        name_at, wad3 = self._name_at, self.wad3
        for index, (offset, size, _full, lump_type, compression, _pad) in enumerate(
            POSITION_FIELDS.iter_unpack(self._directory)
        ):
            name = name_at(index) if self._decoded is None else self._decoded[index]
            yield WadEntry(name, size, offset, index, lump_type, compression, lump_kind(name, lump_type, wad3))

    def _raw_records(self) -> list[tuple[int, int, int, int, int, int, bytes]]:
        return list(ENTRY.iter_unpack(self._directory))

    def lump(self, name: str) -> WadEntry:
        """The lump called `name` (case-insensitive, first match)."""
        entry = self.getinfo(name)
        assert isinstance(entry, WadEntry)
        return entry

    def header_fields(self) -> dict[str, Any]:
        kinds: dict[str, int] = {}
        for entry in self.infolist():
            assert isinstance(entry, WadEntry)
            kinds[entry.kind] = kinds.get(entry.kind, 0) + 1
        return {
            "magic": self.magic.decode("ascii"),
            "lump_count": self._count,
            "directory_offset": self.directory_offset,
            "lump_kinds": kinds,
        }

    def unheld_bytes(self) -> int:
        end = max(
            [HEADER.size, self.directory_offset + len(self._directory)]
            + [entry.offset + entry.size for entry in self.infolist()]
        )
        return max(0, self.size - end)

    def _verify(self) -> list[str]:
        problems = super()._verify()
        for index, (_offset, size, full_size, _type, _comp, padding, raw_name) in enumerate(self._raw_records()):
            if full_size != size:
                problems.append(f"lump {index}: full size {full_size} differs from the stored size {size}")
            if b"\0" not in raw_name:
                problems.append(f"lump {index}: name fills all {NAME_FIELD} bytes without a NUL")
            if padding:
                problems.append(f"lump {index}: padding bytes are {padding:#06x}, not 0")
        problems += self._picture_problems()
        return problems

    def _picture_problems(self) -> list[str]:
        """qpic and miptex lumps whose headers contradict their sizes (the engine would read
        past them). Only each header is read: lumps may overlap, and thousands of lumps over
        one large picture would otherwise read it thousands of times."""
        from .images import MIPTEX_HEADER, ImageError, miptex_header, qpic_size

        problems = []
        for entry in self.infolist():
            assert isinstance(entry, WadEntry)
            if entry.kind not in ("qpic", "miptex") or entry.offset + entry.size > self.size:
                continue
            head = self._source.pread(min(entry.size, MIPTEX_HEADER.size), entry.offset)
            try:
                if entry.kind == "qpic":
                    qpic_size(head, entry.size, self.filename)
                else:
                    miptex_header(head, entry.size, entry.name, self.filename, base=entry.offset)
            except ImageError as exc:
                problems.append(f"lump {entry.name!r} at {entry.offset}: {exc.reason}")
        return problems

    def layout(self) -> dict[str, Any]:
        """The byte-exact layout, made from the directory's records one at a time: no entry,
        record tuple or range tuple is held per lump (a WAD of 100,000 tiny pictures held ~300
        bytes a lump here); what stays per lump is what the layout says (a type, an offset and a
        size)."""
        from ...core.layout import encode_blob, fill_bytes

        names = self._names
        name_fields = {}
        extras = {}
        types = {}
        offsets = []
        sizes = []
        for index, (offset, size, full_size, lump_type, _comp, padding, raw) in enumerate(
            ENTRY.iter_unpack(self._directory)
        ):
            name = raw.partition(b"\0")[0]
            if raw != name.ljust(NAME_FIELD, b"\0"):
                name_fields[str(index)] = encode_blob(raw)
            if full_size != size or padding:
                extras[str(index)] = [full_size, padding]
            types[names[index]] = lump_type
            offsets.append(offset)
            sizes.append(size)
        return {
            "options": self.layout_options(),
            "exact": {
                "types": types,
                "offsets": offsets,
                "sizes": sizes,
                "directory_offset": self.directory_offset,
                "name_fields": name_fields,
                "record_extras": extras,
                "fill": fill_bytes(self._source, self._covered(offsets, sizes)),
                "file_size": self.size,
            },
        }

    def _covered(self, offsets: list[int], sizes: list[int]) -> list[tuple[int, int]]:
        """The header, the directory and every lump as sorted (offset, size) ranges, as
        `fill_bytes` wants them; a lump's range made only where the lumps are out of order (the
        usual WAD's lie in order, one after the other: one range covers them all)."""
        covered = [(0, HEADER.size), (self.directory_offset, len(self._directory))]
        if all(map(int.__le__, offsets, offsets[1:])):
            # In order: runs of lumps that follow each other merge, with the same gaps between.
            start = end = -1
            for offset, size in zip(offsets, sizes, strict=True):
                if offset <= end:  # touching or overlapping: one range
                    end = max(end, offset + size)
                    continue
                if start >= 0:
                    covered.append((start, end - start))
                start, end = offset, offset + size
            if start >= 0:
                covered.append((start, end - start))
            return covered
        return covered + list(zip(offsets, sizes, strict=True))

    def layout_options(self) -> dict[str, Any]:
        return {"version": self.magic.decode("ascii")}

    def append_edit(self, path: str, members: list[PendingMember]) -> bool:
        """New lump data and a new directory go after everything the header refers to; the
        12-byte header, rewritten last, switches to them (crash-safe, as a PAK edit).
        Unchanged lumps stay where they are, with their type and stored name field."""
        if any(entry.size and entry.offset < HEADER.size for entry in self.infolist()):
            return False  # data overlapping the header, which the switch rewrites: rebuilt
        from ...core.inplace import append_with_trailing_directory

        records_by_index = self._raw_records()

        def kept(member: PendingMember, entry: Entry) -> bytes:
            offset, size, full, lump_type, _comp, padding, raw = records_by_index[entry.index]
            if raw.partition(b"\0")[0] != encode_name(member.name):
                raw = encode_name(member.name)
            return ENTRY.pack(offset, size, full, lump_type, 0, padding, raw)

        def added(member: PendingMember, offset: int) -> bytes:
            origin = member.origin
            if origin is not None and isinstance(origin[1], WadEntry):
                lump_type = origin[1].lump_type
            else:
                lump_type = infer_type(member.name, _head(member), member.size, self.wad3)
            return ENTRY.pack(offset, member.size, member.size, lump_type, 0, 0, encode_name(member.name))

        append_with_trailing_directory(
            path,
            self,
            members,
            start=max(
                [HEADER.size, self.directory_offset + len(self._directory)]
                + [entry.offset + entry.size for entry in self.infolist()]
            ),
            kept=kept,
            added=added,
            header=lambda offset, _length, count: HEADER.pack(self.magic, count, offset),
            limit=0x7FFFFFFF,
            limit_message="a WAD cannot exceed 2 GiB (its offsets are signed 32-bit)",
        )
        return True


def _head(member: PendingMember) -> bytes:
    """The first 40 bytes of a queued member (enough to tell its lump type)."""
    if member.data is not None:
        return member.data[:40]
    if member.origin is not None:
        with member.origin[0].open(member.origin[1]) as stream:
            return stream.read(40)
    with open(str(member.path), "rb") as handle:
        return handle.read(40)


def check_name(name: str) -> None:
    """Refuse a lump name a WAD cannot store (FormatLimitError): the writer's rule, here so that
    an editor checks new names without making a writer (the registry row's `name_rule`)."""
    raw = encode_name(name)
    if len(raw) > MAX_NAME_BYTES:
        raise FormatLimitError(f"lump name {name!r} is {len(raw)} bytes; a WAD name holds at most {MAX_NAME_BYTES}")


def _make_writer() -> type[ArchiveWriter]:
    """The WAD writer's class, made when something writes (`made_on_first_use`): reading a WAD
    imports nothing of the writing side."""
    from ...core.layout import decode_blob, write_members_exactly
    from ...core.writer import ArchiveWriter, one_of

    class Writer(ArchiveWriter):
        """Writes a WAD: lump data from offset 12 in order, the directory last. A lump's type comes
        from the lump it was copied from, else the manifest, else its bytes (`infer_type`)."""

        format_name = "wad"
        option_defaults = {"version": "WAD2"}
        option_validators = {"version": one_of("WAD2", "WAD3")}
        case_insensitive_names = True
        flat_names = True

        def _check_name(self, name: str) -> None:
            check_name(name)

        def _lump_type(self, member: PendingMember, types: dict[str, int]) -> int:
            origin = member.origin
            if origin is not None and isinstance(origin[1], WadEntry):
                return origin[1].lump_type
            if member.name in types:
                return int(types[member.name])
            return infer_type(member.name, _head(member), member.size, self.options["version"] == "WAD3")

        def _write(self, out: Output, members: list[PendingMember]) -> None:
            exact = self.layout
            types = exact.get("types", {}) if exact else {}
            lump_types = [self._lump_type(member, types) for member in members]
            magic = str(self.options["version"]).encode("ascii")
            if exact and exact.get("sizes") == [member.size for member in members]:
                self._write_exact(out, members, exact, lump_types, magic)
                return
            position = HEADER.size
            records = []
            for member, lump_type in zip(members, lump_types, strict=True):
                records.append(
                    ENTRY.pack(position, member.size, member.size, lump_type, 0, 0, encode_name(member.name))
                )
                position += member.size
            if position + len(records) * ENTRY.size > 0x7FFFFFFF:
                raise FormatLimitError("a WAD cannot exceed 2 GiB (its offsets are signed 32-bit)")
            out.write(HEADER.pack(magic, len(members), position))
            for member in members:
                out.write_member(member)
            out.write(b"".join(records))

        def _write_exact(
            self, out: Output, members: list[PendingMember], exact: dict[str, Any], lump_types: list[int], magic: bytes
        ) -> None:
            """Rebuild the original byte for byte: recorded positions, name fields and filler."""
            name_fields = exact.get("name_fields", {})
            extras = exact.get("record_extras", {})
            records = []
            for index, member in enumerate(members):
                field = name_fields.get(str(index))
                raw = decode_blob(field) if field else encode_name(member.name)
                full_size, padding = extras.get(str(index), (member.size, 0))
                records.append(
                    ENTRY.pack(exact["offsets"][index], member.size, full_size, lump_types[index], 0, padding, raw)
                )
            out.pwrite(HEADER.pack(magic, len(members), exact["directory_offset"]), 0)
            out.pwrite(b"".join(records), exact["directory_offset"])
            write_members_exactly(out, members, exact)

    return Writer


__getattr__ = made_on_first_use(globals(), {"Writer": _make_writer})
