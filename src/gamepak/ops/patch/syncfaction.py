"""SyncFaction's loose-archive mods (Red Faction Guerrilla), read as a patch.

A mod folder is laid out like the game's root. `data/<pack>.vpp_pc/` (matched without case;
`.vpp` means `.vpp_pc`) holds members that replace same-named ones or are added after the
others, `.delete.json` (a JSON array of member names to remove) and `.options.json` (the pack's
data mode; gamepak keeps the pack's own mode, so it is read and reported, not applied). Such a
mod says nothing about the base it was made on: its replacements apply to whatever the member
holds (`base_sha256` left open), so conflicts with other patches are still found, and the undo
record keeps the old bytes as for any patch.
"""

from __future__ import annotations

import json
import os

from .container import Operation, Patch, PatchError, check_relative
from .make import file_sha256

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

_MAX_DELETE_JSON = 1 << 20


def is_mod_folder(path: str) -> bool:
    """Whether `path` is a SyncFaction mod folder: loose archives (`data/<pack>.vpp_pc/`), whole
    packs (`data/<pack>.vpp_pc` files) or whole-file deltas (`data/<name>.xdelta`)."""
    data = _child(path, "data")
    return data is not None and any(_is_mod_data(name) for name in os.listdir(data))


def _is_mod_data(name: str) -> bool:
    """Whether an entry of a mod's data/ is something the mod changes the game with: a pack, a
    loose archive (a folder named as a pack) or a delta."""
    return _pack_name(name) is not None or name.lower().endswith(".xdelta")


def zipped_mod_root(keys: Iterable[str]) -> str | None:
    """Where a zipped mod's `data/` folder sits ("" at the top, "folder/" one folder down) when it
    holds what `is_mod_folder` looks for; None when it holds none. `keys`: the zip's file names,
    lowercase."""
    roots = set()
    for key in keys:
        parts = key.split("/")
        for depth in (0, 1):
            if len(parts) >= depth + 2 and parts[depth] == "data" and _is_mod_data(parts[depth + 1]):
                roots.add("".join(f"{part}/" for part in parts[:depth]))
    return min(roots, key=lambda root: (root.count("/"), root)) if roots else None


def _child(folder: str, name: str) -> str | None:
    if not os.path.isdir(folder):
        return None
    for entry in os.listdir(folder):
        if entry.lower() == name:
            return os.path.join(folder, entry)
    return None


def _pack_name(name: str) -> str | None:
    lowered = name.lower()
    if lowered.endswith(".vpp"):
        return lowered + "_pc"
    if lowered.endswith((".vpp_pc", ".str2_pc")):
        return lowered
    return None


class FolderPatch(Patch):
    """A patch whose blobs are files of a mod folder."""

    def __init__(
        self,
        path: str,
        operations: list[Operation],
        files: dict[str, str],
        notes: list[str],
        scratch: str | None = None,
    ) -> None:
        super().__init__(path, {"name": os.path.basename(os.path.normpath(path)), "version": None}, operations, None)
        self._files = files
        self.notes = notes
        self._scratch = scratch  # decoded .xdelta results, removed on close

    def blob(self, operation: Operation) -> bytes:
        assert operation.blob is not None
        with open(self._files[operation.blob], "rb") as handle:
            data = handle.read((operation.size or 0) + 1)
        if len(data) != operation.size:
            raise PatchError(f"{self._files[operation.blob]}: changed while being applied")
        return data

    def close(self) -> None:
        if self._scratch is not None:
            import shutil

            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None


