"""Where `check` and `apply` keep what they decode: scratch files within the `limits` budget, and
an apply's new members, in memory up to `MEMORY_BYTES` in all and in scratch files beyond.

A mod from a stranger must not be able to exhaust memory: one member may be 4 GiB
(`--allow-large`), and a mod may replace any number of them. So an apply holds at most
`MEMORY_BYTES` of new content at once, whatever the number of members; the rest is decoded, a
chunk at a time, into a private scratch folder on the target's file system, checked (size and
sha256) as it is written, and the file's path is what the pack editor or the plain-file write
takes. The folder is removed when the apply ends, whether it succeeds or fails; one a killed
process left is removed by the next command (its name says which process made it:
`core.atomic.remove_stale_temporaries`).
"""

from __future__ import annotations

import os
import threading

from .container import BLOB_CHUNK, PatchError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from .container import Operation, Patch

# New content an apply holds in memory, in all. Within it, many small members cost no file each
# (a file per member, written, then copied into the pack, costs more than their bytes); past it,
# memory would grow with the mod. 64 MiB, as the old members the apply keeps (`apply.KEPT_BYTES`)
# and the largest base a delta is made against (`container.MAX_DELTA_BASE_BYTES`): an apply of
# any size then peaks near 150 MiB (`benchmarks/bench_patch_memory.py`: 8 x 64 MiB replaced).
MEMORY_BYTES = 64 << 20


def scratch_parent(target: str) -> str:
    """The folder the scratch folder of an apply to `target` goes in: beside the target, where its
    undo record is. On the target's file system (so a plain file is renamed into place, and a
    pack's in-place append may share blocks instead of copying), and never the system's temp
    folder, which is often a tmpfs: memory again."""
    return os.path.dirname(os.path.abspath(target))


class ScratchFiles:
    """Files in a private scratch folder (made in `parent`, default the system's temp folder),
    within `budget` bytes in all (default `limits.Limits.scratch`, the budget in force when it is
    made: it may be used from a worker thread, which does not see the caller's `limits`); the
    folder is removed when closed. A blob source (`container.BlobSource`): its keys are the files' paths."""

    def __init__(
        self, parent: str | None = None, base: str = "xdelta", budget: int | None = None, advice: str | None = None
    ) -> None:
        from .limits import ALLOW_LARGE_ADVICE, current

        self.parent = parent
        self.base = base
        self.budget = current().scratch if budget is None else budget
        # How to raise the budget, for the refusal.
        self.advice = advice or f"{ALLOW_LARGE_ADVICE} only per file, free the scratch budget with limits(scratch=...)"
        self.folder: str | None = None
        self.used = 0
        self.count = 0
        self._lock = threading.Lock()

    def new_path(self, name: str, size: int) -> str:
        """A fresh path in the folder for a file of `size` bytes; PatchError naming `name` when
        the files would need more than the budget."""
        with self._lock:
            if self.used + size > self.budget:
                raise PatchError(
                    f"{name}: decoding it needs {self.used + size} bytes of scratch space in all, more than "
                    f"{self.budget}; {self.advice}"
                )
            if self.folder is None:
                from ...core.atomic import temporary_folder

                self.folder = temporary_folder(self.base, self.parent)
            self.used += size
            self.count += 1
            return os.path.join(self.folder, str(self.count))

    def write(self, name: str, size: int, chunks: Iterable[bytes]) -> str:
        """The path of a new file in the folder holding `chunks`, which must add up to `size`
        bytes (PatchError naming `name` otherwise, or past the budget); removed if they fail."""
        from ...core.atomic import write_all

        path = self.new_path(name, size)
        try:
            fd = os.open(
                path,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0),
                0o644,  # a plain file is renamed into place: the mode a new file gets (`core.atomic`)
            )
            try:
                written = 0
                for chunk in chunks:
                    written += len(chunk)
                    write_all(fd, chunk)
            finally:
                os.close(fd)
            if written != size:
                raise PatchError(f"{name}: {written} bytes, {size} expected")
        except BaseException:
            self.discard(path, size)
            raise
        return path

    def discard(self, path: str, size: int) -> None:
        """Remove a file made at `new_path(..., size)` that is not used after all (a failed
        decode), giving its bytes back to the budget."""
        try:  # noqa: SIM105 - contextlib costs start-up time
            os.unlink(path)
        except FileNotFoundError:
            pass
        with self._lock:
            self.used -= size

    def read_blob(self, key: str, size: int) -> bytes:
        with open(key, "rb") as handle:
            data = handle.read(size + 1)
        if len(data) != size:
            raise PatchError(f"{key}: changed while being applied")
        return data

    def blob_chunks(self, key: str, size: int) -> Iterator[bytes]:
        total = 0
        with open(key, "rb") as handle:
            while chunk := handle.read(min(BLOB_CHUNK, size + 1 - total)):
                total += len(chunk)
                if total > size:
                    break
                yield chunk
        if total != size:
            raise PatchError(f"{key}: changed while being applied")

    def close(self) -> None:
        if self.folder is not None:
            import shutil

            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


