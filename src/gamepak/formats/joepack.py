"""VDrift JoePack v1 (`jpk`).

| offset | size           | field                                              |
|--------|----------------|----------------------------------------------------|
| 0      | 8              | version string, exactly `JPK01.00` (no NUL)        |
| 8      | 4              | uint32 member count N                              |
| 12     | 4              | uint32 name field size L (`maxstrlen`)             |
| 16     | (8+L)·N        | FAT: uint32 offset (from file start), uint32 size, name[L] |
| ...    |                | member data, contiguous in FAT order               |

A name as long as L has no NUL. Bytes after a name's NUL can be garbage (VDrift's packer writes
an uninitialised buffer), and stale bytes may follow the last member: neither is an error, and
both are kept by manifests. VDrift looks names up exactly; a later duplicate wins.
"""

from __future__ import annotations

import struct

from ..core.archive import Archive, Entry, FixedRecordNames, PendingMember, encode_name
from ..core.registry import made_on_first_use
from ..core.source import Source
from ..errors import FormatLimitError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from ..core.writer import ArchiveWriter, Output

HEADER = struct.Struct("<8sII")
# The widest name field the writer's option takes (the header field is a uint32).
MAX_NAME_FIELD_OPTION = 0xFFFF
FAT_FIXED = struct.Struct("<II")
MAGIC = b"JPK01.00"


def sniff(source: Source) -> float:
    """1.0 for the JoePack version string with a FAT that fits the file."""
    head = source.pread(HEADER.size, 0)
    if len(head) < HEADER.size or head[:8] != MAGIC:
        return 0.0
    _, count, name_length = HEADER.unpack(head)
    return 1.0 if HEADER.size + count * (FAT_FIXED.size + name_length) <= source.size else 0.5


class Reader(FixedRecordNames, Archive):
    """A JoePack opened for reading."""

    format_name = "jpk"
    duplicate_wins = "last"

    def _load(self) -> None:
        header = self._source.read_exact(HEADER.size, 0, "JoePack header")
        magic, count, self.name_length = HEADER.unpack(header)
        if magic != MAGIC:
            raise self.corrupt(f"not a JoePack (version string {magic!r}, expected b'JPK01.00')", 0)
        self._record = struct.Struct(f"<II{self.name_length}s")
        # read_exact refuses a FAT larger than the file before anything is allocated. The raw
        # FAT is kept as one bytes object; names are decoded only when asked for.
        fat = self._source.read_exact(count * self._record.size, HEADER.size, f"FAT of {count} entries")
        self._keep_directory(fat, self._record.size, FAT_FIXED.size, self.name_length)

    @property
    def _records(self) -> list[tuple[int, int, bytes]]:
        return list(self._record.iter_unpack(self._directory)) if self._count else []

    def _build_entries(self) -> list[Entry]:
        if not self._count:
            return []
        placed = self._plain_entries(0, 4)  # offset, size, then the name field
        if placed is not None:
            return placed
        positions = struct.Struct(f"<II{self.name_length}x").iter_unpack(self._directory)
        return [
            Entry(name, size, offset, None, index)
            for index, (name, (offset, size)) in enumerate(zip(self._names, positions, strict=False))
        ]

    def _plain_columns(self) -> tuple[list[str], Sequence[int], Sequence[int]] | None:
        return self._position_columns(0, 4)  # None when the name field leaves records unaligned

    def _fat_end(self) -> int:
        return HEADER.size + self._count * (FAT_FIXED.size + self.name_length)

    def header_fields(self) -> dict[str, Any]:
        entries = self.infolist()
        data_end = max((entry.offset + entry.size for entry in entries), default=self._fat_end())
        return {
            "version": MAGIC.decode(),
            "entry_count": len(entries),
            "name_field_size": self.name_length,
            "fat_end": self._fat_end(),
            "trailing_bytes": max(0, self.size - data_end),
        }

    def unheld_bytes(self) -> int:
        """The stale tail after the last member's data (`header_fields()["trailing_bytes"]`)."""
        return int(self.header_fields()["trailing_bytes"])

    def layout_options(self) -> dict[str, Any]:
        longest = max((len(encode_name(name)) for name in self._names), default=0)
        # A field wider than the writer's option takes (only an empty pack can have one; the
        # FAT would hold it per member) is kept by the byte-exact layout alone.
        keep = self.name_length != longest and self.name_length <= MAX_NAME_FIELD_OPTION
        return {"name_field_size": self.name_length if keep else None}

    def append_edit(self, path: str, members: list[PendingMember]) -> bool:
        """The FAT must directly follow the header, so it grows in place (`FixedTable`): new
        data is appended, and one write inside one page changes the count and changed slots.
        Names longer than the name field, and changes spread over pages, are rebuilt instead."""
        from ..core.inplace import FixedTable

        records = self._records  # one parse of the FAT: name fields are kept as they are
        name_length = self.name_length

        def record(member: PendingMember, offset: int) -> bytes | None:
            raw = encode_name(member.name)
            if len(raw) > name_length:
                return None
            field = raw.ljust(name_length, b"\0")
            if member.origin is not None and member.origin[0] is self:
                kept = records[member.origin[1].index][2]
                if kept.partition(b"\0")[0] == raw:
                    field = kept
            return FAT_FIXED.pack(offset, member.size) + field

        table = FixedTable(
            header=lambda count: HEADER.pack(MAGIC, count, name_length),
            record_size=FAT_FIXED.size + name_length,
            records=[FAT_FIXED.pack(offset, size) + raw for offset, size, raw in records],
            offset_field=struct.Struct("<I"),
            offset_at=0,
            record=record,
            limit=0xFFFFFFFF,
            limit_message="a JoePack cannot exceed 4 GiB (its offsets are 32-bit)",
        )
        return table.edit(path, self, members)

    def layout(self) -> dict[str, Any]:
        from ..core.layout import encode_blob, fill_bytes

        entries = self.infolist()
        name_fields = {}
        for index, (_, _, raw) in enumerate(self._records):
            name = raw.partition(b"\0")[0]
            if raw != name.ljust(self.name_length, b"\0"):
                name_fields[str(index)] = encode_blob(raw)
        covered = [(0, self._fat_end())] + [(entry.offset, entry.size) for entry in entries]
        return {
            "options": self.layout_options(),
            "exact": {
                "offsets": [entry.offset for entry in entries],
                "sizes": [entry.size for entry in entries],
                "name_field_size": self.name_length,
                "name_fields": name_fields,
                "fill": fill_bytes(self._source, covered),
                "file_size": self.size,
            },
        }


