"""`verify` for packfiles: errors (a member's bytes would be wrong or cannot be read, or the
game's name hashes or `.asm_pc` tables disagree with the data) and warnings (bookkeeping fields
filled in another writer's way; nothing is lost)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ...core.archive import Problem
from ...core.layout import align_up
from ...errors import CorruptArchiveError, GamepakError
from . import conventions
from .records import BLOCK_ALIGN, ENTRY, FIELD_OFFSETS, NO_SIZE, U32, name_hash

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeAlias

    from .view import PackfileView

    # Records a problem: (message, offset, member).
    Report: TypeAlias = Callable[..., None]


def check_packfile(reader: PackfileView) -> list[Problem]:
    """Every error and warning found in a packfile."""
    problems: list[Problem] = []
    # A file shorter than its header says is cut short, whoever wrote it: no writer's
    # convention explains what is missing (a cut stream also looks like SyncFaction's).
    truncated = reader.size < reader.file_size_field <= U32 and reader.size <= U32
    writer = None if truncated else conventions.likely_writer(reader)
    note = conventions.writer_note(writer)

    def error(message: str, offset: int | None = None, member: str | None = None) -> None:
        problems.append(Problem(message, severity="error", offset=offset, member=member))

    def warning(message: str, offset: int | None = None, member: str | None = None) -> None:
        problems.append(Problem(message, severity="warning", offset=offset, member=member))

    entries = reader.infolist()
    for index, (record, raw) in enumerate(zip(reader.records, reader.raw_names)):
        expected_hash = name_hash(raw)
        if record[3] != expected_hash:
            # The game finds members by these hashes.
            error(
                f"member {reader._names[index]!r}: NameHash 0x{record[3]:08x}, expected 0x{expected_hash:08x}",
                reader.entries_start + ENTRY.size * index + 12,
                reader._names[index],
            )

    # Header bookkeeping: positions never come from these fields.
    expected = reader.expected_sizes()
    if reader.entry_block_size != expected["entry_block_size"]:
        message = (
            f"header entry_block_size is {reader.entry_block_size}, {len(entries)} entries take "
            f"{expected['entry_block_size']}"
        )
        if align_up(reader.entry_block_size, BLOCK_ALIGN) == align_up(expected["entry_block_size"], BLOCK_ALIGN):
            warning(message + note, FIELD_OFFSETS["entry_block_size"])
        else:
            error(message + ": the names' position is ambiguous", FIELD_OFFSETS["entry_block_size"])
    if reader.name_block_size != expected["name_block_size"]:
        warning(
            f"header name_block_size is {reader.name_block_size}, the names take {expected['name_block_size']}" + note,
            FIELD_OFFSETS["name_block_size"],
        )
    _check_size_fields(reader, expected, writer, warning, error)

    for index, (entry, record) in enumerate(zip(entries, reader.records)):
        record_offset = reader.entries_start + ENTRY.size * index
        data_offset, stored = record[2], record[5]
        if reader.flags in (0, 2) and stored != NO_SIZE:
            by = conventions.NOT_COMPRESSED.get(stored)
            warning(
                f"member {entry.name!r}: CompressedDataSize {stored} in an uncompressed pack (the game writes "
                f"0xFFFFFFFF)" + conventions.writer_note(by or writer),
                record_offset + 20,
                entry.name,
            )
        if reader.flags == 0 and data_offset != (entry.offset - reader.data_start) & U32:
            # The game seeks to DataOffset; the sizes put the member elsewhere.
            error(
                f"member {entry.name!r}: DataOffset {data_offset}, the sizes before it put it at "
                f"{entry.offset - reader.data_start}",
                record_offset + 8,
                entry.name,
            )
    if reader.condensed:
        previous_end = reader.data_start if reader.flags == 2 else 0
        for index, entry in enumerate(entries):
            if entry.offset < previous_end:
                error(
                    f"member {entry.name!r}: DataOffset {entry.offset} overlaps the previous member",
                    reader.entries_start + ENTRY.size * index + 8,
                    entry.name,
                )
            previous_end = entry.offset + entry.size

    if reader.compressed:
        _check_compressed_data(reader, problems)
    else:
        for entry in entries:
            if entry.offset + entry.size > reader.size:
                error(
                    f"member {entry.name!r}: data at {entry.offset}..{entry.offset + entry.size} lies "
                    f"outside the file ({reader.size} bytes)",
                    entry.offset,
                    entry.name,
                )
    if not any(problem.severity == "error" for problem in problems):
        problems.extend(check_nested_packs(reader))
        problems.extend(check_asm_members(reader))
        from .peg.sources import check_pegs

        problems.extend(check_pegs(reader))  # type: ignore[arg-type] # a packfile.Reader, an Archive
        from ...models.rfg.check import check_meshes

        problems.extend(check_meshes(reader))  # type: ignore[arg-type]
    return problems


def check_nested_packs(reader: PackfileView) -> list[Problem]:
    """The errors and warnings of each nested `.str2_pc`, named by the member holding it (offsets
    are inside that member)."""
    problems: list[Problem] = []
    for entry in reader.infolist():
        if not entry.name.lower().endswith(".str2_pc"):
            continue
        label = f"{reader.filename}/{entry.name}"
        try:
            with reader.open(entry) as stream, type(reader)(stream, name=label) as inner:
                found = inner.check()
        except GamepakError as exc:
            found = [Problem(str(exc), offset=getattr(exc, "offset", None))]
        for problem in found:
            message = problem.message if problem.message.startswith(label) else f"{label}: {problem.message}"
            problems.append(Problem(message, severity=problem.severity, offset=problem.offset, member=entry.name))
    return problems


def _check_size_fields(
    reader: PackfileView, expected: dict[str, int], writer: str | None, warning: Report, error: Report
) -> None:
    """DataSize, CompressedDataSize and FileSize against the layout and known conventions."""
    note = conventions.writer_note(writer)

    def fits(value: int, want: int) -> bool:
        return value == want or (want > U32 and value in (U32, want & U32))

    data_size = reader.data_size_field
    if not fits(data_size, expected["data_size"]):
        if reader.flags == 1:
            known = {value: name for name, value in conventions.mode1_data_sizes(reader).items()}
            by = known.get(data_size)
            warning(
                f"header data_size is {data_size}; the members' total is {expected['data_size']}"
                + conventions.writer_note(by or writer),
                FIELD_OFFSETS["data_size"],
            )
        else:
            warning(
                f"header data_size is {data_size}, the layout says {expected['data_size']}" + note,
                FIELD_OFFSETS["data_size"],
            )

    compressed = reader.compressed_size_field
    if not reader.compressed:
        if compressed != NO_SIZE:
            by = conventions.NOT_COMPRESSED.get(compressed)
            warning(
                f"header compressed_data_size is {compressed} (0x{compressed:08x}) in an uncompressed pack; "
                "the game writes 0xFFFFFFFF" + conventions.writer_note(by or writer),
                FIELD_OFFSETS["compressed_data_size"],
            )
    elif reader.flags == 3:
        if not reader.solid_stream()[1] and reader.infolist():
            stored_total = expected["compressed_data_size"]
            if reader.data_start + compressed > reader.size and compressed not in (0, U32):
                error(
                    f"header compressed_data_size {compressed} runs past the end of the file "
                    f"({reader.size - reader.data_start} bytes of data)",
                    FIELD_OFFSETS["compressed_data_size"],
                )
            else:
                warning(
                    f"the members' compressed sizes add up to {stored_total}, the header says {compressed}: "
                    "read as one stream through the header's size" + note,
                    FIELD_OFFSETS["compressed_data_size"],
                )
    elif not fits(compressed, expected["compressed_data_size"]):
        warning(
            f"header compressed_data_size is {compressed}, the compressed members span "
            f"{expected['compressed_data_size']}" + note,
            FIELD_OFFSETS["compressed_data_size"],
        )

    file_size = reader.file_size_field
    file_size_ok = file_size == reader.size or (reader.size > U32 and file_size in (U32, reader.size & U32))
    if reader.size < file_size <= U32:
        error(
            f"the file is truncated: its header says {file_size} bytes, the file has {reader.size} "
            f"({file_size - reader.size} missing)",
            FIELD_OFFSETS["file_size"],
        )
    elif not file_size_ok:
        warning(f"header file_size is {file_size}, the file has {reader.size} bytes" + note, FIELD_OFFSETS["file_size"])
    end = reader.data_end()
    if end > reader.size:
        error(f"the data block ends at {end}, past the end of the file ({reader.size} bytes)", reader.data_start)


def _check_compressed_data(reader: PackfileView, problems: list[Problem]) -> None:
    """Each member must decompress to exactly its declared size. A shared stream cannot be
    followed past a broken member; separate streams are each checked."""
    entries = reader.infolist()
    groups = [entries] if reader.condensed else [[entry] for entry in entries]
    for group in groups:
        try:
            for _entry, chunks in reader._streamed_member_data(group):
                for _ in chunks:  # type: ignore[union-attr]
                    pass
        except CorruptArchiveError as exc:
            problems.append(Problem(str(exc), offset=exc.offset, member=exc.member))


def _message(exc: GamepakError) -> str:
    """An error's sentence without the file name (the problem names the member)."""
    return str(getattr(exc, "reason", None) or exc)


