"""The reading side of ZIP archives (`formats.zip`'s `Reader`, the layout table there), through
the standard library's `zipfile`: imported when a zip is first opened, so that writing one (a
conversion to zip) loads none of it."""

from __future__ import annotations

import functools
import struct

from ..core.archive import Archive, Entry, RawRange
from ..errors import CorruptArchiveError, UnsupportedFeatureError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import zipfile
    from collections.abc import Iterator
    from typing import Any, BinaryIO

    from ..core.archive import MemberData

LOCAL_HEADER = struct.Struct("<4s2xH18xHH")  # signature, flags, name length, extra length
_UTF8_NAME = 0x800  # the flag bit saying a name is UTF-8 (else code page 437)
# `formats.zip`'s LOCAL_MAGIC and its method names by code, spelled again here: `formats.zip`
# loads this module on first use, so importing them from it would make the two a circle.
_LOCAL_MAGIC = b"PK\x03\x04"
_METHOD_NAMES = {0: "store", 8: "deflate", 12: "bzip2", 14: "lzma"}


def read_errors() -> tuple[type[Exception], ...]:
    """What zipfile raises on a damaged zip or member: a bad CRC, a cut or garbled deflate or
    lzma stream, a name that is not the UTF-8 its flag says, a version, compression method or
    encryption it does not read (the patch reader catches the same)."""
    import lzma  # loaded with zipfile anyway: its LZMA members raise LZMAError, no OSError
    import zipfile
    import zlib

    return (
        zipfile.BadZipFile,
        zlib.error,
        lzma.LZMAError,
        EOFError,
        OSError,
        ValueError,
        NotImplementedError,
        RuntimeError,
    )


