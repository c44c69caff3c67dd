"""The copy jobs of an extraction: which bytes of the archive go into which created file.
Apart from `ops.copier` (which runs them) and `ops.copy_workers` (which splits them over
forked workers) so both can name them without importing each other."""

from __future__ import annotations

from itertools import repeat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, Protocol

    from ..core.entry import Entry

    class Entries(Protocol):
        """The members of an extraction by position (a list, or entries made when asked for)."""

        def __getitem__(self, position: int, /) -> Entry: ...

    class BatchCopier(Protocol):
        """What `ops.copy_workers` asks of `ops.copier.Copier` (named here, not imported
        from there: the copier imports the workers when it has that much work)."""

        entries: Entries
        progress: Callable[[Entry], Any] | None

        def run_batch(self, jobs: list[Job] | PlannedJobs, start: int, stop: int, *, quiet: bool = False) -> None: ...

        def run(self, jobs: list[Job], report: Callable[[int], object] | None = None) -> None: ...


Job = tuple[int, str, int, int, int]  # folder fd, name to create, offset, size, position


class PlannedJobs:
    """The jobs of members whose data are plain byte ranges (`offsets[i]`, `sizes[i]`), each
    into its planned file (`keys[i]`, `/`-joined, in the folder `folder_fds[its folder]`), made
    a slice at a time: `jobs[start:stop]`. Forked workers each make the jobs of the batches they
    take, instead of the parent making all of them before the first file is written (20,000
    members: 7 ms of the parent's time, now shared). The offsets and sizes may be columns of
    the archive's directory (`Archive._plain_columns`): no entry per member is needed."""

    __slots__ = ("folder_fds", "keys", "offsets", "sizes_of")

    def __init__(
        self, offsets: Sequence[int], sizes: Sequence[int], keys: list[str], folder_fds: dict[str, int]
    ) -> None:
        self.offsets = offsets
        self.sizes_of = sizes
        self.keys = keys
        self.folder_fds = folder_fds

    def __len__(self) -> int:
        return len(self.keys)

    def __getitem__(self, part: slice) -> list[Job]:
        fds = self.folder_fds
        start = part.start or 0
        return [
            (fds[folder], base, offset, size, position)
            for position, ((folder, _, base), offset, size) in enumerate(
                zip(map(str.rpartition, self.keys[part], repeat("/")), self.offsets[part], self.sizes_of[part]), start
            )
        ]

    def sizes(self) -> Sequence[int]:
        """Each job's size, without making the jobs."""
        return self.sizes_of


def job_sizes(jobs: list[Job] | PlannedJobs) -> Sequence[int]:
    """The size of each job (the bytes it copies)."""
    return jobs.sizes() if isinstance(jobs, PlannedJobs) else [job[3] for job in jobs]
