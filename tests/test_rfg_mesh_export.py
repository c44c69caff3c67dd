"""RFG meshes to glTF/OBJ (textures from pegs, skins, axes and winding), and edited vertices
written back into the pack (`model import --into PACK MEMBER`)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pygltflib
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rfg_mesh_bytes import MaterialSpec, MeshSpec, Vertex, build, quad_spec, rig_bytes

from gamepak.errors import GamepakError
from gamepak.models.rfg import read_mesh
from gamepak.models.rfg.export import export_gltf
from gamepak.models.rfg.writeback import write_back

from conftest import SAMPLES, gltf_validator_errors, in_process_cli, pack_members, sample, write_pack

BATTERY = "vpp/repair_battery.str2_pc"


def peg_pair(names: dict[str, tuple[int, int, int, int]]) -> tuple[bytes, bytes]:
    """A peg (CPU, GPU) holding one 4x4 8888 texture per name, filled with its colour."""
    from gamepak.formats.rfg.peg import Peg, PixelFormat

    peg = Peg.new("t.cpeg_pc")
    for name, colour in names.items():
        peg.add_texture(name, np.full((4, 4, 4), colour, dtype=np.uint8), PixelFormat.A8R8G8B8, mips=1)
    return peg.to_bytes()


def textured_spec(**changes: object) -> MeshSpec:
    material = MaterialSpec(
        textures=[
            ("thing_d.tga", "Diffuse_Map"),
            ("missing.tga", "Decal_Map_1"),
            ("thing_n.tga", "Normal_Map"),
            ("thing_s.tga", "Specular_Map"),
        ]
    )
    return quad_spec(materials=[material], **changes)


def load_glb(path: Path) -> pygltflib.GLTF2:
    return pygltflib.GLTF2.load(str(path))


def accessor_values(gltf: pygltflib.GLTF2, index: int) -> np.ndarray:
    accessor = gltf.accessors[index]
    view = gltf.bufferViews[accessor.bufferView]
    dtype = {5121: np.uint8, 5123: np.uint16, 5125: np.uint32, 5126: np.float32}[accessor.componentType]
    width = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT4": 16}[accessor.type]
    blob = gltf.binary_blob()
    return np.frombuffer(blob, dtype, accessor.count * width, view.byteOffset + (accessor.byteOffset or 0)).reshape(
        accessor.count, width
    )


@pytest.fixture
def textured_pack(tmp_path: Path) -> Path:
    cpu, gpu = build(textured_spec())
    peg_cpu, peg_gpu = peg_pair({"thing_d.tga": (255, 0, 0, 255), "thing_n.tga": (128, 128, 255, 255)})
    members = {"thing.csmesh_pc": cpu, "thing.gsmesh_pc": gpu, "thing.cpeg_pc": peg_cpu, "thing.gpeg_pc": peg_gpu}
    return write_pack(tmp_path / "packs" / "thing.str2_pc", members)


def test_export_embeds_textures_from_the_pack_in_their_slots(textured_pack: Path, tmp_path: Path) -> None:
    out = tmp_path / "thing.glb"
    code, _, err = in_process_cli("model", "export", str(textured_pack), "thing.gsmesh_pc", "-o", str(out))
    assert code == 0, err
    assert "thing_s.tga not found" in err and "missing.tga" not in err  # the placeholder is skipped
    gltf = load_glb(out)
    material = gltf.materials[0]
    images = [image.name for image in gltf.images]
    assert images[gltf.textures[material.pbrMetallicRoughness.baseColorTexture.index].source] == "thing_d.tga"
    assert images[gltf.textures[material.normalTexture.index].source] == "thing_n.tga"
    assert all(image.mimeType == "image/png" for image in gltf.images)
    assert gltf.scenes[0].extras["rfg"]["unresolved_textures"] == ["thing_s.tga"]
    from io import BytesIO

    from PIL import Image

    view = gltf.bufferViews[gltf.images[0].bufferView]
    png = gltf.binary_blob()[view.byteOffset : view.byteOffset + view.byteLength]
    assert Image.open(BytesIO(png)).convert("RGBA").getpixel((1, 1)) == (255, 0, 0, 255)


def test_textures_found_in_a_sibling_pack_and_with_search(tmp_path: Path) -> None:
    cpu, gpu = build(textured_spec())
    mesh_pack = write_pack(tmp_path / "game" / "thing.str2_pc", {"thing.csmesh_pc": cpu, "thing.gsmesh_pc": gpu})
    peg_cpu, peg_gpu = peg_pair({"thing_d.tga": (0, 255, 0, 255)})
    write_pack(tmp_path / "game" / "thing_high.str2_pc", {"thing_high.cpeg_pc": peg_cpu, "thing_high.gpeg_pc": peg_gpu})
    spec_cpu, spec_gpu = peg_pair({"THING_S.tga": (9, 9, 9, 255)})
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "s.cpeg_pc").write_bytes(spec_cpu)
    (tmp_path / "more" / "s.gpeg_pc").write_bytes(spec_gpu)
    out = tmp_path / "thing.gltf"
    code, _, err = in_process_cli(
        "model", "export", str(mesh_pack), "thing.csmesh_pc", "-o", str(out), "--search", str(tmp_path / "more")
    )
    assert code == 0, err
    gltf = pygltflib.GLTF2.load(str(out))
    assert sorted(image.name for image in gltf.images) == ["thing_d.tga", "thing_s.tga"]
    assert gltf.materials[0].extensions["KHR_materials_specular"]["specularColorTexture"]["index"] is not None
    assert "thing_n.tga not found" in err


def test_axes_and_winding_follow_the_spec(tmp_path: Path) -> None:
    cpu, gpu = build(quad_spec())
    mesh = read_mesh(cpu, gpu)
    gltf = pygltflib.GLTF2.load_from_bytes(export_gltf(mesh, "quad"))
    primitive = gltf.meshes[0].primitives[0]
    points = accessor_values(gltf, primitive.attributes.POSITION)
    normals = accessor_values(gltf, primitive.attributes.NORMAL)
    triangles = accessor_values(gltf, primitive.indices).reshape(-1, 3).astype(np.int64)
    # X negated, Y up kept.
    assert sorted(points[:, 0].tolist()) == [-2.0, -2.0, -1.0, -1.0, 0.0, 0.0]
    assert points[:, 1].tolist() == [0.0] * 6
    assert np.allclose(normals, [0, 1, 0], atol=0.01)
    # Counter-clockwise seen from where the normals point: (b-a)x(c-a) along the normal.
    a, b, c = (points[triangles[:, k]] for k in range(3))
    assert (np.cross(b - a, c - a)[:, 1] > 0).all()
    assert len(triangles) == 4
    assert accessor_values(gltf, primitive.attributes.TEXCOORD_0)[:, 0].max() == 2.0


def test_character_mesh_gets_a_skin(tmp_path: Path) -> None:
    vertices = [
        Vertex(
            (float(n), 0.0, float(n % 2)), weights=(255, 0, 0, 0) if n < 3 else (128, 127, 0, 0), joints=(0, 1, 0, 0)
        )
        for n in range(6)
    ]
    cpu, gpu = build(quad_spec(kind="character", vertex_format=3, bones=[0, 1], vertices=vertices))
    gltf = pygltflib.GLTF2.load_from_bytes(export_gltf(read_mesh(cpu, gpu), "man"))
    assert len(gltf.skins) == 1
    joints = gltf.skins[0].joints
    assert [gltf.nodes[j].name for j in joints] == ["bone_0", "bone_1"]
    attributes = gltf.meshes[0].primitives[0].attributes
    weights = accessor_values(gltf, attributes.WEIGHTS_0)
    assert gltf.accessors[attributes.WEIGHTS_0].normalized
    assert (weights.astype(int).sum(axis=1) == 255).all()
    assert accessor_values(gltf, attributes.JOINTS_0).max() == 1
    inverse = accessor_values(gltf, gltf.skins[0].inverseBindMatrices).reshape(-1, 4, 4)
    assert np.array_equal(inverse, np.tile(np.eye(4, dtype=np.float32), (2, 1, 1)))


def test_a_rig_in_the_pack_names_and_places_the_joints(tmp_path: Path, gltf_validator: Path) -> None:
    # The mesh's bone list names rig bones 2 and 1; rig bone 0 is a parent the list lacks.
    cpu, gpu = build(quad_spec(kind="character", vertex_format=3, bones=[2, 1]))
    rig = rig_bytes([("root", -1, (0.0, 1.0, 0.0)), ("spine", 0, (0.5, 0.0, 0.0)), ("head", 1, (0.0, 0.25, 0.0))])
    pack = write_pack(tmp_path / "man.str2_pc", {"man.ccmesh_pc": cpu, "man.gcmesh_pc": gpu, "man.rig_pc": rig})
    out = tmp_path / "man.glb"
    code, _, err = in_process_cli("model", "export", str(pack), "man.ccmesh_pc", "-o", str(out))
    assert code == 0, err
    assert "no rig found" not in err
    gltf = load_glb(out)
    joints = gltf.skins[0].joints
    head, spine = (gltf.nodes[j] for j in joints)
    assert (head.name, spine.name) == ("head", "spine")
    assert spine.children == [joints[0]]  # head under spine
    assert spine.translation == pytest.approx([-0.5, 1.0, 0.0])  # root's offset folded in; X mirrored
    assert head.translation == pytest.approx([0.0, 0.25, 0.0])
    inverse = accessor_values(gltf, gltf.skins[0].inverseBindMatrices).reshape(-1, 4, 4)
    assert inverse[0][3, :3].tolist() == pytest.approx([0.5, -1.25, 0.0])  # minus head's world position
    assert not gltf_validator_errors(gltf_validator, [out])
    # A rig that does not fit (bone 2 missing) is not used; a bad --rig file is an error.
    small = tmp_path / "small.rig_pc"
    small.write_bytes(rig_bytes([("only", -1, (0.0, 0.0, 0.0))]))
    code, _, err = in_process_cli(
        "model", "export", str(pack), "man.ccmesh_pc", "-o", str(tmp_path / "b.glb"), "--rig", str(small)
    )
    assert code == 0 and [load_glb(tmp_path / "b.glb").nodes[j].name for j in joints] == ["bone_2", "bone_1"]
    small.write_bytes(rig_bytes([("x", -1, (0.0, 0.0, 0.0))])[:70])
    code, _, err = in_process_cli(
        "model", "export", str(pack), "man.ccmesh_pc", "-o", str(tmp_path / "c.glb"), "--rig", str(small)
    )
    assert code == 1 and "bone count" in err and err.count("\n") == 1


def test_lods_and_several_materials(tmp_path: Path) -> None:
    spec = quad_spec(lod_ids=[0, 1], materials=[MaterialSpec(), MaterialSpec(textures=[])])
    spec.submeshes = [[(0, [0, 1, 2, 3]), (1, [2, 3, 4, 5])], [(0, [0, 1, 2, 3])]]
    mesh = read_mesh(*build(spec))
    lod0 = pygltflib.GLTF2.load_from_bytes(export_gltf(mesh, "m"))
    assert [node.name for node in lod0.nodes] == ["m"]
    assert [p.material for p in lod0.meshes[0].primitives] == [0, 1]
    every = pygltflib.GLTF2.load_from_bytes(export_gltf(mesh, "m", all_lods=True))
    assert [node.name for node in every.nodes] == ["m", "m.LOD1"]
    lod1 = pygltflib.GLTF2.load_from_bytes(export_gltf(mesh, "m", lod=1))
    assert len(lod1.meshes[0].primitives) == 1
    # LOD 1 uses vertices 0..3 only: compacted.
    assert lod1.accessors[lod1.meshes[0].primitives[0].attributes.POSITION].count == 4


def test_exports_pass_the_khronos_validator(textured_pack: Path, tmp_path: Path, gltf_validator: Path) -> None:
    files = []
    out = tmp_path / "thing.glb"
    assert in_process_cli("model", "export", str(textured_pack), "thing.csmesh_pc", "-o", str(out))[0] == 0
    files.append(out)
    character = quad_spec(kind="character", vertex_format=34, uv_sets=1, bones=[0, 3])
    (tmp_path / "character.glb").write_bytes(export_gltf(read_mesh(*build(character)), "c"))
    files.append(tmp_path / "character.glb")
    (tmp_path / "remaster.gltf").write_bytes(
        export_gltf(read_mesh(*build(quad_spec(remaster=True, vertex_format=41))), "r", binary=False)
    )
    files.append(tmp_path / "remaster.gltf")
    battery = tmp_path / "battery.glb"
    if (SAMPLES / BATTERY).exists():
        assert (
            in_process_cli("model", "export", str(sample(BATTERY)), "repair_battery.csmesh_pc", "-o", str(battery))[0]
            == 0
        )
        files.append(battery)
    assert not gltf_validator_errors(gltf_validator, files)


def test_obj_export_and_every_mesh_of_a_pack(textured_pack: Path, tmp_path: Path) -> None:
    out = tmp_path / "thing.obj"
    code, _, err = in_process_cli("model", "export", str(textured_pack), "thing.csmesh_pc", "-o", str(out))
    assert code == 0, err
    text = out.read_text()
    assert text.count("\nf ") == 4 and "mtllib" in text
    assert (tmp_path / "thing_thing_d.png").exists()
    folder = tmp_path / "all"
    code, _, err = in_process_cli("model", "export", str(textured_pack), "-o", str(folder))
    assert code == 0, err
    assert sorted(path.name for path in folder.iterdir()) == ["thing.glb"]
    code, _, err = in_process_cli("model", "export", str(textured_pack), "thing.csmesh_pc", "-o", str(out))
    assert code == 1 and "exists" in err


def test_battery_export_figures(tmp_path: Path) -> None:
    out = tmp_path / "battery.glb"
    code, _, err = in_process_cli("model", "export", str(sample(BATTERY)), "repair_battery.csmesh_pc", "-o", str(out))
    assert code == 0, err
    for name in ("Repair_tool_d.tga", "Repair_tool_n.tga", "Repair_tool_s.tga"):
        assert f"texture {name} not found" in err
    gltf = load_glb(out)
    primitive = gltf.meshes[0].primitives[0]
    position = gltf.accessors[primitive.attributes.POSITION]
    assert gltf.accessors[primitive.indices].count == 172 * 3
    assert position.count == 197
    assert position.min == pytest.approx([-0.057601, -0.070991, -0.059464], abs=1e-6)
    assert position.max == pytest.approx([0.057601, 0.070991, 0.059464], abs=1e-6)
    assert primitive.attributes.TEXCOORD_1 is None  # UV sets 1 and 2 are all zero
    extras = gltf.scenes[0].extras["rfg"]
    assert extras["texture_slots"][0]["Diffuse_Map"] == "Repair_tool_d.tga"
    assert gltf.materials[0].name == "rfg-standard"


# ---------------------------------------------------------------------------------- import


def moved_glb(data: bytes, vertex: int, delta: tuple[float, ...], attribute: str = "POSITION") -> bytes:
    """`data` with one vertex's attribute moved by `delta` (its first 3, or 2 for a UV)."""
    gltf = pygltflib.GLTF2.load_from_bytes(data)
    blob = bytearray(gltf.binary_blob())
    index = getattr(gltf.meshes[0].primitives[0].attributes, attribute)
    accessor = gltf.accessors[index]
    view = gltf.bufferViews[accessor.bufferView]
    width = 3 if attribute in ("POSITION", "NORMAL") else 2
    values = np.frombuffer(blob, np.float32, accessor.count * width, view.byteOffset).reshape(-1, width).copy()
    values[vertex] += np.array(delta[:width], dtype=np.float32)
    if attribute == "NORMAL":
        values[vertex] /= np.linalg.norm(values[vertex])
    blob[view.byteOffset : view.byteOffset + values.nbytes] = values.tobytes()
    if attribute == "POSITION":
        accessor.min, accessor.max = values.min(axis=0).tolist(), values.max(axis=0).tolist()
    gltf.set_binary_blob(bytes(blob))
    return b"".join(gltf.save_to_bytes())


