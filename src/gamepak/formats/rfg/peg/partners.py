"""The peg partner rule: which GPU file (`.gpeg_pc`/`.gvbm_pc`) belongs to a CPU file
(`.cpeg_pc`/`.cvbm_pc`). The game looks files up by a hash of the lowercased name, so
`Crate.cpeg_pc` and `crate.gpeg_pc` are a pair. Every layer that pairs a CPU file with its GPU
file (`verify`, `texture`, `Peg.open`, the catalog, the viewer) asks these functions (through
`sources`, which re-exports them), so one pack never holds a pair for one command and none for
another."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

GPU_PARTNERS = {".cpeg_pc": ".gpeg_pc", ".cvbm_pc": ".gvbm_pc"}


def is_cpu_name(name: str) -> bool:
    """True for `.cpeg_pc` / `.cvbm_pc` names (both suffixes are 8 characters: a slice, not
    `splitext`, as the catalog asks this of every member)."""
    return name[-8:].lower() in GPU_PARTNERS


def partner_name(cpu_name: str) -> str:
    """The GPU file's name for a CPU file's name (same stem)."""
    stem, suffix = os.path.splitext(cpu_name)
    return stem + GPU_PARTNERS[suffix.lower()]


def name_key(name: str) -> str:
    """What the game compares of a file name: the name with case ignored."""
    return name.lower()


def same_name(first: str, second: str) -> bool:
    """Whether two file names are the same file to the game (`name_key`)."""
    return name_key(first) == name_key(second)


def partners_by_key(names: Iterable[str]) -> dict[str, str]:
    """`name_key(name) -> name` for `names`, the first of a key winning as in `find_named`:
    for finding many partners in one pack without a scan per CPU file."""
    found: dict[str, str] = {}
    for name in names:
        found.setdefault(name_key(name), name)
    return found


def find_named(wanted: str, names: Iterable[str]) -> str | None:
    """The first of `names` that is `wanted` to the game (`same_name`), or None."""
    for name in names:
        if same_name(name, wanted):
            return name
    return None


def find_partner(cpu_name: str, names: Iterable[str]) -> str | None:
    """The GPU partner of the CPU file `cpu_name` among `names` (file or member names of one
    folder), matched as the game matches names; None when it has none."""
    return find_named(partner_name(cpu_name), names)


def partner_path(cpu_path: str | os.PathLike[str]) -> Path | None:
    """The GPU partner beside a CPU file on disk (a regular file, not a link), by the same
    rule; None when there is none."""
    from pathlib import Path  # here: `verify` asks `is_cpu_name` of every file, without pathlib

    cpu = Path(cpu_path)
    exact = cpu.with_name(partner_name(cpu.name))
    if exact.is_file() and not exact.is_symlink():
        return exact  # the common case: no listing of a large folder
    try:
        siblings = sorted(os.listdir(cpu.parent))
    except OSError:
        return None
    for name in siblings:
        candidate = cpu.parent / name
        if same_name(name, exact.name) and candidate.is_file() and not candidate.is_symlink():
            return candidate
    return None
