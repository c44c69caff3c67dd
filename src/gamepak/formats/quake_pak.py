"""Quake / Quake II PAK (`pak`).

| offset | size | field                                         |
|--------|------|-----------------------------------------------|
| 0      | 4    | magic `PACK`                                  |
| 4      | 4    | int32 directory offset                        |
| 8      | 4    | int32 directory length (64 bytes per entry)   |
| dir    | 64·N | entries: name[56] (NUL-terminated), int32 offset, int32 size |

Entry count = directory length // 64 (the engines ignore a remainder). Member data can sit
anywhere; id's packer writes it from offset 12, names zero-padded, the directory last. Quake
allows 2048 members, Quake II 4096; modern ports allow more. The first copy of a duplicated name
is the one Quake loads (it searches the directory front to back).
"""

from __future__ import annotations

import struct

from ..core.archive import Archive, Entry, FixedRecordNames, PendingMember, encode_name
from ..core.registry import made_on_first_use

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from ..core.source import Source
    from ..core.writer import ArchiveWriter, Output

HEADER = struct.Struct("<4sII")
ENTRY = struct.Struct("<56sII")
NAME_FIELDS = struct.Struct("<56s8x")  # ENTRY's name field alone
POSITION_FIELDS = struct.Struct("<56xII")  # ENTRY's offset and size alone
MAGIC = b"PACK"
NAME_FIELD = 56
MAX_NAME_BYTES = NAME_FIELD - 1
QUAKE_MEMBER_LIMIT = 2048
QUAKE2_MEMBER_LIMIT = 4096


def sniff(source: Source) -> float:
    """1.0 for a PACK header whose directory lies inside the file."""
    head = source.pread(HEADER.size, 0)
    if len(head) < HEADER.size or head[:4] != MAGIC:
        return 0.0
    _, directory_offset, directory_length = HEADER.unpack(head)
    if directory_offset < HEADER.size and directory_length > 0:
        return 0.5
    if directory_offset + directory_length > source.size:
        return 0.5
    return 1.0


