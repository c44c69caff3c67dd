"""RFG meshes (../shared/specs/rfg-meshes.md): reading static and character pairs, 2009 and
remaster, every vertex format, strips to triangles, malformed input, `model info` and `verify`."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rfg_mesh_bytes import FORMATS, MaterialSpec, MeshSpec, Vertex, build, crc, quad_spec

from gamepak.errors import GamepakError
from gamepak.models.rfg import MeshFormatError, RfgMesh, read_mesh, volition_crc
from gamepak.models.rfg.geometry import block_triangles, normals, positions, skin, strip_triangles, tangents, uv_set
from gamepak.models.rfg.layout import VERTEX_FORMATS

from conftest import in_process_cli, sample, write_pack

BATTERY = "vpp/repair_battery.str2_pc"


def read(spec: MeshSpec) -> RfgMesh:
    cpu, gpu = build(spec)
    return read_mesh(cpu, gpu, label="t.csmesh_pc", gpu_label="t.gsmesh_pc")


# ------------------------------------------------------------------------------ spec bytes


def test_volition_crc_matches_the_spec_names() -> None:
    assert volition_crc("rfg-standard") == 0x45403103
    assert volition_crc("Diffuse_Map") == 0x69B48F91
    assert volition_crc("Normal_Map") == 0x2808EB90
    assert volition_crc("Specular_Map") == 0xE848C9CA
    assert volition_crc("Decal_Map_1") == 0xC596A112
    assert volition_crc("DECAL_MAP_2") == 0x5C9FF0A8  # lower-cased first
    assert volition_crc("Self_Illumination") == crc("Self_Illumination")


def test_static_quad_reads_as_the_spec_lays_it_out() -> None:
    mesh = read(quad_spec())
    assert (mesh.kind, mesh.version, mesh.remaster) == ("static", 4, False)
    assert mesh.config.vertex_count == 6 and mesh.config.index_count == 10
    assert mesh.config.stride == 32 - 8  # format 2 with 1 UV set: 12 + 4 + 4 + 4
    # Strip: (0,1,2), odd k swaps the first two, the join's degenerates dropped.
    assert block_triangles(mesh, mesh.blocks[0]).tolist() == [[0, 1, 2], [2, 1, 3], [2, 3, 4], [4, 3, 5]]
    assert mesh.materials[0].shader == "rfg-standard"
    assert mesh.materials[0].texture_for("Diffuse_Map") == "Thing_d.tga"
    assert mesh.materials[0].constants["Specular_Power"][0] == 100.0
    assert uv_set(mesh, 0)[3].tolist() == [1.0, 1.0]
    assert mesh.lod_submeshes(0) == [0]


def test_strip_winding_follows_the_stored_normals() -> None:
    mesh = read(quad_spec())
    triangles = block_triangles(mesh, mesh.blocks[0])
    points = positions(mesh)
    cross = np.cross(
        points[triangles[:, 1]] - points[triangles[:, 0]], points[triangles[:, 2]] - points[triangles[:, 0]]
    )
    assert (np.einsum("ij,ij->i", cross, normals(mesh)[triangles[:, 0]]) > 0).all()


def test_parity_counts_from_each_block_start() -> None:
    # Two blocks; the second starts at an odd index of the buffer. Counting from the buffer
    # start would flip its first triangle.
    spec = quad_spec()
    spec.submeshes = [[(0, [0, 1, 2]), (0, [2, 1, 3])]]
    mesh = read(spec)
    assert [block_triangles(mesh, block).tolist() for block in mesh.blocks] == [[[0, 1, 2]], [[2, 1, 3]]]


def test_strip_restart_cuts_and_restarts_parity() -> None:
    assert strip_triangles(np.array([0, 1, 2, 3, 0xFFFF, 4, 5, 6]), 0xFFFF).tolist() == [
        [0, 1, 2],
        [2, 1, 3],
        [4, 5, 6],
    ]


def test_triangle_list_topology() -> None:
    spec = quad_spec(topology=1)
    spec.submeshes = [[(0, [0, 1, 2, 2, 1, 3])]]
    mesh = read(spec)
    assert block_triangles(mesh, mesh.blocks[0]).tolist() == [[0, 1, 2], [2, 1, 3]]


@pytest.mark.parametrize("index_size", [2, 4])
def test_the_restart_index_cuts_strips_only(index_size: int) -> None:
    """Fuzz finding (tests/data/fuzz/fuzz_read_rfgmesh/list-with-restart-index): a triangle list
    holding 0xFFFF was accepted as if it were a strip's restart, and exporting it indexed past
    the vertices (IndexError). In a list it is a vertex number: refused as past the vertices."""
    restart = 0xFFFF if index_size == 2 else 0xFFFFFFFF
    strip = read(quad_spec(index_size=index_size, submeshes=[[(0, [0, 1, 2, 3, restart, 2, 3, 4, 5])]]))
    assert len(block_triangles(strip, strip.blocks[0])) == 4
    listed = quad_spec(topology=1, index_size=index_size, submeshes=[[(0, [0, 1, 2, 2, restart, 3])]])
    with pytest.raises(MeshFormatError, match=f"index 4: {restart} past the 6 vertices") as caught:
        read(listed)
    assert caught.value.offset == 16 + 4 * index_size and caught.value.label == "t.gsmesh_pc"


@pytest.mark.parametrize("code", sorted(FORMATS))
def test_every_vertex_format(code: int) -> None:
    fixed = FORMATS[code][2]
    uv_count = fixed if fixed is not None else 2
    vertices = [
        Vertex(
            (float(n), 0.5, -float(n)),
            normal=(0, 255, 128, 127),
            tangent=(255, 0, 0, 0 if n % 2 else 255),
            weights=(200, 55, 0, 0),
            joints=(1, 2, 0, 0),
            uvs=[(512 * n - 1024, -300)] * uv_count,
        )
        for n in range(6)
    ]
    spec = quad_spec(vertex_format=code, uv_sets=uv_count, vertices=vertices)
    if FORMATS[code][1]:
        spec.kind = "character"
        spec.bones = [0, 1, 2]
    mesh = read(spec)
    assert mesh.vertex_format == VERTEX_FORMATS[code]
    assert mesh.uv_sets == uv_count
    assert positions(mesh)[3].tolist() == [3.0, 0.5, -3.0]
    assert normals(mesh)[0].tolist() == pytest.approx([-1.0, 1.0, 128 / 255 * 2 - 1], abs=1e-6)
    for number in range(uv_count):
        assert uv_set(mesh, number)[2].tolist() == [0.0, -300 / 1024]
    found_tangents = tangents(mesh)
    assert (found_tangents is not None) == FORMATS[code][0]
    if found_tangents is not None:
        assert found_tangents[:2, 3].tolist() == [1.0, -1.0]
    skinned = skin(mesh)
    assert (skinned is not None) == FORMATS[code][1]
    if skinned is not None:
        assert skinned[0][0].tolist() == [1, 2, 0, 0] and skinned[1][0].tolist() == [200, 55, 0, 0]


@pytest.mark.parametrize("remaster", [False, True])
def test_character_mesh_with_bones_spheres_cylinders(remaster: bool) -> None:
    spec = quad_spec(
        kind="character",
        remaster=remaster,
        vertex_format=3,
        bones=[0, 1, 2],
        spheres=[(7, 1, (0.0, 1.5, 0.0), 0.25)],
        cylinders=[(8, 2, (0.0, 1.0, 0.0), (0.1, 0.2, 0.3), 0.05, 0.4)],
    )
    mesh = read(spec)
    assert (mesh.kind, mesh.version, mesh.remaster) == ("character", 4 if remaster else 3, remaster)
    assert mesh.bones == [0, 1, 2]
    assert mesh.spheres[0].body_part == 7 and mesh.spheres[0].radius == 0.25
    assert mesh.cylinders[0].position == pytest.approx((0.1, 0.2, 0.3)) and mesh.cylinders[0].height == pytest.approx(
        0.4
    )


def test_remaster_static_and_u32_indices() -> None:
    mesh = read(quad_spec(remaster=True, index_size=4, vertex_format=41, uv_sets=3))
    assert (mesh.version, mesh.remaster, mesh.config.index_size, mesh.uv_sets) == (5, True, 4, 3)
    assert len(block_triangles(mesh, mesh.blocks[0])) == 4


def test_lods_one_submesh_each() -> None:
    spec = quad_spec(lod_ids=[0, 1])
    spec.submeshes = [[(0, [0, 1, 2, 3, 3, 2, 2, 3, 4, 5])], [(0, [0, 1, 2, 3])]]
    mesh = read(spec)
    assert mesh.lod_count == 2 and mesh.lod_submeshes(0) == [0] and mesh.lod_submeshes(1) == [1]
    assert mesh.summary()["lod0_triangles"] == 4 and mesh.summary()["triangles"] == 6
    with pytest.raises(GamepakError, match="no LOD 2"):
        mesh.lod_submeshes(2)


def test_several_materials_and_slots_named_by_crc() -> None:
    spec = quad_spec(
        materials=[
            MaterialSpec(),
            MaterialSpec(textures=[("b_d.tga", "Diffuse_Map"), ("b_n.tga", "Normal_Map"), ("b_s.tga", "Specular_Map")]),
        ]
    )
    spec.submeshes = [[(0, [0, 1, 2, 3]), (1, [2, 3, 4, 5])]]
    mesh = read(spec)
    assert [block.material for block in mesh.blocks] == [0, 1]
    assert {t.slot: t.name for t in mesh.materials[1].textures} == {
        "Diffuse_Map": "b_d.tga",
        "Normal_Map": "b_n.tga",
        "Specular_Map": "b_s.tga",
    }
    assert mesh.texture_names() == ["Thing_d.tga", "b_d.tga", "b_n.tga", "b_s.tga"]


# --------------------------------------------------------------------------- malformed input


def _patched(data: bytes, offset: int, fmt: str, value: int) -> bytes:
    changed = bytearray(data)
    struct.pack_into(fmt, changed, offset, value)
    return bytes(changed)


CONFIG_AT = 0x40  # 2009 static: the header ends at 0x34, padded to 16


@pytest.mark.parametrize(
    ("where", "fmt", "value", "field"),
    [
        (0x00, "<I", 0x12345678, "signature"),
        (0x04, "<I", 9, "version"),
        (0x08, "<I", 0x7FFFFFF0, "mesh config"),
        (CONFIG_AT + 0x1D, "<B", 17, "vertex format"),
        (CONFIG_AT + 0x1C, "<B", 36, "vertex stride"),
        (CONFIG_AT + 0x2C, "<B", 3, "index size"),
        (CONFIG_AT + 0x2D, "<B", 5, "topology"),
        (CONFIG_AT + 0x10, "<I", 0x10000000, "submesh count"),
        (CONFIG_AT + 0x18, "<I", 0x40000000, "vertex count"),
        (CONFIG_AT + 0x24, "<I", 0x40000000, "index count"),
        (CONFIG_AT + 0x04, "<I", 0xDEADBEEF, "config end hash"),
        (CONFIG_AT + 0x08, "<I", 999, "config size"),
        (0x14, "<I", 0x1000000, "material count"),
        (0x1C, "<I", 0x1000000, "LOD count"),
    ],
)
def test_bad_cpu_fields_are_refused_naming_the_field(where: int, fmt: str, value: int, field: str) -> None:
    cpu, gpu = build(quad_spec())
    with pytest.raises(MeshFormatError, match=field) as caught:
        read_mesh(_patched(cpu, where, fmt, value), gpu, label="x.csmesh_pc")
    assert "x.csmesh_pc" in str(caught.value) or "gsmesh" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_gpu_that_is_not_the_partner() -> None:
    cpu, gpu = build(quad_spec())
    with pytest.raises(MeshFormatError, match="hash.*not this mesh's"):
        read_mesh(cpu, _patched(gpu, 0, "<I", 1)[:-4] + struct.pack("<I", 1), gpu_label="y.gsmesh_pc")
    with pytest.raises(MeshFormatError, match="size"):
        read_mesh(cpu, gpu + b"\0" * 16)
    with pytest.raises(MeshFormatError, match="end hash"):
        read_mesh(cpu, gpu[:-4] + b"\1\2\3\4")


def test_index_past_the_vertices_and_block_past_the_buffer() -> None:
    spec = quad_spec()
    spec.submeshes = [[(0, [0, 1, 2, 9])]]
    with pytest.raises(MeshFormatError, match="index 3: 9 past the 6 vertices") as caught:
        read(spec)
    assert caught.value.offset == 16 + 3 * 2
    cpu, gpu = build(quad_spec())
    block_at = CONFIG_AT + 0x30 + 44  # first render block
    with pytest.raises(MeshFormatError, match="render block 0.*run past"):
        read_mesh(_patched(cpu, block_at + 4, "<I", 1), gpu)  # first index 1: its 10 end at 11
    with pytest.raises(MeshFormatError, match="render block 0 index count: the blocks draw 11 indices"):
        read_mesh(_patched(cpu, block_at + 8, "<I", 11), gpu)
    with pytest.raises(MeshFormatError, match="LOD 0 submesh id"):
        read(quad_spec(lod_ids=[3]))
    with pytest.raises(MeshFormatError, match="material"):
        read_mesh(_patched(cpu, block_at, "<H", 4), gpu)


def test_every_truncation_is_refused_with_a_gamepak_error() -> None:
    cpu, gpu = build(quad_spec(kind="character", vertex_format=3, bones=[0]))
    for size in range(len(cpu)):
        with pytest.raises(GamepakError):
            read_mesh(cpu[:size], gpu)
    for size in range(len(gpu)):
        with pytest.raises(GamepakError):
            read_mesh(cpu, gpu[:size])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_byte_changes_raise_only_gamepak_errors(data: st.DataObject) -> None:
    cpu, gpu = build(quad_spec(kind=data.draw(st.sampled_from(["static", "character"])), vertex_format=3))
    which = data.draw(st.booleans())
    target = bytearray(cpu if which else gpu)
    for _ in range(data.draw(st.integers(1, 4))):
        target[data.draw(st.integers(0, len(target) - 1))] = data.draw(st.integers(0, 255))
    try:
        mesh = read_mesh(bytes(target), gpu) if which else read_mesh(cpu, bytes(target))
    except GamepakError as exc:
        assert "\n" not in str(exc)
        return
    for block in mesh.blocks:  # what was read is usable
        triangles = block_triangles(mesh, block)
        assert triangles.size == 0 or triangles.max() < mesh.config.vertex_count


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(0, 7), max_size=40))
def test_strip_property(indices: list[int]) -> None:
    triangles = strip_triangles(np.array(indices, dtype=np.int64))
    assert len(triangles) <= max(len(indices) - 2, 0)
    for a, b, c in triangles.tolist():
        assert len({a, b, c}) == 3
    # Each kept triangle is a window of the strip, in its own order or with the first two swapped.
    windows = {tuple(indices[k : k + 3]) for k in range(len(indices) - 2)}
    for a, b, c in triangles.tolist():
        assert (a, b, c) in windows or (b, a, c) in windows


# ------------------------------------------------------------------------------ real sample


def test_repair_battery_figures(tmp_path: Path) -> None:
    from gamepak.ops.meshes import load_pair

    pair = load_pair(sample(BATTERY), "repair_battery.gsmesh_pc")  # either file names the pair
    assert (len(pair.cpu), len(pair.gpu)) == (856, 6900)
    mesh = pair.read()
    summary = mesh.summary()
    assert (summary["kind"], summary["version"], mesh.config.version) == ("rfg-static-mesh", 4, 4)
    assert (mesh.vertex_format.code, mesh.config.stride, mesh.uv_sets) == (2, 32, 3)
    assert (summary["vertices"], summary["indices"], summary["lod0_triangles"]) == (197, 287, 172)
    assert 285 - 172 == 113
    assert (summary["submeshes"], summary["render_blocks"], summary["lods"], summary["tags"]) == (1, 1, 1, 0)
    assert [m["shader"] for m in summary["materials"]] == ["rfg-standard"]
    assert len(mesh.materials[0].textures) == 5
    assert summary["texture_names"] == ["Repair_tool_d.tga", "missing.tga", "Repair_tool_n.tga", "Repair_tool_s.tga"]
    assert mesh.materials[0].texture_for("Normal_Map") == "Repair_tool_n.tga"
    points = positions(mesh)
    assert points.min(axis=0).tolist() == pytest.approx([-0.057601, -0.070991, -0.059464], abs=1e-6)
    assert points.max(axis=0).tolist() == pytest.approx([0.057601, 0.070991, 0.059464], abs=1e-6)
    assert (mesh.config.hash, mesh.gpu_hash) == (0x6E5B343B, 0x6E5B343B)
    triangles = block_triangles(mesh, mesh.blocks[0])
    cross = np.cross(
        points[triangles[:, 1]] - points[triangles[:, 0]], points[triangles[:, 2]] - points[triangles[:, 0]]
    )
    facing = np.einsum("ij,ij->i", cross, normals(mesh)[triangles].mean(axis=1))
    assert (facing > 0).all()  # all 172 agree with the stored normals
    uv0 = uv_set(mesh, 0)
    assert uv0.min(axis=0).tolist() == pytest.approx([0.314, -2.901], abs=1e-3)
    assert not uv_set(mesh, 1).any() and not uv_set(mesh, 2).any()
    assert mesh.warnings == []


def test_model_info_cli_on_the_sample() -> None:
    code, out, err = in_process_cli("model", "info", str(sample(BATTERY)), "repair_battery.csmesh_pc", "--json")
    assert code == 0, err
    shown = json.loads(out)
    assert (shown["vertices"], shown["lod0_triangles"], shown["kind"]) == (197, 172, "rfg-static-mesh")
    code, out, _ = in_process_cli("model", "info", str(sample(BATTERY)), "repair_battery.csmesh_pc")
    assert code == 0 and "Diffuse_Map=Repair_tool_d.tga" in out


def test_model_info_and_verify_of_a_broken_pack(tmp_path: Path) -> None:
    cpu, gpu = build(quad_spec())
    good = write_pack(tmp_path / "good.str2_pc", {"thing.csmesh_pc": cpu, "thing.gsmesh_pc": gpu})
    code, out, err = in_process_cli("model", "info", str(good), "thing.csmesh_pc")
    assert code == 0, err
    assert "triangles: 4" in out
    code, _, err = in_process_cli("verify", str(good))
    assert code == 0, err
    bad = write_pack(tmp_path / "bad.str2_pc", {"thing.csmesh_pc": cpu, "thing.gsmesh_pc": gpu[:-4] + b"\0\0\0\1"})
    code, out, err = in_process_cli("model", "info", str(bad), "thing.csmesh_pc")
    assert code == 1 and err.count("\n") == 1 and "thing.gsmesh_pc" in err and "end hash" in err
    code, out, err = in_process_cli("verify", str(bad))
    assert code == 1 and "end hash" in out + err
    lonely = write_pack(tmp_path / "lonely.str2_pc", {"thing.csmesh_pc": cpu})
    code, out, err = in_process_cli("verify", str(lonely))
    assert code == 1 and "no GPU partner" in out + err
    # A member of that name that is no PC mesh (a stand-in) is not held to the layout, as pegs.
    stand_in = write_pack(tmp_path / "stand_in.str2_pc", {"thing.csmesh_pc": b"<table/>"})
    assert in_process_cli("verify", str(stand_in))[0] == 0
    code, _, err = in_process_cli("model", "info", str(stand_in), "thing.csmesh_pc")
    assert code == 1 and "partner thing.gsmesh_pc" in err


def test_verify_warns_about_conventions_a_reader_tolerates(tmp_path: Path) -> None:
    cpu, gpu = build(quad_spec())
    changed = bytearray(cpu)
    struct.pack_into("<I", changed, CONFIG_AT + 0x20, 999)  # a wrong stored vertex buffer offset
    block_at = CONFIG_AT + 0x30 + 44
    struct.pack_into("<I", changed, block_at + 16, 3)  # highest vertex 3, but it draws up to 5
    submesh_at = CONFIG_AT + 0x30
    struct.pack_into("<f", changed, submesh_at + 28, 0.5)  # box max x 0.5, vertices reach 2
    mesh = read_mesh(bytes(changed), gpu)
    assert any("differ from the computed 16/48" in warning for warning in mesh.warnings)
    pack = write_pack(tmp_path / "w.str2_pc", {"w.csmesh_pc": bytes(changed), "w.gsmesh_pc": gpu})
    code, out, err = in_process_cli("verify", str(pack))
    assert code == 0, out + err
    shown = out + err
    assert "stored GPU buffer offsets" in shown
    assert "stored vertex range 0..3, drawn 0..5" in shown
    assert "submesh 0: its vertices reach outside its stored box" in shown