def test_unchanged_export_writes_back_identical_bytes() -> None:
    cpu, gpu = build(quad_spec(kind="character", vertex_format=42, uv_sets=3))
    mesh = read_mesh(cpu, gpu)
    result = write_back(mesh, "q", export_gltf(mesh, "q"), gpu, cpu)
    assert (result.gpu, result.cpu, result.changed_vertices) == (gpu, cpu, [])
    result = write_back(mesh, "q", export_gltf(mesh, "q", binary=False), gpu, cpu)
    assert result.gpu == gpu


@pytest.mark.parametrize(
    "submeshes",
    [[[(0, [0, 1])]], [[(0, [])]], [[(0, [0, 1, 1, 0])]], []],
    ids=["two-indices", "no-index", "only-degenerates", "no-submesh"],
)
def test_a_mesh_drawing_no_triangle_writes_back_unchanged(submeshes: list[list[tuple[int, list[int]]]]) -> None:
    """Fuzz finding (tests/data/fuzz/fuzz_read_rfgmesh/block-draws-no-triangle): the unchanged
    export of a mesh whose blocks draw no whole triangle (or that has no submesh) holds no
    node to match, and the write-back refused it ("none of its nodes"); now it gives both
    files back as they were. A glTF adding triangles to it is still a changed topology."""
    cpu, gpu = build(quad_spec(submeshes=submeshes, lod_ids=[0] if submeshes else []))
    mesh = read_mesh(cpu, gpu, label="q.csmesh_pc")
    for binary in (True, False):
        result = write_back(mesh, "q", export_gltf(mesh, "q", binary=binary), gpu, cpu)
        assert (result.gpu, result.cpu, result.changed_vertices) == (gpu, cpu, [])
        assert result.warnings == ["q.csmesh_pc: the mesh draws no triangle: no vertex to write back"]
    other = read_mesh(*build(quad_spec()))
    with pytest.raises(GamepakError, match="node 'q' has 4 triangles, the mesh draws none"):
        write_back(mesh, "q", export_gltf(other, "q"), gpu, cpu, label="x.glb")


