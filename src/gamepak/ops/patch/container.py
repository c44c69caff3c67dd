"""The patch file: a zip holding `patch.json` (the manifest) and the blobs its operations name.

    patch.json  {"format": "gamepak-patch", "version": 1,
                 "name", "author", "description", "patch_version", "game", "links": [..],
                 "operations": [OPERATION, ...]}
    blobs/N     the bytes of operation N: a member's new content ("raw"), or a zstd frame made
                with the base member as dictionary ("zstd-delta"), or an RFG zone's object-level
                changes ("zone-changes": `formats.rfg.zone.diff`'s JSON, replayed on whatever
                version of the zone the target holds, so patches changing different objects of
                one zone stack), stored uncompressed in the zip

    OPERATION   {"op": "add" | "remove" | "replace" | "rename",
                 "file": "data/table.vpp_pc"  (the pack or plain file, relative to the target;
                                               "" when the target is one pack),
                 "member": "zone.str2_pc/x.cpeg_pc" (nested path inside the pack; null for a
                                               plain file),
                 "new_member": "..."          (rename only),
                 "base_sha256", "target_sha256", "size" (the target's size),
                 "blob": "blobs/N", "encoding": "raw" | "zstd-delta" | "zone-changes",
                 "position": N                (add only, optional: its index in its pack)}

Why a zip: every system can open it and list it, members are read one at a time, and the
stdlib reads it. Why zstd's dictionary mode for deltas: `zstandard` is kept up to date, ships
wheels everywhere, and one library also compresses the raw blobs; one changed byte in a 1.5 MB
table member costs ~150 bytes, well under the 1 KiB goal (hdiffpatch and pyxdelta are a few
dozen bytes smaller, but their Python bindings are single-maintainer and rarely released).

Reading is defensive: an unknown format or newer version, a manifest over 16 MiB, paths that
climb out (`..`, absolute, drive letters), sizes over the limits, a blob that inflates past its
declared size: each is a `PatchError` naming the patch and the operation, before anything is
written.
"""

from __future__ import annotations

import os
import re

from ...errors import GamepakError, UnsafePathError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any, Protocol
else:
    Protocol = object

FORMAT_NAME = "gamepak-patch"
FORMAT_VERSION = 1
MANIFEST_NAME = "patch.json"
MAX_MANIFEST_BYTES = 16 << 20
# A member a patch may create: larger ones are refused (the game formats hold far smaller).
MAX_MEMBER_BYTES = 4 << 30
# Deltas keep the base member in memory: larger members are stored whole.
MAX_DELTA_BASE_BYTES = 64 << 20
# What a blob or an output streamed to a file is read and written by.
BLOB_CHUNK = 1 << 20
MAX_OPERATIONS = 1_000_000
OPERATIONS = ("add", "remove", "replace", "rename")
METADATA_FIELDS = ("name", "author", "description", "patch_version", "game")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_BLOB = re.compile(r"blobs/[0-9]{1,9}")
# A replace's blob: the new bytes, a zstd delta against the old, or an RFG zone's object changes.
ZONE_CHANGES = "zone-changes"
ENCODINGS = ("raw", "zstd-delta", ZONE_CHANGES)


class PatchError(GamepakError):
    """A patch file that cannot be read, or a patch that does not fit its target."""


def load_json(text: bytes, where: str) -> Any:
    """JSON from a mod or patch file (patch.json, .delete.json, .options.json,
    .mod.hashes.json), or PatchError naming `where`: not JSON, not UTF-8, or nested deeper than
    the one limit of every JSON input (`core.json_input`)."""
    from ...core.json_input import load_json as load

    return load(text, where, PatchError)


class BlobSource(Protocol):
    """Where a patch's blobs come from: the patch file's zip, a mod's files, or bytes computed
    when a mod was read. `read_blob` returns exactly `size` bytes or raises PatchError, and reads
    no more than `size` + 1 to find out; `blob_chunks` gives the same bytes in chunks (of at most
    `BLOB_CHUNK` bytes where they are not in memory already), raising instead of ending early or
    late."""

    def read_blob(self, key: str, size: int) -> bytes: ...

    def blob_chunks(self, key: str, size: int) -> Iterator[bytes]: ...

    def close(self) -> None: ...


