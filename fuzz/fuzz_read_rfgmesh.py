#!/usr/bin/env python3
"""Fuzz the RFG mesh reader and everything a stranger's mesh pair reaches from it without any
other file: `read_mesh` (header, config, submeshes, render blocks, materials, LODs, bones,
spheres, cylinders, the GPU file's buffers), `model info`'s summary (as text and as strict
JSON), `verify`'s check (`check_meshes`, `mesh_warnings`), the catalog's and the viewer's
figures, the export to .glb and .gltf (LOD 0 and every LOD; a character mesh's skin without a
rig; no textures: those are pegs, other files) and to OBJ (the neutral mesh), and `model
import`'s write-back of the unchanged export.

Rules: any input may only be refused with a gamepak error, in one line naming the file; an
accepted mesh's unchanged export writes back the same bytes of both files (no vertex changed).

An input is the pair (`split_mesh_pair`): a u32 LE size of the CPU file, the CPU file
(`.csmesh_pc`/`.ccmesh_pc`, its signature says which), then the GPU file up to the end. A size
past the end takes everything (the GPU file is then empty); the mutator moves the boundary by
changing the size.

    python fuzz/fuzz_read_rfgmesh.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from _fuzzing import expected_errors, fuzz, glb_document

CPU_SIZE = struct.Struct("<I")
CPU_LABEL, GPU_LABEL = "fuzz.csmesh_pc", "fuzz.gsmesh_pc"


def split_mesh_pair(data: bytes) -> tuple[bytes, bytes]:
    """A mesh fuzz input as (CPU bytes, GPU bytes); see the module."""
    if len(data) < CPU_SIZE.size:
        return data, b""
    (cpu_size,) = CPU_SIZE.unpack_from(data)
    body = data[CPU_SIZE.size :]
    return body[:cpu_size], body[cpu_size:]


def join_mesh_pair(cpu: bytes, gpu: bytes) -> bytes:
    """The fuzz input of a pair (`split_mesh_pair`'s inverse), for the seeds."""
    return CPU_SIZE.pack(len(cpu)) + cpu + gpu


@contextmanager
def one_line() -> Iterator[None]:
    """A gamepak error raised inside must be one line naming one of the pair's files."""
    from gamepak.errors import GamepakError

    try:
        yield
    except GamepakError as exc:
        message = str(exc)
        assert "\n" not in message, f"a refusal of more than one line: {message!r}"
        assert CPU_LABEL in message or GPU_LABEL in message, f"a refusal naming neither file: {message!r}"
        raise


class _Pack:
    """The pair as the members of a pack, for `check_meshes` (what `verify` calls)."""

    def __init__(self, cpu: bytes, gpu: bytes) -> None:
        self.members = {CPU_LABEL: cpu, GPU_LABEL: gpu}

    def namelist(self) -> list[str]:
        return list(self.members)

    def read(self, name: str) -> bytes:
        return self.members[name]


def _check(mesh: Any, cpu: bytes, gpu: bytes) -> None:
    from gamepak.models.rfg.check import check_meshes, mesh_warnings

    mesh_warnings(mesh)
    problems = check_meshes(_Pack(cpu, gpu))  # type: ignore[arg-type]
    errors = [problem for problem in problems if problem.severity != "warning"]
    assert not errors, f"verify finds errors in a mesh the reader accepts: {errors[0]}"


def _show(mesh: Any, cpu: bytes, gpu: bytes) -> None:
    """`model info` (text and JSON), the catalog's and the viewer's figures."""
    from gamepak.models.rfg import content
    from gamepak.models.rfg.geometry import lod_triangle_count

    summary = mesh.summary()
    json.dumps(summary, allow_nan=False)  # `--json` prints it: NaN is not JSON
    content.text(summary)
    for lod in range(max(mesh.lod_count, 1)):
        lod_triangle_count(mesh, lod)
    stats = content.stats(cpu, CPU_LABEL, partner=lambda: gpu)
    assert stats is not None and stats["vertices"] == mesh.config.vertex_count, "the catalog counts other vertices"
    content.counts(cpu, CPU_LABEL, partner=lambda: gpu)


def _not_json(name: str) -> None:
    raise AssertionError(f"the .gltf holds {name}, which is not JSON")


def _export_and_back(mesh: Any, cpu: bytes, gpu: bytes) -> None:
    """Every export; the unchanged .glb and .gltf written back give the same bytes."""
    from gamepak import models
    from gamepak.models.rfg import export_gltf, neutral_mesh, write_back

    with expected_errors(), one_line():
        models.dumps(neutral_mesh(mesh, "fuzz"), "obj")
    with expected_errors(), one_line():
        glb_document(export_gltf(mesh, "fuzz", all_lods=True))
    exported = None
    with expected_errors(), one_line():
        exported = export_gltf(mesh, "fuzz"), export_gltf(mesh, "fuzz", binary=False)
    if exported is None:
        return
    glb, gltf = exported
    glb_document(glb)
    json.loads(gltf, parse_constant=_not_json)
    for data in exported:
        with one_line():
            back = write_back(mesh, "fuzz", data, gpu, cpu, label=CPU_LABEL)
        assert back.changed_vertices == [], f"an unchanged export changes vertices {back.changed_vertices[:8]}"
        assert back.gpu == gpu, "an unchanged export writes back other GPU bytes"
        assert back.cpu == cpu, "an unchanged export writes back other CPU bytes"


def TestOneInput(data: bytes) -> None:
    from gamepak.models.rfg import read_mesh

    cpu, gpu = split_mesh_pair(data)
    mesh = None
    with expected_errors(), one_line():
        mesh = read_mesh(cpu, gpu, label=CPU_LABEL, gpu_label=GPU_LABEL)
    if mesh is None:
        return
    # Once the reader accepts a mesh, what shows and checks it may not refuse it.
    _check(mesh, cpu, gpu)
    _show(mesh, cpu, gpu)
    _export_and_back(mesh, cpu, gpu)


def main() -> None:
    fuzz(TestOneInput, "gamepak.core", "gamepak.models.rfg", "gamepak.models.gltf", "gamepak.models.obj")


if __name__ == "__main__":
    main()
