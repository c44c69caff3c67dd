"""tar archives (`tar`), read and written through the standard library's `tarfile`.

| offset     | size       | field                                                              |
|------------|------------|--------------------------------------------------------------------|
| per member | 512        | header: name[100], mode, size (octal), checksum, type; `ustar` at 257 |
|            | 512·k      | pax or GNU headers for long names, when needed                     |
|            | size → 512 | the member's data, zero-padded to a 512-byte block                 |
| end        | 1024       | two zero blocks                                                    |

Only regular files are members; folders, links and devices are skipped (`header_fields` counts
them). In an uncompressed tar, members are plain byte ranges of the file. A compressed tar
(gzip `.tar.gz`/`.tgz`, bzip2 `.tar.bz2`/`.tbz2`, xz `.tar.xz`/`.txz`, zstd `.tar.zst`/`.tzst`,
told by its signature, not its name) is read as a stream: cheap in archive order, costly to seek
backwards in. A later duplicate wins, as with `tarfile.TarFile.getmember`. The writer stores pax
headers with mode 0644, owner 0 and date 0, so the same members give the same bytes; it
compresses as OUT's extension says.
"""

from __future__ import annotations

from ..core.archive import Archive, Entry, PendingMember, RawRange
from ..core.registry import made_on_first_use
from ..core.source import MemberStream, Source
from ..errors import CorruptArchiveError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import tarfile
    from collections.abc import Iterator
    from typing import Any, BinaryIO, ClassVar

    from ..core.archive import MemberData
    from ..core.writer import ArchiveWriter, Output

BLOCK = 512
RECORD = 20 * BLOCK  # tar pads the archive to whole records
USTAR_MAGIC = b"ustar"
USTAR_OFFSET = 257
GZIP_MAGIC = b"\x1f\x8b"
# Compression by signature, and by the output's extension for the writer, with each one's
# levels (the default is the compressor's usual one: gzip 9 as `tar czf`, zstd 3).
COMPRESSIONS: dict[str, tuple[bytes, tuple[str, ...], int, int, int]] = {
    # name: (signature, extensions, lowest level, highest level, default level)
    "gzip": (GZIP_MAGIC, (".tar.gz", ".tgz"), 0, 9, 9),
    "bzip2": (b"BZh", (".tar.bz2", ".tbz2", ".tbz"), 1, 9, 9),
    "xz": (b"\xfd7zXZ\x00", (".tar.xz", ".txz"), 0, 9, 6),
    "zstd": (b"\x28\xb5\x2f\xfd", (".tar.zst", ".tzst"), 1, 22, 3),
}


def compression_of_name(path: str) -> str | None:
    """The compression an output name asks for (`.tar.xz` -> "xz"), or None for a plain tar."""
    lowered = path.lower()
    for name, (_, extensions, _, _, _) in COMPRESSIONS.items():
        if lowered.endswith(extensions):
            return name
    return None


def compression_of_data(head: bytes) -> str | None:
    """The compression whose signature `head` starts with, or None."""
    for name, (signature, _, _, _, _) in COMPRESSIONS.items():
        if head.startswith(signature):
            return name
    return None


def _decompressing(kind: str, stream: Any) -> Any:
    """A readable, seekable file object over the decompressed bytes of `stream`."""
    if kind == "gzip":
        import gzip

        return gzip.GzipFile(fileobj=stream, mode="rb")
    if kind == "bzip2":
        import bz2

        return bz2.BZ2File(stream, "rb")
    if kind == "xz":
        import lzma

        return lzma.LZMAFile(stream, "rb")
    return _ZstdReader(stream)


