"""SyncFaction's `modinfo.xml` mods (Red Faction Guerrilla), read as a patch.

A mod is a folder, or a zip of one, holding `modinfo.xml` (any case) at its root or in one
subfolder (SyncFaction's advice); the paths it names for new files are relative to that file.

    <Mod Name="...">                         element and attribute names matched without case
      <Author>..</Author> <Description>..</Description> <WebLink Name="..">url</WebLink>
      <Changes>
        <Replace File="data\\misc.vpp_pc\\camera.xtbl" NewFile="files\\camera.xtbl"/>
                                             (or FileUserInput= / NewFileUserInput=: a ListBox's
                                              chosen option holds the path)
        <Edit File="data\\misc.vpp\\weapons.xtbl" LIST_ACTION="COMBINE_BY_FIELD:Name">xml</Edit>
        <USER_INPUT>name</USER_INPUT>        anywhere in Changes: the chosen option's content
      </Changes>
      <UserInput><ListBox Name="x" DisplayName=".." [SameOptionsAs="y"]>
        <Option Name="..">xml or text</Option>...</ListBox></UserInput>
    </Mod>

Game paths: slashes or backslashes, any case, `.vpp` means `.vpp_pc`, `build\\pc\\cache\\` (the
old game) means `data\\`; the member may sit in a nested pack (`x.vpp_pc\\zone.str2_pc\\y.xtbl`).
A change of an `.xtbl` in `misc.vpp_pc` is also made to the same member of `table.vpp_pc`, and
the other way round, when the game has it there and the mod does not change that one itself.

Every member the mod changes becomes one `replace` operation (so conflicts, check, dry-run and
revert work as for any patch): replaced first (the last `<Replace>` wins, as SyncFaction does),
then edited by each `<Edit>` in order (xmledit: the member's own formatting is kept). The new
bytes are computed from the target's current member when the mod is opened, and the base is
left open (`base_sha256` None), as for a loose-archive mod.

Read defensively: a zip's names may not climb out or be absolute; declared and inflated sizes
are bounded; modinfo.xml with a DTD is refused; user inputs that refer to each other in a loop
or expand without bound are refused.
"""

from __future__ import annotations

import hashlib
import os

from ...errors import UsageError
from .container import MAX_OPERATIONS, MixedBlobs, Operation, Patch, PatchError, check_relative, zip_read_errors
from .modfiles import FolderFiles, ModFiles, entry_named, open_mod_files, real_path
from .xmledit import LIST_ACTION, MAX_XML_BYTES, Node, XmlDocument, apply_edit, parse_action, parse_tree

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ...core.archive import Archive, Entry
    from .container import BlobSource

MODINFO_NAME = "modinfo.xml"
MAX_MODINFO_BYTES = 16 << 20
# USER_INPUT may refer to other inputs: how deep, and how many nodes the changes may grow to.
MAX_INPUT_DEPTH = 32
MAX_EXPANDED_NODES = 1_000_000
XML_EXTENSIONS = (".xtbl", ".dtdox", ".gtodx")
_MIRRORED = {"data/misc.vpp_pc": "data/table.vpp_pc", "data/table.vpp_pc": "data/misc.vpp_pc"}