class Reader(FixedRecordNames, Archive):
    """A PAK file opened for reading."""

    format_name = "pak"
    duplicate_wins = "first"

    def _load(self) -> None:
        header = self._source.read_exact(HEADER.size, 0, "PAK header")
        magic, self.directory_offset, self.directory_length = HEADER.unpack(header)
        if magic != MAGIC:
            raise self.corrupt(f"not a PAK file (magic {magic!r}, expected b'PACK')", 0)
        if self.directory_offset > 0x7FFFFFFF or self.directory_length > 0x7FFFFFFF:
            raise self.corrupt(
                f"directory offset {self.directory_offset} or length {self.directory_length} is 2 GiB or more: "
                "Quake reads these fields as signed and sees a negative value",
                4,
            )
        count = self.directory_length // ENTRY.size
        # The raw directory is kept as one bytes object (read_exact checks it against the file
        # size first): the count, lookups and positions come from it, and names are decoded
        # only when asked for.
        raw = self._source.read_exact(count * ENTRY.size, self.directory_offset, "PAK directory")
        self._keep_directory(raw, ENTRY.size, 0, NAME_FIELD)

    def getinfo(self, name: str) -> Entry:
        if self._entries is not None or self._by_name is not None:
            return super().getinfo(name)
        # One lookup: search the raw directory for the name field instead of building every entry.
        key = encode_name(name) + b"\0"
        raw = self._directory
        if len(key) <= NAME_FIELD and "\0" not in name:
            position = raw.find(key)
            while position >= 0:
                if position % ENTRY.size == 0:
                    offset, size = POSITION_FIELDS.unpack_from(raw, position)
                    return Entry(name, size, offset, None, position // ENTRY.size)
                position = raw.find(key, position + 1)
        return super().getinfo(name)  # the base reports it (and knows other spellings)

    def _build_entries(self) -> list[Entry]:
        return self._plain_entries(NAME_FIELD, NAME_FIELD + 4) or []  # 64-byte records: always aligned

    def _plain_columns(self) -> tuple[list[str], Sequence[int], Sequence[int]] | None:
        return self._position_columns(NAME_FIELD, NAME_FIELD + 4)

    def _raw_names(self) -> list[bytes]:
        return [raw for (raw,) in NAME_FIELDS.iter_unpack(self._directory)]

    def header_fields(self) -> dict[str, Any]:
        return {
            "directory_offset": self.directory_offset,
            "directory_length": self.directory_length,
            "entry_count": self._count,
            "directory_remainder": self.directory_length % ENTRY.size,
        }

    def unheld_bytes(self) -> int:
        """Bytes after the directory and every member's data (the directory may sit anywhere)."""
        end = max(
            [HEADER.size, self.directory_offset + self.directory_length]
            + [entry.offset + entry.size for entry in self.infolist()]
        )
        return max(0, self.size - end)

    def _verify(self) -> list[str]:
        problems = super()._verify()
        if self.directory_length % ENTRY.size:
            problems.append(
                f"directory length {self.directory_length} is not a multiple of {ENTRY.size}: "
                f"the last {self.directory_length % ENTRY.size} bytes are ignored"
            )
        for index, raw in enumerate(self._raw_names()):
            if b"\0" not in raw:
                problems.append(
                    f"member {index}: name fills all {NAME_FIELD} bytes without a NUL (the engines would read past it)"
                )
        if self._count > QUAKE2_MEMBER_LIMIT:
            problems.append(f"{self._count} members: more than Quake II's limit of {QUAKE2_MEMBER_LIMIT}")
        return problems

    def layout(self) -> dict[str, Any]:
        from ..core.layout import encode_blob, fill_bytes

        entries = self.infolist()
        covered = [(0, HEADER.size), (self.directory_offset, self.directory_length)]
        covered += [(entry.offset, entry.size) for entry in entries]
        name_fields = {}
        for index, raw in enumerate(self._raw_names()):
            name = raw.partition(b"\0")[0]
            if raw != name.ljust(NAME_FIELD, b"\0"):
                name_fields[str(index)] = encode_blob(raw)
        return {
            "options": self.layout_options(),
            "exact": {
                "offsets": [entry.offset for entry in entries],
                "sizes": [entry.size for entry in entries],
                "directory_offset": self.directory_offset,
                "directory_length": self.directory_length,
                "name_fields": name_fields,
                "fill": fill_bytes(self._source, covered),
                "file_size": self.size,
            },
        }

    def _data_end(self) -> int:
        return max((entry.offset + entry.size for entry in self.infolist()), default=HEADER.size)

    def layout_options(self) -> dict[str, Any]:
        from ..core.layout import detect_alignment

        return {
            "align": detect_alignment([entry.offset for entry in self.infolist() if entry.size]),
            "directory": "end" if self.directory_offset >= self._data_end() else "start",
        }

    def append_edit(self, path: str, members: list[PendingMember]) -> bool:
        """New data and a new directory go after everything the header refers to; the 12-byte
        header, rewritten last, switches to them. Unchanged members stay where they are. A
        directory at the start stays there: it grows in place (`FixedTable`)."""
        align = int(self.layout_options()["align"])
        raw_names = self._raw_names()
        if self.directory_offset < self._data_end() and self.directory_length:
            if self.directory_offset != HEADER.size or self.directory_length % ENTRY.size:
                return False  # a directory amid the data: rebuilt
            return self._edit_directory_at_start(path, members, align, raw_names)
        if any(entry.size and entry.offset < HEADER.size for entry in self.infolist()):
            return False  # data overlapping the header, which the switch rewrites: rebuilt
        from ..core.inplace import append_with_trailing_directory

        def kept(member: PendingMember, entry: Entry) -> bytes:
            stored = raw_names[entry.index]
            raw = stored if stored.partition(b"\0")[0] == encode_name(member.name) else encode_name(member.name)
            return ENTRY.pack(raw, entry.offset, entry.size)

        append_with_trailing_directory(
            path,
            self,
            members,
            start=max(self._data_end(), self.directory_offset + self.directory_length, HEADER.size),
            kept=kept,
            added=lambda member, offset: ENTRY.pack(encode_name(member.name), offset, member.size),
            header=lambda offset, length, _count: HEADER.pack(MAGIC, offset, length),
            align=align,
            limit=0x7FFFFFFF,
            limit_message="a PAK cannot exceed 2 GiB (its offsets are signed 32-bit)",
        )
        return True

    def _edit_directory_at_start(
        self, path: str, members: list[PendingMember], align: int, raw_names: list[bytes]
    ) -> bool:
        from ..core.inplace import FixedTable

        def record(member: PendingMember, offset: int) -> bytes:
            raw = encode_name(member.name)
            if member.origin is not None and member.origin[0] is self:
                kept = raw_names[member.origin[1].index]
                if kept.partition(b"\0")[0] == raw:
                    raw = kept
            return ENTRY.pack(raw, offset, member.size)

        directory = self._source.read_exact(self.directory_length, self.directory_offset, "PAK directory")
        table = FixedTable(
            header=lambda count: HEADER.pack(MAGIC, HEADER.size, count * ENTRY.size),
            record_size=ENTRY.size,
            records=[directory[start : start + ENTRY.size] for start in range(0, len(directory), ENTRY.size)],
            offset_field=struct.Struct("<I"),
            offset_at=NAME_FIELD,
            record=record,
            align=align,
            limit=0x7FFFFFFF,
            limit_message="a PAK cannot exceed 2 GiB (its offsets are signed 32-bit)",
        )
        return table.edit(path, self, members)


def check_name(name: str) -> None:
    """Refuse a name a PAK cannot store (FormatLimitError): the writer's rule, here so that an
    editor checks new names without making a writer (the registry row's `name_rule`)."""
    raw = encode_name(name)
    if len(raw) > MAX_NAME_BYTES:
        from ..errors import FormatLimitError  # rarely raised: made on first use

        raise FormatLimitError(f"member name {name!r} is {len(raw)} bytes; a PAK name holds at most {MAX_NAME_BYTES}")
    if b"\0" in raw or not raw:
        from ..errors import FormatLimitError  # rarely raised: made on first use

        raise FormatLimitError(f"member name {name!r} is empty or holds a NUL byte")


def _make_writer() -> type[ArchiveWriter]:
    """The PAK writer's class, made when something writes (`made_on_first_use`): reading a PAK
    imports nothing of the writing side."""
    from ..core.writer import ArchiveWriter, one_of, whole_number

    class Writer(ArchiveWriter):
        """Writes a PAK: data from offset 12 (aligned to `align`), directory at the end (or right
        after the header with `directory="start"`)."""

        format_name = "pak"
        option_defaults = {"align": 1, "directory": "end"}
        option_validators = {"align": whole_number(1, 1 << 20), "directory": one_of("end", "start")}

        def _check_name(self, name: str) -> None:
            check_name(name)

        def _write(self, out: Output, members: list[PendingMember]) -> None:
            if len(members) > QUAKE_MEMBER_LIMIT:
                limit = "Quake II" if len(members) <= QUAKE2_MEMBER_LIMIT else "Quake and Quake II"
                import warnings

                warnings.warn(
                    f"{self.path}: {len(members)} members is more than {limit} can load "
                    f"({QUAKE_MEMBER_LIMIT} / {QUAKE2_MEMBER_LIMIT}); modern ports allow more",
                    stacklevel=2,
                )
            exact = self.layout
            if exact and exact.get("sizes") == [member.size for member in members]:
                self._write_exact(out, members, exact)
                return
            align = int(self.options["align"])
            if align < 1:
                from ..errors import FormatLimitError  # rarely raised: made on first use

                raise FormatLimitError(f"alignment must be at least 1, not {align}")
            directory_length = ENTRY.size * len(members)
            position = HEADER.size
            if self.options["directory"] == "start":
                position += directory_length
            offsets = []
            for member in members:
                position = -(-position // align) * align
                offsets.append(position)
                position += member.size
            directory_offset = HEADER.size if self.options["directory"] == "start" else position
            if max(directory_offset + directory_length, position) > 0x7FFFFFFF:
                from ..errors import FormatLimitError  # rarely raised: made on first use

                raise FormatLimitError("a PAK cannot exceed 2 GiB (its offsets are signed 32-bit)")
            out.write(HEADER.pack(MAGIC, directory_offset, directory_length))
            directory = b"".join(
                ENTRY.pack(encode_name(member.name), offset, member.size)
                for member, offset in zip(members, offsets, strict=False)
            )
            if self.options["directory"] == "start":
                out.write(directory)
            for member, offset in zip(members, offsets, strict=False):
                out.pad_to(offset)
                out.write_member(member)
            if self.options["directory"] != "start":
                out.write(directory)

        def _write_exact(self, out: Output, members: list[PendingMember], exact: dict[str, Any]) -> None:
            """Rebuild the original byte for byte: recorded positions, name fields and filler."""
            from ..core.layout import decode_blob, write_members_exactly  # only here: most writes make a new layout

            name_fields = exact.get("name_fields", {})
            records = []
            for index, member in enumerate(members):
                field = name_fields.get(str(index))
                raw = decode_blob(field) if field else encode_name(member.name)
                records.append(ENTRY.pack(raw, exact["offsets"][index], member.size))
            out.pwrite(HEADER.pack(MAGIC, exact["directory_offset"], exact["directory_length"]), 0)
            directory = b"".join(records)
            out.pwrite(directory, exact["directory_offset"])
            write_members_exactly(out, members, exact, strict=False)

    return Writer


__getattr__ = made_on_first_use(globals(), {"Writer": _make_writer})