def _compressing(kind: str, handle: Any, level: int) -> Any:
    """A writable file object compressing into `handle` (closing it leaves `handle` open)."""
    if kind == "gzip":
        import gzip

        # mtime 0 and no file name: the same members give the same bytes.
        return gzip.GzipFile(filename="", mode="wb", fileobj=handle, mtime=0, compresslevel=level)
    if kind == "bzip2":
        import bz2

        return bz2.BZ2File(handle, "wb", compresslevel=level)
    if kind == "xz":
        import lzma

        return lzma.LZMAFile(handle, "wb", preset=level)
    import zstandard

    return zstandard.ZstdCompressor(level=level).stream_writer(handle, closefd=False)


class _ZstdReader:
    """zstandard's stream reader made seekable as `tarfile` needs: a seek backwards starts the
    decompression again from the beginning (as `gzip.GzipFile` does)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._position = 0
        self._reader: Any = None
        self._restart()

    def _restart(self) -> None:
        import zstandard

        self._stream.seek(0)
        self._reader = zstandard.ZstdDecompressor().stream_reader(self._stream, read_across_frames=True, closefd=False)
        self._position = 0

    def read(self, size: int = -1) -> bytes:
        import zstandard

        try:
            if size is None or size < 0:
                chunks = []
                while chunk := self._reader.read(1 << 20):
                    chunks.append(chunk)
                data = b"".join(chunks)
            else:
                data = self._reader.read(size)
        except zstandard.ZstdError as exc:
            raise OSError(f"zstd data is damaged: {exc}") from None
        self._position += len(data)
        return data

    def seek(self, offset: int, whence: int = 0) -> int:
        target = offset if whence == 0 else self._position + offset
        if whence == 2:
            raise OSError("cannot seek from the end of a zstd stream")
        if target < self._position:
            self._restart()
        while self._position < target:
            if not self.read(min(target - self._position, 1 << 20)):
                break
        return self._position

    def tell(self) -> int:
        return self._position

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def close(self) -> None:
        self._reader.close()

    def __enter__(self) -> _ZstdReader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


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
    """1.0 for a ustar header at the start, or a gzip, bzip2, xz or zstd stream that starts
    with one; 0.5 for an empty archive (zero blocks only)."""
    head = source.pread(2 * BLOCK, 0)
    kind = compression_of_data(head)
    if kind is not None:
        failures = _read_errors()
        try:
            with _decompressing(kind, MemberStream(source, 0, source.size, source.name)) as stream:
                plain = stream.read(2 * BLOCK)
        except failures:
            return 0.0
        return _rate(plain, True)
    return _rate(head, source.size % BLOCK == 0)


def _read_errors() -> tuple[type[BaseException], ...]:
    import lzma
    import tarfile
    import zlib

    errors: tuple[type[BaseException], ...] = (
        tarfile.TarError,
        zlib.error,
        lzma.LZMAError,
        EOFError,
        OSError,
        ValueError,
    )
    try:
        import zstandard

        errors += (zstandard.ZstdError,)
    except ImportError:
        pass
    return errors


def _kind(info: tarfile.TarInfo) -> str:
    if info.isdir():
        return "folders"
    if info.issym():
        return "symlinks"
    if info.islnk():
        return "hard links"
    return "devices and fifos"


class Reader(Archive):
    """A tar archive (plain, or compressed with gzip, bzip2, xz or zstd) opened for reading."""

    format_name = "tar"
    duplicate_wins = "last"

    def _load(self) -> None:
        import tarfile

        self._stream: Any = MemberStream(self._source, 0, self._source.size, self.filename)
        self.compression = compression_of_data(self._source.pread(8, 0))
        self.compressed = self.compression is not None
        try:
            if self.compression is not None:
                self._stream = _decompressing(self.compression, self._stream)
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
        from ._stdlib import GuardedStream  # here: detection asks tar's sniffer about every file

        return GuardedStream(self, entry, lambda: self._tar.extractfile(info), _read_errors())  # type: ignore[return-value]

    def header_fields(self) -> dict[str, Any]:
        return {
            "entry_count": len(self._infos),
            "gzip": self.compression == "gzip",
            "compression": self.compression or "none",
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


def check_name(name: str) -> None:
    """A tar stores every name `core.stored_names.refuse_name` lets through (long ones in pax
    records): nothing more to refuse. The writer's rule all the same (the registry row's
    `name_rule`), so that an editor checks new names without making a writer."""


def _make_writer() -> type[ArchiveWriter]:
    """The tar writer's class, made when something writes (`made_on_first_use`): reading a tar
    imports nothing of the writing side."""
    from ..core.layout import align_up
    from ..core.writer import ArchiveWriter, whole_number

    class Writer(ArchiveWriter):
        """Writes a pax tar archive, compressed as OUT's extension says (`.tar.gz`/`.tgz`,
        `.tar.bz2`, `.tar.xz`, `.tar.zst`) at `level` (gzip and bzip2 9, xz 6, zstd 3 by default)."""

        format_name = "tar"
        option_defaults: ClassVar[dict[str, Any]] = {"level": None}
        option_validators: ClassVar[dict[str, Any]] = {"level": whole_number(0, 22, allow_none=True)}

        def _check_name(self, name: str) -> None:
            check_name(name)

        def _unused_options(self) -> dict[str, str]:
            kind = compression_of_name(self.path)
            if kind is None:
                return {
                    "level": "a plain tar is not compressed (name the output .tar.gz, .tar.bz2, .tar.xz or .tar.zst)"
                }
            return {}

        def _level(self, kind: str) -> int:
            from ..errors import InvalidOptionError

            _, _, lowest, highest, default = COMPRESSIONS[kind]
            level = self.options["level"]
            if level is None:
                return default
            if not lowest <= level <= highest:
                raise InvalidOptionError(f"level={level}: {kind} levels are {lowest} to {highest}", "level")
            return int(level)

        def _write(self, out: Output, members: list[PendingMember]) -> None:
            import tarfile

            kind = compression_of_name(self.path)
            if kind is None:
                # Headers from tarfile, data copied by the kernel where the member allows.
                out.write(_other_entries(tarfile, members))
                for member in members:
                    out.write(_header(tarfile, member))
                    out.write_member(member)
                    out.pad_to(align_up(out.tell(), BLOCK))
                out.write(bytes(2 * BLOCK))
                out.pad_to(align_up(out.tell(), RECORD))
                return
            level = self._level(kind)
            out.flush()
            with open(out.fd, "wb", closefd=False) as handle:
                handle.seek(out.tell())
                with _compressing(kind, handle, level) as target:
                    others = _other_entries(tarfile, members)
                    target.write(others)
                    position = len(others)
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

    return Writer


def _header(tarfile: Any, member: PendingMember) -> bytes:
    """The header blocks of one member: a member of a tar keeps its mode, date, owner and pax
    fields (an edit's rebuild, tar -> tar); others get mode 0644, owner 0 and date 0."""
    if member.origin is not None and isinstance(member.origin[0], Reader):
        import copy

        reader, entry = member.origin[0], member.origin[1]
        info = copy.copy(reader._infos[entry.index])
        info.pax_headers = dict(info.pax_headers)
        info.pax_headers.pop("path", None)
        info.pax_headers.pop("size", None)
        info.name = member.name
    else:
        info = tarfile.TarInfo(member.name)
        info.mode = 0o644
        info.mtime = 0
    info.size = member.size
    header: bytes = info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape")
    return header


def _other_entries(tarfile: Any, members: list[PendingMember]) -> bytes:
    """The folders, links and other entries that are not members, of the tar the members come
    from: an edit keeps them (they take no data blocks)."""
    for member in members:
        if member.origin is not None and isinstance(member.origin[0], Reader):
            reader = member.origin[0]
            return b"".join(
                info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape")
                for info in reader._tar.getmembers()
                if not info.isreg() and (info.isdir() or info.issym() or info.islnk())
            )
    return b""


__getattr__ = made_on_first_use(globals(), {"Writer": _make_writer})
