"""tar archives (`tar`), read and written through the standard library's `tarfile`.

| offset     | size       | field                                                              |
|------------|------------|--------------------------------------------------------------------|
| per member | 512        | header: name[100], mode, size (octal), checksum, type; `ustar` at 257 |
|            | 512·k      | pax or GNU headers for long names, when needed                     |
|            | size → 512 | the member's data, zero-padded to a 512-byte block                 |
| end        | 1024       | two zero blocks                                                    |

Only regular files are members; folders, links and devices are skipped (`header_fields` counts
them). In an uncompressed tar, members are plain byte ranges of the file. A gzip-compressed tar
(`.tar.gz`, `.tgz`) is read as a stream: cheap in archive order, costly to seek backwards in. A
later duplicate wins, as with `tarfile.TarFile.getmember`. The writer stores pax headers with
mode 0644, owner 0 and date 0, so the same members give the same bytes; it compresses with gzip
when OUT ends in `.gz` or `.tgz`.
"""

from __future__ import annotations

from ..core.archive import Archive, ArchiveWriter, Entry, Output, PendingMember, RawRange
from ..core.layout import align_up
from ..core.options import whole_number
from ..core.source import MemberStream, Source
from ..errors import CorruptArchiveError
from ._stdlib import GuardedStream

TYPE_CHECKING = False
if TYPE_CHECKING:
    import tarfile
    from collections.abc import Iterator
    from typing import Any, BinaryIO, ClassVar

    from ..core.archive import MemberData

BLOCK = 512
RECORD = 20 * BLOCK  # tar pads the archive to whole records
USTAR_MAGIC = b"ustar"
USTAR_OFFSET = 257
GZIP_MAGIC = b"\x1f\x8b"


def _ustar_at(head: bytes) -> bool:
    return head[USTAR_OFFSET : USTAR_OFFSET + len(USTAR_MAGIC)] == USTAR_MAGIC


def _rate(head: bytes, whole_blocks: bool) -> float:
    if _ustar_at(head):
        return 1.0
    # An empty archive is only its two zero end blocks: a weak guess that the extension settles.
    if whole_blocks and len(head) == 2 * BLOCK and not any(head):
        return 0.5
    return 0.0


def sniff(source: Source) -> float:
    """1.0 for a ustar header at the start, or a gzip stream that starts with one; 0.5 for an
    empty archive (zero blocks only)."""
    head = source.pread(2 * BLOCK, 0)
    if head.startswith(GZIP_MAGIC):
        import zlib

        try:
            plain = zlib.decompressobj(31).decompress(source.pread(64 << 10, 0), 2 * BLOCK)
        except zlib.error:
            return 0.0
        return _rate(plain, True)
    return _rate(head, source.size % BLOCK == 0)


def _read_errors() -> tuple[type[BaseException], ...]:
    import tarfile
    import zlib

    return (tarfile.TarError, zlib.error, EOFError, OSError, ValueError)


def _kind(info: tarfile.TarInfo) -> str:
    if info.isdir():
        return "folders"
    if info.issym():
        return "symlinks"
    if info.islnk():
        return "hard links"
    return "devices and fifos"


