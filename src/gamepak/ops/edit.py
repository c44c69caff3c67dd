"""The one editing path: plan changes (add, replace, remove, rename), then commit them per format.

    >>> with gamepak.edit("pak0.pak") as pack:
    ...     pack.replace("maps/e1m1.bsp", "build/e1m1.bsp")
    ...     pack.add("sound/new.wav", b"RIFF...")
    ...     pack.rename("progs/old.mdl", "progs/new.mdl")

Nothing touches the pack until `commit()` (called when the `with` block ends without an
exception). A commit first queues every member in the format's writer, with the pack's own
layout choices (`Archive.layout_options()`), so names and limits are refused before anything is
written. Then the format may apply the change in place (`Archive.append_edit`: PAK and JoePack
append and switch over crash-safely); otherwise the writer rebuilds the pack into a temporary
file that replaces it, copying unchanged members from the old pack (`ArchiveWriter.add_member`).

Names may run through nested packs (`outer.str2_pc/inner.cpeg_pc`): the inner pack is rebuilt
in a scratch folder, then the outer pack is edited to hold it.
"""

from __future__ import annotations

import os

from ..core.archive import Archive, PendingMember
from ..core.registry import get_format
from ..core.stored_names import check_new_name, refuse_name
from ..errors import GamepakError, MemberNotFoundError, UnsupportedFeatureError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, BinaryIO

    from ..core.writer import ArchiveWriter


class EditResult:
    """What a commit did: the names added, replaced, removed and renamed (`(old, new)`), whether
    the pack was changed in place or rebuilt, and its size before and after."""

    def __init__(self, path: str, format_name: str) -> None:
        self.path = path
        self.format_name = format_name
        self.added: list[str] = []
        self.replaced: list[str] = []
        self.removed: list[str] = []
        self.renamed: list[tuple[str, str]] = []
        self.method = "unchanged"  # "in place", "rebuilt" or "unchanged"
        self.old_size = 0
        self.new_size = 0
        # Bytes after the last member's data that an in-place edit wrote over or cut off (a
        # JoePack's stale tail): the members are all kept, but the file is not what it was.
        self.dropped_tail = 0

    @property
    def changed(self) -> bool:
        """Whether the edit changes any member."""
        return bool(self.added or self.replaced or self.removed or self.renamed)

    def summary(self) -> str:
        """One line for the user."""
        counts = [
            f"{len(names)} {verb}"
            for names, verb in (
                (self.added, "added"),
                (self.replaced, "replaced"),
                (self.removed, "removed"),
                (self.renamed, "renamed"),
            )
            if names
        ]
        what = ", ".join(counts) or "no member changed"
        size = f"{self.old_size} -> {self.new_size} bytes"
        dropped = f"; {self.dropped_tail} bytes after the data dropped" if self.dropped_tail else ""
        return f"{self.path}: {what} ({self.method}, {size}{dropped})"

    def __repr__(self) -> str:
        return f"<EditResult {self.summary()}>"


