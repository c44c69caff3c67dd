"""The packfile writer: the game's conventions, stored bytes reused, `.asm_pc` tables kept current.

Defaults follow the game: `.str2_pc` → flags 3, zlib level 9, align 1; `.vpp_pc` → flags 0
(plain, 2048 padding); a `.vpp_pc` written with flags 3 gets align 16. Flags 1 stores each
member's position in DataOffset, DataSize = Σ sizes and CompressedDataSize = the span on disk.

Members queued from an open packfile (`add_member`, `PendingMember.origin`) keep their stored
compressed bytes where the new pack's stream allows it (flags 1 and 3, the flags-3 stream falling
back in step with its source after a changed member): `reuse` explains how, and does it.

A pack holding `.str2_pc` and `.asm_pc` members gets its `.asm_pc` containers updated to the
`.str2_pc` members actually written (`asm_updates` lists what changed; each change is also
emitted as an `AsmUpdated` warning, which the CLI prints). The `asm` option names a separate
`.asm_pc` file to update instead (written atomically after the pack).
"""

from __future__ import annotations

import io
import os
import warnings
import zlib

from ...core.archive import encode_name
from ...core.layout import align_up, restore_fill
from ...core.writer import ArchiveWriter, Output, PendingMember, boolean, whole_number
from ...errors import FormatLimitError, GamepakError, UnsupportedFeatureError
from .options import asm_file, header_text, runtime_hex
from .packfile import Reader, check_name
from .rebuild import classic_zlib
from .records import (
    BLOCK_ALIGN,
    ENTRY,
    FLAG_COMPRESSED,
    FLAG_CONDENSED,
    HEADER,
    HEADER_BLOCK,
    MAGIC,
    MODE_NAMES,
    NO_SIZE,
    U32,
    VERSION,
    name_block,
    name_hash,
)
from .reuse import copy_stored, stored_stream, write_solid_stream

# `typing` costs milliseconds at import, and the `.asm_pc` module (with `dataclasses`) more: an
# edit of a pack without `.str2_pc` members needs neither.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any, ClassVar

    from .asm import AsmContainer, AsmFile


class AsmUpdated(UserWarning):
    """An `.asm_pc` container was brought up to date with the `.str2_pc` written beside it."""


def _header_field(text: Any, size: int, what: str) -> bytes:
    raw = encode_name("" if text is None else str(text))
    if len(raw) >= size:
        raise FormatLimitError(f"{what} {text!r} is {len(raw)} bytes; the header holds at most {size - 1}")
    return raw.ljust(size, b"\0")


def _open_pending(member: PendingMember) -> IO[bytes]:
    """A stream over a queued member that does not count as consuming it."""
    if member.data is not None:
        return io.BytesIO(member.data)
    return member._open()