class Reader(Archive):
    """A ZIP archive opened for reading."""

    format_name = "zip"
    duplicate_wins = "last"

    def _load(self) -> None:
        import zipfile

        from ..core.streams import MemberStream  # here: writing a zip needs no stream

        # zipfile reads through a view of our source: no second file handle, and an archive
        # nested in another pack is read in place.
        self._stream = MemberStream(self._source, 0, self._source.size, self.filename)
        try:
            self._zip = zipfile.ZipFile(self._stream)  # type: ignore[arg-type]
        except read_errors() as exc:
            raise self.corrupt(f"not a readable ZIP archive: {exc}") from exc
        self._infos = [info for info in self._zip.infolist() if not info.is_dir()]
        self._names = [info.filename for info in self._infos]
        self._local_names: dict[int, str] = {}  # filled by _build_entries

    def _build_entries(self) -> list[Entry]:
        entries = []
        # {member index: the name its local header gives} where that is not the central
        # directory's: zipfile refuses to open such a member, so every read path must.
        self._local_names = {}
        for index, info in enumerate(self._infos):
            # The header and (one read) the name it should hold.
            expected = len(info.orig_filename.encode("utf-8", "surrogateescape"))
            header = self._source.pread(LOCAL_HEADER.size + expected, info.header_offset)
            if len(header) < LOCAL_HEADER.size:
                header = self._source.read_exact(LOCAL_HEADER.size, info.header_offset, "ZIP local header")
            magic, flags, name_length, extra_length = LOCAL_HEADER.unpack_from(header)
            if magic != _LOCAL_MAGIC:
                raise self.corrupt("no local file header where the central directory says", info.header_offset)
            local = self._local_name(header, flags, name_length, info.header_offset)
            if local != info.orig_filename:
                self._local_names[index] = local
            offset = info.header_offset + LOCAL_HEADER.size + name_length + extra_length
            stored = None if info.compress_type == 0 else info.compress_size
            entries.append(Entry(info.filename, info.file_size, offset, stored, index))
        return entries

    def _local_name(self, header: bytes, flags: int, length: int, at: int) -> str:
        """The name a local header gives, decoded as zipfile decodes it (by the local flags)."""
        raw = header[LOCAL_HEADER.size : LOCAL_HEADER.size + length]
        if len(raw) < length:
            raw = self._source.pread(length, at + LOCAL_HEADER.size)
        try:
            return raw.decode("utf-8" if flags & _UTF8_NAME else "cp437")
        except UnicodeDecodeError:
            return raw.decode("utf-8", "backslashreplace")

    def _stored_ranges(self, entries: list[Entry]) -> list[tuple[int, int]] | None:
        # Every member's data is its stored (maybe compressed) bytes at its data offset: members
        # that share them (one deflate kernel behind a thousand names) are a known zip bomb.
        return [(entry.offset, entry.size if entry.stored_size is None else entry.stored_size) for entry in entries]

    def _info(self, entry: Entry) -> zipfile.ZipInfo:
        return self._infos[entry.index]

    def member_mtime(self, entry: Entry) -> float | None:
        """The member's DOS date and time (local time, as zip stores it)."""
        import time

        try:
            return time.mktime((*self._info(entry).date_time, 0, 0, -1))
        except (OverflowError, ValueError):
            return None

    def _raw(self, entry: Entry) -> bool:
        info = self._info(entry)
        return info.compress_type == 0 and not info.flag_bits & 0x1

    def _check_readable(self, entry: Entry) -> None:
        if self._info(entry).flag_bits & 0x1:
            raise UnsupportedFeatureError(f"{self.filename}: member {entry.name!r} is encrypted")
        local = self._local_names.get(entry.index)
        if local is not None:
            info = self._info(entry)
            raise self.corrupt(f"its local header names it {local!r}", info.header_offset, member=entry.name)

    def _raw_range(self, entry: Entry) -> RawRange | None:
        return RawRange(entry.offset, entry.size) if self._raw(entry) else None

    def _member_data(self, entries: list[Entry]) -> Iterator[tuple[Entry, MemberData]]:
        for entry in entries:
            self._check_readable(entry)
            if self._raw(entry):
                self._check_range(entry)
                yield entry, RawRange(entry.offset, entry.size)
            else:
                whole = self._inflated_whole(entry)
                yield entry, self._inflated_chunks(entry) if whole is None else (whole,)

    def _inflated_whole(self, entry: Entry) -> bytes | None:
        """A deflated member inflated in one call by libdeflate (`core.inflaters`) when it fits
        the budget and its CRC-32 matches; None leaves it to `zipfile`'s stream, which says what
        is wrong with damaged data."""
        from ..core.inflaters import fits_whole, inflate_whole

        info = self._info(entry)
        stored = entry.stored_size or 0
        # Input bounded too: deflate stores incompressible data with a few bytes per 64 KiB.
        if info.compress_type != 8 or not fits_whole(entry.size) or stored > entry.size + (entry.size >> 8) + 64:
            return None
        data = self._source.pread(stored, entry.offset)
        out = inflate_whole(data, entry.size) if len(data) == stored else None
        if out is None:
            return None
        import zlib

        return bytes(out) if zlib.crc32(out) == info.CRC else None

    def _inflated_chunks(self, entry: Entry) -> Iterator[bytes]:
        with self._open_member(entry) as stream:
            while chunk := stream.read(1 << 20):
                yield chunk

    def _open_member(self, entry: Entry) -> BinaryIO:
        self._check_readable(entry)
        if self._raw(entry):
            return super()._open_member(entry)
        from ._stdlib import GuardedStream  # here: writing a zip needs none of the reading side

        return GuardedStream(self, entry, lambda: self._zip.open(self._info(entry)), read_errors())  # type: ignore[return-value]

    def header_fields(self) -> dict[str, Any]:
        methods = sorted(
            {_METHOD_NAMES[info.compress_type] for info in self._infos if info.compress_type in _METHOD_NAMES}
        )
        return {
            "entry_count": len(self._infos),
            "folders": len(self._zip.infolist()) - len(self._infos),
            "compression": methods,
            "comment": self._zip.comment.decode("utf-8", "replace"),
        }

    def _verify(self) -> list[str]:
        from ._stdlib import GuardedStream

        problems = super()._verify()
        for entry in self.infolist():
            # Through zipfile, stored members too: it checks each member's CRC-32.
            try:
                self._check_readable(entry)
                info = self._info(entry)
                opener = functools.partial(self._zip.open, info)
                with GuardedStream(self, entry, opener, read_errors()) as stream:
                    while stream.read(1 << 20):
                        pass
            except (CorruptArchiveError, UnsupportedFeatureError) as exc:
                problems.append(str(exc))
        return problems

    def close(self) -> None:
        zip_file = getattr(self, "_zip", None)
        if zip_file is not None:
            zip_file.close()
        super().close()
