"""SyncFaction mods (Red Faction Guerrilla) read as a patch: every form its documentation names.

A mod is a folder or a zip laid out like the game's root (its `data/` at the top, or one folder
down as zips are often made). Each of its files is one of (names matched without case):

| where in the mod                  | what it does                                                 |
|-----------------------------------|--------------------------------------------------------------|
| `data/<pack>.vpp_pc/<member>`     | loose archive: replaces the member, or is added after the    |
|                                   | others (`.vpp` means `.vpp_pc`; `.str2_pc` folders too)      |
| `data/<pack>.vpp_pc/.delete.json` | a JSON array of member names the pack loses                  |
| `data/<pack>.vpp_pc/.options.json`| the data mode asked for: ignored, the pack keeps its own     |
| `<any/path/>name.xdelta`          | a VCDIFF delta of the game's `<any/path/>name.<ext>` (the    |
|                                   | last extension replaced); exactly one game file must match   |
| `.mod.hashes.json` at the top     | SHA-256 the result must have (`install`)                     |
| `modinfo.xml` and what it names   | read by `modinfo` (its folder's other files are ignored)     |
| readme, licence, pictures, `.txt` | at the top: documentation, ignored                            |
| hidden files, `__MACOSX/`         | ignored                                                      |
| any other file                    | a whole file: replaces the game's file at that path, or is   |
|                                   | added there (beside a modinfo.xml: ignored, as modinfo mods  |
|                                   | ship their files for it)                                     |

Every file is applied or listed as ignored with its reason (`Patch.notes`, `describe_mod`):
nothing is skipped silently. Such a mod says nothing about the base it was made on: its
replacements apply to whatever the member holds (`base_sha256` left open) except a delta,
which is decoded against the game's file when the mod is read (`formats.vcdiff`, within the
`limits` budgets, into a scratch folder removed when the patch closes) and refused when made
for other bytes.
"""

from __future__ import annotations

import os

from .container import MixedBlobs, Operation, Patch, PatchError, check_relative, load_json
from .modfiles import ModFiles, entry_named, open_mod_files
from .scratch import ScratchFiles

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .container import BlobSource

_MAX_SMALL_JSON = 1 << 20
DOCUMENT_EXTENSIONS = (".txt", ".md", ".pdf", ".url", ".htm", ".html", ".rtf", ".nfo", ".doc", ".docx")
PICTURE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".gif", ".bmp", ".webp")
DOCUMENT_STEMS = ("readme", "read me", "license", "licence", "changelog", "changes", "credits", "copying")
HASHES_NAME = ".mod.hashes.json"


def _pack_name(name: str) -> str | None:
    lowered = name.lower()
    if lowered.endswith(".vpp"):
        return lowered + "_pc"
    if lowered.endswith((".vpp_pc", ".str2_pc")):
        return lowered
    return None


class Layout:
    """What each file of a mod is (see the module's table), paths relative to the mod's root."""

    def __init__(self) -> None:
        self.loose: dict[str, list[tuple[str, str]]] = {}  # pack -> [(member as spelled, key)]
        self.loose_folders: dict[str, str] = {}  # pack -> the folder as the mod spells it
        self.deletes: dict[str, list[str]] = {}  # pack -> keys of .delete.json files
        self.options: dict[str, str] = {}  # pack -> key of .options.json
        self.whole: list[tuple[str, str]] = []  # (game path as spelled, key)
        self.deltas: list[tuple[str, str]] = []  # (game path without the last extension, key)
        self.hashes: str | None = None  # key of .mod.hashes.json
        self.ignored: list[tuple[str, str]] = []  # (key, why)

    @property
    def changes_anything(self) -> bool:
        return bool(self.loose or self.deletes or self.whole or self.deltas)


def mod_root(files: ModFiles) -> str:
    """Where the mod's game root sits: "" (the top), or "folder/" when `data/` is not at the top
    but in the one folder the top holds (beside documentation), as zips are often made."""
    keys = list(files.files)
    if any(key.startswith("data/") for key in keys):
        return ""
    top_folders = {key.split("/", 1)[0] for key in keys if "/" in key}
    others = [key for key in keys if "/" not in key and not _is_documentation(key) and key != HASHES_NAME]
    if len(top_folders) != 1 or others:
        return ""
    (folder,) = top_folders
    inside = next((key for key in keys if key.startswith(f"{folder}/data/")), None)
    return "" if inside is None else files.files[inside].split("/", 1)[0] + "/"