class ZipBlobs:
    """A patch file's blobs: its zip's `blobs/N` entries."""

    def __init__(self, path: str, zip_file: Any) -> None:
        self.path = path
        self.zip = zip_file

    def stored_size(self, key: str) -> int:
        return int(self.zip.getinfo(key).file_size)

    def read_blob(self, key: str, size: int) -> bytes:
        try:
            info = self.zip.getinfo(key)
            if info.file_size != size:
                raise PatchError(f"{self.path}: {key} is not the size the zip declares")
            with self.zip.open(info) as stream:
                data: bytes = stream.read(size + 1)
        except zip_read_errors(KeyError) as exc:
            raise PatchError(f"{self.path}: {key} cannot be read ({exc})") from None
        if len(data) != size:
            raise PatchError(f"{self.path}: {key} is not the size the zip declares")
        return data

    def blob_chunks(self, key: str, size: int) -> Iterator[bytes]:
        total = 0
        try:
            info = self.zip.getinfo(key)
            if info.file_size != size:
                raise PatchError(f"{self.path}: {key} is not the size the zip declares")
            # zipfile checks the entry's CRC when its end is read.
            with self.zip.open(info) as stream:
                while chunk := stream.read(min(BLOB_CHUNK, size + 1 - total)):
                    total += len(chunk)
                    if total > size:
                        break
                    yield chunk
        except zip_read_errors(KeyError) as exc:
            raise PatchError(f"{self.path}: {key} cannot be read ({exc})") from None
        if total != size:
            raise PatchError(f"{self.path}: {key} is not the size the zip declares")

    def close(self) -> None:
        self.zip.close()


class MixedBlobs:
    """A mod's blobs: bytes computed when it was read (an edited table), or a key in another
    blob source (the mod's files, a scratch folder of decoded deltas). Closing it closes
    `owned`."""

    def __init__(self, held: dict[str, bytes | tuple[BlobSource, str]], owned: list[BlobSource]) -> None:
        self.held = held
        self.owned = owned

    def read_blob(self, key: str, size: int) -> bytes:
        value = self.held[key]
        if isinstance(value, bytes):
            if len(value) != size:
                raise PatchError(f"{key}: {len(value)} bytes held, {size} declared")
            return value
        source, inner = value
        return source.read_blob(inner, size)

    def blob_chunks(self, key: str, size: int) -> Iterator[bytes]:
        value = self.held[key]
        if isinstance(value, bytes):
            yield self.read_blob(key, size)
            return
        source, inner = value
        yield from source.blob_chunks(inner, size)

    def close(self) -> None:
        for source in self.owned:
            source.close()
        self.owned = []


def check_relative(path: str, where: str) -> str:
    """`path` with forward slashes, or PatchError when it would climb out or is absolute."""
    from ...core.names import safe_parts

    if not isinstance(path, str):
        raise PatchError(f"{where}: a path must be a string")
    try:
        return "/".join(safe_parts(path))
    except UnsafePathError as exc:
        raise PatchError(f"{where}: {exc}") from None


