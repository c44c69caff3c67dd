"""What an edit plans (`ops.edit`): the member list of each pack it changes (`PackEdit`: the top
pack, or one nested in a member, found by the names that run through it), the checks a change
makes against the pack's format, and the record of what changed (`EditResult`).
"""

from __future__ import annotations

import os

from ..core.archive import Archive, PendingMember
from ..core.registry import get_format
from ..core.stored_names import check_new_name, refuse_name
from ..errors import GamepakError, cannot_read

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


class PackEdit:
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
        self.children: dict[int, PackEdit] = {}  # id(member) -> the edit of the pack it holds
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

    def full_name(self, index: int) -> str:
        """The name of member `index` as the top pack's editor knows it (OUTER/INNER when nested)."""
        return self.prefix + self.members[index].name

    def route(self, name: str) -> tuple[PackEdit, str]:
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

    def _inside_nested(self, path: str) -> tuple[PackEdit, str] | None:
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

    def _child(self, index: int) -> PackEdit | None:
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
        child = PackEdit(
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
            raise cannot_read(path, exc) from exc
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