def _is_documentation(relative: str) -> bool:
    name = relative.rsplit("/", 1)[-1].lower()
    stem = name.rsplit(".", 1)[0]
    return name.endswith(DOCUMENT_EXTENSIONS + PICTURE_EXTENSIONS) or stem in DOCUMENT_STEMS


def layout(files: ModFiles, modinfo_key: str | None = None, used_by_modinfo: frozenset[str] = frozenset()) -> Layout:
    """Sort every file of `files` (see the module's table). `modinfo_key`: the mod's modinfo.xml
    (its folder's other files belong to it), `used_by_modinfo`: the files it names."""
    found = Layout()
    root = mod_root(files).lower()
    modinfo_folder = None if modinfo_key is None else modinfo_key.rpartition("/")[0]
    for key in sorted(files.files):
        spelled = files.files[key]
        if key == modinfo_key or key in used_by_modinfo:
            continue  # the modinfo.xml mod's own
        if not key.startswith(root):
            if "/" not in key and _is_documentation(key):
                found.ignored.append((key, "documentation at the mod's top, not a game file"))
            elif key != HASHES_NAME:
                found.ignored.append((key, f"outside the folder holding the mod's data/ ({root.rstrip('/')})"))
            else:
                found.ignored.append((key, f"not beside the mod's data/ (in {root.rstrip('/')}/), so not checked"))
            continue
        relative = key[len(root) :]
        relative_spelled = spelled[len(root) :]
        parts = relative.split("/")
        name = parts[-1]
        if parts[0] == "__macosx":
            found.ignored.append((key, "macOS resource data, not a game file"))
            continue
        if len(parts) >= 3 and parts[0] == "data" and _pack_name(parts[1]) is not None:
            pack = _pack_name(parts[1])
            assert pack is not None
            found.loose_folders.setdefault(pack, relative_spelled.split("/")[1])
            member = "/".join(relative_spelled.split("/")[2:])
            if len(parts) == 3 and name == ".delete.json":
                found.deletes.setdefault(pack, []).append(key)
            elif len(parts) == 3 and name == ".options.json":
                found.options[pack] = key  # ignored, with the mode it asks for (`options_notes`)
            else:
                found.loose.setdefault(pack, []).append((member, key))
            continue
        if name.endswith(".xdelta"):
            found.deltas.append((relative_spelled[: -len(".xdelta")], key))
            continue
        if relative == HASHES_NAME:
            found.hashes = key
            continue
        if name.startswith("."):
            found.ignored.append((key, "a hidden file, not a game file"))
            continue
        if len(parts) == 1 and _is_documentation(relative):
            found.ignored.append((key, "documentation at the mod's top, not a game file"))
            continue
        if modinfo_key is not None:
            in_folder = modinfo_folder == "" or key.startswith(f"{modinfo_folder}/")
            if in_folder and parts[0] != "data":
                found.ignored.append((key, "beside modinfo.xml, and not named by it"))
                continue
            if parts[0] != "data":
                found.ignored.append((key, "outside data/ in a modinfo.xml mod"))
                continue
        found.whole.append((relative_spelled, key))
    return found


class FolderPatch(Patch):
    """A SyncFaction mod read as a patch: blobs are the mod's files or decoded deltas."""

    def __init__(self, path: str, operations: list[Operation], blobs: MixedBlobs, notes: list[str]) -> None:
        super().__init__(path, {"name": os.path.basename(os.path.normpath(path)), "version": None}, operations, blobs)
        self.notes = notes


