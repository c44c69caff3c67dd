"""RFG meshes from strangers: a small file may not read, show, check, export or write back as a
huge one. Records that overlap or repeat (render blocks, LOD levels, materials), names without
an end, and counts that make work quadratic (bones, submeshes) are refused before anything is
built from them, or handled in time linear in the file."""

from __future__ import annotations

import struct
import time

import pytest
from rfg_mesh_bytes import MaterialSpec, Vertex, build, quad_spec

from gamepak.models.rfg import MeshFormatError, read_mesh
from gamepak.models.rfg.export import export_gltf
from gamepak.models.rfg.writeback import write_back

CONFIG_AT = 0x40  # 2009 static: the header ends at 0x34, padded to 16
FIRST_BLOCK = CONFIG_AT + 0x30 + 44  # one submesh


def _patched(data: bytes, offset: int, fmt: str, *values: int) -> bytes:
    changed = bytearray(data)
    struct.pack_into(fmt, changed, offset, *values)
    return bytes(changed)


def test_render_blocks_drawing_more_than_the_index_buffer_are_refused() -> None:
    """300 blocks each drawing the whole buffer of 60,000 indices: a 127 KB pair that exported
    as a 108 MB glb in 35 s. Now the second block is refused, naming its index count."""
    cpu, gpu = build(quad_spec(submeshes=[[(0, [0, 1, 2, 3]), (0, [2, 3, 4, 5])]]))
    read_mesh(cpu, gpu)
    second = FIRST_BLOCK + 20
    overlapping = _patched(cpu, second + 4, "<II", 0, 8)
    with pytest.raises(MeshFormatError, match="render block 1 index count: the blocks draw 12 indices") as caught:
        read_mesh(overlapping, gpu, label="t.csmesh_pc")
    assert caught.value.offset == second + 8 and str(caught.value).startswith("t.csmesh_pc at offset")
    # Drawing the same 8 indices in two blocks of 4 each is what the game does: accepted.
    read_mesh(_patched(cpu, second + 4, "<II", 4, 4), gpu)


def test_a_submesh_named_by_two_lod_levels_is_refused() -> None:
    spec = quad_spec(lod_ids=[0, 0])
    spec.submeshes = [[(0, [0, 1, 2, 3])], [(0, [2, 3, 4, 5])]]
    with pytest.raises(MeshFormatError, match="LOD 1 submesh id: 0 is LOD 0's already"):
        read_mesh(*build(spec))
    spec.lod_ids = [1, 0]
    assert read_mesh(*build(spec)).lod_ids == [1, 0]


def test_materials_that_overlap_or_repeat_are_refused() -> None:
    """A material listed twice (or overlapping another) would be shown and exported again per
    entry of the list: 6,000 entries of one 4,000-texture record are 24 M texture slots."""
    cpu, gpu = build(quad_spec(materials=[MaterialSpec(), MaterialSpec()]))
    mesh = read_mesh(cpu, gpu)
    list_at = mesh.header[2]
    first, second = (material.offset for material in mesh.materials)
    with pytest.raises(MeshFormatError, match=f"material 1 offset: {first} lies inside material 0") as caught:
        read_mesh(_patched(cpu, list_at + 8, "<I", first), gpu)
    assert caught.value.offset == list_at + 8
    grown = _patched(cpu, first, "<I", second - first + 16)  # material 0's size reaches into material 1
    with pytest.raises(MeshFormatError, match=f"material 1 offset: {second} lies inside material 0"):
        read_mesh(grown, gpu)
    # Listed in the other order, one after the other: accepted.
    swapped = read_mesh(_patched(cpu, list_at, "<I4xI", second, first), gpu)
    assert [material.offset for material in swapped.materials] == [second, first]


def test_texture_names_are_file_names_at_most() -> None:
    """Texture names at neighbouring offsets are suffixes of one another: without a bound, a
    names block without NULs made names of quadratic size. 255 bytes (a file name's most) read."""
    longest = "a" * 251 + ".tga"
    mesh = read_mesh(*build(quad_spec(materials=[MaterialSpec(textures=[(longest, "Diffuse_Map")])])))
    assert mesh.texture_names() == [longest]
    with pytest.raises(MeshFormatError, match="material 0 texture 0 name: name longer than 255 bytes"):
        read_mesh(*build(quad_spec(materials=[MaterialSpec(textures=[("b" + longest, "Diffuse_Map")])])))


def test_many_bones_export_in_linear_time() -> None:
    """A character mesh's bone list sets its joints: each joint's children were looked for
    among all the joints (quadratic: 20,000 bones took ~20 s)."""
    vertices = [Vertex((float(n), 0.0, float(n % 2)), joints=(n, 0, 0, 0)) for n in range(6)]
    spec = quad_spec(kind="character", vertex_format=3, vertices=vertices, bones=list(range(20_000)))
    mesh = read_mesh(*build(spec))
    started = time.perf_counter()
    export_gltf(mesh, "man")
    assert time.perf_counter() - started < 15  # ~4 s on a busy 2-core machine; ~70 s before


def test_write_back_matches_nodes_by_name_through_one_table() -> None:
    """The write-back looked for each submesh's node among all the glTF's nodes (quadratic in a
    stranger's submesh count); now one table: an exact name first, else the first with a
    Blender suffix (`.001`), as before."""
    from gamepak.models.rfg.writeback import _by_name, _Node

    nodes = [_Node(name, {}) for name in ("a.001", "a", "b.002", "b.001", "c.001.001")]
    table = _by_name(nodes)
    assert table["a"] is nodes[1] and table["b"] is nodes[2] and table["c.001"] is nodes[4]
    assert "c" not in table and table["a.001"] is nodes[0]


def test_write_back_of_many_submeshes() -> None:
    count = 300
    vertices = [Vertex((float(n), float(n % 3), 0.0), uvs=[(n % 7, 0)]) for n in range(3 * count)]
    spec = quad_spec(vertices=vertices, submeshes=[[(0, [3 * n, 3 * n + 1, 3 * n + 2])] for n in range(count)])
    cpu, gpu = build(spec)
    mesh = read_mesh(cpu, gpu)
    result = write_back(mesh, "many", export_gltf(mesh, "many"), gpu, cpu)
    assert (result.gpu, result.cpu, result.changed_vertices) == (gpu, cpu, [])


@pytest.mark.parametrize("remaster", [False, True])
def test_negative_character_counts_name_their_header_field(remaster: bool) -> None:
    cpu, gpu = build(quad_spec(kind="character", vertex_format=3, bones=[0], remaster=remaster))
    width = 8 if remaster else 4
    with pytest.raises(MeshFormatError, match="bone count: -1 is negative") as caught:
        read_mesh(_patched(cpu, 8 + 7 * width, "<i", -1), gpu)
    assert caught.value.offset == 8 + 7 * width
    with pytest.raises(MeshFormatError, match="sphere/cylinder count: 0/-2 is negative") as caught:
        read_mesh(_patched(cpu, 8 + 9 * width, "<hh", 0, -2), gpu)
    assert caught.value.offset == 8 + 9 * width