def is_modinfo_mod(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is a folder or zip holding modinfo.xml at its root or in one subfolder
    (a gamepak patch file, a zip too, is not)."""
    path = os.fspath(path)
    if os.path.isdir(path):
        return bool(FolderFiles(path).named(MODINFO_NAME))
    import zipfile

    try:
        with zipfile.ZipFile(path) as zip_file:
            names = [name.replace("\\", "/").strip("/").lower() for name in zip_file.namelist()]
    except zip_read_errors():
        return False
    if "patch.json" in names:
        return False
    return any(name.rsplit("/", 1)[-1] == MODINFO_NAME and name.count("/") <= 1 for name in names)


# -- modinfo.xml ----------------------------------------------------------------------------------


class ListBox:
    """A `<UserInput><ListBox>`: its name, what the user sees, and its options (name, content)."""

    def __init__(self, name: str, display_name: str, options: list[tuple[str, list[Node | str]]]) -> None:
        self.name = name
        self.display_name = display_name
        self.options = options

    def option(self, wanted: str, where: str) -> tuple[str, list[Node | str]]:
        """The option named `wanted` (exact, else without case), or UsageError naming them."""
        for matches in (lambda name: name == wanted, lambda name: name.lower() == wanted.lower()):
            found = next((option for option in self.options if matches(option[0])), None)
            if found is not None:
                return found
        known = ", ".join(repr(name) for name, _ in self.options)
        raise UsageError(f"{where}: input {self.name!r} has no option {wanted!r}; its options: {known}")


class Change:
    """One `<Replace>` or `<Edit>` after user input was substituted."""

    def __init__(
        self, kind: str, file: str, number: int, *, new_file: str | None = None, edit: Node | None = None
    ) -> None:
        self.kind = kind
        self.file = file  # the game path as the mod writes it
        self.number = number
        self.new_file = new_file
        self.edit = edit

    def to_dict(self) -> dict[str, Any]:
        pack, member = game_path(self.file, f"change {self.number}")
        document: dict[str, Any] = {"op": self.kind, "file": pack, "member": member}
        if self.kind == "replace":
            document["new_file"] = self.new_file
        else:
            assert self.edit is not None
            document["list_action"] = self.edit.attribute(LIST_ACTION) or "ADD"
            document["elements"] = len(self.edit.elements())
        return document


class ModInfo:
    """A parsed modinfo.xml: metadata, user inputs, and the changes for a choice of options."""

    def __init__(self, data: bytes, where: str, folder: str) -> None:
        self.where = where
        self.folder = folder  # where NewFile paths start, relative to the mod
        root = parse_tree(data, where, max_bytes=MAX_MODINFO_BYTES)
        if root.name.lower() != "mod":
            raise PatchError(f"{where}: not a modinfo.xml (its root is <{root.name}>, not <Mod>)")
        self.name = (root.attribute("Name") or "").strip()
        self.author = self.description = ""
        self.links: list[str] = []
        self.inputs: list[ListBox] = []
        self._changes: list[Node | str] = []
        boxes: list[tuple[Node, str | None]] = []
        for child in root.elements():
            kind = child.name.lower()
            if kind == "author":
                self.author = child.inner_text().strip()
            elif kind == "description":
                self.description = child.inner_text().strip()
            elif kind == "weblink":
                self.links.append(child.inner_text().strip())
            elif kind == "changes":
                self._changes.extend(child.children)
            elif kind == "userinput":
                for box in child.elements():
                    if box.name.lower() != "listbox":
                        raise PatchError(f"{where}: <UserInput> holds <{box.name}>; only <ListBox> is known")
                    boxes.append((box, box.attribute("SameOptionsAs")))
        for box, _ in boxes:
            name = (box.attribute("Name") or "").strip()
            if not name:
                raise PatchError(f"{where}: a <ListBox> has no Name")
            if self._input(name) is not None:
                raise PatchError(f"{where}: two inputs are named {name!r}")
            options = [
                ((option.attribute("Name") or option.text()).strip(), option.children)
                for option in box.elements()
                if option.name.lower() == "option"
            ]
            self.inputs.append(ListBox(name, (box.attribute("DisplayName") or name).strip(), options))
        for listbox, (_, same) in zip(self.inputs, boxes, strict=True):
            if same:
                source = self._input(same)
                if source is None:
                    raise PatchError(f"{where}: input {listbox.name!r}: SameOptionsAs names no input ({same!r})")
                listbox.options = source.options
        for listbox in self.inputs:
            if not listbox.options:
                raise PatchError(f"{where}: input {listbox.name!r} has no <Option>")

    def _input(self, name: str) -> ListBox | None:
        return next((box for box in self.inputs if box.name.lower() == name.strip().lower()), None)

    def chosen(self, choices: Mapping[str, str]) -> dict[str, tuple[str, list[Node | str]]]:
        """Each input's option: the one `choices` names (a NAME this mod lacks is left for the
        caller), else the first."""
        picked = {box.name.lower(): box.options[0] for box in self.inputs}
        for name, option in choices.items():
            box = self._input(name)
            if box is not None:
                picked[box.name.lower()] = box.option(option, self.where)
        return picked

    def changes(self, choices: Mapping[str, str]) -> list[Change]:
        """The `<Replace>` and `<Edit>` changes, `<USER_INPUT>` replaced by the chosen options."""
        chosen = self.chosen(choices)
        budget = [MAX_EXPANDED_NODES]
        items = self._substitute(self._changes, chosen, 0, budget)
        changes: list[Change] = []
        for number, item in enumerate((item for item in items if isinstance(item, Node)), 1):
            where = f"{self.where}: change {number} (<{item.name}>)"
            kind = item.name.lower()
            if kind not in ("replace", "edit"):
                raise PatchError(f"{where}: unknown change; <Replace> and <Edit> are known")
            file = self._path(item, "File", chosen, where)
            if kind == "replace":
                new_file = self._path(item, "NewFile", chosen, where)
                changes.append(Change("replace", file, number, new_file=new_file))
            else:
                action = item.attribute(LIST_ACTION)
                if action and action.strip():
                    parse_action(action, where)
                changes.append(Change("edit", file, number, edit=item))
            if len(changes) > MAX_OPERATIONS:
                raise PatchError(f"{self.where}: more than {MAX_OPERATIONS} changes")
        return changes

    def _path(self, item: Node, attribute: str, chosen: dict[str, tuple[str, list[Node | str]]], where: str) -> str:
        value = item.attribute(attribute)
        if value is None:
            input_name = item.attribute(attribute + "UserInput")
            if input_name is None:
                raise PatchError(f"{where}: has neither {attribute} nor {attribute}UserInput")
            picked = chosen.get(input_name.strip().lower())
            if picked is None:
                raise PatchError(f"{where}: {attribute}UserInput names no input ({input_name!r})")
            value = "".join(child if isinstance(child, str) else child.inner_text() for child in picked[1])
        if not value.strip():
            raise PatchError(f"{where}: {attribute} is empty")
        return value.strip()

    def _substitute(
        self,
        items: list[Node | str],
        chosen: dict[str, tuple[str, list[Node | str]]],
        depth: int,
        budget: list[int],
    ) -> list[Node | str]:
        result: list[Node | str] = []
        for item in items:
            if isinstance(item, str):
                result.append(item)
                continue
            budget[0] -= 1
            if budget[0] < 0:
                raise PatchError(f"{self.where}: user inputs expand past {MAX_EXPANDED_NODES} elements")
            if item.name.lower() == "user_input":
                name = item.text().strip()
                picked = chosen.get(name.lower())
                if picked is None:
                    known = ", ".join(repr(box.name) for box in self.inputs) or "none"
                    raise PatchError(f"{self.where}: <USER_INPUT>{name}</USER_INPUT> names no input (inputs: {known})")
                if depth >= MAX_INPUT_DEPTH:
                    raise PatchError(f"{self.where}: user inputs nest deeper than {MAX_INPUT_DEPTH} (a loop?)")
                result.extend(self._substitute(picked[1], chosen, depth + 1, budget))
            else:
                children = self._substitute(item.children, chosen, depth, budget)
                result.append(Node(item.name, dict(item.attributes), children))
        return _join_text(result)


def _join_text(items: list[Node | str]) -> list[Node | str]:
    joined: list[Node | str] = []
    for item in items:
        if isinstance(item, str) and joined and isinstance(joined[-1], str):
            joined[-1] += item
        else:
            joined.append(item)
    return joined


def game_path(raw: str, where: str) -> tuple[str, str]:
    """A modinfo game path as (pack relative to the game folder, member inside it):
    `build\\pc\\cache\\Misc.vpp\\x.xtbl` -> ("data/Misc.vpp_pc", "x.xtbl")."""
    path = check_relative(raw.strip(), f"{where}: {raw!r}")
    parts = path.split("/")
    if [part.lower() for part in parts[:3]] == ["build", "pc", "cache"]:
        parts = ["data", *parts[3:]]
    for index, part in enumerate(parts):
        if part.lower().endswith(".vpp"):
            parts[index] = part = part + "_pc"
        if part.lower().endswith(".vpp_pc"):
            break
    else:
        raise PatchError(f"{where}: {raw!r} names no .vpp_pc pack")
    if index == len(parts) - 1:
        raise PatchError(f"{where}: {raw!r} names a pack, not a member inside it")
    pack = parts[: index + 1]
    if index == 0:
        pack = ["data", *pack]  # SyncFaction's guess: packs live in data/
    return "/".join(pack), "/".join(parts[index + 1 :])


# -- the patch --------------------------------------------------------------------------------------


class ModInfoPatch(Patch):
    """A modinfo.xml mod read against one target: a `replace` per member it changes. Its blobs
    are the members it edited (bytes) and the mod's files it puts in (`ModFiles` keys)."""

    def __init__(
        self,
        path: str,
        mod: ModInfo,
        operations: list[Operation],
        blobs: dict[str, bytes | str],
        files: ModFiles,
        notes: list[str],
    ) -> None:
        manifest = {
            "name": mod.name or os.path.basename(os.path.normpath(path)),
            "author": mod.author or None,
            "description": mod.description or None,
            "links": mod.links,
            "version": None,
        }
        held: dict[str, bytes | tuple[BlobSource, str]] = {
            name: value if isinstance(value, bytes) else (files, value) for name, value in blobs.items()
        }
        super().__init__(path, manifest, operations, MixedBlobs(held, [files]))
        self.mod = mod
        self.notes = notes
        self.used_files = frozenset(value for value in blobs.values() if isinstance(value, str))