class Operation:
    """One change: add, remove, replace or rename a member (or a plain file)."""

    __slots__ = (
        "base_sha256",
        "blob",
        "encoding",
        "file",
        "member",
        "new_member",
        "op",
        "position",
        "size",
        "target_sha256",
    )

    def __init__(
        self,
        op: str,
        file: str,
        member: str | None,
        *,
        new_member: str | None = None,
        base_sha256: str | None = None,
        target_sha256: str | None = None,
        size: int | None = None,
        blob: str | None = None,
        encoding: str | None = None,
        position: int | None = None,
    ) -> None:
        self.op = op
        self.position = position  # add only: the index in its pack (else after the others)
        self.file = file
        self.member = member
        self.new_member = new_member
        self.base_sha256 = base_sha256
        self.target_sha256 = target_sha256
        self.size = size
        self.blob = blob
        self.encoding = encoding

    @property
    def where(self) -> str:
        """The file and member for messages: `data/table.vpp_pc: x.xtbl`."""
        if self.member is None:
            return self.file or "."
        return f"{self.file}: {self.member}" if self.file else self.member

    @property
    def key(self) -> tuple[str, str | None]:
        return (self.file, self.member)

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__ if getattr(self, name) is not None} | {
            "file": self.file,
            "member": self.member,
        }

    def describe(self) -> str:
        if self.op == "rename":
            return f"rename {self.where} -> {self.new_member}"
        if self.op == "remove":
            return f"remove {self.where}"
        how = f", {self.encoding}" if self.encoding else ""
        return f"{self.op} {self.where} ({self.size} bytes{how})"

    @classmethod
    def from_dict(cls, raw: object, where: str) -> Operation:
        if not isinstance(raw, dict):
            raise PatchError(f"{where}: not an object")
        op = raw.get("op")
        if op not in OPERATIONS:
            raise PatchError(f"{where}: unknown operation {op!r}")
        file = raw.get("file", "")
        file = "" if file == "" else check_relative(file, f"{where}: file")
        member = raw.get("member")
        if member is not None:
            member = check_relative(_not_a_folder(member, f"{where}: member"), f"{where}: member")
        if member is None and file == "":
            raise PatchError(f"{where}: names neither a file nor a member")
        new_member = raw.get("new_member")
        if op == "rename":
            if new_member is None:
                raise PatchError(f"{where}: a rename needs new_member")
            new_member = check_relative(_not_a_folder(new_member, f"{where}: new_member"), f"{where}: new_member")
        else:
            new_member = None  # only a rename reads it
        hashes = {}
        for field in ("base_sha256", "target_sha256"):
            value = raw.get(field)
            if value is not None and not (isinstance(value, str) and _SHA256.fullmatch(value)):
                raise PatchError(f"{where}: {field} is not a sha256 in hex")
            hashes[field] = value
        if op in ("remove", "replace", "rename") and hashes["base_sha256"] is None:
            raise PatchError(f"{where}: a {op} needs base_sha256")
        if op in ("add", "replace", "rename") and hashes["target_sha256"] is None:
            raise PatchError(f"{where}: an {op} needs target_sha256")
        size = raw.get("size")
        blob = raw.get("blob")
        encoding = raw.get("encoding")
        if op in ("add", "replace"):
            if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= MAX_MEMBER_BYTES:
                raise PatchError(f"{where}: size {size!r} is not between 0 and {MAX_MEMBER_BYTES}")
            if not (isinstance(blob, str) and _BLOB.fullmatch(blob)):
                raise PatchError(f"{where}: blob {blob!r} is not blobs/N")
            if encoding not in ENCODINGS or (op == "add" and encoding != "raw"):
                raise PatchError(f"{where}: unknown encoding {encoding!r}")
        else:
            size = blob = encoding = None
        position = raw.get("position") if op == "add" else None
        if position is not None and (not isinstance(position, int) or isinstance(position, bool) or position < 0):
            raise PatchError(f"{where}: position {position!r} is not an index")
        return cls(
            op,
            file,
            member,
            new_member=new_member,
            size=size,
            blob=blob,
            encoding=encoding,
            position=position,
            **hashes,
        )


def _not_a_folder(name: Any, where: str) -> Any:
    """A member name ending in a separator names a folder, which no pack holds as a member
    (`gamepak add --name dir/` refuses it too); stored, it would become `dir`."""
    if isinstance(name, str) and name.endswith(("/", "\\")):
        raise PatchError(f"{where}: {name!r} ends with a separator: a folder, not a member")
    return name


