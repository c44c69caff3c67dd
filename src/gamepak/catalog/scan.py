"""Turning one file into catalog rows (no Dask here: this runs inside a worker, one unit of work at
a time): walking the file and its packs (nested ones included) for its archives row(s) and its
members (their hashes and types: member_hashing.py's) and its errors. Finding the files is
discovery.py's; what a file or member is, detect.py's; the rows' shapes, rows.py's; the content
kinds' rows (textures, strings, models), content_rows.py's.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from ..core.archive import Archive, Entry, Problem
from ..core.opening import Detection
from ..core.registry import get_format
from ..errors import GamepakError
from ..formats.rfg.peg.sources import is_cpu_name
from .content_rows import ContentRows
from .detect import archive_kind, choose
from .discovery import FileRef, open_file, read_at
from .hashing import HashingSource, file_sha256, hasher_factory
from .member_hashing import MemberHashes
from .rows import RowSink, ScanOptions, Stats, archive_row, describe_error, problems_fields, raw_name

# A model is read whole to be checked; larger files are reported rather than loaded.
MAX_MODEL_BYTES = 256 << 20


class ArchiveScanner(ContentRows):
    """Rows for one file on disk: its archives row(s), its members (nested packs included) and
    any errors. Holds at most one member's head in memory; rows go to the sinks as made. The
    content kinds' rows and the errors rows are made by ContentRows, the members' hashes by
    MemberHashes."""

    def __init__(self, ref: FileRef, options: ScanOptions, sinks: RowSink, stats: Stats) -> None:
        self.ref = ref
        self.options = options
        self.sinks = sinks
        self.stats = stats
        self.new_hasher = hasher_factory(options.hash_algorithm)

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
                self._loose_peg(handle, self._handle_sha256(handle, root_name))
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
                # No archive; a content file (a Quake image, sprite or model) is still cataloged.
                if not self._loose_content(handle, with_row=True):
                    self.stats.skipped += 1
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
                # A table of lumps may be content too: a map is a model and holds textures.
                self._loose_content(handle, with_row=False)
                return
            sha = self._handle_sha256(handle, root_name)
            if sha is None:
                self._unreadable(root_name, detection, how)
                return
            self._model(handle, detection, how, sha)

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
                kind=archive_kind(detection.format, self.ref.path) if detection else None,
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
        fields: dict[str, Any] = {
            "format": archive.format_name,
            "kind": archive_kind(archive.format_name, archive.filename),
        }
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

            pegs = cpu_positions(entries, archive.format_name)
            found = MemberHashes(
                entries, archive.filename, self.new_hasher, self.stats, self.error, readable(entries, pegs)
            )
        else:
            found = MemberHashes(entries, archive.filename, self.new_hasher, self.stats, self.error)
        own_source = archive._source
        tee = HashingSource(own_source, hashlib.sha256()) if hash_file else None
        if tee is not None:
            archive._source = tee
        try:
            found.hash_decoded_members(archive, nested_path)
        finally:
            archive._source = own_source
        if tee is not None and tee.frontier:
            # Something was decoded: the tee has hashed the file so far; it hashes the rest.
            file_sha = self._digest_or_error(tee.finish, nested_path)
            found.hash_plain_members(archive, nested_path, None)
        else:
            file_hasher = hashlib.sha256() if hash_file else None
            done = found.hash_plain_members(archive, nested_path, file_hasher)
            file_sha = file_hasher.hexdigest() if file_hasher is not None and done else None
        self._member_rows(archive, entries, nested_path, depth, file_sha if hash_file else archive_sha, found)
        if self.sinks.textures is not None:
            self._texture_rows(archive, entries, pegs, nested_path, found.kept)
        if self.sinks.strings is not None:
            self._string_rows(archive, entries, nested_path)
        if self.sinks.models is not None:
            self._model_rows(archive, entries, nested_path)
        if self.sinks.zone_objects is not None:
            self._zone_rows(archive, entries, nested_path)
        if self.options.nested:
            for position, format_name in found.nested.items():
                self._descend(archive, entries[position], format_name, nested_path, depth, found.digests[position])
        return file_sha

    def _member_rows(
        self,
        archive: Archive,
        entries: list[Entry],
        nested_path: str,
        depth: int,
        archive_sha: str | None,
        found: MemberHashes,
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
