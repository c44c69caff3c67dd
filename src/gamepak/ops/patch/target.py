"""What a patch is checked against and written to: the target's current state (`Target`), and
the plan made from it (`Plan`, one `Step` per operation).

apply (the plan, its budgets against what a member replaces, and the per-pack rewrite), undo
(the reverse of each applied step) and install (the apply over all three) read the target
through one `Target`: each member is read and hashed once for the check, the undo record and
the new bytes. This module sits below them all and imports none of them (the
budgets of `limits` reach it only through `scratch.NewContent`, made on first use).
"""

from __future__ import annotations

import os

from .container import MAX_MEMBER_BYTES, Operation, Patch, PatchError
from .digests import file_sha256, member_sha256

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from ...core.archive import Archive
    from ..edit import Editor
    from .scratch import NewContent


class Step:
    """One operation of one patch, and what the plan does with it."""

    def __init__(
        self,
        patch: Patch,
        operation: Operation,
        action: str,
        reason: str = "",
        *,
        carried_by: str | None = None,
        stacked_start: bytes | None = None,
    ) -> None:
        self.patch = patch
        self.operation = operation
        self.action = action  # "apply", "skip", "refuse", "overridden" or "stacked" (carried by a later patch)
        self.reason = reason
        # Stacked modinfo.xml edits: the later patch whose change of this member carries this
        # step's edits too; and, on that later step, the member as the earlier edits left it.
        self.carried_by = carried_by
        self.stacked_start = stacked_start
        # A zone changed object by object (`zones.judge`): the changes that take it back.
        self.reverse_changes: bytes | None = None
        # What an add or replace writes, once computed (`Target.new_bytes_ahead`): computed once for
        # the undo record's reverse delta and for the write. Its bytes, or the path of a scratch
        # file holding them (`scratch.NewContent`: an apply holds a bounded amount in memory).
        self.new: bytes | str | None = None

    def new_bytes(self) -> bytes | None:
        """`new` as bytes (a scratch file is read: only for small members), None when not computed."""
        if isinstance(self.new, str):
            from ...core.files import read_file

            return read_file(self.new, limit=MAX_MEMBER_BYTES, error=PatchError)
        return self.new

    def line(self) -> str:
        why = f": {self.reason}" if self.reason else ""
        return f"{self.action:<10} {self.operation.describe()} [{self.patch.name}]{why}"