def check_asm_members(reader: PackfileView) -> list[Problem]:
    """Each `.asm_pc` member against the `.str2_pc` members its containers describe."""
    from .asm import AsmFile

    problems: list[Problem] = []
    tables = [entry for entry in reader.infolist() if entry.name.lower().endswith(".asm_pc")]
    if not tables:
        return problems
    for table_entry in tables:
        label = f"{reader.filename}/{table_entry.name}"
        try:
            table = AsmFile.parse(reader.read(table_entry), label)
        except CorruptArchiveError as exc:
            problems.append(Problem(f"{table_entry.name}: {_message(exc)}", offset=exc.offset, member=table_entry.name))
            continue
        problems.extend(_check_table(reader, table, table_entry.name, inside=True))
    return problems


def check_separate_asm(reader: PackfileView, path: str) -> list[Problem]:
    """A separate `.asm_pc` file (`verify --asm FILE`) against this pack's `.str2_pc` members:
    a stale container is an error, a `.str2_pc` it has no container for a warning (containers
    of other packs are none of this pack's business)."""
    from ...core.files import read_file
    from .asm import AsmFile

    data = read_file(path)
    return _check_table(reader, AsmFile.parse(data, path), os.path.basename(path), inside=False)


def _check_table(reader: PackfileView, table: Any, table_name: str, *, inside: bool) -> list[Problem]:
    from .asm import container_name, stale_fields, summarize_str2

    problems: list[Problem] = []
    str2 = {
        container_name(entry.name).lower(): entry
        for entry in reader.infolist()
        if entry.name.lower().endswith(".str2_pc")
    }
    member = table_name if inside else None
    described = {container.name.lower() for container in table.containers}
    if not inside:
        for key, undescribed in str2.items():
            if key not in described:
                problems.append(
                    Problem(
                        f"{undescribed.name}: no container {key!r} in {table_name}",
                        severity="warning",
                        member=undescribed.name,
                    )
                )
    for container in table.containers:
        entry = str2.get(container.name.lower())
        if entry is None:
            if inside:
                problems.append(
                    Problem(
                        f"{table_name}: container {container.name!r} has no {container.name}.str2_pc in this pack",
                        severity="warning",
                        member=member,
                    )
                )
            continue
        try:
            with reader.open(entry) as stream, type(reader)(stream, name=entry.name) as inner:
                summary = summarize_str2(inner, entry.name)
        except GamepakError as exc:
            problems.append(Problem(f"{entry.name}: {_message(exc)}", member=entry.name))
            continue
        for finding in stale_fields(container, summary):
            # The game takes the container's contents from these tables.
            problems.append(Problem(f"{table_name} is stale: container {container.name!r}: {finding}", member=member))
    return problems