class LoadedMod:
    """A modinfo.xml mod opened and parsed, not yet read against a target."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.path.normpath(os.fspath(path))  # "mod/" is named "mod" in the undo record
        self.files = open_mod_files(self.path)
        try:
            candidates = self.files.named(MODINFO_NAME)
            if not candidates:
                raise PatchError(f"{self.path}: no {MODINFO_NAME} at its root or in a subfolder")
            shallowest = [name for name in candidates if name.count("/") == min(c.count("/") for c in candidates)]
            if len(shallowest) > 1:
                raise PatchError(f"{self.path}: several {MODINFO_NAME}: {', '.join(shallowest)}")
            self.modinfo = shallowest[0]
            key = self.files.find(self.modinfo)
            assert key is not None
            folder = self.modinfo.rpartition("/")[0]
            self.mod = ModInfo(self.files.read(key, MAX_MODINFO_BYTES), f"{self.path}: {self.modinfo}", folder)
        except BaseException:
            self.files.close()
            raise

    def named_files(self, choices: Mapping[str, str] | None = None) -> frozenset[str]:
        """The keys of the mod's files its changes put in (for the chosen options)."""
        found = set()
        folder = self.mod.folder
        for change in self.mod.changes(choices or {}):
            if change.kind == "replace" and change.new_file:
                relative = check_relative(change.new_file, self.mod.where)
                key = self.files.find(f"{folder}/{relative}" if folder else relative)
                if key is not None:
                    found.add(key)
        return frozenset(found)

    def info(self, choices: Mapping[str, str] | None = None) -> dict[str, Any]:
        """What `gamepak patch info MOD --json` prints: metadata, inputs and their options, and
        the changes for the chosen options (default: each input's first)."""
        mod = self.mod
        refuse_unknown_choices(choices or {}, [self])
        chosen = mod.chosen(choices or {})
        return {
            "path": self.path,
            "kind": "modinfo.xml",
            "modinfo": self.modinfo,
            "name": mod.name or os.path.basename(os.path.normpath(self.path)),
            "author": mod.author or None,
            "description": mod.description or None,
            "links": mod.links,
            "inputs": [
                {
                    "name": box.name,
                    "display_name": box.display_name,
                    "options": [name for name, _ in box.options],
                    "chosen": chosen[box.name.lower()][0],
                }
                for box in mod.inputs
            ],
            "changes": [change.to_dict() for change in mod.changes(choices or {})],
            **self._beside(choices),
        }

    def _beside(self, choices: Mapping[str, str] | None) -> dict[str, Any]:
        """The SyncFaction forms beside modinfo.xml (loose archives, whole files, deltas) and the
        files neither applies: `syncfaction_changes` and `ignored`."""
        from .syncfaction import describe_mod

        beside = describe_mod(self.path, self.files, self.files.find(self.modinfo), self.named_files(choices))
        return {"syncfaction_changes": beside["changes"], "ignored": beside["ignored"]}

    def patch(
        self,
        target: str | os.PathLike[str],
        choices: Mapping[str, str] | None = None,
        stacked: dict[tuple[str, str], bytes] | None = None,
    ) -> ModInfoPatch:
        """The mod's operations for the game folder `target` (this object's files pass to the
        patch, which closes them). `stacked`: members as earlier mods' edits left them
        ((file, member) -> bytes); this mod's edits apply on top of them, and its own results are
        added."""
        try:
            return _Reader(self, os.fspath(target), stacked).patch(self.mod.changes(choices or {}))
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        self.files.close()

    def __enter__(self) -> LoadedMod:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def refuse_unknown_choices(choices: Mapping[str, str], mods: list[LoadedMod]) -> None:
    """UsageError for a `--choose NAME` that no mod given has an input for."""
    known = {box.name.lower(): box.name for loaded in mods for box in loaded.mod.inputs}
    for name in choices:
        if name.strip().lower() not in known:
            if not mods:
                raise UsageError(f"--choose {name}: only modinfo.xml mods take choices, and none was given")
            names = ", ".join(repr(value) for value in known.values()) or "none"
            raise UsageError(f"--choose {name}: no mod given has an input of that name; inputs: {names}")