@pytest.mark.parametrize(
    ("attribute", "delta", "field_slice"),
    [
        ("POSITION", (0.0, 0.25, 0.0), slice(4, 8)),
        ("NORMAL", (0.5, 0.0, 0.0), slice(12, 15)),
        ("TEXCOORD_0", (0.5, 0.0), slice(20, 22)),
    ],
)
def test_a_changed_vertex_changes_only_its_bytes(attribute: str, delta: tuple[float, ...], field_slice: slice) -> None:
    cpu, gpu = build(quad_spec())
    mesh = read_mesh(cpu, gpu)
    result = write_back(mesh, "q", moved_glb(export_gltf(mesh, "q"), 2, delta + (0.0,) * 3, attribute), gpu, cpu)
    assert result.changed_vertices == [2]
    differing = [offset for offset in range(len(gpu)) if gpu[offset] != result.gpu[offset]]
    vertex_at = mesh.config.vertex_offset + 2 * mesh.config.stride
    assert differing and all(vertex_at + field_slice.start <= o < vertex_at + field_slice.stop for o in differing)
    again = read_mesh(result.cpu, result.gpu)
    if attribute == "POSITION":
        assert again.vertices["position"][2].tolist() == [1.0, 0.25, 0.0]
        assert result.boxes_changed == [0]  # y grew past the box's top (0)
    if attribute == "TEXCOORD_0":
        assert again.vertices["uv0"][2].tolist() == [1024 + 512, 0]