class _PackEdit:
    """The editable member list of one pack: the top pack, or a pack nested in a member."""

    def __init__(
        self,
        archive: Archive,
        label: str,
        writer_name: str,
        result: EditResult,
        prefix: str = "",
        options: dict[str, Any] | None = None,
        pack_file: os.stat_result | None = None,
    ) -> None:
        self.archive = archive
        # The file being edited (its `os.stat`), which no member may come from.
        self.pack_file = pack_file
        self.label = label
        self.prefix = prefix  # the nested path of this pack inside the top pack, with "/"
        self.writer_name = writer_name  # a file name with the pack's extension (format defaults)
        self.result = result
        self.spec = get_format(archive.format_name)
        self._caller_options = options or {}
        self._options: dict[str, Any] | None = None
        self.members = [
            PendingMember(entry.name, None, None, entry.size, origin=(archive, entry)) for entry in archive.infolist()
        ]
        self._checker: ArchiveWriter | None = None
        if self._caller_options:
            self.checker  # noqa: B018 - made now: the caller's options are refused before any change
        self.children: dict[int, _PackEdit] = {}  # id(member) -> the edit of the pack it holds
        self.changed = False
        self._streams: list[Any] = []

    @property
    def options(self) -> dict[str, Any]:
        """The writer options of a rewrite: the pack's own choices, and any the caller adds."""
        if self._options is None:
            self._options = {**self.archive.layout_options(), **self._caller_options}
        return self._options

    @property
    def checker(self) -> ArchiveWriter:
        """A writer that is never closed: it checks names against the format's limits. Made when
        a name is first checked (or at once for the caller's options): a dry run that only
        removes members or plans a compaction imports nothing of the writing side."""
        if self._checker is None:
            self._checker = self.spec.writer_class()(self.writer_name, overwrite=True, **self.options)
        return self._checker

    # -- finding members ---------------------------------------------------------------------
    def _matches(self, member: PendingMember, name: str) -> bool:
        if member.name == name:
            return True
        if self.archive.positional_names:
            return member.name.partition(".")[0] == name.partition(".")[0]
        if member.origin is not None and member.origin[0] is self.archive:
            # The name `extract` wrote it under ("maps/x" for a PAK's "./maps/x").
            return self.archive._extracted_names().get(name) is member.origin[1]
        return False

    def find(self, name: str) -> int | None:
        """The index of the member `name` stands for: the copy the game loads."""
        order = range(len(self.members))
        if self.archive.duplicate_wins == "last":
            order = order[::-1]
        for index in order:
            if self._matches(self.members[index], name):
                return index
        if self.archive.case_insensitive:
            lowered = name.lower()
            for index in order:
                if self.members[index].name.lower() == lowered:
                    return index
        return None

    def route(self, name: str) -> tuple[_PackEdit, str]:
        """The pack a (possibly nested) name belongs to, and the name inside it."""
        if self.find(name) is not None:
            return self, name
        inside = self._inside_nested(name)
        return inside[0].route(inside[1]) if inside is not None else (self, name)

    def glob(self, pattern: str) -> list[str]:
        """Full names (OUTER/INNER inside nested packs) of the members `pattern` matches: a glob
        on this pack's names, else OUTER/GLOB inside a member that is a pack, as `extract`'s."""
        from ..core.stored_names import member_matches

        matched = [self.prefix + member.name for member in self.members if member_matches(member.name, pattern)]
        if matched:
            return matched
        inside = self._inside_nested(pattern)
        return inside[0].glob(inside[1]) if inside is not None else []

    def _inside_nested(self, path: str) -> tuple[_PackEdit, str] | None:
        """(the edit of the nested pack `path` goes into, the rest of the path) for the longest
        leading part of `path` that names a member which is a pack; None when none does."""
        parts = path.split("/")
        for cut in range(len(parts) - 1, 0, -1):
            index = self.find("/".join(parts[:cut]))
            if index is None:
                continue
            child = self._child(index)
            if child is not None:
                return child, "/".join(parts[cut:])
        return None

    def _child(self, index: int) -> _PackEdit | None:
        """The edit of the pack member `index` holds, or None when it is not a pack."""
        member = self.members[index]
        child = self.children.get(id(member))
        if child is not None:
            return child
        from ..core.nested import signature_format
        from ..core.opening import open as open_archive

        label = f"{self.label}/{member.name}"
        stream = self._member_stream(member)
        self._streams.append(stream)
        try:
            format_name = signature_format(stream, label) if member.size >= 4 else None
            if format_name is None:
                return None
            stream.seek(0)
            inner = open_archive(stream, format_name, name=label)
        except GamepakError:
            return None
        self._streams.append(inner)
        child = _PackEdit(
            inner,
            label,
            os.path.basename(member.name) or "member",
            self.result,
            f"{self.prefix}{member.name}/",
            pack_file=self.pack_file,
        )
        self.children[id(member)] = child
        return child

    def _member_stream(self, member: PendingMember) -> BinaryIO:
        if member.data is not None:
            import io

            return io.BytesIO(member.data)
        return member._open()

    # -- changes -----------------------------------------------------------------------------
    def check_name(self, name: str) -> None:
        """Refuse a name the format cannot store, as its writer would: by the format's
        `name_rule` (given the pack's writer options where it reads them) without making a
        writer; by the writer when the format has none or one is made (the caller's options,
        which it normalised)."""
        spec = self.spec
        if spec.name_rule is None or self._checker is not None:
            return self.checker.check_name(name)
        refuse_name(name, spec.name, flat=spec.flat_names)
        rule = getattr(spec.load(), spec.name_rule)
        if spec.name_rule_options:
            rule(name, self.options)
        else:
            rule(name)

    def _new_member(self, name: str, data_or_path: Any) -> PendingMember:
        self.check_name(name)
        if isinstance(data_or_path, (bytes, bytearray, memoryview)):
            data = bytes(data_or_path)
            return PendingMember(name, data, None, len(data))
        path = os.fspath(data_or_path)
        try:
            info = os.stat(path)
        except OSError as exc:
            raise GamepakError(f"{path}: cannot read: {exc.strerror}") from exc
        if self.pack_file is not None and os.path.samestat(info, self.pack_file):
            # An in-place edit would read the pack while it appends to it.
            raise GamepakError(f"{path}: is the pack being edited; a pack cannot be added to itself")
        return PendingMember.from_file(name, path, info)

    def replace_at(self, index: int, data_or_path: Any) -> None:
        old = self.members[index]
        self.members[index] = self._new_member(old.name, data_or_path)
        self.children.pop(id(old), None)
        self.changed = True

    def _check_new_name(self, name: str) -> None:
        """The rule every writer of names applies (`core.stored_names.check_new_name`): a name that
        extraction could not take out again is not stored."""
        check_new_name(name, flat=self.spec.flat_names)

    def append(self, name: str, data_or_path: Any, position: int | None = None) -> int:
        index = len(self.members) if position is None else max(0, min(position, len(self.members)))
        self._check_new_name(name)
        self.members.insert(index, self._new_member(name, data_or_path))
        self.changed = True
        return index

    def remove_at(self, index: int) -> None:
        removed = self.members.pop(index)
        self.children.pop(id(removed), None)
        if self.archive.positional_names:
            # Members known by position move up: renumber them, keeping any extension.
            for position, member in enumerate(self.members):
                _, dot, extension = member.name.partition(".")
                member.name = f"{position}{dot}{extension}"
        self.changed = True

    def rename_at(self, index: int, new_name: str) -> None:
        self._check_new_name(new_name)
        self.check_name(new_name)
        member = self.members[index]
        member.name = new_name
        self.changed = True

    def any_change(self) -> bool:
        return self.changed or any(child.any_change() for child in self.children.values())

    # -- writing (the commit itself is `edit_commit.write_changes`) -----------------------------
    def writer(self, target: str, members: list[PendingMember]) -> ArchiveWriter:
        """A writer for `target` with the pack's options and `members` queued (which checks the
        format's limits); nothing is written before it is closed."""
        # The editor decides which members exist; duplicates the pack already held stay.
        writer: ArchiveWriter = self.spec.writer_class()(target, overwrite=True, allow_duplicates=True, **self.options)
        writer.edit_of = self.archive
        for member in members:
            writer.add_pending(member)
        return writer

    def check_writers(self, target: str | None) -> None:
        """Queue this pack's members in the writer that rebuilds it as `target` (None: it is
        edited in place, so only its changed nested packs), then drop it: the writer's checks
        refuse what the commit would, nothing written."""
        for member in self.members:
            child = self.children.get(id(member))
            if child is not None and child.any_change():
                child.check_writers(child.writer_name)
        if target is None:
            return
        if self.spec.name_rule is not None and self._checker is None:
            # The rule its writer applies to each member queued, without loading the writer.
            for member in self.members:
                self.check_name(member.name)
        else:
            self.writer(target, self.members).abort()

    def close(self) -> None:
        for child in self.children.values():
            child.close()
        for stream in reversed(self._streams):
            stream.close()
        self._streams.clear()