class _Reader:
    """Reads the target's members a mod changes and computes their new bytes."""

    def __init__(self, loaded: LoadedMod, target: str, stacked: dict[tuple[str, str], bytes] | None = None) -> None:
        self.loaded = loaded
        self.target = target
        self.stacked = stacked
        self.where = loaded.mod.where
        if not os.path.isdir(target):
            raise PatchError(f"{target}: a modinfo.xml mod applies to a game folder (the one holding data/)")
        # The game's folder, or its data/ folder itself (as patch files are applied to).
        has_data = _child(target, "data") is not None
        self.inside_data = not has_data and os.path.basename(os.path.normpath(target)).lower() == "data"
        if not has_data and not self.inside_data:
            raise PatchError(f"{target}: no data/ folder here; give the game's folder (or its data/)")
        self.archives: dict[str, Archive] = {}
        self.nested: list[Archive] = []

    def patch(self, changes: list[Change]) -> ModInfoPatch:
        groups: dict[tuple[str, str], list[Change]] = {}
        names: dict[tuple[str, str], tuple[str, str]] = {}
        for change in changes:
            pack, member = game_path(change.file, f"{self.where}: change {change.number}")
            key = (pack.lower(), member.lower())
            groups.setdefault(key, []).append(change)
            names.setdefault(key, (pack, member))
        mirrored = set()
        for (pack, member), group in list(groups.items()):
            twin = (_MIRRORED.get(pack, ""), member)
            if twin[0] and member.endswith(".xtbl") and twin not in groups:
                groups[twin] = group
                names[twin] = (twin[0], names[(pack, member)][1])
                mirrored.add(twin)
        operations: list[Operation] = []
        blobs: dict[str, bytes | str] = {}
        notes: list[str] = []
        try:
            for key, group in groups.items():
                pack, member = names[key]
                found = self._member(pack, member, key in mirrored, f"{self.where}: change {group[0].number}")
                if found is None:
                    notes.append(f"{pack}: {member}: not in the game, the copy of the change to its twin is skipped")
                    continue
                file, real_member, archive, entry = found
                blob = f"blobs/{len(blobs)}"
                start = self.stacked.get((file, real_member)) if self.stacked is not None else None
                blobs[blob], digest, size = self._new_bytes(group, file, real_member, archive, entry, start)
                new = blobs[blob]
                if self.stacked is not None and isinstance(new, bytes):  # edited: later mods edit this
                    self.stacked[(file, real_member)] = new
                operations.append(
                    Operation("replace", file, real_member, target_sha256=digest, size=size, blob=blob, encoding="raw")
                )
        finally:
            for archive in [*self.nested, *self.archives.values()]:
                archive.close()
        return ModInfoPatch(self.loaded.path, self.loaded.mod, operations, blobs, self.loaded.files, notes)

    def _member(self, pack: str, member: str, optional: bool, where: str) -> tuple[str, str, Archive, Entry] | None:
        from ...core.opening import open as open_archive

        parts = pack.split("/")
        if self.inside_data:
            if parts[0].lower() != "data":
                raise PatchError(f"{where}: {pack} is outside data/; give the game's folder")
            parts = parts[1:]
        real = real_path(self.target, parts)
        if real is None:
            if optional:
                return None
            raise PatchError(f"{where}: the game has no {pack} (in {self.target})")
        archive = self.archives.get(real)
        if archive is None:
            archive = self.archives[real] = open_archive(os.path.join(self.target, *real.split("/")))
        found = _locate(archive, member, self.nested)
        if found is None:
            if optional:
                return None
            raise PatchError(f"{where}: {pack} has no member {member!r}")
        return (real, *found)

    def _new_bytes(
        self, group: list[Change], file: str, member: str, archive: Archive, entry: Entry, start: bytes | None = None
    ) -> tuple[bytes | str, str, int]:
        """(the blob: bytes, or the key of a mod file; its sha256; its size). `start`: the
        member as an earlier mod's edits left it, for this mod's edits to apply to."""
        replacement: str | None = None
        for change in group:
            if change.kind == "replace":
                assert change.new_file is not None
                replacement = self._mod_file(change)
        edits = [change for change in group if change.kind == "edit"]
        if not edits:
            assert replacement is not None
            digest, size = self.loaded.files.digest(replacement)
            return replacement, digest, size
        where = f"{file}: {member}"
        first = f"{self.where}: change {edits[0].number}"
        if not member.lower().endswith(XML_EXTENSIONS):
            raise PatchError(f"{first}: edits {where}; only {', '.join(XML_EXTENSIONS)} members hold XML")
        if replacement is not None:
            base = self.loaded.files.read(replacement, MAX_XML_BYTES)
        elif start is not None:
            base = start
        else:
            if entry.size > MAX_XML_BYTES:
                raise PatchError(f"{first}: {where}: {entry.size} bytes, more than the {MAX_XML_BYTES} an edit reads")
            base = archive.read(entry)
        try:
            document = XmlDocument(base, where)
        except PatchError as exc:
            raise PatchError(f"{first}: {exc}") from None
        for change in edits:
            assert change.edit is not None
            try:
                apply_edit(document, change.edit)
            except PatchError as exc:
                raise PatchError(f"{self.where}: change {change.number}: {exc}") from None
        data = document.to_bytes()
        return data, hashlib.sha256(data).hexdigest(), len(data)

    def _mod_file(self, change: Change) -> str:
        assert change.new_file is not None
        where = f"{self.where}: change {change.number}"
        relative = check_relative(change.new_file, f"{where}: NewFile")
        folder = self.loaded.mod.folder
        joined = check_relative(f"{folder}/{relative}" if folder else relative, f"{where}: NewFile")
        key = self.loaded.files.find(joined)
        if key is None:
            raise PatchError(f"{where}: the mod has no file {change.new_file!r} (looked for {joined})")
        return key


def _child(folder: str, name: str) -> str | None:
    found = entry_named(folder, name)
    return None if found is None or not os.path.isdir(os.path.join(folder, found)) else os.path.join(folder, found)


def _locate(archive: Archive, member: str, opened: list[Archive]) -> tuple[str, Archive, Entry] | None:
    """A member's real path (names as the pack spells them), descending into nested packs."""
    from ...errors import GamepakError

    entry = _entry(archive, member)
    if entry is not None:
        return entry.name, archive, entry
    head, _, rest = member.partition("/")
    if not rest:
        return None
    outer = _entry(archive, head)
    if outer is None:
        return None
    try:
        inner = archive.open_archive(outer)
    except GamepakError:
        return None
    opened.append(inner)
    found = _locate(inner, rest, opened)
    return None if found is None else (f"{outer.name}/{found[0]}", found[1], found[2])


def _entry(archive: Archive, name: str) -> Entry | None:
    from ...errors import MemberNotFoundError

    try:
        return archive.getinfo(name)
    except MemberNotFoundError:
        lowered = name.lower()
        return next((entry for entry in archive.infolist() if entry.name.lower() == lowered), None)