def test_a_vertex_moved_out_of_its_box_grows_the_box() -> None:
    cpu, gpu = build(quad_spec(boxes=[((0.0, 0.0, 0.0), (2.0, 0.0, 1.0))]))
    mesh = read_mesh(cpu, gpu)
    result = write_back(mesh, "q", moved_glb(export_gltf(mesh, "q"), 0, (0.0, 0.5, 0.0)), gpu, cpu)
    assert result.boxes_changed == [0]
    again = read_mesh(result.cpu, result.gpu)
    assert again.submeshes[0].box_max[1] == 0.5
    assert len(result.cpu) == len(cpu)


def test_import_refuses_changed_topology_and_out_of_range_values() -> None:
    cpu, gpu = build(quad_spec())
    mesh = read_mesh(cpu, gpu)
    data = export_gltf(mesh, "q")
    gltf = pygltflib.GLTF2.load_from_bytes(data)
    gltf.accessors[gltf.meshes[0].primitives[0].indices].count = 9  # three triangles, not four
    with pytest.raises(GamepakError, match="3 triangles, the mesh 4: a changed triangle count"):
        write_back(mesh, "q", b"".join(gltf.save_to_bytes()), gpu, cpu, label="x.glb")
    with pytest.raises(GamepakError, match=r"vertex 1: UV set 0 \(40, 1\) is outside"):
        write_back(mesh, "q", moved_glb(data, 1, (40.0, 0.0), "TEXCOORD_0"), gpu, cpu, label="x.glb")
    with pytest.raises(GamepakError, match="none of its nodes"):
        write_back(mesh, "other", data, gpu, cpu)


