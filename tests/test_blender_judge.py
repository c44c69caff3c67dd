"""Blender (its `bpy` module from PyPI) judges the models gamepak writes and reads: a model exported
to glTF, OBJ or PLY must come into Blender upright with the same bounds and face count, and a
model Blender exports must come into gamepak upright.

Blender runs in its own virtual environment (`make test` makes `.venv-blender` from the `blender`
extra, because bpy pins its own numpy); GAMEPAK_BLENDER_PYTHON names its interpreter.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from gamepak import models
from gamepak.models import joe
from gamepak.models.mesh import Mesh

from conftest import in_process_cli

BLENDER_PYTHON = os.environ.get("GAMEPAK_BLENDER_PYTHON", "")

pytestmark = pytest.mark.skipif(
    not (BLENDER_PYTHON and Path(BLENDER_PYTHON).exists()),
    reason="Blender's bpy (GAMEPAK_BLENDER_PYTHON, made by `make test`) is not available",
)

# The start of a script that imports each file given on the command line into an empty scene.
IMPORT_EACH = """
import json, sys
import bpy
results = []
for path in sys.argv[1:]:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    if path.endswith(".glb"):
        bpy.ops.import_scene.gltf(filepath=path)
    elif path.endswith(".obj"):
        bpy.ops.wm.obj_import(filepath=path)
    else:
        bpy.ops.wm.ply_import(filepath=path)
    bpy.context.view_layer.update()
"""

# Prints each file's bounds and face count.
IMPORT_SCRIPT = (
    IMPORT_EACH
    + """
    points, faces = [], 0
    for thing in bpy.context.scene.objects:
        if thing.type == "MESH":
            points += [list(thing.matrix_world @ vertex.co) for vertex in thing.data.vertices]
            faces += len(thing.data.polygons)
    results.append({"path": path, "points": points, "faces": faces})
