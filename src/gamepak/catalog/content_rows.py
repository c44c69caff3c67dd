"""The rows one file adds to the content-kind tables (textures, strings, models, zone_objects)
and to errors. Each table's module (textures.py, strings.py, models.py, zones.py) turns members
or a loose file into columns; ContentRows sends them to their sinks and counts them.
ArchiveScanner (scan.py) walks the file and its packs and calls these as it finds each kind.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ..core.archive import Archive, Entry
from ..errors import GamepakError
from ..formats.rfg.peg.sources import partner_name
from .discovery import FileRef, read_at
from .rows import RowSink, Stats, archive_row, describe_error, error_row


class ContentRows:
    """The content-kind rows and errors rows of the file `ref`, added to `sinks` and counted in
    `stats` (a kind without a sink gets no rows); ArchiveScanner sets all three."""

    ref: FileRef
    sinks: RowSink
    stats: Stats

    def error(
        self, stage: str, exc: BaseException | str, nested_path: str | None = None, member: str | None = None
    ) -> None:
        message = exc if isinstance(exc, str) else describe_error(exc)
        self.sinks.errors.add(error_row(self.ref, stage, message, nested_path, member))
        self.stats.errors += 1

    # -- textures -----------------------------------------------------------------------------
    def _loose_peg(self, handle: Any, sha: str | None) -> None:
        """A peg's CPU file lying in a folder (`textures/crate.cpeg_pc` beside its `.gpeg_pc`):
        its textures rows (archive_path: the CPU file; nested_path: its folder, `.` at the top)
        and an archives row (format `peg`, kind `texture`: what --resume counts as done). The
        GPU file holds only pixels and is not read; a CPU file without one is an errors row. `sha`:
        the CPU file's sha256 (None when it could not be read to its end)."""
        from .textures import MAX_CPU_BYTES, loose_partner, loose_texture_columns

        ref = self.ref
        folder, peg = os.path.split(ref.relative)
        nested_path = folder or "."
        fields: dict[str, Any] = {"format": "peg", "kind": "texture", "detected_by": "extension"}
        fields["sha256"] = sha
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

    def _loose_content(self, handle: Any, *, with_row: bool) -> bool:
        """The rows a loose file of a content kind (the content registry's, by name or signature)
        adds: textures rows for the texture kinds, models rows for the model kinds; with
        `with_row` (a file that is no archive) an archives row too (format: the kind; kind:
        its family's `texture`, `model`, `strings`). Returns whether a content kind took it (a
        file named like one that holds none, `palette.lmp`, is not taken)."""
        from ..content import of_member

        ref = self.ref
        head = read_at(handle, min(ref.size, 64), 0)
        rows = of_member(os.path.basename(ref.path), head, probe=False)
        if not rows:
            return False
        errors_before, models_before = self.stats.errors, self.stats.models
        textures = 0
        own: dict[str, int] = {}  # rows of a family's table of its own (zones: zone_objects)
        for row in rows:
            if row.family.catalog == "textures" and row.has("rows"):
                textures += self._loose_textures(handle, row)
            elif row.family.catalog == "models":
                self._loose_model(handle, row.name)
            elif row.family.catalog is not None and row.has("rows"):
                own[row.family.catalog] = self._loose_own_rows(handle, row, row.family.catalog)
        failed = self.stats.errors - errors_before
        if not with_row:
            return True
        if not (textures or failed or self.stats.models > models_before or any(own.values())):
            return False
        fields: dict[str, Any] = {
            "format": rows[0].name,
            "kind": rows[0].family.archive_kind or "content",
            "detected_by": "signature" if rows[0].signed_by(head) else "extension",
            "sha256": self._handle_sha256(handle, ref.relative),  # type: ignore[attr-defined]
            "header": json.dumps({"textures": textures, **own}),
            "status": "errors" if failed else "ok",
            "error_count": failed,
        }
        self.sinks.archives.add(archive_row(ref, ref.relative, 0, **fields))
        self.stats.archives += 1
        return True

    def _loose_textures(self, handle: Any, row: Any) -> int:
        """The textures rows of a loose file of texture kind `row` (its `rows` verb)."""
        from .textures import MAX_CONTENT_BYTES

        ref = self.ref
        if self.sinks.textures is None:
            return 0
        folder, name = os.path.split(ref.relative)
        if ref.size > MAX_CONTENT_BYTES:
            self.error(
                "textures", f"{ref.size} bytes is more than the {MAX_CONTENT_BYTES} read for textures", ref.relative
            )
            return 0
        try:
            found = row.call("rows", read_at(handle, ref.size, 0), name, ref.relative)
        except (GamepakError, OSError, ValueError) as exc:
            self.error("textures", exc, ref.relative, name)
            return 0
        if found:
            columns = {key: [texture[key] for texture in found] for key in found[0]}
            self.sinks.textures.extend(len(found), columns, {"archive_path": ref.path, "nested_path": folder or "."})
            self.stats.textures += len(found)
        return len(found)

    def _loose_own_rows(self, handle: Any, row: Any, table: str) -> int:
        """The rows of a loose file of kind `row` in its family's table of its own (`table`:
        zone_objects), by its `rows` verb; errors rows (stage: the table) when it does not read."""
        from .zones import add_rows, zone_bytes

        ref = self.ref
        sink = getattr(self.sinks, table, None)
        if sink is None:
            return 0
        folder, name = os.path.split(ref.relative)
        if ref.size > (largest := zone_bytes()):
            self.error(table, f"{ref.size} bytes is more than the {largest} read for {table}", ref.relative)
            return 0
        try:
            found = row.call("rows", read_at(handle, ref.size, 0), name, ref.relative)
        except (GamepakError, OSError, ValueError) as exc:
            self.error(table, exc, ref.relative, name)
            return 0
        if found:
            columns: dict[str, list[Any]] = {key: [] for key in found[0]}
            add_rows(columns, found)
            sink.extend(len(found), columns, {"archive_path": ref.path, "nested_path": folder or "."})
            setattr(self.stats, table, getattr(self.stats, table) + len(found))
        return len(found)

    # -- strings ------------------------------------------------------------------------------
    def _string_rows(self, archive: Archive, entries: list[Entry], nested_path: str) -> None:
        """The strings rows of the localization files among `entries` (catalog.strings)."""
        from .strings import localization_positions, member_string_columns, probed_string_columns

        def error(problem: BaseException | str, member: str) -> None:
            self.error("strings", problem, nested_path, member or None)

        positions = localization_positions(entries)
        if positions:
            self._add_strings(*member_string_columns(archive, entries, positions, error), nested_path)
        # Kinds with no name or signature (J2ME strings), looked for in the packs they live in.
        self._add_strings(*probed_string_columns(archive, entries, error), nested_path)

    def _file_string_rows(self, archive: Archive, nested_path: str) -> None:
        """The strings rows of a file that is a localization file or a J2ME text pack."""
        from .strings import file_string_columns

        try:
            count, columns = file_string_columns(archive)
        except (OSError, GamepakError) as exc:
            self.error("strings", exc, nested_path)
            return
        self._add_strings(count, columns, nested_path)

    def _add_strings(self, count: int, columns: dict[str, list[Any]], nested_path: str) -> None:
        if count:
            self.sinks.strings.extend(count, columns, {"archive_path": self.ref.path, "nested_path": nested_path})
            self.stats.strings += count

    # -- zones --------------------------------------------------------------------------------
    def _zone_rows(self, archive: Archive, entries: list[Entry], nested_path: str) -> None:
        """The zone_objects rows of the RFG zones among `entries` (catalog.zones)."""
        from .zones import member_zone_columns

        def error(problem: BaseException | str, member: str) -> None:
            self.error("zones", problem, nested_path, member or None)

        count, columns = member_zone_columns(archive, entries, error)
        if count:
            self.sinks.zone_objects.extend(count, columns, {"archive_path": self.ref.path, "nested_path": nested_path})
            self.stats.zone_objects += count

    # -- models -------------------------------------------------------------------------------
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
