"""`patch make --as`: the differences between a base and a modded copy written as the mods a game
already understands, instead of a gamepak patch file.

- `pak` (Quake, Quake II): an override pack, `pakN.pak`, holding every added and changed member
  and loose file. The engine reads the paks in order and a later one wins, so it needs no
  tool; it cannot delete, so removals (and the old names of renames) are reported, not dropped.
- `syncfaction` (Red Faction Guerrilla): a SyncFaction loose-archive mod folder,
  `data/<pack>.vpp_pc/` holding the added and changed members and a `.delete.json` of the
  removed ones; a changed member of a nested `.str2_pc` ships its whole `.str2_pc`. Plain files
  are copied under their paths.
- `modinfo` (Red Faction Guerrilla): a SyncFaction modinfo.xml mod whose table edits merge with
  other mods (export_modinfo.py).

`pak` and `syncfaction` copy each member and file from the modded copy as a stream, as the pack
writers copy members (`_Modded`): memory stays bounded whatever the number and size of the
changes. `modinfo` reads the members it ships whole (`_modded_bytes`): tables, and the few
files a table mod replaces.
"""

from __future__ import annotations

import json
import os

from ...core.jsontext import JSON_INDENT
from ...errors import cannot_read
from ..made_files import replace_folder
from .container import MAX_MEMBER_BYTES, PatchError
from .make import differences

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from ...core.archive import Archive
    from ...core.writer import PendingMember

KINDS = ("gamepak", "pak", "syncfaction", "modinfo")


class Export:
    """What an export wrote, and what it could not express (one sentence each)."""

    def __init__(self, output: str, kind: str) -> None:
        self.output = output
        self.kind = kind
        self.written: list[str] = []
        self.not_expressed: list[str] = []


def _modded_bytes(modded: str, file: str, member: str | None) -> bytes:
    """The bytes the modded copy holds for a file or a (nested) member."""
    from ...core.nested import resolve
    from ...core.opening import open as open_archive

    path = modded if file == "" else os.path.join(modded, *file.split("/"))
    if member is None:
        from ...core.files import read_file

        return read_file(path, limit=MAX_MEMBER_BYTES, error=PatchError)
    with open_archive(path) as archive:
        holder, entry = resolve(archive, member)
        return holder.read(entry)


def export(
    base: str | os.PathLike[str],
    modded: str | os.PathLike[str],
    output: str | os.PathLike[str],
    kind: str,
    *,
    overwrite: bool = False,
) -> Export:
    """Write the changes from `base` to `modded` (two packs or two folders) as `kind` ("pak",
    "syncfaction" or "modinfo") at `output`."""
    if kind not in KINDS[1:]:
        raise PatchError(f"cannot write a mod as {kind!r}; as: {', '.join(KINDS)}")
    base, modded, output = os.fspath(base), os.fspath(modded), os.fspath(output)
    operations, _ = differences(base, modded)
    result = Export(output, kind)
    if kind == "pak":
        _as_pak(modded, operations, result, overwrite)
    elif kind == "modinfo":  # tables as merging <Edit>s: export_modinfo.py
        from .export_modinfo import as_modinfo

        as_modinfo(base, modded, operations, result, overwrite, _modded_bytes)
    else:
        _as_syncfaction(base, modded, operations, result, overwrite)
    return result


class _Modded:
    """The modded copy, as what the mod copies from it: each pack opened once and kept open
    until the mod is written, a member or plain file handed over as a `PendingMember` the
    writer copies as a stream (by the kernel where the pack stores it plainly), never read
    whole: memory stays bounded whatever the number and size of the changes."""

    def __init__(self, modded: str) -> None:
        self.modded = modded
        self.packs: dict[str, Archive] = {}

    def __enter__(self) -> _Modded:
        return self

    def __exit__(self, *exc: object) -> None:
        for archive in self.packs.values():
            archive.close()
        self.packs.clear()

    def source(self, name: str, file: str, member: str | None, size: int | None) -> PendingMember:
        """The bytes the modded copy holds for a file or a (nested) member, to be written as
        `name`. A plain file must still be the `size` bytes it was compared at (else
        InputChangedError when it is copied): the mod holds what was compared, or nothing."""
        from ...core.writer import PendingMember

        path = self.modded if file == "" else os.path.join(self.modded, *file.split("/"))
        if member is None:
            if size is None:
                try:
                    size = os.stat(path).st_size
                except OSError as exc:
                    raise cannot_read(path, exc, error=PatchError) from None
            return PendingMember(name, None, path, size)
        from ...core.nested import resolve

        archive = self.packs.get(path)
        if archive is None:
            from ...core.opening import open as open_archive

            archive = self.packs[path] = open_archive(path)
        holder, entry = resolve(archive, member)
        return PendingMember(name, None, None, entry.size, origin=(holder, entry))