print("RESULT " + json.dumps(results))
"""
)

# Makes a cone 3 units tall along Blender's up axis (Z) and exports it with Blender's defaults.
EXPORT_SCRIPT = """
import sys
import bpy
bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.ops.mesh.primitive_cone_add(vertices=8, radius1=1.0, depth=3.0, location=(0.0, 0.0, 1.5))
bpy.ops.export_scene.gltf(filepath=sys.argv[1], export_format="GLB")
bpy.ops.wm.obj_export(filepath=sys.argv[2])
"""


def _blender(script: str, *arguments: str) -> str:
    result = subprocess.run(
        [BLENDER_PYTHON, "-c", script, *arguments], capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def _tower() -> Mesh:
    """A box 2 wide (X), 1 deep (Y) and 3 tall (Z, VDrift's up), as triangles."""
    corners = np.array([[x, y, z] for z in (0.0, 3.0) for y in (-0.5, 0.5) for x in (-1.0, 1.0)], dtype=np.float32)
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    triangles = [(a, b, c) for a, b, c, d in quads] + [(a, c, d) for a, b, c, d in quads]
    indices = np.array(triangles, dtype=np.int64)
    normals = np.array([[0.0, 0.0, 1.0]], dtype=np.float32)
    texcoords = np.array([[0.0, 0.0]], dtype=np.float32)
    corner_table = np.stack([indices, np.zeros_like(indices), np.zeros_like(indices)], axis=2)
    return Mesh(corners, normals, texcoords, corner_table, magic=b"IDP2")


def test_blender_imports_gamepak_exports_upright(tmp_path: Path) -> None:
    source = tmp_path / "tower.joe"
    source.write_bytes(joe.write(_tower()))
    outputs = [str(tmp_path / f"tower.{extension}") for extension in ("glb", "obj", "ply")]
    for output in outputs:
        code, _, err = in_process_cli("model", "export", str(source), "-o", output)
        assert code == 0, err
    line = next(line for line in _blender(IMPORT_SCRIPT, *outputs).splitlines() if line.startswith("RESULT "))
    for result in json.loads(line.removeprefix("RESULT ")):
        points = np.array(result["points"])
        assert result["faces"] == 12, result["path"]
        np.testing.assert_allclose(points.min(axis=0), [-1.0, -0.5, 0.0], atol=1e-5, err_msg=result["path"])
        np.testing.assert_allclose(points.max(axis=0), [1.0, 0.5, 3.0], atol=1e-5, err_msg=result["path"])


def test_gamepak_imports_blender_exports_upright(tmp_path: Path) -> None:
    glb, obj = tmp_path / "cone.glb", tmp_path / "cone.obj"
    _blender(EXPORT_SCRIPT, str(glb), str(obj))
    for path in (glb, obj):
        mesh = models.load(path)
        positions = np.asarray(mesh.positions)
        # The cone stands on Z = 0 and is 3 tall in Blender; gamepak's meshes are Z-up like VDrift.
        np.testing.assert_allclose(positions[:, 2].min(), 0.0, atol=1e-5, err_msg=str(path))
        np.testing.assert_allclose(positions[:, 2].max(), 3.0, atol=1e-5, err_msg=str(path))
        np.testing.assert_allclose(np.abs(positions[:, :2]).max(), 1.0, atol=1e-5, err_msg=str(path))


# Imports a scene, counts its mesh objects and images, optionally lifts one object by 1 (Blender's
# Z), and exports it again with Blender's defaults.
SCENE_ROUND_TRIP_SCRIPT = """
import json, sys
import bpy
bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.ops.import_scene.gltf(filepath=sys.argv[1])
meshes = [thing for thing in bpy.context.scene.objects if thing.type == "MESH"]
images = [image for image in bpy.data.images if image.size[0] > 0]
lifted = bpy.data.objects.get(sys.argv[3]) if len(sys.argv) > 3 else None
if lifted is not None:
    lifted.data = lifted.data.copy()
    for vertex in lifted.data.vertices:
        vertex.co.z += 1.0
bpy.ops.export_scene.gltf(filepath=sys.argv[2], export_format="GLB")
print("RESULT " + json.dumps({"objects": len(meshes), "images": len(images), "names": sorted(m.name for m in meshes)}))
"""


def test_blender_imports_a_whole_track_and_its_edit_comes_back(tmp_path: Path) -> None:
    from test_scenes import CAR, list_line, make_car, make_track, png, quad

    track = make_track(
        tmp_path / "tracks" / "t",
        [list_line("a.joe", "a.png"), list_line("b.joe", "b.png", transparent_blend=1), list_line("a.joe", "a.png")],
        {"a.joe": quad(0, 0), "b.joe": quad(3, 3, 1)},
        {"a.png": png((10, 20, 30)), "b.png": png((200, 10, 10, 128), "RGBA")},
    )
    exported = tmp_path / "t.glb"
    code, _, err = in_process_cli("model", "export", str(track), "-o", str(exported))
    assert code == 0, err
    before = (track / "objects" / "objects.jpk").read_bytes()
    unchanged, edited = tmp_path / "unchanged.glb", tmp_path / "edited.glb"
    result = json.loads(_blender(SCENE_ROUND_TRIP_SCRIPT, str(exported), str(unchanged)).split("RESULT ", 1)[1])
    assert result["objects"] == 3 and result["images"] == 2
    assert result["names"] == ["a.joe", "a.joe #2", "b.joe"]
    # What Blender exports untouched comes back without changing a byte of the track.
    code, _, err = in_process_cli("model", "import", str(unchanged), "--into", str(track))
    assert code == 0 and "unchanged (3 objects as they were)" in err, err
    assert (track / "objects" / "objects.jpk").read_bytes() == before
    _blender(SCENE_ROUND_TRIP_SCRIPT, str(exported), str(edited), "b.joe")
    code, _, err = in_process_cli("model", "import", str(edited), "--into", str(track))
    assert code == 0 and "1 changed" in err, err
    lifted = models.load_member(track / "objects" / "objects.jpk", "b.joe")
    np.testing.assert_allclose(lifted.positions[:, 2].min(), 2.0, atol=1e-5)
    # A car: every part and texture arrives.
    car = make_car(tmp_path / "cars" / "TC", CAR)
    car_file = tmp_path / "car.glb"
    code, _, err = in_process_cli("model", "export", str(car), "-o", str(car_file))
    assert code == 0, err
    result = json.loads(
        _blender(SCENE_ROUND_TRIP_SCRIPT, str(car_file), str(tmp_path / "car2.glb")).split("RESULT ", 1)[1]
    )
    assert result["objects"] == 7 and result["images"] == 5, result  # no brake: it has no texture


# Prints, for every loop of every mesh of each file, its vertex's position and its UV.
UV_SCRIPT = (
    IMPORT_EACH
    + """
    pairs = []
    for thing in bpy.context.scene.objects:
        if thing.type == "MESH":
            uv = thing.data.uv_layers.active.data
            for loop in thing.data.loops:
                position = thing.matrix_world @ thing.data.vertices[loop.vertex_index].co
                pairs.append([list(position), list(uv[loop.index].uv)])
    results.append({"path": path, "pairs": pairs})
print("RESULT " + json.dumps(results))
"""
)


def test_textures_face_the_same_way_in_blender_from_every_format(tmp_path: Path) -> None:
    # VDrift's v = 0 is the image's top row (as glTF's); Blender's UV v = 0 is its bottom row,
    # as OBJ and PLY files have it. Whatever the format, Blender must see (u, 1 - v).
    tower = _tower()
    positions = tower.positions
    texcoords = np.stack([(positions[:, 0] + 1) / 2, positions[:, 2] / 3 * 0.75 + 0.125], axis=1)
    mesh = Mesh(positions, tower.normals, texcoords, tower.corners.copy(), magic=b"IDP2")
    mesh.corners[:, :, 2] = mesh.corners[:, :, 0]  # each corner's texcoord is its vertex's
    source = tmp_path / "tower.joe"
    source.write_bytes(joe.write(mesh))
    outputs = [str(tmp_path / f"tower.{extension}") for extension in ("glb", "obj", "ply")]
    for output in outputs:
        code, _, err = in_process_cli("model", "export", str(source), "-o", output)
        assert code == 0, err
    line = next(line for line in _blender(UV_SCRIPT, *outputs).splitlines() if line.startswith("RESULT "))
    for result in json.loads(line.removeprefix("RESULT ")):
        assert result["pairs"], result["path"]
        for position, uv in result["pairs"]:
            # Blender's (x, y, z) is VDrift's: u = (x + 1) / 2, v = z / 4 + 0.125 as stored.
            expected = ((position[0] + 1) / 2, 1 - (position[2] / 3 * 0.75 + 0.125))
            np.testing.assert_allclose(uv, expected, atol=1e-5, err_msg=result["path"])