def _kept_name_field(member: PendingMember, name_length: int) -> bytes | None:
    """The name field of a member copied from a JoePack with the same name and field size, as
    it was: the bytes after the name's NUL (0xFF in some tools' packs) survive a rebuild or a
    `compact`, so a pack that was never edited compacts to its own bytes."""
    if member.origin is None:
        return None
    archive, entry = member.origin
    if not isinstance(archive, Reader) or archive.name_length != name_length:
        return None
    raw: bytes = archive._records[entry.index][2]
    return raw if raw.partition(b"\0")[0] == encode_name(member.name) else None


def check_name(name: str, options: Mapping[str, Any]) -> None:
    """Refuse a name a JoePack written with writer `options` cannot store (FormatLimitError): the
    writer's rule, here so that an editor checks new names without making a writer (the
    registry row's `name_rule`; it depends on the `name_field_size` option)."""
    raw = encode_name(name)
    if not raw or b"\0" in raw:
        raise FormatLimitError(f"member name {name!r} is empty or holds a NUL byte")
    limit = options.get("name_field_size")
    if limit is not None and len(raw) > int(limit):
        raise FormatLimitError(f"member name {name!r} is longer than the name field ({limit} bytes)")


def _make_writer() -> type[ArchiveWriter]:
    """The JoePack writer's class, made when something writes (`made_on_first_use`): reading a
    JoePack imports nothing of the writing side."""
    from ..core.layout import decode_blob, restore_fill
    from ..core.writer import ArchiveWriter, whole_number

    class Writer(ArchiveWriter):
        """Writes a JoePack as VDrift's packer does: the name field as long as the longest name
        (or `name_field_size`), data contiguous after the FAT in the order added."""

        format_name = "jpk"
        option_defaults = {"name_field_size": None}
        option_validators = {"name_field_size": whole_number(1, MAX_NAME_FIELD_OPTION, allow_none=True)}

        def _check_name(self, name: str) -> None:
            check_name(name, self.options)

        def _write(self, out: Output, members: list[PendingMember]) -> None:
            exact = self.layout
            unchanged = bool(exact) and exact.get("sizes") == [member.size for member in members]
            if unchanged:
                name_length = int(exact["name_field_size"])
            elif self.options["name_field_size"] is not None:
                name_length = int(self.options["name_field_size"])
            else:
                name_length = max((len(encode_name(member.name)) for member in members), default=0)
            record = struct.Struct(f"<II{name_length}s")
            position = HEADER.size + record.size * len(members)
            offsets = []
            for member in members:
                offsets.append(position)
                position += member.size
            if unchanged:
                offsets = [int(offset) for offset in exact["offsets"]]
            if position > 0xFFFFFFFF:
                raise FormatLimitError("a JoePack cannot exceed 4 GiB (its offsets are 32-bit)")
            name_fields = exact.get("name_fields", {}) if unchanged else {}
            out.write(HEADER.pack(MAGIC, len(members), name_length))
            for index, (member, offset) in enumerate(zip(members, offsets, strict=False)):
                field = name_fields.get(str(index))
                raw = decode_blob(field) if field else _kept_name_field(member, name_length) or encode_name(member.name)
                out.write(record.pack(offset, member.size, raw))
            for member, offset in zip(members, offsets, strict=False):
                out.seek(offset)
                out.write_member(member)
            if unchanged:
                out.flush()
                restore_fill(out, exact.get("fill", []))
                out.truncate(int(exact["file_size"]))

    return Writer


__getattr__ = made_on_first_use(globals(), {"Writer": _make_writer})