class Editor:
    """Changes to one archive file, applied by `commit()`. Get one with `gamepak.edit()`.

    Member names may be nested (`outer.str2_pc/inner.txt`). With `compact=True` the commit
    always rebuilds the pack, dropping the dead space earlier in-place edits left. With
    `plan_only=True` (a dry run) it only plans: like a reading command, it takes no lock and
    clears no stale temporaries (the next editor that may commit does), and `commit()` refuses."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        format: str | None = None,
        *,
        compact: bool = False,
        options: dict[str, Any] | None = None,
        plan_only: bool = False,
    ) -> None:
        from ..core.opening import open as open_archive

        self.path = os.fspath(path)
        self.compact = compact
        self.plan_only = plan_only
        if not os.path.isfile(self.path):
            raise GamepakError(f"{self.path}: not a file")
        self._lock_fd = -1
        if not plan_only:
            from ..core.atomic import remove_stale_temporaries

            # In-place edits never pass through write_via_temporary: clean what killed runs left here.
            remove_stale_temporaries(os.path.dirname(os.path.abspath(self.path)))
            from .edit_commit import lock_pack

            self._lock_fd = lock_pack(self.path)
        try:
            self.archive = open_archive(self.path, format)
        except BaseException:
            self._unlock()
            raise
        try:
            # (device, inode) as `core.portable.file_identity` compares them; `samestat` spares a
            # dry run that module.
            pack_file = os.stat(self.path)
            if self._lock_fd >= 0 and not os.path.samestat(os.fstat(self._lock_fd), pack_file):
                raise GamepakError(f"{self.path}: was replaced while being opened; try again")
            self.result = EditResult(self.path, self.archive.format_name)
            self.result.old_size = self.result.new_size = self.archive.size
            self._root = _PackEdit(
                self.archive, self.path, os.path.basename(self.path), self.result, options=options, pack_file=pack_file
            )
        except BaseException:
            self.archive.close()
            self._unlock()
            raise
        self._plan: list[str] = []
        # Files a folder sync left out (links, temporaries), one sentence each.
        self.skipped: list[str] = []
        self._closed = False

    @property
    def format_name(self) -> str:
        """The pack's format."""
        return self.archive.format_name

    def namelist(self) -> list[str]:
        """The top pack's member names as they stand with the changes so far."""
        return [member.name for member in self._root.members]

    def glob(self, pattern: str) -> list[str]:
        """The names (nested ones as OUTER/INNER) a glob matches, as `extract` matches them."""
        self._open()
        return self._root.glob(pattern)

    def plan(self) -> list[str]:
        """The changes so far, one line each (what `--dry-run` prints)."""
        return list(self._plan)

    def _open(self) -> None:
        if self._closed:
            raise GamepakError(f"{self.path}: the editor is closed")

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        pack, inner = self._root.route(name)
        return pack.find(inner) is not None

    def add(self, name: str, data_or_path: Any, replace: bool = False, *, position: int | None = None) -> None:
        """Add a member from bytes or a file; an existing one is replaced only with `replace`.
        It goes after the others, or at `position` in its pack (a patch's revert puts a removed
        member back where it was)."""
        self._open()
        pack, inner = self._root.route(name)
        index = pack.find(inner)
        if index is not None:
            if not replace:
                raise GamepakError(f"{self.path}: already holds {name!r} (replace it instead)")
            self._replace(pack, index, data_or_path)
            return
        index = pack.append(inner, data_or_path, position)
        self.result.added.append(name)
        self._plan.append(f"add {name} ({pack.members[index].size} bytes)")

    def replace(self, name: str, data_or_path: Any) -> None:
        """Replace an existing member's content."""
        self._open()
        pack, inner = self._root.route(name)
        index = pack.find(inner)
        if index is None:
            raise MemberNotFoundError(name, self.path)
        self._replace(pack, index, data_or_path)

    def _replace(self, pack: _PackEdit, index: int, data_or_path: Any) -> None:
        pack.replace_at(index, data_or_path)
        name = pack.prefix + pack.members[index].name
        self.result.replaced.append(name)
        self._plan.append(f"replace {name} ({pack.members[index].size} bytes)")

    def remove(self, name: str) -> None:
        """Remove a member."""
        self._open()
        pack, inner = self._root.route(name)
        index = pack.find(inner)
        if index is None:
            raise MemberNotFoundError(name, self.path)
        full = pack.prefix + pack.members[index].name
        pack.remove_at(index)
        self.result.removed.append(full)
        self._plan.append(f"remove {full}")

    def rename(self, old: str, new: str) -> None:
        """Give a member another name, in the same pack (nested names keep their pack's prefix)."""
        self._open()
        pack, inner = self._root.route(old)
        index = pack.find(inner)
        if index is None:
            raise MemberNotFoundError(old, self.path)
        if pack.archive.positional_names:
            raise UnsupportedFeatureError(f"{pack.label}: members of a {pack.spec.name} pack have no names to change")
        if not new.startswith(pack.prefix):
            raise GamepakError(f"{self.path}: {old!r} can be renamed only inside {pack.prefix.rstrip('/')!r}")
        new_inner = new[len(pack.prefix) :]
        other = pack.find(new_inner)
        if other is not None and other != index:
            raise GamepakError(f"{self.path}: already holds {new!r} (remove it first)")
        full = pack.prefix + pack.members[index].name
        pack.rename_at(index, new_inner)
        self.result.renamed.append((full, new))
        self._plan.append(f"rename {full} -> {new}")

    def check(self) -> None:
        """Refuse now what `commit()` would refuse before writing (a dry run's last step): each
        pack the commit rebuilds (a changed nested pack; the pack itself when compacting or
        when its format has no in-place edit) gets its members queued in a writer that is then
        dropped, so a name the format cannot store is refused even on a member left as it is."""
        self._open()
        if self._root.any_change() or self.compact:
            rebuilt = self.compact or type(self.archive).append_edit is Archive.append_edit
            self._root.check_writers(self.path if rebuilt else None)

    def commit(self) -> EditResult:
        """Write the changes (in place where the format allows, else by a rebuild) and close."""
        self._open()
        if self.plan_only:
            self.close()  # a caller's mistake: the plan is dropped, as abort() would
            raise GamepakError(f"{self.path}: this editor only plans (a dry run) and cannot commit")
        try:
            if self._root.any_change() or self.compact:
                from .edit_commit import write_changes

                write_changes(self._root, self.path, compact=self.compact)
        finally:
            self.close()
        return self.result

    def abort(self) -> None:
        """Drop the changes; the pack stays as it was."""
        self.close()

    def close(self) -> None:
        """Release the pack (changes not committed are dropped)."""
        if self._closed:
            return
        self._closed = True
        self._root.close()
        self.archive.close()
        self._unlock()

    def _unlock(self) -> None:
        if self._lock_fd >= 0:
            os.close(self._lock_fd)  # releases the lock
            self._lock_fd = -1

    def __enter__(self) -> Editor:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()


def edit(
    path: str | os.PathLike[str],
    format: str | None = None,
    *,
    compact: bool = False,
    options: dict[str, Any] | None = None,
    plan_only: bool = False,
) -> Editor:
    """An editor for the archive at `path`: `add`, `replace`, `remove`, `rename`, then `commit()`
    (done when a `with` block ends without an exception; nothing changes on disk before).

        >>> with gamepak.edit("pak0.pak") as pack:
        ...     pack.replace("maps/e1m1.bsp", "build/e1m1.bsp")

    PAK and JoePack edits are applied in place where they can be (crash-safe appends); other
    formats are rebuilt into a temporary file that replaces the pack. `compact=True` always
    rebuilds, reclaiming space earlier in-place edits left. `options` are writer options added
    to the pack's own for a rewrite (e.g. `{"asm": "level.asm_pc"}`: an RFG `.asm_pc` file
    outside the pack to keep in step). `plan_only=True` makes an editor that only plans (a dry
    run: no lock, nothing cleared, `commit()` refused).
    """
    return Editor(path, format, compact=compact, options=options, plan_only=plan_only)
