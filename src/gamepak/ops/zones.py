"""RFG zones (`.rfgzone_pc`, `.layer_pc`) of a pack, a folder or a loose file: listed, opened,
exported to JSON documents and imported back, checked.

A pack's zones are its zone members and those of the packs nested in it (a `.vpp_pc` holds
`.str2_pc` packs that hold the zones), named by member path (`dlc01_dm_01.str2_pc/x.layer_pc`).
A zone that cannot be read is listed with the reason and never stops the others. Changes go
back through one crash-safe `edit` of the pack (or an atomic rewrite of a loose file); only the
zones that changed are rewritten, and inside them only the edited objects' bytes change.
`gamepak zone` is a thin layer over these functions; `open` is `gamepak.zones.open`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator

from ..core.sizes import size_text
from ..errors import GamepakError
from ..formats.rfg.zone.check import is_zone_name
from ..formats.rfg.zone.model import Zone, ZoneError, read

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..formats.rfg.zone.names import Names

DOCUMENT_SUFFIX = ".json"
RELATION_SUFFIX = ".relation.bin"


def _zone_bytes() -> int:
    """The largest zone read (`core.content_limits`: far above any game zone, whose largest
    territory cells are a few MB)."""
    from ..core.content_limits import current

    return current().zone_bytes


def _read_file(path: str) -> bytes:
    from ..core.files import read_file

    return read_file(path, limit=_zone_bytes())


def iter_zones(source: str | os.PathLike[str]) -> Iterator[tuple[str, bytes]]:
    """(member path, bytes) of every zone in `source`: a loose zone file, a folder (its zone
    files by relative path) or a pack (its members and those of nested packs)."""
    path = os.fspath(source)
    if os.path.isdir(path):
        for folder, folders, files in os.walk(path):
            folders.sort()
            for name in sorted(files):
                if is_zone_name(name):
                    full = os.path.join(folder, name)
                    yield os.path.relpath(full, path).replace(os.sep, "/"), _read_file(full)
        return
    if is_zone_name(path):
        yield os.path.basename(path), _read_file(path)
        return
    from ..core.nested import iter_named
    from ..core.opening import open as open_archive

    with open_archive(path) as pack:
        for member, entry, data in iter_named(pack, is_zone_name):
            if entry.size > (largest := _zone_bytes()):
                raise GamepakError(f"{path}: {member}: larger than any zone file ({size_text(largest)})")
            yield member, data


class Zones(dict[str, Zone]):
    """The zones of a source by member path, those that could not be read in `failures`
    ({member: reason}), and `save()` to write the changed ones back."""

    def __init__(self, source: str) -> None:
        super().__init__()
        self.source = source
        self.failures: dict[str, str] = {}
        self.stored: dict[str, bytes] = {}

    def find(self, name: str) -> Zone | None:
        """A zone by member path (any case), or by file name when only one has it."""
        lowered = name.lower().replace("\\", "/")
        for member, zone in self.items():
            if member.lower() == lowered:
                return zone
        matches = [zone for member, zone in self.items() if member.rsplit("/", 1)[-1].lower() == lowered]
        return matches[0] if len(matches) == 1 else None

    def changed(self) -> dict[str, bytes]:
        """{member: new bytes} of every zone whose bytes differ from what was read."""
        result = {}
        for member, zone in self.items():
            data = zone.to_bytes()
            if data != self.stored[member]:
                result[member] = data
        return result

    def save(self) -> list[str]:
        """Write every changed zone back into the source (one crash-safe edit of a pack, an
        atomic rewrite of a loose file); returns the members written."""
        changed = self.changed()
        _store(self.source, changed)
        self.stored.update(changed)
        return list(changed)


def _selected(source: str, members: Iterable[str]) -> Iterator[tuple[str, bytes]]:
    from .content_files import selected

    return selected(source, iter_zones(source), members, "zone")


def _by_path(source: str, paths: list[str]) -> Iterator[tuple[str, bytes]] | None:
    """The zones at exactly these member paths of a pack, reached through their nested packs
    alone (the others are not opened); None when one of them is not found that way."""
    if os.path.isdir(source) or is_zone_name(source):
        return None
    from ..core.nested import resolve
    from ..core.opening import open as open_archive
    from ..errors import MemberNotFoundError

    found: list[tuple[str, bytes]] = []
    with open_archive(source) as pack:
        for path in paths:
            try:
                archive, entry = resolve(pack, path)
            except MemberNotFoundError:
                return None
            if entry.size > (largest := _zone_bytes()):
                raise GamepakError(f"{source}: {path}: larger than any zone file ({size_text(largest)})")
            found.append((path, archive.read(entry)))
    return iter(found)


def open(source: str | os.PathLike[str], members: Iterable[str] = ()) -> Zones:
    """Every zone of `source` (or only `members`: member paths, file names or globs), read.
    Member paths without globs are reached directly, through the nested packs they name."""
    source = os.fspath(source)
    zones = Zones(source)
    wanted = list(members)
    exact = None
    if wanted and not any(char in name for name in wanted for char in "*?["):
        exact = _by_path(source, [name.replace("\\", "/") for name in wanted])
    for member, data in exact if exact is not None else _selected(source, wanted):
        try:
            zones[member] = read(data, source, member)
            zones.stored[member] = data
        except ZoneError as exc:
            zones.failures[member] = str(exc)
    return zones


def list_objects(source: str | os.PathLike[str], members: Iterable[str] = ()) -> list[dict[str, object]]:
    """What `zone ls --json` prints: per object {member, index, class, class_hash, handle, name,
    x, y, z}; a zone that cannot be read as {member, error}."""
    rows: list[dict[str, object]] = []
    zones = open(source, members)
    for member, zone in zones.items():
        for index, obj in enumerate(zone.objects):
            position = obj.position
            rows.append(
                {
                    "member": member,
                    "index": index,
                    "class": obj.class_name(),
                    "class_hash": f"0x{obj.class_hash:08X}",
                    "handle": f"0x{obj.handle:08X}",
                    "name": obj.name(),
                    "x": position[0] if position else None,
                    "y": position[1] if position else None,
                    "z": position[2] if position else None,
                }
            )
    rows += [{"member": member, "error": reason} for member, reason in zones.failures.items()]
    return rows


def export_zones(
    source: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    members: Iterable[str] = (),
    overwrite: bool = False,
    names: Names | None = None,
) -> tuple[list[str], dict[str, str]]:
    """Write each zone of `source` (or `members`) under `output` at its member path plus
    `.json` (its relation section, when it has one, beside it as `.relation.bin`); returns
    (files written, {member: why it was skipped})."""
    import orjson

    from ..core.names import safe_parts
    from ..formats.rfg.zone.document import to_document
    from .made_files import write_files

    zones = open(source, members)
    files: list[tuple[str, bytes]] = []
    for member, zone in zones.items():
        path = "/".join(safe_parts(member))
        relation_file = None
        if zone.relation is not None:
            relation_file = path.rsplit("/", 1)[-1] + RELATION_SUFFIX
            files.append((path + RELATION_SUFFIX, zone.relation))
        document = to_document(zone, names, relation_file)
        # orjson: the standard library's encoder is pure Python once it indents (4x slower here).
        files.append((path + DOCUMENT_SUFFIX, orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n"))
    written = write_files(output, files, overwrite=overwrite) if files else []
    return written, dict(zones.failures)


def document_files(folder: str) -> dict[str, str]:
    """{member path: document file} for every `X.rfgzone_pc.json` / `X.layer_pc.json` under
    `folder`."""
    found: dict[str, str] = {}
    for directory, folders, files in os.walk(folder):
        folders.sort()
        for name in sorted(files):
            if name.lower().endswith(DOCUMENT_SUFFIX) and is_zone_name(name[: -len(DOCUMENT_SUFFIX)]):
                full = os.path.join(directory, name)
                found[os.path.relpath(full, folder).replace(os.sep, "/")[: -len(DOCUMENT_SUFFIX)]] = full
    return found


def _load_json(path: str) -> object:
    data = _read_file(path)
    try:
        return json.loads(data)
    except RecursionError:
        raise GamepakError(f"{path}: JSON nested too deep") from None
    except ValueError as exc:
        raise GamepakError(f"{path}: not a JSON document ({exc})") from None


def _load_document(path: str, zone: Zone) -> Zone:
    from ..formats.rfg.zone.document import check_references, from_document

    document = _load_json(path)
    relation = None
    if isinstance(document, dict) and document.get("relation"):
        name = document["relation"]
        if not isinstance(name, str) or "/" in name or "\\" in name or name in (".", ".."):
            raise GamepakError(f"{path}: relation must name a file beside the document")
        relation = _read_file(os.path.join(os.path.dirname(path), name))
    new = from_document(document, path, relation)
    check_references(new, zone, path)
    new.to_bytes()  # refuse what cannot be written (sizes, relation) before anything is
    return new


def import_zones(target: str | os.PathLike[str], folder: str | os.PathLike[str], *, dry_run: bool = False) -> list[str]:
    """Import a folder laid out as `export_zones` wrote it into `target`, all in one edit.
    Returns the object-level changes, one line each ("member: 0xHANDLE: property op changed").
    Refused before anything is written: a document for a zone the target lacks, a value that
    does not fit its kind, a handle used twice, a parent that is no object."""
    from ..formats.rfg.zone.diff import RepeatedHandle, diff

    target, folder = os.fspath(target), os.fspath(folder)
    if not os.path.isdir(folder):
        raise GamepakError(f"{folder}: not a folder (zone export writes one to import from)")
    files = document_files(folder)
    if not files:
        raise GamepakError(f"{folder}: holds no .rfgzone_pc.json or .layer_pc.json file")
    zones = open(target, files)
    changes: list[str] = []
    written: dict[str, bytes] = {}
    for member, path in files.items():
        zone = zones.find(member)
        if zone is None:
            reason = zones.failures.get(member)
            raise GamepakError(
                f"{path}: {target} has no zone {member}" + (f" that can be read ({reason})" if reason else "")
            )
        new = _load_document(path, zone)
        data = new.to_bytes()
        stored_member = next(name for name, value in zones.items() if value is zone)
        if data == zones.stored[stored_member]:
            continue
        try:
            described = [f"{stored_member}: {change.describe()}" for change in diff(zone, new, stored_member)]
        except RepeatedHandle:
            # The target's handles repeat (the document may be what fixes that): its objects
            # cannot be told apart by handle, so the change is named as a whole.
            described = [f"{stored_member}: objects changed (its handles repeat: not listed one by one)"]
        changes += described or [f"{stored_member}: header changed"]
        written[stored_member] = data
    _store(target, written, dry_run)
    return changes


def _store(source: str, changed: dict[str, bytes], dry_run: bool = False) -> None:
    """Write changed zones back: one edit of a pack, atomic rewrites of loose files (with
    `dry_run`, the pack's edit only planned: it refuses what the real one would)."""
    from .content_files import write_back

    write_back(source, changed, is_zone_name, dry_run=dry_run)


def check_zones(source: str | os.PathLike[str]) -> list[tuple[str, str, str]]:
    """(member, severity, problem) for each zone of `source` (`formats.rfg.zone.check`)."""
    from ..formats.rfg.zone.check import check_zone

    return [
        (member, severity, problem)
        for member, data in iter_zones(source)
        for severity, problem in check_zone(data, member)
    ]
