"""`verify`'s findings for the RFG mesh pairs of one pack's own members: everything the reader
refuses (sizes, offsets, hashes, index ranges) as an error, and the conventions it tolerates
(stored GPU buffer offsets, block index ranges, submesh boxes, counts said twice) as warnings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.arrays import sorted_unique
from .layout import TOPOLOGY_STRIP

if TYPE_CHECKING:
    from ...core.archive import Archive, Problem
    from .reader import RfgMesh


def mesh_warnings(mesh: RfgMesh) -> list[str]:
    """What a well-formed mesh breaks of the game's own conventions (nothing is lost)."""
    import numpy as np

    from .geometry import positions

    found = list(mesh.warnings)
    config = mesh.config
    # As the reader: only a strip has a restart index (a list's indices are all vertices).
    restart = (0xFFFF if config.index_size == 2 else 0xFFFFFFFF) if config.topology == TOPOLOGY_STRIP else -1
    points = positions(mesh)
    for number, block in enumerate(mesh.blocks):
        drawn = mesh.indices[block.first_index : block.first_index + block.index_count]
        drawn = drawn[drawn != restart]
        if drawn.size and (int(drawn.min()), int(drawn.max())) != (block.lowest, block.highest):
            found.append(
                f"render block {number}: stored vertex range {block.lowest}..{block.highest}, "
                f"drawn {int(drawn.min())}..{int(drawn.max())}"
            )
    for number, submesh in enumerate(mesh.submeshes):
        used = [mesh.indices[b.first_index : b.first_index + b.index_count] for b in submesh.blocks]
        ids = sorted_unique(np.concatenate(used)) if used else np.zeros(0, np.int64)
        ids = ids[ids != restart]
        if ids.size:
            low, high = points[ids].min(axis=0), points[ids].max(axis=0)
            slack = 1e-4
            if (low < np.array(submesh.box_min) - slack).any() or (high > np.array(submesh.box_max) + slack).any():
                found.append(f"submesh {number}: its vertices reach outside its stored box")
    return found


def check_meshes(archive: Archive) -> list[Problem]:
    """Errors and warnings of every mesh pair among `archive`'s own members."""
    from ...core.archive import Problem
    from ...errors import GamepakError
    from . import EXTENSIONS, pair_names
    from .content import sniff
    from .reader import MeshFormatError, read_mesh

    problems: list[Problem] = []
    names = archive.namelist()
    lowered = {name.lower(): name for name in names}
    for name in names:
        if not name.lower().endswith(tuple(EXTENSIONS)):
            continue
        cpu = archive.read(name)
        if not sniff(cpu[:4]):
            continue  # not a PC mesh (a console file, a stand-in): no layout to hold it to, as pegs
        gpu_name = lowered.get(pair_names(name)[1].lower())
        if gpu_name is None:
            problems.append(Problem(f"{name}: no GPU partner {pair_names(name)[1]} in this pack", member=name))
            continue
        try:
            mesh = read_mesh(cpu, archive.read(gpu_name), label=name, gpu_label=gpu_name)
        except MeshFormatError as exc:
            problems.append(Problem(str(exc), offset=exc.offset, member=exc.label))
            continue
        except GamepakError as exc:
            problems.append(Problem(str(exc), member=name))
            continue
        for warning in mesh_warnings(mesh):
            problems.append(Problem(f"{name}: {warning}", severity="warning", member=name))
    return problems