def loose_archive_patch(mod: str, target: str) -> FolderPatch:
    """The operations of a SyncFaction mod folder `mod` for the game folder `target`."""
    from ...core.opening import open as open_archive
    from ..inputs import scan_folder

    data = _child(mod, "data")
    target_data = _child(target, "data")
    if data is None or target_data is None:
        raise PatchError(f"{mod}: a loose-archive mod needs data/ in the mod and in {target}")
    operations: list[Operation] = []
    files: dict[str, str] = {}
    notes: list[str] = []
    packs_in_target = {entry.lower(): entry for entry in os.listdir(target_data)}
    scratch = _whole_files(data, target_data, operations, files, notes)
    for folder_name in sorted(os.listdir(data)):
        folder = os.path.join(data, folder_name)
        pack = _pack_name(folder_name)
        if pack is None or not os.path.isdir(folder):
            continue
        if pack not in packs_in_target:
            raise PatchError(f"{folder}: the game has no data/{pack}")
        file = check_relative(f"{os.path.basename(target_data)}/{packs_in_target[pack]}", folder)
        with open_archive(os.path.join(target_data, packs_in_target[pack])) as archive:
            existing = {name.lower(): name for name in archive.namelist()}
        for relative, path in scan_folder(folder).members:
            lowered = relative.lower()
            if lowered == ".delete.json":
                for name in _delete_list(path):
                    member = existing.get(name.lower())
                    if member is not None:
                        operations.append(Operation("remove", file, member))
                continue
            if lowered == ".options.json":
                notes.append(f"{path}: the pack keeps its own data mode ({_options(path)} asked)")
                continue
            member = existing.get(lowered, relative)
            digest = file_sha256(path)
            blob = f"blobs/{len(files)}"
            files[blob] = path
            operations.append(
                Operation(
                    "replace" if lowered in existing else "add",
                    file,
                    check_relative(member, path),
                    target_sha256=digest,
                    size=os.path.getsize(path),
                    blob=blob,
                    encoding="raw",
                )
            )
    return FolderPatch(mod, operations, files, notes, scratch)


def describe_loose_mod(mod: str) -> dict[str, Any]:
    """What a loose-archive mod folder changes, without a game to apply it to (`patch info`):
    each member it puts (replacing or adding, which the game's pack decides) or removes, each
    whole file it replaces or patches with an .xdelta, the data modes it asks for."""
    from ..inputs import scan_folder

    data = _child(mod, "data") or os.path.join(mod, "data")  # is_mod_folder(mod) found it
    changes: list[dict[str, Any]] = []
    options: dict[str, str] = {}
    for name in sorted(os.listdir(data)):
        path = os.path.join(data, name)
        pack = _pack_name(name)
        if os.path.isfile(path):
            if pack is not None:
                changes.append({"action": "replace file", "file": f"data/{pack}", "size": os.path.getsize(path)})
            elif name.lower().endswith(".xdelta"):
                changes.append({"action": "xdelta", "file": f"data/{name[: -len('.xdelta')]}.*"})
            continue
        if pack is None or not os.path.isdir(path):
            continue
        for relative, member_path in scan_folder(path).members:
            if relative.lower() == ".delete.json":
                changes += [
                    {"action": "remove", "file": f"data/{pack}", "member": n} for n in _delete_list(member_path)
                ]
            elif relative.lower() == ".options.json":
                options[f"data/{pack}"] = _options(member_path)
            else:
                size = os.path.getsize(member_path)
                changes.append({"action": "put", "file": f"data/{pack}", "member": relative, "size": size})
    return {"name": os.path.basename(os.path.normpath(mod)), "changes": changes, "data_modes": options}