def test_import_refuses_a_split_vertex() -> None:
    # Give one triangle's copy of a shared vertex its own position: the glTF shares vertex
    # arrays per primitive, so rebuild it with one corner pointing at a new, moved vertex.
    cpu, gpu = build(quad_spec())
    mesh = read_mesh(cpu, gpu)
    gltf = pygltflib.GLTF2.load_from_bytes(export_gltf(mesh, "q"))
    primitive = gltf.meshes[0].primitives[0]
    blob = bytearray(gltf.binary_blob())
    indices_view = gltf.bufferViews[gltf.accessors[primitive.indices].bufferView]
    indices = np.frombuffer(blob, np.uint16, 12, indices_view.byteOffset).copy()
    position_view = gltf.bufferViews[gltf.accessors[primitive.attributes.POSITION].bufferView]
    points = np.frombuffer(blob, np.float32, 18, position_view.byteOffset).reshape(6, 3).copy()
    # Vertex 3 of triangle 1 and 2: move it only in triangle 1 by swapping in vertex 5's spot.
    first = int(np.flatnonzero(indices == 2)[0])
    last = int(np.flatnonzero(indices == 2)[-1])
    assert first != last
    points_new = np.vstack([points, points[2] + [0, 1, 0]]).astype(np.float32)
    indices[last] = 6
    # Append the new arrays at the end of the blob and repoint the accessors.
    at = len(blob)
    blob += points_new.tobytes()
    gltf.bufferViews.append(pygltflib.BufferView(buffer=0, byteOffset=at, byteLength=points_new.nbytes))
    for name in ("POSITION", "NORMAL", "TEXCOORD_0"):
        old = gltf.accessors[getattr(primitive.attributes, name)]
        width = 3 if name != "TEXCOORD_0" else 2
        view = gltf.bufferViews[old.bufferView]
        values = np.frombuffer(bytes(blob), np.float32, 6 * width, view.byteOffset).reshape(6, width)
        grown = points_new if name == "POSITION" else np.vstack([values, values[2]]).astype(np.float32)
        offset = len(blob)
        blob += grown.tobytes()
        gltf.bufferViews.append(pygltflib.BufferView(buffer=0, byteOffset=offset, byteLength=grown.nbytes))
        old.bufferView, old.count = len(gltf.bufferViews) - 1, 7
    blob[indices_view.byteOffset : indices_view.byteOffset + 24] = indices.tobytes()
    gltf.buffers[0].byteLength = len(blob)
    gltf.set_binary_blob(bytes(blob))
    with pytest.raises(GamepakError, match="vertex 2 takes different positions"):
        write_back(mesh, "q", b"".join(gltf.save_to_bytes()), gpu, cpu)


def test_import_cli_edits_the_pack_crash_safely(textured_pack: Path, tmp_path: Path) -> None:
    before = textured_pack.read_bytes()
    out = tmp_path / "thing.glb"
    assert in_process_cli("model", "export", str(textured_pack), "thing.csmesh_pc", "-o", str(out))[0] == 0
    code, _, err = in_process_cli("model", "import", str(out), "--into", str(textured_pack), "thing.csmesh_pc")
    assert code == 0 and "no vertex changed" in err
    assert textured_pack.read_bytes() == before
    out.write_bytes(moved_glb(out.read_bytes(), 3, (0.0, 0.0, 0.125)))
    code, _, err = in_process_cli(
        "model", "import", str(out), "--into", str(textured_pack), "thing.gsmesh_pc", "--dry-run"
    )
    assert code == 0 and "would change" in err and textured_pack.read_bytes() == before
    code, _, err = in_process_cli("model", "import", str(out), "--into", str(textured_pack), "thing.gsmesh_pc")
    assert code == 0, err
    members = pack_members(textured_pack)
    mesh = read_mesh(members["thing.csmesh_pc"], members["thing.gsmesh_pc"])
    assert mesh.vertices["position"][3].tolist() == [1.0, 0.0, 1.125]
    assert members["thing.cpeg_pc"] == pack_members(tmp_path / "packs" / "thing.str2_pc")["thing.cpeg_pc"]
    code, _, _ = in_process_cli("verify", str(textured_pack))
    assert code == 0
    bad = tmp_path / "bad.glb"
    bad.write_bytes(moved_glb(out.read_bytes(), 1, (0.0, 99.0), "TEXCOORD_0"))
    after = textured_pack.read_bytes()
    code, _, err = in_process_cli("model", "import", str(bad), "--into", str(textured_pack), "thing.gsmesh_pc")
    assert code == 1 and err.count("\n") == 1 and "vertex 1: UV set 0" in err
    assert textured_pack.read_bytes() == after