class Patch:
    """A patch file opened for reading: its metadata, its operations, and their bytes.

    >>> with gamepak.patch.Patch.open("fix.gpatch") as patch:
    ...     print(patch.name, len(patch.operations))
    """

    def __init__(
        self, path: str, manifest: dict[str, Any], operations: list[Operation], blobs: BlobSource | None
    ) -> None:
        self.path = path
        self.manifest = manifest
        self.operations = operations
        self.blobs = blobs
        self._zip = getattr(blobs, "zip", None)
        self.notes: list[str] = []  # what reading it found worth saying (files a mod ignores ...)
        # Stacked modinfo.xml edits (`install.open_patches`), by the operation's index in
        # `operations`: the later patch whose change of the same member carries this
        # operation's edits too; and, on that later operation, the member's bytes as the earlier
        # mods' edits left them. The plan copies them onto its steps.
        self.carried_by: dict[int, str] = {}
        self.stacked_start: dict[int, bytes] = {}

    @property
    def name(self) -> str:
        return str(self.manifest.get("name") or os.path.basename(self.path))

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Patch:
        """Read and check a patch file's manifest (the blobs are read when applied)."""
        import zipfile

        path = os.fspath(path)
        try:
            zip_file = zipfile.ZipFile(path)
        except FileNotFoundError:
            raise PatchError(f"{path}: no such file") from None
        except zip_read_errors() as exc:
            raise PatchError(f"{path}: not a gamepak patch ({exc})") from None
        try:
            try:
                info = zip_file.getinfo(MANIFEST_NAME)
            except KeyError:
                raise PatchError(f"{path}: not a gamepak patch (no {MANIFEST_NAME})") from None
            if info.file_size > MAX_MANIFEST_BYTES:
                raise PatchError(
                    f"{path}: {MANIFEST_NAME} declares {info.file_size} bytes (limit {MAX_MANIFEST_BYTES})"
                )
            try:
                with zip_file.open(info) as stream:
                    text = stream.read(MAX_MANIFEST_BYTES + 1)
            except zip_read_errors() as exc:
                raise PatchError(f"{path}: {MANIFEST_NAME} cannot be read ({exc})") from None
            if len(text) > MAX_MANIFEST_BYTES:
                raise PatchError(f"{path}: {MANIFEST_NAME} inflates past {MAX_MANIFEST_BYTES} bytes")
            manifest = load_json(text, f"{path}: {MANIFEST_NAME}")
            if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
                raise PatchError(f"{path}: {MANIFEST_NAME} is not a gamepak patch manifest")
            check_metadata(manifest, f"{path}: {MANIFEST_NAME}")
            version = manifest.get("version")
            if version != FORMAT_VERSION:
                raise PatchError(
                    f"{path}: patch format version {version!r}; this gamepak reads version {FORMAT_VERSION}"
                )
            raw_operations = manifest.get("operations")
            if not isinstance(raw_operations, list) or len(raw_operations) > MAX_OPERATIONS:
                raise PatchError(f"{path}: operations must be a list of at most {MAX_OPERATIONS}")
            operations = [
                Operation.from_dict(raw, f"{path}: operation {number}") for number, raw in enumerate(raw_operations)
            ]
            for number, operation in enumerate(operations):
                if operation.blob is not None:
                    try:
                        blob_info = zip_file.getinfo(operation.blob)
                    except KeyError:
                        raise PatchError(f"{path}: operation {number}: {operation.blob} is missing") from None
                    assert operation.size is not None
                    # A zstd frame is never much larger than what it decodes to (its worst case:
                    # the bytes stored raw, plus a few bytes per 128 KiB block and the header).
                    limit = blob_limit(operation)
                    if blob_info.file_size > limit:
                        raise PatchError(
                            f"{path}: operation {number}: {operation.blob} declares {blob_info.file_size} "
                            f"bytes, more than the {limit} the member may hold"
                        )
        except BaseException:
            zip_file.close()
            raise
        return cls(path, manifest, operations, ZipBlobs(path, zip_file))

    def _blob_size(self, operation: Operation) -> int:
        assert operation.blob is not None
        if isinstance(self.blobs, ZipBlobs):
            try:
                return self.blobs.stored_size(operation.blob)
            except KeyError:
                raise PatchError(f"{self.path}: {operation.blob} is missing") from None
        return operation.size or 0

    def blob(self, operation: Operation) -> bytes:
        """An operation's blob as stored (at most its declared size is read)."""
        assert operation.blob is not None and self.blobs is not None
        return self.blobs.read_blob(operation.blob, self._blob_size(operation))

    def blob_chunks(self, operation: Operation) -> Iterator[bytes]:
        """`blob`, in chunks."""
        assert operation.blob is not None and self.blobs is not None
        return self.blobs.blob_chunks(operation.blob, self._blob_size(operation))

    def target_chunks(self, operation: Operation, base: bytes | None) -> Iterator[bytes]:
        """`target_bytes` in chunks, never held whole (but in zstd's window: `delta.delta_chunks`):
        the size and sha256 are checked as the chunks pass, and a mismatch raises PatchError after
        the last one instead of ending. Write them somewhere private; use them only once the
        iteration has ended."""
        import hashlib

        size = operation.size or 0
        if operation.encoding == ZONE_CHANGES:
            # A zone is small and its changes are replayed on the whole of it.
            yield self.target_bytes(operation, base)
            return
        if operation.encoding == "zstd-delta":
            from .delta import delta_chunks

            if base is None:
                raise PatchError(f"{self.path}: {operation.where}: a delta needs the base member")
            chunks = delta_chunks(base, self.blob_chunks(operation), size, BLOB_CHUNK)
        else:
            chunks = self.blob_chunks(operation)
        digest = hashlib.sha256()
        total = 0
        try:
            for chunk in chunks:
                total += len(chunk)
                if total > size:
                    break
                digest.update(chunk)
                yield chunk
        except PatchError:
            raise
        except GamepakError as exc:  # the delta's
            raise PatchError(f"{self.path}: {operation.where}: {exc}") from None
        finally:
            close = getattr(chunks, "close", None)  # generators: the blob's file or zip entry,
            if close is not None:  # closed now rather than when collected
                close()
        if total != size or digest.hexdigest() != operation.target_sha256:
            raise PatchError(f"{self.path}: {operation.where}: the patch's bytes do not match its target sha256")

    def target_bytes(self, operation: Operation, base: bytes | None) -> bytes:
        """The bytes an add or replace writes (a delta is applied to `base`), checked against
        the operation's size and sha256."""
        return self.decode(operation, self.blob(operation), base)

    def decode(self, operation: Operation, blob: bytes, base: bytes | None) -> bytes:
        """`target_bytes` from the operation's `blob` as read: reads no file, so it may run in
        another thread."""
        import hashlib

        if operation.encoding == ZONE_CHANGES:
            if base is None:
                raise PatchError(f"{self.path}: {operation.where}: zone changes need the member they change")
            data = self.replay_zone(operation, blob, base)
            if hashlib.sha256(base).hexdigest() != operation.base_sha256:
                return data  # another version of the zone: its own result, no target to match
        elif operation.encoding == "zstd-delta":
            from .delta import apply_delta

            if base is None:
                raise PatchError(f"{self.path}: {operation.where}: a delta needs the base member")
            try:
                data = apply_delta(base, blob, operation.size or 0)
            except GamepakError as exc:
                raise PatchError(f"{self.path}: {operation.where}: {exc}") from None
        else:
            data = blob
        if len(data) != operation.size or hashlib.sha256(data).hexdigest() != operation.target_sha256:
            raise PatchError(f"{self.path}: {operation.where}: the patch's bytes do not match its target sha256")
        return data

    def zone_changes(self, operation: Operation) -> list[Any]:
        """A "zone-changes" operation's changes (`formats.rfg.zone.diff.ZoneChange`), read from its
        blob; PatchError naming the patch and member for a blob that is not such changes."""
        from ...formats.rfg.zone.diff import load_changes

        try:
            return load_changes(self.blob(operation), f"{self.path}: {operation.where}")
        except PatchError:
            raise
        except GamepakError as exc:
            raise PatchError(str(exc)) from None

    def replay_zone(self, operation: Operation, blob: bytes, base: bytes) -> bytes:
        """`base` (a version of the zone) with the operation's zone changes (`blob`) replayed;
        PatchError naming the object and field of each that does not fit."""
        from ...formats.rfg.zone.diff import load_changes, replay

        where = f"{self.path}: {operation.where}"
        try:
            return replay(base, load_changes(blob, where), where)
        except PatchError:
            raise
        except GamepakError as exc:
            raise PatchError(str(exc)) from None

    def info(self) -> dict[str, Any]:
        """What `gamepak patch info --json` prints."""
        document: dict[str, Any] = {"path": self.path, "version": self.manifest.get("version")}
        for field in METADATA_FIELDS:
            document[field] = self.manifest.get(field)
        links = self.manifest.get("links")
        document["links"] = links if isinstance(links, list) else []
        document["operations"] = [self._operation_info(operation) for operation in self.operations]
        return document

    def _operation_info(self, operation: Operation) -> dict[str, Any]:
        """An operation as `info` shows it: its fields, and a zone's changes one line each
        (`"0x78800002: property op changed"`)."""
        document = operation.to_dict()
        if operation.encoding == ZONE_CHANGES:
            document["zone_changes"] = [change.describe() for change in self.zone_changes(operation)]
        return document

    def close(self) -> None:
        if self.blobs is not None:
            self.blobs.close()

    def __enter__(self) -> Patch:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Patch {self.path!r} {len(self.operations)} operations>"