def is_syncfaction_mod(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is read as a SyncFaction mod (files laid out like the game's): a folder,
    or a zip that is not a gamepak patch file."""
    path = os.fspath(path)
    return os.path.isdir(path) or (os.path.isfile(path) and is_patch_zip(path) is False)


def is_patch_zip(path: str) -> bool | None:
    """Whether the zip `path` holds a gamepak patch's manifest; None when it is not a zip."""
    import zipfile

    from .container import MANIFEST_NAME, zip_read_errors

    try:
        with zipfile.ZipFile(path) as archive:
            return MANIFEST_NAME in archive.NameToInfo
    except zip_read_errors():
        return None


def mod_patch(
    mod: str | os.PathLike[str],
    target: str | os.PathLike[str],
    files: ModFiles | None = None,
    modinfo_key: str | None = None,
    used_by_modinfo: frozenset[str] = frozenset(),
    required: bool = True,
) -> FolderPatch:
    """The operations of the SyncFaction mod `mod` (a folder or zip; `files` when already
    opened, then owned by the patch) for the game folder `target`. A mod that changes nothing
    is refused (`required`), naming what it holds, unless modinfo.xml is read beside it."""
    mod, target = os.fspath(mod), os.fspath(target)
    files = open_mod_files(mod) if files is None else files
    scratch = ScratchFiles()
    try:
        return _Reader(mod, target, files, scratch).patch(layout(files, modinfo_key, used_by_modinfo), required)
    except BaseException:
        scratch.close()
        files.close()
        raise


# The name this module had when it read loose archives only.
def loose_archive_patch(mod: str, target: str) -> FolderPatch:
    return mod_patch(mod, target)


class _Reader:
    def __init__(self, mod: str, target: str, files: ModFiles, scratch: ScratchFiles) -> None:
        self.mod = mod
        self.target = target
        self.files = files
        self.scratch = scratch
        self.operations: list[Operation] = []
        self.held: dict[str, bytes | tuple[BlobSource, str]] = {}
        self.notes: list[str] = []
        self.sources: dict[tuple[str, str | None], str] = {}  # what each change came from

    def _add(self, operation: Operation, source: str, blob: bytes | tuple[BlobSource, str] | None = None) -> None:
        earlier = self.sources.get(operation.key)
        if earlier is not None:
            raise PatchError(f"{self.mod}: {source} and {earlier} both change {operation.where}")
        self.sources[operation.key] = source
        if blob is not None:
            operation.blob = f"blobs/{len(self.held)}"
            self.held[operation.blob] = blob
        self.operations.append(operation)

    def _add_mod_file(self, file: str, member: str | None, key: str, *, replaces: bool) -> None:
        """The mod file `key` as it is, replacing (or, where the game has none, adding) the game's
        `file`, or its `member` (None: the whole file); a loose member and a whole file alike."""
        digest, size = self.files.digest(key)
        operation = Operation(
            "replace" if replaces else "add", file, member, target_sha256=digest, size=size, encoding="raw"
        )
        self._add(operation, self.files.where(key), (self.files, key))

    def patch(self, found: Layout, required: bool) -> FolderPatch:
        from .limits import current

        if not os.path.isdir(self.target):
            raise PatchError(f"{self.target}: a SyncFaction mod applies to a game folder (the one holding data/)")
        budget = current()
        self._loose(found, budget)
        for relative, key in found.whole:
            self._whole(relative, key, budget)
        for stem, key in found.deltas:
            self._delta(stem, key, budget)
        ignored = found.ignored + _options_ignored(self.files, found)
        self.notes += [f"{self.files.where(key)}: ignored: {why}" for key, why in ignored]
        if required and not self.operations and not found.hashes:
            ignored_text = "; ".join(f"{self.files.files[key]} ({why})" for key, why in ignored) or "no files"
            kind = (
                "" if os.path.isdir(self.mod) else "not a gamepak patch (no patch.json), and as a SyncFaction mod it "
            )
            raise PatchError(f"{self.mod}: {kind}changes nothing in the game: {ignored_text}")
        return FolderPatch(self.mod, self.operations, MixedBlobs(self.held, [self.files, self.scratch]), self.notes)

    def _loose(self, found: Layout, budget: Any) -> None:
        from ...core.opening import open as open_archive

        packs = sorted(set(found.loose) | set(found.deletes))
        if not packs:
            return
        data = entry_named(self.target, "data")
        if data is None or not os.path.isdir(os.path.join(self.target, data)):
            raise PatchError(f"{self.mod}: loose archives need the game's data/ folder in {self.target}")
        in_game = {entry.lower(): entry for entry in os.listdir(os.path.join(self.target, data))}
        for pack in packs:
            folder = f"data/{found.loose_folders.get(pack, pack)}"
            if pack not in in_game:
                raise PatchError(f"{self.mod}: {folder}: the game has no data/{pack}")
            file = check_relative(f"{data}/{in_game[pack]}", folder)
            with open_archive(os.path.join(self.target, data, in_game[pack])) as archive:
                existing = {entry.name.lower(): entry for entry in archive.infolist()}
            for key in found.deletes.get(pack, []):
                for name in _delete_list(self.files, key):
                    entry = existing.get(name.lower())
                    if entry is not None:
                        self._add(Operation("remove", file, entry.name), self.files.where(key))
            for member, key in found.loose.get(pack, []):
                entry = existing.get(member.lower())
                name = check_relative(entry.name if entry is not None else member, self.files.where(key))
                size = self.files.size(key)
                where = f"{self.files.where(key)} ({file}: {name})"
                budget.check(where, size, None if entry is None else entry.size)
                self._add_mod_file(file, name, key, replaces=entry is not None)

    def _game_file(self, parts: list[str]) -> tuple[str, bool]:
        """The game path `parts` names, as the game spells the folders and file that exist."""
        real: list[str] = []
        current = self.target
        exists = True
        for part in parts:
            name = entry_named(current, part) if exists else None
            if name is None:
                exists = False
                name = part
            real.append(name)
            current = os.path.join(current, name)
        return "/".join(real), exists and os.path.isfile(current)

    def _whole(self, relative: str, key: str, budget: Any) -> None:
        file, exists = self._game_file(relative.split("/"))
        file = check_relative(file, self.files.where(key))
        path = os.path.join(self.target, *file.split("/"))
        if os.path.lexists(path) and not exists:
            raise PatchError(f"{self.files.where(key)}: the game's {file} is not a regular file")
        budget.check(self.files.where(key), self.files.size(key), os.path.getsize(path) if exists else None)
        self._add_mod_file(file, None, key, replaces=exists)

    def _delta(self, stem: str, key: str, budget: Any) -> None:
        """`foo/bar/test.a.b.xdelta` patches the game's `foo/bar/test.a.b.<ext>`: the one game
        file whose name without its last extension is the delta's."""
        from .make import file_sha256

        where = self.files.where(key)
        *folders, base = stem.split("/")
        folder = self._game_file(folders)[0] if folders else ""
        game_folder = os.path.join(self.target, *folder.split("/")) if folder else self.target
        if folders and not os.path.isdir(game_folder):
            raise PatchError(f"{where}: the game has no {'/'.join(folders)}/ for this delta to patch")
        matches = sorted(
            entry
            for entry in os.listdir(game_folder)
            if "." in entry
            and entry.rsplit(".", 1)[0].lower() == base.lower()
            and os.path.isfile(os.path.join(game_folder, entry))
            and not os.path.islink(os.path.join(game_folder, entry))
        )
        shown = f"{stem}.*"
        if not matches:
            raise PatchError(f"{where}: the game has no {shown} for this delta to patch")
        if len(matches) > 1:
            raise PatchError(f"{where}: patches {shown}, and the game has {len(matches)}: {', '.join(matches)}")
        file = check_relative(f"{folder}/{matches[0]}" if folder else matches[0], where)
        game_path = os.path.join(self.target, *file.split("/"))
        decoded, size = self._decode(key, game_path, budget)
        operation = Operation(
            "replace",
            file,
            None,
            base_sha256=file_sha256(game_path),
            target_sha256=file_sha256(decoded),
            size=size,
            encoding="raw",
        )
        self._add(operation, where, (self.scratch, decoded))

    def _decode(self, key: str, game_path: str, budget: Any) -> tuple[str, int]:
        """Decode the delta `key` against `game_path` into the scratch folder: its size is
        checked against the budgets from its window headers before a byte is produced."""
        from ...errors import GamepakError
        from ...formats.vcdiff import Delta

        where = self.files.where(key)
        with self._delta_stream(key) as stream:
            try:
                delta = Delta(stream, where)
                delta.refuse_secondary()
            except GamepakError as exc:
                raise PatchError(f"{exc}; nothing written") from None
            size = delta.target_size
            budget.check(where, size, os.path.getsize(game_path))
            output = self.scratch.new_path(where, size)
            try:
                with open(game_path, "rb") as source, open(output, "w+b") as out:
                    delta.decode(source, out, size)
            except GamepakError as exc:
                os.unlink(output)
                reason = str(exc).removeprefix(f"{where}: ")
                raise PatchError(f"{where}: does not apply to {game_path}: {reason}; nothing written") from None
            except BaseException:
                os.unlink(output)
                raise
            if not delta.has_checksum:
                self.notes.append(
                    f"{where}: the delta carries no checksum (xdelta3 -n): whether it was made for this "
                    f"game's {os.path.basename(game_path)} cannot be checked; a wrong base gives wrong bytes"
                )
        return output, size

    def _delta_stream(self, key: str) -> Any:
        """The delta as a seekable file: the mod's own file, or a zip's entry copied to the
        scratch folder first (a deflated entry cannot seek back cheaply)."""
        from .modfiles import FolderFiles

        if isinstance(self.files, FolderFiles):
            flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
            return os.fdopen(os.open(self.files.where(key), flags), "rb")
        copy = self.scratch.new_path(self.files.where(key), self.files.size(key))
        with open(copy, "wb") as handle:
            for chunk in self.files.chunks(key, self.files.size(key)):
                handle.write(chunk)
        return open(copy, "rb")


def describe_mod(
    path: str | os.PathLike[str],
    files: ModFiles | None = None,
    modinfo_key: str | None = None,
    used_by_modinfo: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """What a SyncFaction mod changes, without a game to apply it to (`patch info`): each member
    it puts (replacing or adding, which the game's pack decides) or removes, each whole file it
    replaces and each file a delta patches, the data modes it asks for, and every file ignored
    with the reason."""
    path = os.fspath(path)
    owned = files is None
    files = open_mod_files(path) if files is None else files
    try:
        found = layout(files, modinfo_key, used_by_modinfo)
        changes: list[dict[str, Any]] = []
        for pack in sorted(set(found.loose) | set(found.deletes)):
            for key in found.deletes.get(pack, []):
                changes += [
                    {"action": "remove", "file": f"data/{pack}", "member": name} for name in _delete_list(files, key)
                ]
            for member, key in found.loose.get(pack, []):
                changes.append({"action": "put", "file": f"data/{pack}", "member": member, "size": files.size(key)})
        for relative, key in found.whole:
            changes.append({"action": "replace file", "file": relative, "size": files.size(key)})
        for stem, _ in found.deltas:
            changes.append({"action": "xdelta", "file": f"{stem}.*"})
        return {
            "name": os.path.basename(os.path.normpath(path)),
            "changes": changes,
            "data_modes": {f"data/{pack}": _options(files, key) for pack, key in found.options.items()},
            "ignored": [
                {"file": files.files[key], "reason": why} for key, why in found.ignored + _options_ignored(files, found)
            ],
        }
    finally:
        if owned:
            files.close()


# The name this had when it read loose archives only.
def describe_loose_mod(mod: str) -> dict[str, Any]:
    return describe_mod(mod)


def listed_hashes(path: str) -> dict[str, tuple[str, str]]:
    """SyncFaction's `.mod.hashes.json` at a mod's root (`{"data/misc.vpp_pc": "<SHA256 HEX>"}`):
    the files the mod must produce, as {path: (sha256, listing)}; {} for a patch file or a mod
    without one."""
    if not is_syncfaction_mod(path):
        return {}
    expected: dict[str, tuple[str, str]] = {}
    with open_mod_files(path) as files:
        key = files.find(mod_root(files) + HASHES_NAME)
        if key is None:
            return {}
        listing = files.where(key)
        hashes = load_json(files.read(key, _MAX_SMALL_JSON), listing)
        if not isinstance(hashes, dict):
            raise PatchError(f"{listing}: must map file paths to SHA-256 hex digests")
        for file, digest in hashes.items():
            if not isinstance(digest, str) or len(digest) != 64 or not set(digest.lower()) <= _HEX_DIGITS:
                raise PatchError(f"{listing}: {file}: {digest!r} is not a SHA-256 hex digest")
            # SyncFaction runs on Windows: either slash, any case.
            relative = check_relative(file.replace("\\", "/"), f"{listing}: {file!r}")
            expected[relative] = (digest.lower(), listing)
    return expected


_HEX_DIGITS = frozenset("0123456789abcdef")


def _delete_list(files: ModFiles, key: str) -> list[str]:
    where = files.where(key)
    names: Any = load_json(files.read(key, _MAX_SMALL_JSON), where)
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise PatchError(f"{where}: must be a JSON array of member names")
    return names


def _options_ignored(files: ModFiles, found: Layout) -> list[tuple[str, str]]:
    return [(key, f"the pack keeps its own data mode ({_options(files, key)} asked)") for key in found.options.values()]


def _options(files: ModFiles, key: str) -> str:
    where = files.where(key)
    options = load_json(files.read(key, _MAX_SMALL_JSON), where)
    if not isinstance(options, dict):
        raise PatchError(f'{where}: must be a JSON object like {{"Mode": "Compressed"}}')
    mode = options.get("Mode")
    if mode is not None and not isinstance(mode, str):
        raise PatchError(f"{where}: Mode must be a string")
    return str(mode)