class Plan:
    """What applying patches to a target would do."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.steps: list[Step] = []
        self.conflicts: list[tuple[str, list[str]]] = []  # (member, patch names)

    @property
    def refusals(self) -> list[Step]:
        return [step for step in self.steps if step.action == "refuse"]

    @property
    def ok(self) -> bool:
        """Whether the patches apply cleanly."""
        return not self.conflicts and not self.refusals

    @property
    def to_apply(self) -> list[Step]:
        return [step for step in self.steps if step.action == "apply"]

    @property
    def to_record(self) -> list[Step]:
        """The steps the undo record takes back, in patch order: those applied, and those
        stacked into a change that is applied."""
        applied = {step.operation.key for step in self.to_apply}
        return [
            step
            for step in self.steps
            if step.action == "apply" or (step.action == "stacked" and step.operation.key in applied)
        ]

    def problems(self) -> list[str]:
        lines = [f"conflict: {member} is changed differently by {', '.join(names)}" for member, names in self.conflicts]
        lines += [f"{step.patch.name}: {step.operation.where}: {step.reason}" for step in self.refusals]
        return lines

    def lines(self) -> list[str]:
        return [step.line() for step in self.steps] + self.problems()

    def notes(self) -> list[str]:
        """What the mods said while being read (a data mode kept, a mirrored change skipped),
        once each, in patch order."""
        seen: dict[int, list[str]] = {}
        for step in self.steps:
            seen.setdefault(id(step.patch), list(getattr(step.patch, "notes", []) or []))
        return [note for notes in seen.values() for note in notes]

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "ok": self.ok,
            "steps": [
                {"action": step.action, "patch": step.patch.name, "reason": step.reason} | step.operation.to_dict()
                for step in self.steps
            ],
            "conflicts": [{"member": member, "patches": names} for member, names in self.conflicts],
        }


# Replaced members up to this size get a reverse delta in the undo record, which computes
# their new bytes then; larger ones keep their old bytes whole there.
UNDO_DELTA_BYTES = 1 << 20
# Old members read during planning are kept, up to this many bytes in all, for the undo record
# and the deltas' bases (one read and one hash per member for a whole apply); the others are
# hashed as a stream, and read again (streamed into the undo record) when needed. In all, not per
# member: a mod replacing a thousand members must not keep a thousand members' bytes.
KEPT_BYTES = 64 << 20


class Target:
    """Reads the current state of the target: member and file hashes, opened packs cached.
    With `keep`, the bytes and hashes it reads are kept for the rest of one apply (plan, undo
    record, writing), and so is the new content each operation computes (`scratch.NewContent`:
    in memory within a budget, else in scratch files, removed when closed); and each pack is opened
    by the editor that will rewrite it: locked from the plan to the commit, so the pack that
    was checked is the one written, and read through one reader (what the plan decoded, e.g.
    an RFG stream's resume points, serves the rewrite)."""

    def __init__(self, target: str, *, keep: bool = False) -> None:
        self.target = target
        self.is_pack = os.path.isfile(target)
        if not self.is_pack and not os.path.isdir(target):
            raise PatchError(f"{target}: no such pack or folder")
        self._archives: dict[str, Archive] = {}
        self._editors: dict[str, Editor] = {}
        self.keep = keep
        self._bytes: dict[tuple[str, str | None], bytes | None] = {}
        self._kept = 0  # bytes in `_bytes`
        self._hashes: dict[tuple[str, str | None], str | None] = {}
        self._ahead: Any = None  # the worker thread of `new_bytes_ahead`
        self._new: NewContent | None = None

    @property
    def new_content(self) -> NewContent:
        """Where the new content of adds and replaces goes (made on first use, in the caller's
        thread: it takes the `limits` in force there)."""
        if self._new is None:
            from .scratch import NewContent

            self._new = NewContent(self.target)
        return self._new

    def path_of(self, operation: Operation) -> str:
        if self.is_pack:
            if operation.member is None:
                raise PatchError(
                    f"{self.target}: the patch changes the plain file {operation.file!r}; apply it to a folder"
                )
            return self.target
        if operation.file == "":
            raise PatchError(f"{self.target}: the patch is for one pack, not a folder")
        return os.path.join(self.target, *operation.file.split("/"))

    def archive(self, path: str) -> Archive:
        archive = self._archives.get(path)
        if archive is None:
            from ...core.opening import open as open_archive

            if not os.path.isfile(path):
                raise PatchError(f"{path}: missing (the patch changes members of it)")
            if self.keep:
                from ..edit import Editor

                editor = self._editors[path] = Editor(path)
                archive = editor.archive
            else:
                archive = open_archive(path)
            self._archives[path] = archive
        return archive

    def take_editor(self, path: str) -> Editor | None:
        """The editor the plan opened `path` with, handed over to write it (None if none)."""
        editor = self._editors.pop(path, None)
        if editor is not None:
            del self._archives[path]
        return editor

    def member_index(self, operation: Operation) -> int | None:
        """The member's index in the pack holding it."""
        from ...core.nested import resolve

        if operation.member is None:
            return None
        _, entry = resolve(self.archive(self.path_of(operation)), operation.member)
        return entry.index

    def member_bytes(self, operation: Operation, member: str | None = None) -> bytes | None:
        """The member's (or plain file's) bytes, read whole: kept (with `keep`) while
        `KEPT_BYTES` in all allow."""
        key = (self.path_of(operation), operation.member if member is None else member)
        if key in self._bytes:
            return self._bytes[key]
        data = self._read(operation, member)
        if self.keep and (data is None or self._kept + len(data) <= KEPT_BYTES):
            self._bytes[key] = data
            self._kept += 0 if data is None else len(data)
        return data

    def hold(self, size: int) -> bool:
        """Count `size` more bytes of old content held in memory (a reverse delta of the undo
        record) against `KEPT_BYTES`; False, counting nothing, when they do not fit."""
        if self._kept + size > KEPT_BYTES:
            return False
        self._kept += size
        return True

    def kept_bytes(self, operation: Operation) -> bytes | None:
        """The member's bytes if kept, else None (they are then streamed: `member_chunks`)."""
        return self._bytes.get((self.path_of(operation), operation.member))

    def _located(self, operation: Operation, member: str | None = None) -> tuple[Archive, Any] | None:
        """(the pack, the entry) holding a member; None when it has no such member."""
        from ...core.nested import resolve
        from ...errors import MemberNotFoundError

        name = operation.member if member is None else member
        assert name is not None
        try:
            archive, entry = resolve(self.archive(self.path_of(operation)), name)
        except MemberNotFoundError:
            return None
        if self.keep:
            # The rewrite reads parts of the pack again (an RFG stream's window before the
            # changed member): the read leaves resume points.
            archive.keep_seek_points()
        return archive, entry

    def _read(self, operation: Operation, member: str | None = None) -> bytes | None:
        path = self.path_of(operation)
        if (operation.member if member is None else member) is None:
            if not os.path.isfile(path):
                return None
            from ...core.files import read_file

            return read_file(path, limit=MAX_MEMBER_BYTES, error=PatchError)
        located = self._located(operation, member)
        return None if located is None else located[0].read(located[1])

    def size_of(self, operation: Operation) -> int | None:
        """The member's (or plain file's) size now; None when missing."""
        if operation.member is None:
            path = self.path_of(operation)
            return os.path.getsize(path) if os.path.isfile(path) else None
        located = self._located(operation)
        return None if located is None else int(located[1].size)

    def member_chunks(self, operation: Operation) -> Iterator[bytes]:
        """The member's (or plain file's) bytes in chunks, never held whole."""
        from .container import BLOB_CHUNK

        if operation.member is None:
            stream: Any = open(self.path_of(operation), "rb")  # noqa: SIM115 - closed below
        else:
            located = self._located(operation)
            if located is None:
                raise PatchError(f"{self.target}: {operation.where}: vanished while applying")
            stream = located[0].open(located[1])
        with stream:
            while chunk := stream.read(BLOB_CHUNK):
                yield chunk

    def sha256(self, operation: Operation, member: str | None = None) -> str | None:
        key = (self.path_of(operation), operation.member if member is None else member)
        if key not in self._hashes:
            again = self.keep and operation.op in ("replace", "remove") and member is None
            size = self.size_of(operation) if again else None
            if size is not None and self._kept + size <= KEPT_BYTES:
                # Its bytes are needed again (the undo record, the delta's base): read them once.
                import hashlib

                data = self.member_bytes(operation)
                self._hashes[key] = None if data is None else hashlib.sha256(data).hexdigest()
            else:
                self._hashes[key] = self._sha256(operation, member)
        return self._hashes[key]

    def _sha256(self, operation: Operation, member: str | None = None) -> str | None:

        path = self.path_of(operation)
        if (operation.member if member is None else member) is None:
            return file_sha256(path) if os.path.isfile(path) else None
        located = self._located(operation, member)
        return None if located is None else member_sha256(*located)

    def new_bytes_ahead(self, steps: list[Step]) -> None:
        """Compute each add's and replace's new content (`step.new`): small ones now (the undo
        record's reverse delta needs them), large ones (read and checked, a delta decoded against
        the kept base: work that mostly releases the GIL) in a worker thread while the caller
        writes the undo record; `finish_ahead` waits for them. Members whose base is not kept are
        computed when written."""
        content = self.new_content
        jobs = []
        for step in steps:
            operation = step.operation
            if operation.op not in ("add", "replace") or step.new is not None:
                continue  # computed by the plan already (a zone's replayed changes)
            if (operation.size or 0) <= UNDO_DELTA_BYTES:
                base = self.member_bytes(operation) if operation.encoding == "zstd-delta" else None
                step.new = content.make(step.patch, operation, base)
                continue
            base = None
            if operation.encoding == "zstd-delta":
                key = (self.path_of(operation), operation.member)
                base = self._bytes.get(key)
                if base is None:
                    continue
            jobs.append((step, base))
        if not jobs:
            return
        import threading

        results: list[tuple[Step, bytes | str]] = []
        failures: list[BaseException] = []

        def work() -> None:
            try:
                for step, base in jobs:
                    results.append((step, content.make(step.patch, step.operation, base)))
            except BaseException as exc:  # raised in the caller by `finish_ahead`
                failures.append(exc)

        thread = threading.Thread(target=work, name="gamepak-patch-decode", daemon=True)
        thread.start()
        self._ahead = (thread, results, failures)

    def finish_ahead(self) -> None:
        """Wait for `new_bytes_ahead`'s worker; keep its bytes, or raise what it raised."""
        if self._ahead is None:
            return
        thread, results, failures = self._ahead
        self._ahead = None
        thread.join()
        if failures:
            raise failures[0]
        for step, data in results:
            step.new = data

    def close_archives(self) -> None:
        """Close the packs read and drop the editors not handed over; kept bytes stay."""
        for path, archive in self._archives.items():
            if path not in self._editors:
                archive.close()
        for editor in self._editors.values():
            editor.abort()
        self._archives.clear()
        self._editors.clear()

    def close_reading(self) -> None:
        """Close the packs and drop the bytes read; the new content stays (`close` removes it)."""
        if self._ahead is not None:
            self._ahead[0].join()  # nothing it computed is used any more
            self._ahead = None
        self.close_archives()
        self._bytes.clear()
        self._hashes.clear()

    def close(self) -> None:
        self.close_reading()
        if self._new is not None:
            self._new.close()
