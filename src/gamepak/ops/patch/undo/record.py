"""The undo record: what takes `apply` back, kept beside the target; its layout, and record.json
read and written (crash-safely: a new file renamed over the old).

    TARGET.gamepak-undo/
        record.json   {"format": "gamepak-undo", "version": 2,
                       "applications": [{"number": N, "patches": [{"name", "path",
                           "undo": "N-K.gpatch", "files": [FILE, ..], "carried_by": [..]}]}],
                       "files": {FILE: {"original": ORIGINAL | null, "identity": [inode, size,
                           mtime_ns] | null, "folders": [..], "restore": true (being restored)}},
                       "session": null | {"kind": "apply" | "revert", "number": N,
                           "undo": [..], "files": {FILE: STEP}},
                       "serial": N (the last kept file's number: names are never reused)}
        N-K.gpatch    the member-level reverse of patch K of application N (a patch file: the
                      replaced and removed members' old bytes, a delta where smaller, removals
                      of what it added, reverse renames)
        sN-*          a file's state before a session wrote it: a hard link of its old inode
                      (a copy where the file system has none), and journals of in-place edits
                      (`core.inplace.Journal`, written to disk before each overwrite)

    FILE        the file's path relative to the target ("" when the target is one pack)
    ORIGINAL    {"absent": true} (no such file before gamepak), or {"link": NAME | null,
                "journals": [NAME, ..]}: the link's file (else the target's) with the journals
                written back latest first is the file's original, byte for byte
    STEP        {"before": identity | null, "link": NAME | null, "journals": [..], "folders": [..]}

The record is removed only when it holds nothing: no application, no original, no session.
"""

from __future__ import annotations

import contextlib
import json
import os

from ....core.jsontext import JSON_INDENT
from ..container import PatchError, check_relative

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

RECORD_FORMAT = "gamepak-undo"
RECORD_VERSION = 2
MAX_RECORD_BYTES = 16 << 20


def record_folder(target: str) -> str:
    return os.path.abspath(target).rstrip(os.sep) + ".gamepak-undo"


def identity(path: str) -> list[int] | None:
    """What tells a file apart from the same file changed by anything else: its inode, size and
    modification time; None when there is no such file."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    return [info.st_ino, info.st_size, info.st_mtime_ns]


class Record:
    """record.json of one target, read (or empty), changed in memory and `save`d atomically."""

    def __init__(self, target: str) -> None:
        self.target = os.fspath(target)
        self.is_pack = os.path.isfile(self.target)
        self.folder = record_folder(self.target)
        self.data: dict[str, Any] = {
            "format": RECORD_FORMAT,
            "version": RECORD_VERSION,
            "applications": [],
            "files": {},
            "session": None,
        }
        path = os.path.join(self.folder, "record.json")
        if os.path.isfile(path):
            self.data = _parse(path)

    @property
    def exists(self) -> bool:
        return os.path.isdir(self.folder)

    @property
    def applications(self) -> list[dict[str, Any]]:
        return self.data["applications"]  # type: ignore[no-any-return]

    @property
    def files(self) -> dict[str, dict[str, Any]]:
        return self.data["files"]  # type: ignore[no-any-return]

    def path(self, key: str) -> str:
        """The file of the target a record key names."""
        if key == "":
            return self.target
        return os.path.join(self.target, *check_relative(key, f"{self.folder}: record").split("/"))

    def key(self, path: str) -> str:
        if self.is_pack:
            return ""
        return os.path.relpath(path, self.target).replace(os.sep, "/")

    def kept(self, name: str) -> str:
        """A file of the record folder (only its base name is taken from the record)."""
        return os.path.join(self.folder, os.path.basename(str(name)))

    def fresh_name(self, what: str) -> str:
        """A name for a new kept file that no file the record names, or holds, has: application
        numbers come back once taken back, so names count on in the record itself."""
        taken = self.referenced()
        while True:
            self.data["serial"] = serial = int(self.data.get("serial", 0)) + 1
            name = f"s{serial}-{what}"
            if name not in taken and not os.path.lexists(self.kept(name)):
                return name

    def next_number(self) -> int:
        return 1 + max((int(entry.get("number", 0)) for entry in self.applications), default=0)

    def save(self) -> None:
        from ....core.atomic import write_bytes

        os.makedirs(self.folder, exist_ok=True)
        write_bytes(
            os.path.join(self.folder, "record.json"), json.dumps(self.data, indent=JSON_INDENT).encode(), overwrite=True
        )
        _sync_folder(self.folder)

    def referenced(self) -> set[str]:
        """The record folder's files the record names."""
        names = {"record.json"}
        for application in self.applications:
            names.update(str(item.get("undo")) for item in application.get("patches", []))
        for entry in self.files.values():
            original = entry.get("original") or {}
            names.update(str(name) for name in [original.get("link"), *original.get("journals", [])] if name)
        session = self.data.get("session") or {}
        names.update(str(name) for name in session.get("undo", []))
        for step in (session.get("files") or {}).values():
            names.update(str(name) for name in [step.get("link"), *step.get("journals", [])] if name)
        return {os.path.basename(name) for name in names}

    def sweep(self) -> None:
        """Remove the record folder's files the record no longer names (a kill between a record
        write and a removal leaves some), then the folder itself when the record holds nothing."""
        if not self.exists:
            return
        if not self.applications and not self.files and not self.data.get("session"):
            import shutil

            shutil.rmtree(self.folder, ignore_errors=True)
            return
        keep = self.referenced()
        for name in os.listdir(self.folder):
            if name not in keep and not name.startswith("."):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(self.folder, name))

    def touched(self, skip: Iterable[dict[str, Any]] = ()) -> set[str]:
        """The files the applied patches (but those in `skip`) change."""
        skipped = {id(item) for item in skip}
        return {
            key
            for application in self.applications
            for item in application.get("patches", [])
            if id(item) not in skipped
            for key in item.get("files", [])
        }