def test_battery_round_trip_through_the_pack(tmp_path: Path) -> None:
    pack = tmp_path / "repair_battery.str2_pc"
    pack.write_bytes(sample(BATTERY).read_bytes())
    out = tmp_path / "b.glb"
    assert (
        in_process_cli("model", "export", str(pack), "repair_battery.csmesh_pc", "-o", str(out), "--no-textures")[0]
        == 0
    )
    assert in_process_cli("model", "import", str(out), "--into", str(pack), "repair_battery.csmesh_pc")[0] == 0
    assert pack.read_bytes() == sample(BATTERY).read_bytes()
    out.write_bytes(moved_glb(out.read_bytes(), 10, (0.001, 0.0, 0.0)))
    assert in_process_cli("model", "import", str(out), "--into", str(pack), "repair_battery.csmesh_pc")[0] == 0
    old, new = pack_members(sample(BATTERY)), pack_members(pack)
    differing = [o for o in range(6900) if old["repair_battery.gsmesh_pc"][o] != new["repair_battery.gsmesh_pc"][o]]
    assert differing and all(592 + 10 * 32 <= o < 592 + 10 * 32 + 4 for o in differing)  # vertex 10's x only


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(st.integers(-2000, 2000), st.integers(-2000, 2000), st.integers(-3, 3)),
        min_size=6,
        max_size=6,
    ),
    st.sampled_from([2, 3, 33, 42]),
)
def test_export_import_round_trip_property(values: list[tuple[int, int, int]], code: int) -> None:
    vertices = [
        Vertex((u / 7.0, float(n % 3), v / 13.0), normal=(127 + k, 255 - abs(k), 127, 127), uvs=[(u, v)] * 3)
        for n, (u, v, k) in enumerate(values)
    ]
    spec = quad_spec(vertex_format=code, vertices=vertices, uv_sets=1)
    if code in (3, 42):
        spec.kind, spec.bones = "character", [0]
    cpu, gpu = build(spec)
    mesh = read_mesh(cpu, gpu)
    result = write_back(mesh, "q", export_gltf(mesh, "q"), gpu, cpu)
    assert result.gpu == gpu and result.cpu == cpu


def test_json_info_lists_materials(textured_pack: Path) -> None:
    code, out, _ = in_process_cli("model", "info", str(textured_pack), "thing.csmesh_pc", "--json")
    assert code == 0
    info = json.loads(out)
    assert info["materials"][0]["textures"]["Normal_Map"] == "thing_n.tga"


def test_import_into_a_nested_str2_keeps_the_asm_table_current(tmp_path: Path) -> None:
    from test_rfg_asm import asm_bytes, prim, str2_header

    import gamepak

    cpu, gpu = build(quad_spec())
    str2_path = write_pack(tmp_path / "thing.str2_pc", {"thing.csmesh_pc": cpu, "thing.gsmesh_pc": gpu})
    str2 = str2_path.read_bytes()
    data_start, compressed, sizes = str2_header(str2)
    table = asm_bytes(
        [
            {
                "name": "thing",
                "type": 6,
                "flags": 0x80,
                "data_offset": data_start,
                "compressed_size": compressed,
                "sizes": sizes,
                "primitives": [prim("thing.csmesh_pc", sizes[0], sizes[1])],
            }
        ]
    )
    pack = tmp_path / "level.vpp_pc"
    with gamepak.create(pack) as writer:
        writer.add("thing.str2_pc", str2)
        writer.add("level.asm_pc", table)
    assert in_process_cli("verify", str(pack))[0] == 0
    code, _, err = in_process_cli("model", "export", str(pack), "-o", str(tmp_path / "all"), "--format", "gltf")
    assert code == 0 and (tmp_path / "all" / "thing.str2_pc" / "thing.gltf").is_file(), err
    out = tmp_path / "thing.glb"
    # The member named by its base name is found inside the nested .str2_pc.
    assert in_process_cli("model", "export", str(pack), "thing.csmesh_pc", "-o", str(out), "--no-textures")[0] == 0
    out.write_bytes(moved_glb(out.read_bytes(), 4, (0.0, 0.0, 0.5)))
    code, _, err = in_process_cli("model", "import", str(out), "--into", str(pack), "thing.str2_pc/thing.gsmesh_pc")
    assert code == 0, err
    code, out_text, err = in_process_cli("verify", str(pack))
    assert code == 0, out_text + err
    with gamepak.open(pack) as archive, archive.open_archive("thing.str2_pc") as inner:
        mesh = read_mesh(inner.read("thing.csmesh_pc"), inner.read("thing.gsmesh_pc"))
    assert mesh.vertices["position"][4].tolist() == [2.0, 0.0, 0.5]


