"""Finding pegs: a CPU file with its GPU partner beside it, or every pair inside a pack
(nested packs included), each with the member path `texture export` lays files out by."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from .reader import GPU_PARTNERS, Peg


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
    import gamepak
    from gamepak.core.nested import walk

    with gamepak.open(path) as pack:
        for member_path, entry, holder in walk(pack):
            if not is_cpu_name(entry.name):
                continue
            gpu_name = partner_name(entry.name)
            if gpu_name not in holder.namelist():
                continue
            peg = Peg.parse(holder.read(entry.name), holder.read(gpu_name),
                            name=f"{path}/{member_path}", order=order)
            yield member_path, peg
