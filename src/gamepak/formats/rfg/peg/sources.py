"""Finding pegs: a CPU file with its GPU partner beside it, or every pair inside a pack
(nested packs included), each with the member path `texture export` lays files out by."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from .reader import GPU_PARTNERS, Peg

if TYPE_CHECKING:
    from ....core.archive import Archive, Problem


def is_cpu_name(name: str) -> bool:
    """True for `.cpeg_pc` / `.cvbm_pc` names."""
    return os.path.splitext(name)[1].lower() in GPU_PARTNERS


def partner_name(cpu_name: str) -> str:
    """The GPU file's name for a CPU file's name (same stem)."""
    stem, suffix = os.path.splitext(cpu_name)
    return stem + GPU_PARTNERS[suffix.lower()]


def iter_pegs(source: str | os.PathLike[str], order: str = "BGRA") -> Iterator[tuple[str, Peg]]:
    """(path, Peg) for a CPU file (path: its file name) or for every pair in a pack (path: the
    CPU member's path inside the pack, `zone.str2_pc/xray_effect.cpeg_pc`)."""
    path = Path(source)
    if is_cpu_name(path.name):
        yield path.name, Peg.open(path, order)
        return
    from ....core.nested import walk
    from ....core.opening import open as open_archive

    with open_archive(path) as pack:
        for member_path, entry, holder in walk(pack):
            if not is_cpu_name(entry.name):
                continue
            gpu_name = partner_name(entry.name)
            if gpu_name not in holder.namelist():
                continue
            cpu = holder.read(entry.name)
            if cpu[:4] != b"GEKV":
                continue  # not a PC peg: verify says the same
            peg = Peg.parse(cpu, holder.read(gpu_name), name=f"{path}/{member_path}", order=order)
            yield member_path, peg


def check_pegs(archive: Archive) -> list[Problem]:
    """`verify`'s peg findings for one pack's own members (nested packs check their own):
    each CPU file's header, entries, names and frame sizes against its GPU partner."""
    from ....core.archive import Problem
    from ....errors import GamepakError

    problems: list[Problem] = []
    names = {name.lower(): name for name in archive.namelist()}
    for name in archive.namelist():
        if not is_cpu_name(name):
            continue
        cpu = archive.read(name)
        if cpu[:4] != b"GEKV":
            continue  # not a PC peg (a console file, a stand-in): no layout to hold it to
        gpu_name = names.get(partner_name(name).lower())
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