def test_catalog_lists_meshes(textured_pack: Path, tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    pytest.importorskip("dask")
    from gamepak.catalog import build_catalog
    from gamepak.catalog.schema import read_table

    write_pack(textured_pack.parent / "stand_in.str2_pc", {"junk.csmesh_pc": b"<x/>", "junk.gsmesh_pc": b"1"})
    out = tmp_path / "catalog"
    build_catalog([str(textured_pack.parent)], str(out), scheduler="synchronous")
    errors = read_table(str(out), "errors").to_pylist()
    assert not [row for row in errors if row.get("member") == "junk.csmesh_pc"]  # a stand-in, not a mesh
    found = [row for row in read_table(str(out), "models").to_pylist() if row["model"] == "thing.csmesh_pc"]
    assert len(found) == 1
    row = found[0]
    assert (row["format"], row["vertices"], row["triangles"], row["lods"], row["materials"], row["bones"]) == (
        "rfg-static-mesh",
        6,
        4,
        1,
        1,
        0,
    )
    assert row["texture"] == "thing_d.tga"
    assert row["textures"] == "thing_d.tga; missing.tga; thing_n.tga; thing_s.tga"


def test_viewer_shows_a_mesh_with_its_textures(textured_pack: Path) -> None:
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from gamepak.web.app import create_app

    root = textured_pack.parent
    client = TestClient(create_app(str(root)), base_url="http://127.0.0.1:8000")
    page = client.get("/browse/thing.str2_pc/thing.gsmesh_pc")
    assert page.status_code == 200
    assert 'data-model="/model/thing.str2_pc/thing.gsmesh_pc"' in page.text
    assert "6 vertices, 4 faces" in page.text
    glb = client.get("/model/thing.str2_pc/thing.gsmesh_pc")
    assert glb.status_code == 200 and glb.headers["content-type"] == "model/gltf-binary"
    gltf = pygltflib.GLTF2.load_from_bytes(glb.content)
    assert sorted(image.name for image in gltf.images) == ["thing_d.tga", "thing_n.tga"]


def test_import_reads_a_gltf_with_its_buffer_beside_it_and_nothing_outside(tmp_path: Path) -> None:
    cpu, gpu = build(quad_spec())
    pack = write_pack(tmp_path / "q.str2_pc", {"q.csmesh_pc": cpu, "q.gsmesh_pc": gpu})
    gltf = pygltflib.GLTF2.load_from_bytes(moved_glb(export_gltf(read_mesh(cpu, gpu), "q"), 1, (0.0, 0.5, 0.0)))
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "q.bin").write_bytes(gltf.binary_blob())
    gltf.buffers[0].uri = "q.bin"
    gltf.set_binary_blob(None)
    (tmp_path / "model" / "q.gltf").write_text(gltf.gltf_to_json())
    code, _, err = in_process_cli(
        "model", "import", str(tmp_path / "model" / "q.gltf"), "--into", str(pack), "q.csmesh_pc"
    )
    assert code == 0 and "1 vertex changed (1)" in err, err
    gltf.buffers[0].uri = "../q.str2_pc"
    (tmp_path / "model" / "q.gltf").write_text(gltf.gltf_to_json())
    code, _, err = in_process_cli(
        "model", "import", str(tmp_path / "model" / "q.gltf"), "--into", str(pack), "q.csmesh_pc"
    )
    assert code == 1 and "outside the glTF's folder" in err


def test_model_render_draws_a_mesh(textured_pack: Path, tmp_path: Path) -> None:
    from PIL import Image

    out = tmp_path / "thing.png"
    code, _, err = in_process_cli(
        "model", "render", str(textured_pack), "thing.csmesh_pc", "-o", str(out), "--size", "64"
    )
    assert code == 0, err
    image = np.asarray(Image.open(out).convert("RGB")).astype(int)
    assert (np.abs(image - image[0, 0]).sum(axis=2) > 30).mean() > 0.05  # something is drawn


