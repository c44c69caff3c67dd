"""Turning one file into catalog rows (no Dask here: this runs inside a worker, one unit of work at
a time): its archives row(s), its members (nested packs included, hashed and typed) and its
errors. Finding the files is discovery.py's; what a file or member is, detect.py's.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core.archive import Archive, Entry, Problem, RawRange
from ..core.opening import Detection
from ..core.portable import pread
from ..core.registry import get_format
from ..core.source import Source
from ..errors import GamepakError
from ..formats.rfg.peg.sources import is_cpu_name, partner_name
from .detect import choose, nested_signature
from .discovery import FileRef, open_file
from .hashing import Hasher, HashingSource, RangeHashes, file_sha256, hasher_factory
from .kinds import member_type

# Bytes of a member kept to guess its type and whether it is a nested pack.
HEAD_BYTES = 4096
# A model is read whole to be checked; larger files are reported rather than loaded.
MAX_MODEL_BYTES = 256 << 20
# After this many members in a row fail to read, the rest of the archive is not retried.
MAX_CONSECUTIVE_FAILURES = 3


def raw_name(name: str) -> bytes | None:
    """The stored bytes of a member name that is not UTF-8 text (the catalog's `raw_name`), else None."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape")
    return None


@dataclass(frozen=True)
class ScanOptions:
    """What the scan computes."""

    hash_algorithm: str = "sha256"
    nested: bool = True
    guess: str = "strict"
    verify: bool = True


class RowSink:
    """Where rows go: per table, anything with `add(row)` and `extend(count, columns, constants)`
    (schema.TableSink); no `textures` sink: no textures rows."""

    def __init__(
        self,
        members: Any,
        archives: Any,
        errors: Any,
        textures: Any = None,
        strings: Any = None,
        models: Any = None,
    ) -> None:
        self.members = members
        self.archives = archives
        self.errors = errors
        self.textures = textures
        self.strings = strings
        self.models = models


class Stats:
    """Counts a unit of work reports back (the only thing that returns to the client)."""

    def __init__(self) -> None:
        self.archives = 0
        self.members = 0
        self.errors = 0
        self.member_bytes = 0
        self.skipped = 0
        self.textures = 0
        self.strings = 0
        self.models = 0

    def to_dict(self) -> dict[str, int]:
        return dict(vars(self))


class _MemberHashes:
    """What hashing one pack's members found: each member's digest and type (None until it is
    read, and for one that cannot be), the nested packs among them, where the members that
    are plain byte ranges lie (hashed together in one pass), and the bytes of the decoded
    members at the positions in `keep` (peg CPU files: `kept`)."""

    def __init__(self, entries: list[Entry], label: str, keep: set[int] | frozenset[int] = frozenset()) -> None:
        self.entries = entries
        self.label = label
        self.keep = keep
        self.kept: dict[int, bytes] = {}
        self.digests: list[str | None] = [None] * len(entries)
        self.kinds: list[str | None] = [None] * len(entries)
        self.nested: dict[int, str] = {}
        self.plain: list[int] = []
        self.plain_offsets: list[int] = []
        self.plain_sizes: list[int] = []

    def describe(self, position: int, head: bytes) -> str:
        """The type of member `position` from its first bytes (noting a nested pack)."""
        entry = self.entries[position]
        inner = nested_signature(head, entry.size, f"{self.label}/{entry.name}")
        if inner is None:
            return member_type(entry.name, head)
        self.nested[position] = inner
        return f"archive/{inner}"


# -- rows ---------------------------------------------------------------------------------------
def error_row(
    ref: FileRef, stage: str, message: str, nested_path: str | None = None, member: str | None = None
) -> dict[str, Any]:
    return {
        "path": ref.path,
        "nested_path": nested_path,
        "member": member,
        "stage": stage,
        "message": message,
        "size": ref.size,
        "mtime": ref.mtime_ns,
    }


def archive_row(ref: FileRef, nested_path: str, depth: int, **fields: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "path": ref.path,
        "nested_path": nested_path,
        "depth": depth,
        "size": ref.size,
        "mtime": ref.mtime_ns,
        "status": "ok",
        "error_count": 0,
        "warning_count": 0,
    }
    row.update(fields)
    return row


def problems_fields(problems: list[Any]) -> dict[str, Any]:
    """The archives columns that `Archive.check()`'s findings fill."""
    errors = sum(1 for p in problems if p.severity == "error")
    warnings = len(problems) - errors
    return {
        "problems": [p.to_dict() for p in problems],
        "error_count": errors,
        "warning_count": warnings,
        "status": "errors" if errors else "warnings" if warnings else "ok",
    }


def describe_error(exc: BaseException) -> str:
    """One line for an errors row: gamepak's own messages as they are, others with their type."""
    if isinstance(exc, GamepakError):
        return str(exc)
    if isinstance(exc, OSError):
        return f"{exc.strerror or exc}"
    return f"{type(exc).__name__}: {exc}"


class ArchiveScanner:
    """Rows for one file on disk: its archives row(s), its members (nested packs included) and
    any errors. Holds at most one member's head in memory; rows go to the sinks as made."""

    def __init__(self, ref: FileRef, options: ScanOptions, sinks: RowSink, stats: Stats) -> None:
        self.ref = ref
        self.options = options
        self.sinks = sinks
        self.stats = stats
        self.new_hasher = hasher_factory(options.hash_algorithm)

    def error(
        self, stage: str, exc: BaseException | str, nested_path: str | None = None, member: str | None = None
    ) -> None:
        message = exc if isinstance(exc, str) else describe_error(exc)
        self.sinks.errors.add(error_row(self.ref, stage, message, nested_path, member))
        self.stats.errors += 1

    # -- whole files ----------------------------------------------------------------------
    def scan(self) -> None:
        """Catalog the whole file (a small one: one unit of work)."""
        ref = self.ref
        root_name = ref.relative
        try:
            handle = open_file(ref)
        except (OSError, ValueError) as exc:
            self.error("open", exc, root_name)
            self._unreadable(root_name, None, None)
            return
        with handle:
            if self.sinks.textures is not None and is_cpu_name(ref.path) and not ref.url:
                self._loose_peg(handle)
                return
            try:
                chosen = choose(handle, ref.path, self.options.guess)
            except GamepakError as exc:
                self.error("detect", exc, root_name)
                self._unreadable(root_name, None, None)
                return
            except (OSError, ValueError) as exc:
                self.error("read", exc, root_name)
                self._unreadable(root_name, None, None)
                return
            if chosen is None:
                self.stats.skipped += 1
                self._loose_model(handle, "mdl")  # a Quake model is no archive, but is a model
                return
            detection, how = chosen
            spec = get_format(detection.format)
            if spec.kind != "model":
                try:
                    archive = spec.reader_class()(handle, name=ref.path)
                except Exception as exc:
                    self.error("open", exc, root_name)
                    self._unreadable(root_name, detection, how, self._handle_sha256(handle, root_name))
                    return
                with archive:
                    self.catalog_archive(archive, root_name, 0, None, detection, how, hash_file=True)
                self._loose_model(handle, "bsp")  # a map is a table of lumps and a model
                return
            sha = self._handle_sha256(handle, root_name)
            if sha is None:
                self._unreadable(root_name, detection, how)
                return
            self._model(handle, detection, how, sha)

    def _loose_peg(self, handle: Any) -> None:
        """A peg's CPU file lying in a folder (`textures/crate.cpeg_pc` beside its `.gpeg_pc`):
        its textures rows (archive_path: the CPU file; nested_path: its folder, `.` at the top)
        and an archives row (format `peg`, kind `texture`: what --resume counts as done). The
        GPU file holds only pixels and is not read; a CPU file without one is an errors row."""
        from .textures import MAX_CPU_BYTES, loose_partner, loose_texture_columns

        ref = self.ref
        folder, peg = os.path.split(ref.relative)
        nested_path = folder or "."
        fields: dict[str, Any] = {"format": "peg", "kind": "texture", "detected_by": "extension"}
        fields["sha256"] = self._handle_sha256(handle, ref.relative)
        errors_before = self.stats.errors

        def error(problem: BaseException | str, member: str) -> None:
            self.error("textures", problem, ref.relative, member or None)

        count = 0
        if loose_partner(ref.path) is None:
            error(f"no GPU file beside it ({partner_name(peg)}): not a peg pair", peg)
        elif ref.size > MAX_CPU_BYTES:
            error(f"{ref.size} bytes is too large for a peg CPU file (at most {MAX_CPU_BYTES} are read)", peg)
        else:
            try:
                cpu = read_at(handle, ref.size, 0)
            except (OSError, ValueError) as exc:
                error(exc, peg)
            else:
                if cpu[:4] == b"GEKV":
                    count, columns = loose_texture_columns(cpu, peg, ref.relative, error)
                else:
                    error("not a PC peg (no GEKV signature at offset 0)", peg)
                if count:
                    constants = {"archive_path": ref.path, "nested_path": nested_path}
                    self.sinks.textures.extend(count, columns, constants)
                    self.stats.textures += count
        failed = self.stats.errors - errors_before
        fields.update(
            header=json.dumps({"textures": count}),
            status="errors" if failed else "ok",
            error_count=failed,
        )
        self.sinks.archives.add(archive_row(ref, ref.relative, 0, **fields))
        self.stats.archives += 1

    def _handle_sha256(self, handle: Any, nested_path: str) -> str | None:
        size = self.ref.size
        return self._digest_or_error(
            lambda: file_sha256(lambda count, offset: read_at(handle, count, offset), size), nested_path
        )

    def _unreadable(
        self, nested_path: str, detection: Detection | None, how: str | None, sha: str | None = None
    ) -> None:
        self.sinks.archives.add(
            archive_row(
                self.ref,
                nested_path,
                0,
                sha256=sha,
                format=detection.format if detection else None,
                kind=get_format(detection.format).kind if detection else None,
                detected_by=how,
                confidence=detection.confidence if detection else None,
                status="unreadable",
                error_count=1,
            )
        )
        self.stats.archives += 1

    def _model(self, handle: Any, detection: Detection, how: str, sha: str) -> None:
        from ..models import loads

        ref = self.ref
        fields: dict[str, Any] = {
            "sha256": sha,
            "format": detection.format,
            "kind": "model",
            "detected_by": how,
            "confidence": detection.confidence,
        }
        if ref.size > MAX_MODEL_BYTES:
            self.error("open", f"model of {ref.size} bytes is larger than the {MAX_MODEL_BYTES} bytes checked")
            self._unreadable(ref.relative, detection, how, sha)
            return
        try:
            data = read_at(handle, ref.size, 0)
            mesh = loads(data, detection.format, path=ref.path)
        except Exception as exc:
            self.error("open", exc, ref.relative)
            self._unreadable(ref.relative, detection, how, sha)
            return
        header = {"frames": len(mesh.frames), "vertices": len(mesh.positions), "faces": mesh.face_count}
        fields["header"] = json.dumps(header)
        if self.sinks.models is not None and detection.format == "joe":
            from .models import file_model_columns

            try:
                self._add_models(*file_model_columns(ref.path, ref.relative, "joe", data), ".")
            except GamepakError as exc:
                self.error("models", exc, ref.relative)
        fields["warning_count"] = len(mesh.issues)
        fields["status"] = "warnings" if mesh.issues else "ok"
        fields["problems"] = [
            {"severity": "warning", "message": issue, "offset": None, "member": None} for issue in mesh.issues
        ]
        self.sinks.archives.add(archive_row(ref, ref.relative, 0, **fields))
        self.stats.archives += 1

    # -- archives ---------------------------------------------------------------------------
    def archive_fields(self, archive: Archive) -> dict[str, Any]:
        """The archives columns that describe the pack itself (header, members, check)."""
        fields: dict[str, Any] = {"format": archive.format_name, "kind": get_format(archive.format_name).kind}
        try:
            entries = archive.infolist()
            fields["member_count"] = len(entries)
            fields["total_size"] = sum(entry.size for entry in entries)
            fields["header"] = json.dumps(archive.header_fields(), default=str, sort_keys=True)
        except Exception as exc:
            fields.update(status="unreadable", error_count=1, problems=[Problem(describe_error(exc)).to_dict()])
            return fields
        if self.options.verify:
            fields.update(problems_fields(archive.check()))
        else:
            fields["status"] = "unchecked"
        return fields

    def catalog_archive(
        self,
        archive: Archive,
        nested_path: str,
        depth: int,
        sha: str | None,
        detection: Detection | None,
        how: str | None,
        size: int | None = None,
        hash_file: bool = False,
    ) -> None:
        """The archives row and every member row of an open archive (and of its nested packs).
        With `hash_file` (a file on disk), its sha256 is computed in the same pass as the members."""
        fields = self.archive_fields(archive)
        if fields["status"] == "unreadable":
            if hash_file:
                sha = self._file_sha256(archive, nested_path)
            self._archive_row(nested_path, depth, size, fields, sha, detection, how)
            self.error("list", fields["problems"][0]["message"], nested_path)
            return
        # Members of nested packs have no file of their own: their archive_sha256 is null.
        outer_sha = sha if depth == 0 else None
        file_sha = self.catalog_members(archive, archive.infolist(), nested_path, depth, outer_sha, hash_file=hash_file)
        if self.sinks.strings is not None and fields["format"] in ("rfglocatext", "j2me-sized"):
            self._file_string_rows(archive, nested_path)
        self._archive_row(nested_path, depth, size, fields, file_sha if hash_file else sha, detection, how)

    def _archive_row(
        self,
        nested_path: str,
        depth: int,
        size: int | None,
        fields: dict[str, Any],
        sha: str | None,
        detection: Detection | None,
        how: str | None,
    ) -> None:
        fields.update(sha256=sha, detected_by=how, confidence=detection.confidence if detection else None)
        row = archive_row(self.ref, nested_path, depth, **fields)
        if size is not None:
            row["size"] = size
        self.sinks.archives.add(row)
        self.stats.archives += 1

    def _digest_or_error(self, compute: Callable[[], str], nested_path: str) -> str | None:
        """`compute()` (a whole file's digest), or None and a `hash` errors row when the file
        cannot be read to its end."""
        try:
            return compute()
        except (OSError, GamepakError) as exc:
            self.error("hash", exc, nested_path)
            return None

    def _file_sha256(self, archive: Archive, nested_path: str) -> str | None:
        """The sha256 of the whole file under `archive` (when its members could not be listed)."""
        source = archive._source
        return self._digest_or_error(lambda: file_sha256(source.pread, source.size), nested_path)

    def catalog_members(
        self,
        archive: Archive,
        entries: list[Entry],
        nested_path: str,
        depth: int,
        archive_sha: str | None,
        hash_file: bool = False,
    ) -> str | None:
        """Member rows for `entries` of `archive` (then the rows of the nested packs among them).
        Members stored as plain byte ranges are hashed in one front-to-back pass over the pack
        (`RangeHashes`), decoded ones (compressed) as the format decodes them. With `hash_file`
        the file's sha256 comes from the same reads (returned, and in `archive_sha256`; else
        `archive_sha` is): the plain-range pass reads the whole file, or, when the format decoded
        members, their stored bytes fed the file's hash as it read them (`HashingSource`)."""
        pegs: list[int] = []
        if self.sinks.textures is not None:
            from .textures import cpu_positions, readable

            pegs = cpu_positions(entries)
            found = _MemberHashes(entries, archive.filename, readable(entries, pegs))
        else:
            found = _MemberHashes(entries, archive.filename)
        own_source = archive._source
        tee = HashingSource(own_source, hashlib.sha256()) if hash_file else None
        if tee is not None:
            archive._source = tee
        try:
            self._hash_decoded_members(archive, entries, nested_path, found)
        finally:
            archive._source = own_source
        if tee is not None and tee.frontier:
            # Something was decoded: the tee has hashed the file so far; it hashes the rest.
            file_sha = self._digest_or_error(tee.finish, nested_path)
            self._hash_plain_members(archive, found, nested_path, None)
        else:
            file_hasher = hashlib.sha256() if hash_file else None
            done = self._hash_plain_members(archive, found, nested_path, file_hasher)
            file_sha = file_hasher.hexdigest() if file_hasher is not None and done else None
        self._member_rows(archive, entries, nested_path, depth, file_sha if hash_file else archive_sha, found)
        if self.sinks.textures is not None:
            self._texture_rows(archive, entries, pegs, nested_path, found.kept)
        if self.sinks.strings is not None:
            self._string_rows(archive, entries, nested_path)
        if self.sinks.models is not None:
            self._model_rows(archive, entries, nested_path)
        if self.options.nested:
            for position, format_name in found.nested.items():
                self._descend(archive, entries[position], format_name, nested_path, depth, found.digests[position])
        return file_sha

    def _hash_decoded_members(
        self, archive: Archive, entries: list[Entry], nested_path: str, found: _MemberHashes
    ) -> None:
        """Hash the members the format decodes; note where the plain ones lie (hashed later,
        in one pass). After MAX_CONSECUTIVE_FAILURES in a row, the rest is not tried."""
        count = len(entries)
        position = 0
        failures = 0
        while position < count:
            data_iterator = archive._member_data(entries[position:])
            while position < count:
                entry = entries[position]
                try:
                    _, data = next(data_iterator)
                    if isinstance(data, RawRange):
                        found.plain.append(position)
                        found.plain_offsets.append(data.offset)
                        found.plain_sizes.append(data.size)
                    else:
                        self._hash_decoded(archive, entry, data, position, found)
                    failures = 0
                except StopIteration:
                    break
                except Exception as exc:
                    self.error("hash", exc, nested_path, entry.name)
                    position += 1
                    failures += 1
                    if failures >= MAX_CONSECUTIVE_FAILURES and position < count:
                        self.error(
                            "hash",
                            f"{count - position} further members not read after {failures} failures in a row",
                            nested_path,
                        )
                        position = count
                    break  # the data iterator is finished after an error: start a new one
                position += 1

    def _hash_plain_members(
        self, archive: Archive, found: _MemberHashes, nested_path: str, file_hasher: Hasher | None
    ) -> bool:
        """Hash the plain members (and feed the whole file to `file_hasher`) in one pass;
        False when the file could not be read to its end."""
        plain, sizes = found.plain, found.plain_sizes
        if not plain and file_hasher is None:
            return True
        source = archive._source
        ranges = RangeHashes(
            found.plain_offsets,
            sizes,
            source.size,
            self.new_hasher,
            lambda index, head: found.describe(plain[index], head),
            HEAD_BYTES,
            file_hasher,
        )
        done = True
        try:
            ranges.run(_reader_into(source))
        except (OSError, GamepakError) as exc:
            self.error("hash", exc, nested_path)
            done = False
        for index, position in enumerate(plain):
            found.kinds[position] = ranges.described[index]
            found.digests[position] = ranges.digests[index]
            if ranges.described[index] is not None:
                self.stats.member_bytes += sizes[index]
        return done

    def _hash_decoded(self, archive: Archive, entry: Entry, data: Any, position: int, found: _MemberHashes) -> None:
        hasher: Hasher | None = self.new_hasher() if self.new_hasher is not None else None
        head = b""
        total = 0
        kept: list[bytes] | None = [] if position in found.keep else None
        for chunk in data:
            if len(head) < HEAD_BYTES:
                head += bytes(chunk[: HEAD_BYTES - len(head)])
            if hasher is not None:
                hasher.update(chunk)
            if kept is not None:
                kept.append(bytes(chunk))
            total += len(chunk)
        if total != entry.size:
            raise archive.corrupt(
                f"member data has {total} bytes, its entry says {entry.size}", entry.offset, entry.name
            )
        self.stats.member_bytes += total
        found.digests[position] = hasher.hexdigest() if hasher is not None else None
        found.kinds[position] = found.describe(position, head)
        if kept is not None:
            found.kept[position] = b"".join(kept)

    def _member_rows(
        self,
        archive: Archive,
        entries: list[Entry],
        nested_path: str,
        depth: int,
        archive_sha: str | None,
        found: _MemberHashes,
    ) -> None:
        """Every member's row, column by column (no dict per member)."""
        compression = archive.member_compression
        self.sinks.members.extend(
            len(entries),
            {
                "name": [entry.name for entry in entries],
                "raw_name": [raw_name(entry.name) for entry in entries],
                "index": [entry.index for entry in entries],
                "size": [entry.size for entry in entries],
                "stored_size": [entry.size if entry.stored_size is None else entry.stored_size for entry in entries],
                "offset": [entry.offset for entry in entries],
                "compression": [compression(entry) for entry in entries],
                "hash": found.digests,
                "member_type": [kind or "unreadable" for kind in found.kinds],
            },
            {
                "archive_path": self.ref.path,
                "archive_sha256": archive_sha,
                "nested_path": nested_path,
                "depth": depth,
                "format": archive.format_name,
                "hash_algorithm": self.options.hash_algorithm,
            },
        )
        self.stats.members += len(entries)

    def _texture_rows(
        self, archive: Archive, entries: list[Entry], pegs: list[int], nested_path: str, kept: dict[int, bytes]
    ) -> None:
        """The textures rows of the pegs at positions `pegs` of `entries` (catalog.textures);
        `kept`: the CPU files hashing decoded, by position."""
        from .textures import texture_columns

        def error(problem: BaseException | str, member: str) -> None:
            self.error("textures", problem, nested_path, member or None)

        count, columns = texture_columns(archive, entries, pegs, nested_path, error, kept)
        if count:
            constants = {"archive_path": self.ref.path, "nested_path": nested_path}
            self.sinks.textures.extend(count, columns, constants)
            self.stats.textures += count

    def _string_rows(self, archive: Archive, entries: list[Entry], nested_path: str) -> None:
        """The strings rows of the localization files among `entries` (catalog.strings)."""
        from .strings import localization_positions, member_string_columns

        positions = localization_positions(entries)
        if not positions:
            return

        def error(problem: BaseException | str, member: str) -> None:
            self.error("strings", problem, nested_path, member or None)

        self._add_strings(*member_string_columns(archive, entries, positions, error), nested_path)

    def _file_string_rows(self, archive: Archive, nested_path: str) -> None:
        """The strings rows of a file that is a localization file or a J2ME text pack."""
        from .strings import file_string_columns

        try:
            count, columns = file_string_columns(archive)
        except (OSError, GamepakError) as exc:
            self.error("strings", exc, nested_path)
            return
        self._add_strings(count, columns, nested_path)

    def _loose_model(self, handle: Any, kind: str) -> None:
        """The models row of a loose file of model format `kind` (when its name says so)."""
        from .models import MAX_MODEL_BYTES, file_model_columns, model_format

        ref = self.ref
        if self.sinks.models is None or model_format(ref.path) != kind:
            return
        if ref.size > MAX_MODEL_BYTES:
            self.error("models", f"{ref.size} bytes is too large for a model (at most {MAX_MODEL_BYTES} are read)")
            return
        try:
            self._add_models(*file_model_columns(ref.path, ref.relative, kind, read_at(handle, ref.size, 0)), ".")
        except (GamepakError, OSError, ValueError) as exc:
            self.error("models", exc, ref.relative)

    def _model_rows(self, archive: Archive, entries: list[Entry], nested_path: str) -> None:
        """The models rows of the model members among `entries` (catalog.models)."""
        from .models import member_model_columns

        def error(problem: BaseException | str, member: str) -> None:
            self.error("models", problem, nested_path, member or None)

        self._add_models(*member_model_columns(archive, entries, error), nested_path)

    def _add_models(self, count: int, columns: dict[str, list[Any]], nested_path: str) -> None:
        if count and self.sinks.models is not None:
            self.sinks.models.extend(count, columns, {"archive_path": self.ref.path, "nested_path": nested_path})
            self.stats.models += count

    def _add_strings(self, count: int, columns: dict[str, list[Any]], nested_path: str) -> None:
        if count:
            self.sinks.strings.extend(count, columns, {"archive_path": self.ref.path, "nested_path": nested_path})
            self.stats.strings += count

    def _descend(
        self, archive: Archive, entry: Entry, format_name: str, nested_path: str, depth: int, digest: str | None
    ) -> None:
        inner_path = f"{nested_path}/{entry.name}"
        detection = Detection(format_name, 1.0, True)
        sha = digest if self.options.hash_algorithm == "sha256" else None
        try:
            inner = archive.open_archive(entry, format_name)
        except Exception as exc:
            self.error("nested", exc, inner_path)
            self.sinks.archives.add(
                archive_row(
                    self.ref,
                    inner_path,
                    depth + 1,
                    sha256=sha,
                    size=entry.size,
                    format=format_name,
                    kind="archive",
                    detected_by="signature",
                    confidence=1.0,
                    status="unreadable",
                    error_count=1,
                )
            )
            self.stats.archives += 1
            return
        with inner:
            self.catalog_archive(inner, inner_path, depth + 1, sha, detection, "signature", size=entry.size)


def _reader_into(source: Source) -> Callable[[memoryview, int], int]:
    """`read_into(view, offset)` for `RangeHashes` over `source`: `preadv` straight into the
    buffer when the source has a descriptor, else the source's own reads copied in."""
    fd, base = source.fd, source.base
    if fd is not None and hasattr(os, "preadv"):
        preadv = os.preadv

        def read_into(view: memoryview, offset: int) -> int:
            return preadv(fd, [view], base + offset)

        return read_into

    def copy_into(view: memoryview, offset: int) -> int:
        data = source.pread(len(view), offset)
        view[: len(data)] = data
        return len(data)

    return copy_into


def read_at(handle: Any, count: int, offset: int) -> bytes:
    """Up to `count` bytes at `offset` of a file object (pread when it has a descriptor)."""
    fileno: Callable[[], int] | None = getattr(handle, "fileno", None)
    if fileno is not None and not getattr(handle, "closed", False):
        try:
            return pread(fileno(), count, offset)
        except (OSError, io.UnsupportedOperation, ValueError):
            pass
    handle.seek(offset)
    return handle.read(count)  # type: ignore[no-any-return]