def _as_pak(modded: str, operations: list, result: Export, overwrite: bool) -> None:
    from ...core.opening import create

    # name -> (file, member, size compared): a later operation of one name replaces an earlier
    # one's bytes but keeps its place, as the pak's directory order always was.
    members: dict[str, tuple[str, str | None, int | None]] = {}
    for operation in operations:
        where = operation.where
        if operation.op in ("add", "replace"):
            name = operation.member if operation.member is not None else operation.file
            members[name] = (operation.file, operation.member, operation.size)
        elif operation.op == "rename":
            assert operation.new_member is not None
            members[operation.new_member] = (operation.file, operation.new_member, None)
            result.not_expressed.append(f"{where}: renamed, but an override pak cannot remove the old name")
        else:
            result.not_expressed.append(f"{where}: removed, but an override pak cannot delete (the old copy stays)")
    if not members:
        raise PatchError(f"{result.output}: nothing was added or changed: an override pak would be empty")
    # The packs stay open until the writer has copied their members (it closes first).
    with _Modded(modded) as side, create(result.output, "pak", overwrite=overwrite) as writer:
        for name, (file, member, size) in members.items():
            writer.add_pending(side.source(name, file, member, size))
    result.written = list(members)


def _copier(source: PendingMember) -> Callable[[int], None]:
    """What writes `source` into a new file (its descriptor): the writers' own copy, so a mod
    file is the bytes a pack member would be."""

    def fill(fd: int) -> None:
        from ...core.writer import Output

        out = Output(fd)
        out.write_member(source)
        out.flush()

    return fill


def _as_syncfaction(base: str, modded: str, operations: list, result: Export, overwrite: bool) -> None:

    if not os.path.isdir(base):
        raise PatchError(f"{base}: a SyncFaction mod is made from two game folders (or their data folders)")
    if os.path.exists(result.output) and not overwrite:
        from ...errors import OutputExistsError

        raise OutputExistsError(result.output)
    # Paths in the mod start at the game's root: data/<pack>.vpp_pc/...
    prefix = "" if os.path.isdir(os.path.join(base, "data")) else "data/"
    # mod path -> (file, member, size compared) of the modded copy
    sources: dict[str, tuple[str, str | None, int | None]] = {}
    deletions: dict[str, list[str]] = {}
    for operation in operations:
        file = prefix + operation.file
        if operation.member is None:
            if operation.op in ("add", "replace"):
                sources[file] = (operation.file, None, operation.size)
            else:
                result.not_expressed.append(
                    f"{operation.where}: a plain file removed (SyncFaction cannot delete files)"
                )
            continue
        # A member of a nested pack: SyncFaction replaces members of the top pack only, so the
        # whole nested pack it lies in goes in.
        top, _, rest = operation.member.partition("/")
        member = top if rest else operation.member
        folder = f"{file}/"
        if operation.op in ("add", "replace") or rest:
            sources[folder + member] = (operation.file, member, None)
        elif operation.op == "rename":
            assert operation.new_member is not None
            sources[folder + operation.new_member] = (operation.file, operation.new_member, None)
            deletions.setdefault(file, []).append(operation.member)
        else:
            deletions.setdefault(file, []).append(operation.member)
    files: dict[str, bytes | Callable[[int], object]] = {}
    with _Modded(modded) as side:
        for path, (file, member, size) in sources.items():
            files[path] = _copier(side.source(path, file, member, size))
        for file, names in deletions.items():
            files[f"{file}/.delete.json"] = json.dumps(sorted(names), indent=JSON_INDENT).encode()
        if not files:
            raise PatchError(f"{result.output}: nothing was added, changed or removed: the mod would be empty")
        replace_folder(result.output, files)
    result.written = sorted(files)