def _parse(path: str) -> dict[str, Any]:
    from ....core.files import read_file

    data = read_file(path, limit=MAX_RECORD_BYTES, error=PatchError)
    try:
        record = json.loads(data)
    except ValueError as exc:
        raise PatchError(f"{path}: not an undo record ({exc})") from None
    if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT:
        raise PatchError(f"{path}: not an undo record")
    if record.get("version") == 1:
        return _from_version_1(record)
    if record.get("version") != RECORD_VERSION:
        raise PatchError(f"{path}: undo record version {record.get('version')!r}; this gamepak reads {RECORD_VERSION}")
    if not isinstance(record.get("applications"), list) or not isinstance(record.get("files"), dict):
        raise PatchError(f"{path}: applications must be a list and files a mapping")
    return record


def _from_version_1(record: dict[str, Any]) -> dict[str, Any]:
    """An older gamepak's record: its patches revert member by member (it kept no per-file
    originals that a revert by name could use)."""
    applications = [
        {
            "number": application.get("number", 0),
            "patches": [dict(item, files=[]) for item in application.get("patches", [])],
        }
        for application in record.get("applications") or []
    ]
    return {"format": RECORD_FORMAT, "version": RECORD_VERSION, "applications": applications, "files": {}}


def _sync_folder(folder: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def missing_folders(path: str, stop: str) -> list[str]:
    """The folders above `path` (up to `stop`) that do not exist, deepest first."""
    missing = []
    folder = os.path.dirname(path)
    while folder and os.path.abspath(folder) != os.path.abspath(stop) and not os.path.isdir(folder):
        missing.append(folder)
        folder = os.path.dirname(folder)
    return missing


def remove_empty(folders: Iterable[str]) -> None:
    for folder in folders:  # deepest first
        with contextlib.suppress(OSError):
            os.rmdir(folder)


def read_journal(path: str) -> Any:
    """A journal kept in the record, or None when it is empty (nothing was overwritten) or
    unusable (it gave up, or is damaged)."""
    from ....core.files import read_file
    from ....core.inplace import Journal
    from ....errors import GamepakError

    try:
        data = read_file(path)
    except GamepakError:
        return None
    if not data:
        return None
    try:
        return Journal.from_bytes(data, path)
    except GamepakError:
        return None
