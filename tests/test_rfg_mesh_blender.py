"""Blender (bpy, as tests/test_blender_judge.py runs it) judges RFG mesh exports: they come in
upright with their faces and textures, and an unchanged Blender re-export writes nothing back."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from rfg_mesh_bytes import MaterialSpec, build, quad_spec
from test_rfg_mesh_export import peg_pair

from conftest import in_process_cli, sample, write_pack

BLENDER_PYTHON = os.environ.get("GAMEPAK_BLENDER_PYTHON", "")

pytestmark = pytest.mark.skipif(
    not (BLENDER_PYTHON and Path(BLENDER_PYTHON).exists()),
    reason="Blender's bpy (GAMEPAK_BLENDER_PYTHON, made by `make test`) is not available",
)

# Imports argv[1] into an empty scene, prints its meshes, and exports it again to argv[2].
ROUND_TRIP = """
import json, sys
import bpy
bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.ops.import_scene.gltf(filepath=sys.argv[1])
found = []
for thing in bpy.context.scene.objects:
    if thing.type == "MESH":
        points = [list(thing.matrix_world @ vertex.co) for vertex in thing.data.vertices]
        images = sorted(
            node.image.name
            for material in thing.data.materials if material and material.use_nodes
            for node in material.node_tree.nodes if node.type == "TEX_IMAGE" and node.image
        )
        found.append({"name": thing.name, "points": points, "faces": len(thing.data.polygons), "images": images})
if len(sys.argv) > 3:  # lift one vertex along Blender's Z (up) before exporting
    for thing in bpy.context.scene.objects:
        if thing.type == "MESH":
            thing.data.vertices[int(sys.argv[3])].co.z += 0.01
bpy.ops.export_scene.gltf(filepath=sys.argv[2], export_format="GLB")
print("RESULT " + json.dumps(found))
"""


def blender_round_trip(source: Path, target: Path, *lift: str) -> list[dict]:
    result = subprocess.run(
        [BLENDER_PYTHON, "-c", ROUND_TRIP, str(source), str(target), *lift],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    line = next(line for line in result.stdout.splitlines() if line.startswith("RESULT "))
    return json.loads(line.removeprefix("RESULT "))


def test_the_battery_goes_into_blender_upright_and_back_unchanged(tmp_path: Path) -> None:
    pack = tmp_path / "repair_battery.str2_pc"
    pack.write_bytes(sample("vpp/repair_battery.str2_pc").read_bytes())
    exported, edited = tmp_path / "battery.glb", tmp_path / "from-blender.glb"
    assert in_process_cli("model", "export", str(pack), "repair_battery.csmesh_pc", "-o", str(exported))[0] == 0
    (found,) = blender_round_trip(exported, edited)
    assert found["faces"] == 172 and len(found["points"]) == 197
    points = np.array(found["points"])
    # Blender is Z up: the battery's height (file Y, 0.142) stands along Blender's Z.
    np.testing.assert_allclose(points.max(axis=0), [0.057601, 0.059464, 0.070991], atol=1e-5)
    np.testing.assert_allclose(points.min(axis=0), [-0.057601, -0.059464, -0.070991], atol=1e-5)
    before = pack.read_bytes()
    code, _, err = in_process_cli("model", "import", str(edited), "--into", str(pack), "repair_battery.csmesh_pc")
    assert code == 0 and "no vertex changed" in err, err
    assert pack.read_bytes() == before


def test_blender_gets_the_textures_in_their_slots(tmp_path: Path) -> None:
    material = MaterialSpec(textures=[("thing_d.tga", "Diffuse_Map"), ("thing_n.tga", "Normal_Map")])
    cpu, gpu = build(quad_spec(materials=[material]))
    peg_cpu, peg_gpu = peg_pair({"thing_d.tga": (200, 30, 30, 255), "thing_n.tga": (128, 128, 255, 255)})
    pack = write_pack(
        tmp_path / "thing.str2_pc",
        {"thing.csmesh_pc": cpu, "thing.gsmesh_pc": gpu, "thing.cpeg_pc": peg_cpu, "thing.gpeg_pc": peg_gpu},
    )
    exported = tmp_path / "thing.glb"
    assert in_process_cli("model", "export", str(pack), "thing.csmesh_pc", "-o", str(exported))[0] == 0
    (found,) = blender_round_trip(exported, tmp_path / "again.glb")
    assert found["faces"] == 4
    assert found["images"] == ["thing_d.tga", "thing_n.tga"]
    code, _, err = in_process_cli(
        "model", "import", str(tmp_path / "again.glb"), "--into", str(pack), "thing.csmesh_pc"
    )
    assert code == 0 and "no vertex changed" in err, err


def test_a_vertex_lifted_in_blender_goes_back_into_the_pack(tmp_path: Path) -> None:
    from gamepak.models.rfg import read_mesh

    from conftest import pack_members

    pack = tmp_path / "repair_battery.str2_pc"
    pack.write_bytes(sample("vpp/repair_battery.str2_pc").read_bytes())
    exported, edited = tmp_path / "battery.glb", tmp_path / "lifted.glb"
    assert in_process_cli("model", "export", str(pack), "repair_battery.csmesh_pc", "-o", str(exported))[0] == 0
    (found,) = blender_round_trip(exported, edited, "7")
    lifted = np.array(found["points"][7]) + [0.0, 0.0, 0.01]  # the points are read before the lift
    code, _, err = in_process_cli("model", "import", str(edited), "--into", str(pack), "repair_battery.csmesh_pc")
    assert code == 0, err
    old, new = pack_members(sample("vpp/repair_battery.str2_pc")), pack_members(pack)
    before = read_mesh(old["repair_battery.csmesh_pc"], old["repair_battery.gsmesh_pc"]).vertices["position"]
    after = read_mesh(new["repair_battery.csmesh_pc"], new["repair_battery.gsmesh_pc"]).vertices["position"]
    moved = np.flatnonzero((before != after).any(axis=1))
    assert len(moved) == 1  # Blender's vertex 7 is one of the mesh's, lifted along the file's Y (up)
    vertex = int(moved[0])
    assert after[vertex, 1] == pytest.approx(before[vertex, 1] + 0.01, abs=1e-6)
    assert after[vertex, [0, 2]].tolist() == before[vertex, [0, 2]].tolist()
    # Blender's (x, y, z) is the file's (-x, -z, y): the vertex it lifted is the one written.
    assert lifted.tolist() == pytest.approx([-after[vertex, 0], -after[vertex, 2], after[vertex, 1]], abs=1e-6)