def delta_blob_limit(size: int) -> int:
    """The most bytes a zstd delta blob decoding to `size` bytes may hold."""
    return size + (size >> 7) + (1 << 16)


def zone_changes_limit(size: int) -> int:
    """The most bytes a "zone-changes" blob for a zone of `size` bytes may hold: each changed
    record in hex twice (before and after) and a few dozen bytes of JSON per change. `make`
    stores a larger one as a delta instead."""
    return 4 * size + (1 << 16)


def blob_limit(operation: Operation) -> int:
    """The most bytes an operation's blob may hold, by its encoding."""
    size = operation.size or 0
    if operation.encoding == "raw":
        return size
    if operation.encoding == ZONE_CHANGES:
        return zone_changes_limit(size)
    return delta_blob_limit(size)


def check_metadata(manifest: dict[str, Any], where: str) -> None:
    """The manifest's metadata, one rule for info, check and apply: each field a string or
    absent, `links` a list of strings."""
    for field in METADATA_FIELDS:
        value = manifest.get(field)
        if value is not None and not isinstance(value, str):
            raise PatchError(f"{where}: {field} must be a string, not {type(value).__name__}")
    links = manifest.get("links")
    if links is not None and not (isinstance(links, list) and all(isinstance(link, str) for link in links)):
        raise PatchError(f"{where}: links must be a list of strings")


def zip_read_errors(*more: type[Exception]) -> tuple[type[Exception], ...]:
    """What zipfile raises on a damaged zip or entry (`formats.zip_reader.read_errors`, imported
    only when an exception is being matched), and `more`."""
    from ...formats.zip_reader import read_errors

    return (*read_errors(), *more)