class Reader(Archive):
    """A tar archive (plain or gzip-compressed) opened for reading."""

    format_name = "tar"
    duplicate_wins = "last"

    def _load(self) -> None:
        import tarfile

        self._stream: Any = MemberStream(self._source, 0, self._source.size, self.filename)
        self.compressed = self._source.pread(2, 0) == GZIP_MAGIC
        try:
            if self.compressed:
                import gzip

                self._stream = gzip.GzipFile(fileobj=self._stream, mode="rb")
            self._tar = tarfile.open(fileobj=self._stream, mode="r:")  # noqa: SIM115 (closed in close())
            infos = self._tar.getmembers()
        except _read_errors() as exc:
            raise self.corrupt(f"not a readable tar archive: {exc}") from exc
        self._infos = [info for info in infos if info.isreg()]
        self.skipped: dict[str, int] = {}
        for info in infos:
            if not info.isreg():
                self.skipped[_kind(info)] = self.skipped.get(_kind(info), 0) + 1
        self._names = [info.name for info in self._infos]
        self._entries = [
            Entry(info.name, info.size, info.offset_data, None, index) for index, info in enumerate(self._infos)
        ]

    def member_mtime(self, entry: Entry) -> float | None:
        """The member's modification time as the tar header stores it."""
        return float(self._infos[entry.index].mtime)

    def _raw(self, entry: Entry) -> bool:
        return not self.compressed and self._infos[entry.index].sparse is None

    def _raw_range(self, entry: Entry) -> RawRange | None:
        return RawRange(entry.offset, entry.size) if self._raw(entry) else None

    def _member_data(self, entries: list[Entry]) -> Iterator[tuple[Entry, MemberData]]:
        for entry in entries:
            if self._raw(entry):
                self._check_range(entry)
                yield entry, RawRange(entry.offset, entry.size)
            else:
                yield entry, self._chunks(entry)

    def _chunks(self, entry: Entry) -> Iterator[bytes]:
        with self._open_member(entry) as stream:
            while chunk := stream.read(1 << 20):
                yield chunk

    def _open_member(self, entry: Entry) -> BinaryIO:
        if self._raw(entry):
            return super()._open_member(entry)
        info = self._infos[entry.index]
        return GuardedStream(self, entry, lambda: self._tar.extractfile(info), _read_errors())  # type: ignore[return-value]

    def header_fields(self) -> dict[str, Any]:
        return {
            "entry_count": len(self._infos),
            "gzip": self.compressed,
            "skipped_members": dict(self.skipped),
        }

    def _verify(self) -> list[str]:
        if not self.compressed:
            return super()._verify()
        problems = []
        for entry in self.infolist():
            try:
                for _ in self._chunks(entry):
                    pass
            except CorruptArchiveError as exc:
                problems.append(str(exc))
        return problems

    def close(self) -> None:
        tar = getattr(self, "_tar", None)
        if tar is not None:
            tar.close()
        if self.compressed:
            self._stream.close()
        super().close()


class Writer(ArchiveWriter):
    """Writes a pax tar archive; gzip-compressed (at `level`, 9 by default) when OUT ends in
    `.gz` or `.tgz`."""

    format_name = "tar"
    option_defaults: ClassVar[dict[str, Any]] = {"level": None}
    option_validators: ClassVar[dict[str, Any]] = {"level": whole_number(0, 9, allow_none=True)}

    def _unused_options(self) -> dict[str, str]:
        if not self.path.lower().endswith((".gz", ".tgz")):
            return {"level": "a plain tar is not compressed (name the output .tar.gz or .tgz)"}
        return {}

    def _write(self, out: Output, members: list[PendingMember]) -> None:
        import tarfile

        if not self.path.lower().endswith((".gz", ".tgz")):
            # Headers from tarfile, data copied by the kernel where the member allows.
            for member in members:
                out.write(_header(tarfile, member))
                out.write_member(member)
                out.pad_to(align_up(out.tell(), BLOCK))
            out.write(bytes(2 * BLOCK))
            out.pad_to(align_up(out.tell(), RECORD))
            return
        import gzip

        out.flush()
        level = 9 if self.options["level"] is None else self.options["level"]
        with open(out.fd, "wb", closefd=False) as handle:
            handle.seek(out.tell())
            # mtime 0 and no file name: the same members give the same bytes.
            with gzip.GzipFile(filename="", mode="wb", fileobj=handle, mtime=0, compresslevel=level) as target:
                position = 0
                for member in members:
                    header = _header(tarfile, member)
                    target.write(header)
                    for chunk in member.chunks():
                        target.write(chunk)
                    position += len(header) + member.size
                    target.write(bytes(align_up(position, BLOCK) - position))
                    position = align_up(position, BLOCK)
                end = position + 2 * BLOCK
                target.write(bytes(align_up(end, RECORD) - position))


def _header(tarfile: Any, member: PendingMember) -> bytes:
    """The header blocks of one member: pax, mode 0644, owner 0, date 0."""
    info = tarfile.TarInfo(member.name)
    info.size = member.size
    info.mode = 0o644
    info.mtime = 0
    header: bytes = info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape")
    return header