def _whole_files(
    data: str, target_data: str, operations: list[Operation], files: dict[str, str], notes: list[str]
) -> str | None:
    """Whole-file changes of a mod's data folder: a pack file replaces the game's outright, and
    `<name>.xdelta` (VCDIFF, xdelta3) patches the game's file of that name with another last
    extension (`misc.xdelta` -> `misc.vpp_pc`). A delta is decoded now, against the file the
    game has: one made for other bytes is refused before anything is written (by the checksum
    xdelta3 stores; a delta without one gets a note). Returns the
    scratch folder holding the decoded files (the patch removes it when closed)."""
    scratch = None
    in_target = {entry.lower(): entry for entry in os.listdir(target_data)}
    for name in sorted(os.listdir(data)):
        path = os.path.join(data, name)
        if not os.path.isfile(path):
            continue
        lowered = name.lower()
        if _pack_name(name) is not None:
            target_name = in_target.get(_pack_name(name) or lowered, name)
            new_path = path
        elif lowered.endswith(".xdelta"):
            stem = lowered[: -len(".xdelta")]
            matches = sorted(entry for key, entry in in_target.items() if os.path.splitext(key)[0] == stem)
            if not matches:
                raise PatchError(f"{path}: the game has no data/{stem}.* for this delta to patch")
            target_name = next((m for m in matches if m.lower().endswith(".vpp_pc")), matches[0])
            if scratch is None:
                from ...core.atomic import temporary_folder

                scratch = temporary_folder("xdelta")
            new_path = os.path.join(scratch, f"{len(files)}-{target_name}")
            _decode_xdelta(os.path.join(target_data, target_name), path, new_path)
            if not _vcdiff_has_checksum(path):
                notes.append(
                    f"{path}: the delta carries no checksum (xdelta3 -n): whether it was made for this game's "
                    f"{target_name} cannot be checked; a wrong base gives wrong bytes"
                )
        else:
            continue
        file = check_relative(f"{os.path.basename(target_data)}/{target_name}", path)
        old = os.path.join(target_data, target_name)
        blob = f"blobs/{len(files)}"
        files[blob] = new_path
        operations.append(
            Operation(
                "replace" if os.path.exists(old) else "add",
                file,
                None,
                base_sha256=file_sha256(old) if name.lower().endswith(".xdelta") else None,
                target_sha256=file_sha256(new_path),
                size=os.path.getsize(new_path),
                blob=blob,
                encoding="raw",
            )
        )
    return scratch


def _decode_xdelta(source: str, delta: str, output: str) -> None:
    """Decode a VCDIFF delta with xdelta3 (pyxdelta); xdelta3's own complaints on stderr are
    silenced: the error raised says what failed."""
    import pyxdelta

    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
            decoded = pyxdelta.decode(source, delta, output)
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    if not decoded or not os.path.isfile(output):
        raise PatchError(
            f"{delta}: this xdelta does not apply to {source} (made for other bytes, or damaged); nothing written"
        )


def _vcdiff_has_checksum(path: str) -> bool:
    """Whether a VCDIFF delta's first window carries xdelta3's Adler-32 of its target (the
    VCD_ADLER32 bit of Win_Indicator), which is what makes a delta made for other bytes fail
    to decode. RFC 3284 header: the magic, Hdr_Indicator, then the secondary compressor's id
    (VCD_DECOMPRESS), a code table (VCD_CODETABLE) and xdelta3's application header
    (VCD_APPHEADER, bit 2), the last two as a varint length and the bytes."""
    with open(path, "rb") as handle:
        head = handle.read(1 << 16)
    if head[:3] != b"\xd6\xc3\xc4" or len(head) < 6:
        return False
    indicator = head[4]
    position = 5 + (indicator & 1)
    for bit in (2, 4):
        if indicator & bit:
            length, position = _varint(head, position)
            position += length
    return position < len(head) and bool(head[position] & 4)


def _varint(data: bytes, position: int) -> tuple[int, int]:
    """A VCDIFF integer (7 bits a byte, most significant first) and the position after it."""
    value = 0
    for _ in range(10):
        if position >= len(data):
            break
        byte = data[position]
        position += 1
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            break
    return value, position


def _delete_list(path: str) -> list[str]:
    with open(path, "rb") as handle:
        text = handle.read(_MAX_DELETE_JSON + 1)
    try:
        names: Any = json.loads(text)
    except ValueError as exc:
        raise PatchError(f"{path}: not JSON ({exc})") from None
    if len(text) > _MAX_DELETE_JSON or not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise PatchError(f"{path}: must be a JSON array of member names")
    return names


def _options(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            options = json.loads(handle.read(_MAX_DELETE_JSON))
        return str(options.get("Mode")) if isinstance(options, dict) else "?"
    except ValueError:
        return "?"