class Writer(ArchiveWriter):
    """Writes a packfile as the game does. Options (None picks the default for the extension):
    `flags` 0-3 (`.str2_pc`: 3, `.vpp_pc`: 0), `level` zlib level (9), `align` member alignment
    inside condensed data (`.str2_pc`: 1, `.vpp_pc` with flags 3: 16, flags 2: 1; flags 0/1 always
    pad to 2048), `strategy`/`mem_level`/`window_bits` (zlib's), `finish` (flags 1: finish each
    member's stream, default True), `short_name`/`path_name` (header text), `runtime` (hex of the
    12 bytes at 364; zeros by default), `asm` (a separate `.asm_pc` file whose containers are
    updated to the `.str2_pc` members written)."""

    format_name = "vpp"
    # The game keys members by their bare file names: a packfile has no folders.
    flat_names = True
    case_insensitive_names = True  # the game finds members by a hash of the lowercased name
    option_defaults: ClassVar[dict[str, Any]] = {
        "flags": None,
        "level": None,
        "align": None,
        "strategy": 0,
        "mem_level": 8,
        "window_bits": 15,
        "finish": True,
        "short_name": "",
        "path_name": "",
        "runtime": None,
        "asm": None,
    }
    option_validators: ClassVar[dict[str, Any]] = {
        "flags": whole_number(0, 3, allow_none=True),
        "level": whole_number(-1, 9, allow_none=True),
        "align": whole_number(1, 1 << 20, allow_none=True),
        "strategy": whole_number(0, 4, allow_none=True),
        "mem_level": whole_number(1, 9, allow_none=True),
        "window_bits": whole_number(9, 15, allow_none=True),
        "finish": boolean(),
        "short_name": header_text(65),
        "path_name": header_text(256),
        "runtime": runtime_hex,
        "asm": asm_file,
    }

    def __init__(self, path: str | os.PathLike[str], **kwargs: Any) -> None:
        super().__init__(path, **kwargs)
        # What the `.asm_pc` update changed, one sentence per change.
        self.asm_updates: list[str] = []
        self._external_asm: bytes | None = None

    def _check_name(self, name: str) -> None:
        check_name(name)

    def _unused_options(self) -> dict[str, str]:
        flags = self.options["flags"]
        if flags is None:
            flags = 3 if self.path.lower().endswith(".str2_pc") else 0
        if isinstance(flags, int) and not flags & FLAG_COMPRESSED:
            why = f"flags {flags} packs are not compressed (flags 1 and 3 are)"
            return {key: why for key in ("level", "strategy", "mem_level", "window_bits")}
        return {}

    def _settings(self) -> tuple[int, int, int]:
        """(flags, level, align) with the extension's defaults filled in."""
        str2 = self.path.lower().endswith(".str2_pc")
        flags = self.options["flags"]
        flags = (3 if str2 else 0) if flags is None else int(flags)
        if flags not in MODE_NAMES:
            raise UnsupportedFeatureError(f"packfile flags must be 0-3, not {flags}")
        level = 9 if self.options["level"] is None else int(self.options["level"])
        if not -1 <= level <= 9:
            raise UnsupportedFeatureError(f"zlib level must be 0-9, not {level}")
        align = self.options["align"]
        if flags & FLAG_CONDENSED:
            align = (1 if str2 or flags == 2 else 16) if align is None else int(align)
            if align < 1:
                raise FormatLimitError(f"alignment must be at least 1, not {align}")
        else:
            if align not in (None, BLOCK_ALIGN):
                raise UnsupportedFeatureError(
                    f"flags {flags} always pad members to {BLOCK_ALIGN} bytes; "
                    "align applies to condensed packs (flags 2, 3)"
                )
            align = BLOCK_ALIGN
        return flags, level, align

    def _zlib_setting(self, key: str) -> int:
        """`strategy`, `mem_level` or `window_bits`; given as None (`-o window_bits=`), zlib's default."""
        value = self.options[key]
        return int(self.option_defaults[key] if value is None else value)

    def _compressor(self, level: int, raw_window: int | None = None, zdict: bytes = b"") -> Any:
        window = self._zlib_setting("window_bits") if raw_window is None else -raw_window
        settings = (self._zlib_setting("mem_level"), self._zlib_setting("strategy"))
        try:
            if zdict:
                return zlib.compressobj(level, zlib.DEFLATED, window, *settings, zdict)
            return zlib.compressobj(level, zlib.DEFLATED, window, *settings)
        except (ValueError, zlib.error) as exc:
            raise UnsupportedFeatureError(f"bad zlib settings: {exc}") from exc

    # -- .asm_pc tables ----------------------------------------------------------------------
    def _update_asm_tables(self, members: list[PendingMember]) -> list[PendingMember]:
        """Members with each `.asm_pc` brought up to date with the `.str2_pc` members."""
        str2 = [member for member in members if member.name.lower().endswith(".str2_pc")]
        table_indexes = [index for index, member in enumerate(members) if member.name.lower().endswith(".asm_pc")]
        external = self.options["asm"]
        if not table_indexes and not external:
            changed_str2 = [member.name for member in str2 if member.origin is None]
            editing = self.edit_of is not None  # an edit of an existing pack, not a new one
            if changed_str2 and editing:
                # The game finds a .str2_pc through a container of an .asm_pc; none is in this
                # pack, so it lives in another file that this write leaves as it was.
                warnings.warn(
                    f"{', '.join(changed_str2[:3])}: no .asm_pc in this pack describes the changed .str2_pc; "
                    "its table is in another file: pass --asm FILE (writer option asm) to keep it current",
                    AsmUpdated,
                    stacklevel=2,
                )
            return members
        if not str2 and not any(members[index].origin is not None for index in table_indexes):
            return members
        from .asm import AsmFile, AsmMismatchError, container_name, summarize_str2, update_container

        tables: list[tuple[str, AsmFile]] = []
        for index in table_indexes:
            with _open_pending(members[index]) as stream:
                data = stream.read()
            tables.append((members[index].name, AsmFile.parse(data, f"{self.path}/{members[index].name}")))
        if external:
            from ...core.files import read_file

            tables.append((os.path.basename(external), AsmFile.parse(read_file(external), external)))
        changed: set[int] = set()
        # A .str2_pc the table's own pack held that is not written now was removed by an edit:
        # its container goes too (the game would look for a .str2_pc that is not there).
        written = {container_name(member.name).lower() for member in str2}
        for number, index in enumerate(table_indexes):
            origin = members[index].origin
            if origin is None:
                continue
            held = {container_name(name).lower() for name in origin[0].namelist() if name.lower().endswith(".str2_pc")}
            table = tables[number][1]
            for gone in [c for c in table.containers if c.name.lower() in held - written]:
                table.containers.remove(gone)
                changed.add(number)
                self.asm_updates.append(f"{tables[number][0]}: container {gone.name!r} removed with its .str2_pc")
        for member in str2:
            wanted = container_name(member.name)
            found: tuple[int, AsmContainer] | None = None
            for number, (_, table) in enumerate(tables):
                container = table.container(wanted)
                if container is not None:
                    found = (number, container)
                    break
            if found is None:
                raise AsmMismatchError(
                    f"{member.name}: no container {wanted!r} in {', '.join(name for name, _ in tables)}; "
                    "the game would not find this .str2_pc"
                )
            number, container = found
            with _open_pending(member) as stream:
                try:
                    with Reader(stream, name=member.name) as inner:  # type: ignore[arg-type]
                        summary = summarize_str2(inner, member.name)
                except GamepakError as exc:
                    raise AsmMismatchError(f"{member.name}: cannot read it to update its container: {exc}") from exc
            changes = update_container(container, summary)
            if changes:
                changed.add(number)
                table_name = tables[number][0]
                self.asm_updates.extend(f"{table_name}: {change}" for change in changes)
        updated = list(members)
        for number in changed:
            data = tables[number][1].to_bytes()
            if number < len(table_indexes):
                index = table_indexes[number]
                old = members[index]
                replacement = PendingMember(old.name, data, None, len(data))
                replacement.on_written = old.on_written
                updated[index] = replacement
            else:
                self._external_asm = data
        for change in self.asm_updates:
            warnings.warn(f"updated {change}", AsmUpdated, stacklevel=2)
        return updated

    def close(self) -> None:
        """Write the pack (and then the separate `.asm_pc`, if one was named and changed)."""
        if self._closed:
            return
        super().close()
        if self._external_asm is not None:
            from ...core.atomic import write_bytes

            write_bytes(self.options["asm"], self._external_asm, overwrite=True)

    # -- writing -----------------------------------------------------------------------------
    def _write(self, out: Output, members: list[PendingMember]) -> None:
        members = self._update_asm_tables(members)
        flags, level, align = self._settings()
        exact = self.layout if self.layout and self.layout.get("sizes") == [m.size for m in members] else {}
        if exact.get("offsets") and not _one_after_another(exact["offsets"], [m.size for m in members]):
            # Members that overlap in the source (a damaged pack) cannot each be written where
            # it had them: a clean pack holds the same members, and the user hears why the
            # result differs from the source.
            warnings.warn(
                f"{os.path.basename(self.path)}: members overlap in the source (a damaged pack); written "
                "as a clean pack with the same members, not byte for byte",
                stacklevel=2,
            )
            exact = {}
        if exact and flags & FLAG_COMPRESSED:
            if exact.get("zlib_unmatched"):
                raise UnsupportedFeatureError(
                    f"{self.path}: no zlib setting reproduced the original's compressed bytes; "
                    "rebuild with -O options instead of an exact copy"
                )
            if not classic_zlib():
                raise UnsupportedFeatureError(
                    f"{self.path}: the linked zlib ({zlib.ZLIB_RUNTIME_VERSION}) is not classic zlib; "
                    "a byte-exact rebuild of compressed data cannot be guaranteed"
                )
        for member in members:
            if member.size > U32:
                raise FormatLimitError(
                    f"member {member.name!r} is {member.size} bytes; a packfile member holds at most 4 GiB - 1"
                )
        raw_names = [encode_name(member.name) for member in members]
        count = len(members)
        names_start = HEADER_BLOCK + align_up(ENTRY.size * count, BLOCK_ALIGN)
        recorded = exact.get("name_offsets")
        names, offsets_of_names = name_block(raw_names, recorded)
        header_overrides = {key: int(value) for key, value in exact.get("header", {}).items()}
        # The data starts where the header's name block size puts it (readers go by the field):
        # an exact rebuild keeps the source's field while its names still sit where recorded.
        kept_size = header_overrides.get("name_block_size")
        if kept_size is not None and (
            (recorded is not None and offsets_of_names != recorded)
            or not len(names) <= kept_size <= int(exact.get("file_size", 0))
        ):
            del header_overrides["name_block_size"]
        name_block_size = header_overrides.get("name_block_size", len(names))
        data_start = names_start + align_up(name_block_size, BLOCK_ALIGN)
        fixed_offsets = exact.get("offsets")

        out.seek(data_start)
        data_offsets: list[int] = []
        stored_sizes: list[int] = []
        if flags == 3:
            data_size, compressed_size = self._write_solid(
                out, members, level, align, fixed_offsets, data_offsets, stored_sizes
            )
        elif flags == 2:
            position = 0
            for index, member in enumerate(members):
                target = fixed_offsets[index] if fixed_offsets else align_up(position, align)
                out.pad_to(data_start + target)
                data_offsets.append(target)
                stored_sizes.append(NO_SIZE)
                out.write_member(member)
                position = target + member.size
            data_size, compressed_size = position, NO_SIZE
        else:
            for index, member in enumerate(members):
                if index:
                    out.pad_to(align_up(out.tell(), BLOCK_ALIGN))
                data_offsets.append(out.tell() - data_start)
                if flags == 0:
                    out.write_member(member)
                    stored_sizes.append(NO_SIZE)
                else:
                    before = out.tell()
                    source = stored_stream(member)
                    if source is not None:
                        copy_stored(out, *source)
                        member.consumed()
                    else:
                        compressor = self._compressor(level)
                        for chunk in member.chunks():
                            out.write(compressor.compress(chunk))
                        out.write(compressor.flush(zlib.Z_FINISH if self.options["finish"] else zlib.Z_SYNC_FLUSH))
                    stored_sizes.append(out.tell() - before)
            span = out.tell() - data_start
            if flags == 0:
                data_size, compressed_size = span, NO_SIZE
            else:
                data_size, compressed_size = sum(member.size for member in members), span
            if not members:
                compressed_size = 0 if flags == 1 else NO_SIZE
        file_size = out.tell()
        if exact:
            file_size = int(exact.get("file_size", file_size))

        offset_overrides = exact.get("data_offsets", {})
        entries = b"".join(
            ENTRY.pack(
                offsets_of_names[index],
                0,
                int(offset_overrides.get(str(index), data_offsets[index] & U32)),
                name_hash(raw_names[index]),
                member.size,
                stored_sizes[index],
                0,
            )
            for index, member in enumerate(members)
        )
        header_values = {
            "file_size": min(file_size, U32),
            "entry_block_size": ENTRY.size * count,
            "name_block_size": name_block_size,
            "data_size": min(data_size, U32),
            "compressed_data_size": min(compressed_size, U32),
        }
        header_values.update(header_overrides)
        runtime = self.options["runtime"]
        runtime_bytes = bytes.fromhex(runtime) if runtime else bytes(12)  # runtime_hex normalised it
        header = HEADER.pack(
            MAGIC,
            VERSION,
            _header_field(self.options["short_name"], 65, "short_name"),
            _header_field(self.options["path_name"], 256, "path_name"),
            b"\0" * 3,
            flags,
            b"\0" * 4,
            count,
            header_values["file_size"],
            header_values["entry_block_size"],
            header_values["name_block_size"],
            header_values["data_size"],
            header_values["compressed_data_size"],
            runtime_bytes,
        )
        out.flush()
        out.pwrite(header.ljust(HEADER_BLOCK, b"\0"), 0)
        if entries:
            out.pwrite(entries, HEADER_BLOCK)
        if names:
            out.pwrite(names, names_start)
        if exact:
            restore_fill(out, exact.get("fill", []))
        out.truncate(file_size)

    def _write_solid(
        self,
        out: Output,
        members: list[PendingMember],
        level: int,
        align: int,
        fixed_offsets: list[int] | None,
        data_offsets: list[int],
        stored_sizes: list[int],
    ) -> tuple[int, int]:
        """Flags 3: one zlib stream, a sync flush after each member (and the padding that
        follows it), never finished. Returns (DataSize, CompressedDataSize)."""
        if not members:
            return 0, 0
        targets: list[int] = []
        position = 0
        for index, member in enumerate(members):
            targets.append(fixed_offsets[index] if fixed_offsets else align_up(position, align))
            position = targets[-1] + member.size
        data_offsets.extend(targets)

        def compressor(raw_window: int | None, history: bytes) -> Any:
            return self._compressor(level, raw_window=raw_window, zdict=history)

        window_option = self._zlib_setting("window_bits")
        return position, write_solid_stream(out, members, targets, stored_sizes, compressor, window_option)


def _one_after_another(offsets: list[int], sizes: list[int]) -> bool:
    """Whether members of these sizes fit at these offsets in order, none overlapping the last."""
    end = 0
    for offset, size in zip(offsets, sizes, strict=False):
        if int(offset) < end:
            return False
        end = int(offset) + size
    return True
