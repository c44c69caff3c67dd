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
in a scratch folder, then the outer pack is edited to hold it. Each pack's member list is
`edit_members`' (`PackEdit`); what only a commit needs, `edit_commit`'s.
"""

from __future__ import annotations

import os
import stat

from ..core.archive import Archive
from ..errors import GamepakError, MemberNotFoundError, UnsupportedFeatureError, cannot_read, irregular_kind
from .edit_members import EditResult, PackEdit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


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
        try:
            mode = os.stat(self.path).st_mode
        except OSError as exc:
            raise cannot_read(self.path, exc) from exc
        if not stat.S_ISREG(mode):
            raise cannot_read(self.path, irregular_kind(mode))
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
            self._root = PackEdit(
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

    def _existing(self, name: str) -> tuple[PackEdit, int]:
        """The pack holding the member `name` stands for (nested names included) and its index
        there; MemberNotFoundError when there is none."""
        self._open()
        pack, inner = self._root.route(name)
        index = pack.find(inner)
        if index is None:
            raise MemberNotFoundError(name, self.path)
        return pack, index

    def replace(self, name: str, data_or_path: Any) -> None:
        """Replace an existing member's content."""
        self._replace(*self._existing(name), data_or_path)

    def _replace(self, pack: PackEdit, index: int, data_or_path: Any) -> None:
        pack.replace_at(index, data_or_path)
        name = pack.full_name(index)
        self.result.replaced.append(name)
        self._plan.append(f"replace {name} ({pack.members[index].size} bytes)")

    def remove(self, name: str) -> None:
        """Remove a member."""
        pack, index = self._existing(name)
        full = pack.full_name(index)
        pack.remove_at(index)
        self.result.removed.append(full)
        self._plan.append(f"remove {full}")

    def rename(self, old: str, new: str) -> None:
        """Give a member another name, in the same pack (nested names keep their pack's prefix)."""
        pack, index = self._existing(old)
        if pack.archive.positional_names:
            raise UnsupportedFeatureError(f"{pack.label}: members of a {pack.spec.name} pack have no names to change")
        if not new.startswith(pack.prefix):
            raise GamepakError(f"{self.path}: {old!r} can be renamed only inside {pack.prefix.rstrip('/')!r}")
        new_inner = new[len(pack.prefix) :]
        other = pack.find(new_inner)
        if other is not None and other != index:
            raise GamepakError(f"{self.path}: already holds {new!r} (remove it first)")
        full = pack.full_name(index)
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
