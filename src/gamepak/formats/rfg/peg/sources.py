"""Finding pegs: a CPU file with its GPU partner beside it, or every pair inside a pack
(nested packs included), each with the member path `texture export` lays files out by."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from .reader import GPU_PARTNERS, Peg

if TYPE_CHECKING:
    from ....core.archive import Archive, Entry, Problem


def is_cpu_name(name: str) -> bool:
    """True for `.cpeg_pc` / `.cvbm_pc` names (both suffixes are 8 characters: a slice, not
    `splitext`, as the catalog asks this of every member)."""
    return name[-8:].lower() in GPU_PARTNERS


def partner_name(cpu_name: str) -> str:
    """The GPU file's name for a CPU file's name (same stem)."""
    stem, suffix = os.path.splitext(cpu_name)
    return stem + GPU_PARTNERS[suffix.lower()]


# -- the partner rule -----------------------------------------------------------------------
# The game looks files up by a hash of the lowercased name, so `Crate.cpeg_pc` and
# `crate.gpeg_pc` are a pair. Every layer that pairs a CPU file with its GPU file (`verify`,
# `texture`, `Peg.open`, the catalog, the viewer) asks these two functions, so one pack never
# holds a pair for one command and none for another.
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


def iter_pegs(source: str | os.PathLike[str], order: str = "BGRA") -> Iterator[tuple[str, Peg]]:
    """(path, Peg) for a CPU file (path: its file name) or for every pair in a pack (path: the
    CPU member's path inside the pack, `zone.str2_pc/xray_effect.cpeg_pc`), in archive order,
    a nested pack's pairs where the nested pack stands."""
    path = Path(source)
    if is_cpu_name(path.name):
        yield path.name, Peg.open(path, order)
        return
    from ....core.opening import open as open_archive

    with open_archive(path) as pack:
        yield from _pegs_in(pack, "", str(path), order)


# Pairs read in one pass over a pack's data hold at most about this much memory at once.
BATCH_BYTES = 64 << 20


def _pegs_in(archive: Archive, prefix: str, pack_name: str, order: str) -> Iterator[tuple[str, Peg]]:
    """The pairs of one archive and of the packs nested in it. The pairs are read in one pass
    over the members' data per BATCH_BYTES of pairs, and nested packs found from the other
    members' heads in one more (a shared compressed stream is decoded once per pass; it was
    once per member)."""
    from ....core.nested import nested_formats

    entries = archive.infolist()
    by_key = partners_by_key(entry.name for entry in entries)
    by_name = {entry.name: entry for entry in reversed(entries)}  # the first of a name wins
    partners = {
        entry.index: by_name[by_key[name_key(partner_name(entry.name))]]
        for entry in entries
        if is_cpu_name(entry.name) and name_key(partner_name(entry.name)) in by_key
    }
    peg_members = set(partners) | {gpu.index for gpu in partners.values()}
    nested = nested_formats(archive, [entry for entry in entries if entry.index not in peg_members])
    batch: list[Entry] = []
    batch_size = 0
    for entry in entries:
        if entry.index in partners:
            batch.append(entry)
            batch_size += entry.size + partners[entry.index].size
        if batch and (batch_size >= BATCH_BYTES or entry.index in nested):
            yield from _read_pairs(archive, batch, partners, prefix, pack_name, order)
            batch, batch_size = [], 0
        if entry.index in nested:
            with archive.open_archive(entry, nested[entry.index]) as inner:
                yield from _pegs_in(inner, prefix + entry.name + "/", pack_name, order)
    yield from _read_pairs(archive, batch, partners, prefix, pack_name, order)


def _read_pairs(
    archive: Archive, cpus: list[Entry], partners: dict[int, Entry], prefix: str, pack_name: str, order: str
) -> Iterator[tuple[str, Peg]]:
    """The pairs of `cpus`, their members read in archive order (one pass), in `cpus`' order."""
    members = sorted({*cpus, *(partners[cpu.index] for cpu in cpus)}, key=lambda entry: entry.index)
    data = {entry.index: b"".join(chunks) for entry, chunks in archive.iter_data(members)}
    for cpu in cpus:
        if data[cpu.index][:4] == b"GEKV":  # else not a PC peg: verify says the same
            member_path = prefix + cpu.name
            gpu = data[partners[cpu.index].index]
            peg = Peg.parse(data[cpu.index], gpu, name=f"{pack_name}/{member_path}", order=order)
            peg.gpu_name = prefix + partners[cpu.index].name
            yield member_path, peg


def check_pegs(archive: Archive) -> list[Problem]:
    """`verify`'s peg findings for one pack's own members (nested packs check their own):
    each CPU file's header, entries, names and frame sizes against its GPU partner."""
    from ....core.archive import Problem
    from ....errors import GamepakError

    problems: list[Problem] = []
    names = archive.namelist()
    by_key = partners_by_key(names)
    for name in names:
        if not is_cpu_name(name):
            continue
        cpu = archive.read(name)
        if cpu[:4] != b"GEKV":
            continue  # not a PC peg (a console file, a stand-in): no layout to hold it to
        gpu_name = by_key.get(name_key(partner_name(name)))
        if gpu_name is None:
            problems.append(
                Problem(f"{name}: no GPU partner {partner_name(name)} in this pack", severity="warning", member=name)
            )
            continue
        try:
            Peg.parse(cpu, archive.read(gpu_name), name=name)
        except GamepakError as exc:
            problems.append(Problem(str(exc), offset=getattr(exc, "offset", None), member=name))
    return problems