def test_a_peg_in_the_meshs_own_container_wins(tmp_path: Path) -> None:
    import gamepak
    from gamepak.models.rfg.textures import find_textures

    cpu, gpu = build(textured_spec())
    red_cpu, red_gpu = peg_pair({"thing_d.tga": (255, 0, 0, 255)})
    green_cpu, green_gpu = peg_pair({"thing_d.tga": (0, 255, 0, 255)})
    other = write_pack(tmp_path / "a.str2_pc", {"a.cpeg_pc": red_cpu, "a.gpeg_pc": red_gpu})
    own = write_pack(
        tmp_path / "thing.str2_pc",
        {"thing.csmesh_pc": cpu, "thing.gsmesh_pc": gpu, "thing.cpeg_pc": green_cpu, "thing.gpeg_pc": green_gpu},
    )
    pack = tmp_path / "game" / "level.vpp_pc"
    pack.parent.mkdir()
    with gamepak.create(pack) as writer:
        writer.add("a.str2_pc", other.read_bytes())  # first in the pack
        writer.add("thing.str2_pc", own.read_bytes())
    found = find_textures(["thing_d.tga"], pack=str(pack), container="thing.str2_pc/")
    assert found.sources["thing_d.tga"].endswith("thing.str2_pc/thing.cpeg_pc")
    anywhere = find_textures(["thing_d.tga"], pack=str(pack))
    assert anywhere.sources["thing_d.tga"].endswith("a.str2_pc/a.cpeg_pc")
    out = tmp_path / "thing.glb"
    code, _, err = in_process_cli("model", "export", str(pack), "thing.csmesh_pc", "-o", str(out))
    assert code == 0, err
    gltf = load_glb(out)
    view = gltf.bufferViews[gltf.images[0].bufferView]
    from io import BytesIO

    from PIL import Image

    png = gltf.binary_blob()[view.byteOffset : view.byteOffset + view.byteLength]
    assert Image.open(BytesIO(png)).convert("RGBA").getpixel((0, 0)) == (0, 255, 0, 255)


@settings(max_examples=25, deadline=None)
@given(st.dictionaries(st.integers(0, 5), st.tuples(*[st.integers(-64, 64)] * 3).filter(any), max_size=4))
def test_moved_vertices_change_only_their_position_bytes(moves: dict[int, tuple[int, int, int]]) -> None:
    cpu, gpu = build(quad_spec(boxes=[((-9.0, -9.0, -9.0), (9.0, 9.0, 9.0))]))
    mesh = read_mesh(cpu, gpu)
    data = export_gltf(mesh, "q")
    for vertex, delta in moves.items():
        data = moved_glb(data, vertex, tuple(value / 16 for value in delta))
    result = write_back(mesh, "q", data, gpu, cpu)
    assert result.changed_vertices == sorted(moves)
    assert result.cpu == cpu  # every vertex stays inside the stored box
    stride, start = mesh.config.stride, mesh.config.vertex_offset
    for offset in range(len(gpu)):
        if gpu[offset] != result.gpu[offset]:
            vertex, within = divmod(offset - start, stride)
            assert vertex in moves and 0 <= within < 12  # a moved vertex's position, nothing else
    after = read_mesh(result.cpu, result.gpu).vertices["position"]
    for vertex, (dx, dy, dz) in moves.items():
        before = mesh.vertices["position"][vertex]
        # glTF's X is the file's -X.
        assert after[vertex].tolist() == pytest.approx([before[0] - dx / 16, before[1] + dy / 16, before[2] + dz / 16])


def test_triangles_starting_at_another_corner_still_match() -> None:
    cpu, gpu = build(quad_spec())
    mesh = read_mesh(cpu, gpu)
    gltf = pygltflib.GLTF2.load_from_bytes(moved_glb(export_gltf(mesh, "q"), 5, (0.0, 3.0, 0.0)))
    blob = bytearray(gltf.binary_blob())
    view = gltf.bufferViews[gltf.accessors[gltf.meshes[0].primitives[0].indices].bufferView]
    indices = np.frombuffer(blob, np.uint16, 12, view.byteOffset).reshape(4, 3)
    turned = np.stack([np.roll(row, -(number % 3)) for number, row in enumerate(indices)])  # winding kept
    blob[view.byteOffset : view.byteOffset + 24] = turned.astype(np.uint16).tobytes()
    gltf.set_binary_blob(bytes(blob))
    result = write_back(mesh, "q", b"".join(gltf.save_to_bytes()), gpu, cpu)
    assert result.changed_vertices == [5]
    assert read_mesh(result.cpu, result.gpu).vertices["position"][5].tolist() == [2.0, 3.0, 1.0]


def test_nan_constants_and_boxes_still_export_and_show(tmp_path: Path) -> None:
    nan = float("nan")
    material = MaterialSpec(constants=[("Specular_Power", (nan, 0, 0, 0)), ("Diffuse_Color", (nan, 1.0, 1.0, 1.0))])
    cpu, gpu = build(quad_spec(materials=[material], boxes=[((nan, 0.0, 0.0), (1.0, 1.0, 1.0))]))
    mesh = read_mesh(cpu, gpu)
    gltf = pygltflib.GLTF2.load_from_bytes(export_gltf(mesh, "q"))  # found by fuzzing: JSON refused NaN
    assert gltf.materials[0].extras["rfg_constants"]["Specular_Power"][0] is None
    pack = write_pack(tmp_path / "q.str2_pc", {"q.csmesh_pc": cpu, "q.gsmesh_pc": gpu})
    code, out, err = in_process_cli("model", "info", str(pack), "q.csmesh_pc", "--json")
    assert code == 0, err
    assert json.loads(out)["bounds"] is None