class NewContent:
    """The new content of one apply's adds and replaces: its bytes while `MEMORY_BYTES` in all
    allow (counted from any thread), else the path of a scratch file holding them. `close`
    removes the scratch files; until then the paths stay valid."""

    def __init__(self, target: str) -> None:
        import sys

        from .limits import ALLOW_LARGE_ADVICE, current

        # Beside the target, on its disk (not memory): --allow-large lifts the scratch budget,
        # as it lifts the outputs' own; the disk's free space is then the limit.
        budget = sys.maxsize if current().allow_large else None
        self.files = ScratchFiles(
            scratch_parent(target),
            f"{os.path.basename(os.path.abspath(target))}.apply",
            budget,
            f"{ALLOW_LARGE_ADVICE} (the scratch folder is beside the target, on its disk)",
        )
        self.held = 0
        self._lock = threading.Lock()

    def _hold(self, size: int) -> bool:
        with self._lock:
            if self.held + size > MEMORY_BYTES:
                return False
            self.held += size
            return True

    def make(self, patch: Patch, operation: Operation, base: bytes | None) -> bytes | str:
        """What `operation` (an add or replace of `patch`; a delta decodes against `base`)
        writes: checked against its size and sha256 before it is returned, as bytes or as the
        path of a scratch file."""
        size = operation.size or 0
        if self._hold(size):
            try:
                return patch.target_bytes(operation, base)
            except BaseException:
                with self._lock:
                    self.held -= size
                raise
        return self.files.write(f"{patch.path}: {operation.where}", size, patch.target_chunks(operation, base))

    def hold_bytes(self, name: str, data: bytes) -> bytes | str:
        """`data`, computed elsewhere (a zone's replayed changes), kept as `make` keeps what it
        computes: in memory while `MEMORY_BYTES` in all allow, else in a scratch file (its path)."""
        if self._hold(len(data)):
            return data
        return self.files.write(name, len(data), (data,))

    def close(self) -> None:
        self.files.close()


class ScratchBlob:
    """A blob `make` wrote to a scratch file (`ScratchFiles.write`), which `write.write_patch`
    copies into the patch a chunk at a time (a `write.StreamedBlob`)."""

    __slots__ = ("path", "size")

    def __init__(self, path: str, size: int) -> None:
        self.path = path
        self.size = size

    def chunks(self) -> Iterator[bytes]:
        """The file's bytes, `BLOB_CHUNK` at a time; PatchError if they are not `size` bytes."""
        total = 0
        with open(self.path, "rb") as handle:
            while chunk := handle.read(BLOB_CHUNK):
                total += len(chunk)
                yield chunk
        if total != self.size:
            raise PatchError(f"{self.path}: {total} bytes, {self.size} written: changed while the patch was made")
