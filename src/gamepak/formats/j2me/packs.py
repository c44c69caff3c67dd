"""Readers and writers of the five J2ME layouts: the classes the registry opens and creates.

They add the `Archive`/`ArchiveWriter` vocabulary to what `structure` parses (members listed as
`0`, `1`, ..., extracted under the extension `members` guesses), the writers' limits (what each
header's field widths can hold) and exact rebuilds: members written back with the sizes a pack
recorded keep its offsets, fill bytes and terminator, and a table's overlapping members keep their
places only while their bytes agree (checked by CRC-32).
"""

from __future__ import annotations

import struct

from ...core.archive import Archive, Entry
from ...core.registry import made_on_first_use
from ...errors import FormatLimitError
from .members import CONTENT_PROBE, content_extension, member_index, order_by_index
from .structure import (
    END_OFFSETS_HEADER,
    IDS_HEADER,
    IDS_RECORD,
    OFFSETS_HEADER,
    SIZE_PREFIX,
    TABLE_ENTRY,
    TABLE_HEADER,
    TERMINATOR,
    Structure,
    parse_end_offsets,
    parse_ids,
    parse_offsets,
    parse_sized,
    parse_table,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar

    from ...core.archive import PendingMember
    from ...core.writer import ArchiveWriter, Output

INT32_MAX = 0x7FFFFFFF
INT16_MAX = 0x7FFF
TABLE_MAX_MEMBERS = 0xFF
SIZED_MAX_MEMBER = 0xFFFF


class _PackReader(Archive):
    """What the five layouts share: parse the header into spans, list members by index."""

    duplicate_wins = "last"
    positional_names = True

    def _parse(self) -> Structure:
        raise NotImplementedError

    def _load(self) -> None:
        self.structure = self._parse()
        self._names = [str(index) for index in range(len(self.structure.spans))]
        self._entries = [
            Entry(str(index), size, offset, None, index) for index, (offset, size) in enumerate(self.structure.spans)
        ]
        self._extensions: dict[int, str] = {}

    def extraction_name(self, entry: Entry) -> str:
        extension = self._extensions.get(entry.index)
        if extension is None:
            head = self._source.pread(min(entry.size, CONTENT_PROBE), entry.offset)
            extension = content_extension(head, complete=entry.size <= CONTENT_PROBE)
            self._extensions[entry.index] = extension
        return entry.name + extension

    def unheld_bytes(self) -> int:
        """Payload bytes after the last member's end that no member covers."""
        structure = self.structure
        end = max([structure.payload_start] + [offset + size for offset, size in structure.spans])
        return max(0, structure.file_size - end)

    def header_fields(self) -> dict[str, Any]:
        structure = self.structure
        return {
            "members": len(structure.spans),
            "payload_start": structure.payload_start,
            "payload_size": structure.payload_size,
            "members_tile_payload": structure.tiles_payload(),
        }

    def _relative_offsets(self) -> list[int]:
        return [offset - self.structure.payload_start for offset, _ in self.structure.spans]

    def _exact_common(self) -> dict[str, Any]:
        from ...core.layout import fill_bytes

        covered = [(0, self.structure.payload_start)] + list(self.structure.spans)
        return {
            "sizes": [size for _, size in self.structure.spans],
            "fill": fill_bytes(self._source, covered),
            "file_size": self.size,
        }


def _contiguous(start: int, members: list[PendingMember]) -> list[int]:
    positions = []
    position = start
    for member in members:
        positions.append(position)
        position += member.size
    return positions


class OffsetsReader(_PackReader):
    """A `j2me-offsets` pack (int16 count, start offsets) opened for reading."""

    format_name = "j2me-offsets"

    def _parse(self) -> Structure:
        return parse_offsets(self._source)

    def header_fields(self) -> dict[str, Any]:
        return {"offset_count": len(self.structure.details["offsets"]), **super().header_fields()}

    def layout(self) -> dict[str, Any]:
        exact = {"offsets": self.structure.details["offsets"], **self._exact_common()}
        return {"options": {}, "exact": exact}


class EndOffsetsReader(_PackReader):
    """A `j2me-end-offsets` pack (int32 count, end offsets, terminator byte) opened for reading."""

    format_name = "j2me-end-offsets"

    def _parse(self) -> Structure:
        return parse_end_offsets(self._source)

    def header_fields(self) -> dict[str, Any]:
        return {"terminator": self.structure.details["terminator"], **super().header_fields()}

    def layout(self) -> dict[str, Any]:
        terminator = self.structure.details["terminator"]
        exact = {"terminator": terminator, **self._exact_common()}
        return {"options": {"terminator": terminator}, "exact": exact}


class TableReader(_PackReader):
    """A `j2me-table` pack (count byte, offset/size pairs) opened for reading."""

    format_name = "j2me-table"

    def _parse(self) -> Structure:
        return parse_table(self._source)

    def _overlapping(self) -> bool:
        ranges = sorted((offset, offset + size) for offset, size in self.structure.spans if size)
        return any(ranges[i][0] < ranges[i - 1][1] for i in range(1, len(ranges)))

    def layout(self) -> dict[str, Any]:
        exact = {"offsets": self._relative_offsets(), **self._exact_common()}
        if self._overlapping():
            # A rebuild may place overlapping members as recorded only while their bytes agree.
            from zlib import crc32  # here: detection loads this module for every file it sees

            exact["crc32"] = [crc32(self.read(entry)) for entry in self.infolist()]
        return {"options": {}, "exact": exact}


class SizedReader(_PackReader):
    """A `j2me-sized` pack ({uint16 size, data} to the end of the file) opened for reading."""

    format_name = "j2me-sized"

    def _parse(self) -> Structure:
        return parse_sized(self._source)

    def layout(self) -> dict[str, Any]:
        sizes = [size for _, size in self.structure.spans]
        return {"options": {}, "exact": {"sizes": sizes, "file_size": self.size}}


IDS_MAX_RECORDS = 0xFFFF
IDS_MAX_RECORD = 0xFFFFFFFF


def _record_ids(value: Any) -> list[int] | None:
    """The `ids` option: record ids (0..65535) as a list or as text (`0,1,2`: what manifests and
    `-o ids=...` hold), or None (each record's index)."""
    if value is None:
        return None
    from ...errors import InvalidOptionError

    items = value
    if isinstance(value, str):
        try:
            items = [int(item) for item in value.split(",")] if value.strip() else []
        except ValueError:
            raise InvalidOptionError(f"ids {value!r}: record ids separated by commas (0,1,2)", "ids") from None
    if not isinstance(items, (list, tuple)) or not all(
        isinstance(item, int) and not isinstance(item, bool) and 0 <= item <= 0xFFFF for item in items
    ):
        raise InvalidOptionError(f"ids {value!r}: record ids, each 0..65535 (0,1,2)", "ids")
    return list(items)


class IdsReader(_PackReader):
    """A `j2me-ids` pack (uint16 count; records of uint16 id, uint32 size, data) opened for
    reading: Diamond Rush's `demoSpr.bin`. Members are listed by position; `ids` says each
    record's id."""

    format_name = "j2me-ids"

    def _parse(self) -> Structure:
        return parse_ids(self._source)

    @property
    def ids(self) -> list[int]:
        """Each record's id, by member index."""
        return list(self.structure.details["ids"])

    def header_fields(self) -> dict[str, Any]:
        return {"ids": self.ids, **super().header_fields()}

    def layout(self) -> dict[str, Any]:
        sizes = [size for _, size in self.structure.spans]
        # As text: a manifest's options are plain values.
        ids = ",".join(str(record_id) for record_id in self.ids)
        return {"options": {"ids": ids}, "exact": {"sizes": sizes, "file_size": self.size}}


def _make_writers() -> dict[str, type[ArchiveWriter]]:
    """The five writers' classes, made together when something writes (`made_on_first_use`):
    opening a J2ME pack imports nothing of the writing side."""
    from ...core.layout import restore_fill
    from ...core.writer import ArchiveWriter, whole_number

    class _PackWriter(ArchiveWriter):
        """What the five writers share: names to indices, limits, exact rebuilds."""

        stores_names = False
        allows_duplicates = False

        def _check_name(self, name: str) -> None:
            member_index(name)

        def add(self, name: str, data_or_path: Any) -> None:
            """Queue a member (named by its index, e.g. `0` or `0.png`); limits are checked at once."""
            super().add(name, data_or_path)
            member = self.members[-1]
            # A running total keeps adding thousands of members linear.
            total = getattr(self, "_added_size", 0) + member.size
            try:
                self._check_member(member)
                self._check_counts(len(self.members), total)
            except FormatLimitError:
                self.members.pop()  # a refused member is not queued
                self._names_taken.pop(self._name_key(name), None)
                raise
            self._added_size = total

        def _check_member(self, member: PendingMember) -> None:
            """Refuse one member the layout cannot hold."""

        def _check_counts(self, count: int, total: int) -> None:
            """Refuse a member count or a total size the layout cannot hold."""
            if total > INT32_MAX:
                raise FormatLimitError(
                    f"the members total {total} bytes, past {INT32_MAX}: offsets in a {self.format_name} pack are int32"
                )

        def _check_limits(self, members: list[PendingMember]) -> None:
            for member in members:
                self._check_member(member)
            self._check_counts(len(members), sum(member.size for member in members))

        def _exact(self, members: list[PendingMember]) -> dict[str, Any] | None:
            """The recorded layout when it applies to these members (same sizes), else None."""
            exact = self.layout
            if exact and exact.get("sizes") == [member.size for member in members]:
                return exact
            return None

        def _finish_exact(self, out: Output, exact: dict[str, Any]) -> None:
            out.flush()
            restore_fill(out, exact.get("fill", []))
            out.truncate(int(exact["file_size"]))

        def _write(self, out: Output, members: list[PendingMember]) -> None:
            ordered = order_by_index(members)
            self._check_limits(ordered)
            exact = self._exact(ordered)
            header, positions = self._plan(ordered, exact)
            out.write(header)
            for member, position in zip(ordered, positions):
                out.seek(position)
                out.write_member(member)
            if exact is not None:
                self._finish_exact(out, exact)

        def _plan(self, members: list[PendingMember], exact: dict[str, Any] | None) -> tuple[bytes, list[int]]:
            """The header bytes and each member's absolute position."""
            raise NotImplementedError

    class OffsetsWriter(_PackWriter):
        """Writes a `j2me-offsets` pack: N = files+1 offsets, offset[0] = 0, data contiguous."""

        format_name = "j2me-offsets"
        option_defaults: ClassVar[dict[str, Any]] = {}

        def _check_counts(self, count: int, total: int) -> None:
            if count + 1 > INT16_MAX:
                raise FormatLimitError(
                    f"{count} members: a j2me-offsets pack holds at most {INT16_MAX - 1} "
                    f"(its int16 count has room for {INT16_MAX} offsets)"
                )
            super()._check_counts(count, total)

        def _plan(self, members: list[PendingMember], exact: dict[str, Any] | None) -> tuple[bytes, list[int]]:
            count = len(members) + 1
            payload_start = OFFSETS_HEADER.size + 4 * count
            recorded = [int(value) for value in exact.get("offsets", [])] if exact is not None else []
            spans = [end - start for start, end in zip(recorded, recorded[1:])]
            if len(recorded) == count and spans == [member.size for member in members] and recorded[0] >= 0:
                offsets = recorded
            else:
                offsets = [position - payload_start for position in _contiguous(payload_start, members)]
                offsets.append(sum(member.size for member in members))
            header = OFFSETS_HEADER.pack(count) + struct.pack(f"<{count}i", *offsets)
            return header, [payload_start + offset for offset in offsets[:-1]]

    class EndOffsetsWriter(_PackWriter):
        """Writes a `j2me-end-offsets` pack; `terminator` is the byte after the offsets (0 by default)."""

        format_name = "j2me-end-offsets"
        option_defaults: ClassVar[dict[str, Any]] = {"terminator": 0}
        option_validators: ClassVar[dict[str, Any]] = {"terminator": whole_number(0, 0xFF, allow_none=True)}

        def _plan(self, members: list[PendingMember], exact: dict[str, Any] | None) -> tuple[bytes, list[int]]:
            terminator = self.options["terminator"]
            if exact is not None and "terminator" in exact:
                terminator = exact["terminator"]
            terminator = 0 if terminator is None else terminator
            if not isinstance(terminator, int) or not 0 <= terminator <= 0xFF:
                raise FormatLimitError(f"terminator {terminator!r} is not a byte value (0..255)")
            count = len(members)
            payload_start = END_OFFSETS_HEADER.size + 4 * count + TERMINATOR.size
            ends = []
            total = 0
            for member in members:
                total += member.size
                ends.append(total)
            header = END_OFFSETS_HEADER.pack(count) + struct.pack(f"<{count}i", *ends)
            header += TERMINATOR.pack(terminator)
            return header, _contiguous(payload_start, members)

    class TableWriter(_PackWriter):
        """Writes a `j2me-table` pack: at most 255 members, data contiguous in index order."""

        format_name = "j2me-table"
        option_defaults: ClassVar[dict[str, Any]] = {}

        def _check_counts(self, count: int, total: int) -> None:
            if count > TABLE_MAX_MEMBERS:
                raise FormatLimitError(
                    f"{count} members: a j2me-table pack holds at most {TABLE_MAX_MEMBERS} (its count is one byte)"
                )
            super()._check_counts(count, total)

        def _exact(self, members: list[PendingMember]) -> dict[str, Any] | None:
            exact = super()._exact(members)
            if exact is None or len(exact.get("offsets", [])) != len(members):
                return None
            checksums = exact.get("crc32")
            from zlib import crc32

            if checksums is not None and checksums != [crc32(member.read()) for member in members]:
                return None  # edited members that overlap others cannot keep their places
            return exact

        def _plan(self, members: list[PendingMember], exact: dict[str, Any] | None) -> tuple[bytes, list[int]]:
            payload_start = TABLE_HEADER.size + TABLE_ENTRY.size * len(members)
            if exact is not None:
                offsets = [int(value) for value in exact["offsets"]]
            else:
                offsets = [position - payload_start for position in _contiguous(payload_start, members)]
            header = bytearray(TABLE_HEADER.pack(len(members)))
            for member, offset in zip(members, offsets):
                header += TABLE_ENTRY.pack(offset, member.size)
            return bytes(header), [payload_start + offset for offset in offsets]

    class SizedWriter(_PackWriter):
        """Writes a `j2me-sized` pack: each member at most 65,535 bytes."""

        format_name = "j2me-sized"
        option_defaults: ClassVar[dict[str, Any]] = {}

        def _check_member(self, member: PendingMember) -> None:
            if member.size > SIZED_MAX_MEMBER:
                raise FormatLimitError(
                    f"member {member.name!r} is {member.size} bytes: a j2me-sized member holds at most "
                    f"{SIZED_MAX_MEMBER} (its size is a uint16)"
                )

        def _check_counts(self, count: int, total: int) -> None:
            """A sized pack has no header: any number of members, any total size."""

        def _plan(self, members: list[PendingMember], exact: dict[str, Any] | None) -> tuple[bytes, list[int]]:
            return b"", []

        def _write(self, out: Output, members: list[PendingMember]) -> None:
            ordered = order_by_index(members)
            self._check_limits(ordered)
            for member in ordered:
                out.write(SIZE_PREFIX.pack(member.size))
                out.write_member(member)

    class IdsWriter(_PackWriter):
        """Writes a `j2me-ids` pack; `ids` gives the records' ids in member order (kept from the
        pack an edit rewrites; records past the list, or all without it, get ids counting on from
        the largest given, or their index)."""

        format_name = "j2me-ids"
        option_defaults: ClassVar[dict[str, Any]] = {"ids": None}
        option_validators: ClassVar[dict[str, Any]] = {"ids": _record_ids}

        def _check_member(self, member: PendingMember) -> None:
            if member.size > IDS_MAX_RECORD:
                raise FormatLimitError(
                    f"member {member.name!r} is {member.size} bytes: a j2me-ids record holds at most {IDS_MAX_RECORD}"
                )

        def _check_counts(self, count: int, total: int) -> None:
            if count > IDS_MAX_RECORDS:
                raise FormatLimitError(
                    f"{count} members: a j2me-ids pack holds at most {IDS_MAX_RECORDS} (uint16 count)"
                )

        def _ids(self, count: int) -> list[int]:
            given = (_record_ids(self.options.get("ids")) or [])[:count]
            following = (max(given) + 1) if given else 0
            while len(given) < count:
                if following > 0xFFFF:
                    raise FormatLimitError(f"record {len(given)} would need id {following}: ids are uint16")
                given.append(following)
                following += 1
            return given

        def _plan(self, members: list[PendingMember], exact: dict[str, Any] | None) -> tuple[bytes, list[int]]:
            return b"", []

        def _write(self, out: Output, members: list[PendingMember]) -> None:
            ordered = order_by_index(members)
            self._check_limits(ordered)
            ids = self._ids(len(ordered))
            out.write(IDS_HEADER.pack(len(ordered)))
            for member, record_id in zip(ordered, ids):
                out.write(IDS_RECORD.pack(record_id, member.size))
                out.write_member(member)

    return {
        "OffsetsWriter": OffsetsWriter,
        "EndOffsetsWriter": EndOffsetsWriter,
        "TableWriter": TableWriter,
        "SizedWriter": SizedWriter,
        "IdsWriter": IdsWriter,
    }


_WRITERS: dict[str, type[ArchiveWriter]] = {}


def _writer(name: str) -> type[ArchiveWriter]:
    """One writer's class: all five are made on the first call (they share a base)."""
    if not _WRITERS:
        _WRITERS.update(_make_writers())
    return _WRITERS[name]


__getattr__ = made_on_first_use(
    globals(),
    {
        name: (lambda name=name: _writer(name))
        for name in ("OffsetsWriter", "EndOffsetsWriter", "TableWriter", "SizedWriter", "IdsWriter")
    },
)
