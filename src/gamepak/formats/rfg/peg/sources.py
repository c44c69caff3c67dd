"""Finding pegs: a CPU file with its GPU partner beside it, or every pair inside a pack
(nested packs included), each with the member path `texture export` lays files out by."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

# The partner rule lives in `partners` (which `Peg.open` uses too: `reader` cannot import this
# module, which imports it); it is re-exported here, where the pack-level finding is.
from .partners import (
    GPU_PARTNERS,
    find_named,
    find_partner,
    is_cpu_name,
    name_key,
    partner_name,
    partner_path,
    partners_by_key,
    same_name,
)
from .reader import Peg

__all__ = [
    "GPU_PARTNERS",
    "check_pegs",
    "find_named",
    "find_partner",
    "is_cpu_name",
    "iter_pegs",
    "name_key",
    "partner_name",
    "partner_path",
    "partners_by_key",
    "same_name",
]

if TYPE_CHECKING:
    from ....core.archive import Archive, Entry, Problem


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
