"""VDrift tracks and cars as whole scenes (gamepak.models.scene, `model info/export DIR`).

Tracks and cars are built here from the spec (vdrift-scenes.md): JOE models from the writer,
list.txt lines, tiny PNGs; the real garage track and MCS car are an extra layer."""

from __future__ import annotations

import io
import json
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gamepak import models
from gamepak import open as gamepak_open
from gamepak.models import scene
from gamepak.models.mesh import Mesh
from gamepak.models.scene import track as track_module
from gamepak.models.scene.common import SceneNode

from conftest import SAMPLES, glb_summary, gltf_validator_errors, in_process_cli, sample, write_pack


def quad(x: float, y: float, z: float = 0.0, size: float = 1.0, *, texcoords: bool = True) -> Mesh:
    """A flat square at (x, y, z) (VDrift's Z up), counter-clockwise seen from above."""
    positions = np.array([[x, y, z], [x + size, y, z], [x + size, y + size, z], [x, y + size, z]], dtype=np.float32)
    normals = np.tile(np.array([[0, 0, 1]], np.float32), (4, 1))
    uv = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32) if texcoords else None
    return Mesh.from_vertices(positions, [[0, 1, 2], [0, 2, 3]], normals, uv)


def png(colour: tuple[int, ...], mode: str = "RGB") -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new(mode, (4, 4), colour).save(out, "PNG")
    return out.getvalue()


def mesh_of(node: SceneNode) -> Mesh:
    """The mesh of a node the test knows has one."""
    assert node.mesh is not None, node.name
    return node.mesh


def image_of(node: SceneNode) -> str:
    """The image key of a node's material, which the test knows it has."""
    assert node.material is not None and node.material.image is not None, node.name
    return node.material.image


def list_line(model: str, texture: str, **values: float) -> str:
    fields: dict[str, float] = dict.fromkeys(track_module.FIELDS[2:], 0)
    fields.update(values)
    return " ".join([model, texture, *(str(fields[name]) for name in track_module.FIELDS[2:])])


def make_track(
    folder: Path,
    objects: list[str],
    models_in_pack: dict[str, Mesh],
    textures: dict[str, bytes],
    *,
    header: int = 17,
    track_txt: str = "cull faces = on\nstart position 0 = 0.0,0.5,-1.5\nstart orientation 0 = 0,270,0\n",
    about: str = "Test Track\nby the tests\n",
) -> Path:
    objects_folder = folder / "objects"
    objects_folder.mkdir(parents=True)
    (objects_folder / "list.txt").write_text(f"{header}\n\n" + "\n\n".join(objects) + "\n")
    write_pack(
        objects_folder / "objects.jpk", {name: models.dumps(mesh, "joe") for name, mesh in models_in_pack.items()}
    )
    for name, data in textures.items():
        (objects_folder / name).write_bytes(data)
    (folder / "track.txt").write_text(track_txt)
    (folder / "about.txt").write_text(about)
    return folder


@pytest.fixture
def small_track(tmp_path: Path) -> Path:
    return make_track(
        tmp_path / "tracks" / "small",
        [
            "#entry 0\n" + list_line("road.joe", "asphalt.png", mipmap=1, collideable=1, surface=1),
            list_line("fence.joe", "fence.png", transparent_blend=2, clamptexture=1),
            list_line("decal.joe", "asphalt.png", transparent_blend=1, clamptexture=3),
            list_line("sky.joe", "sky.png", skybox=1),
            list_line("tree.joe", "tree.png", nolighting=1),
            list_line("road.joe", "asphalt.png", mipmap=1),
        ],
        {
            "road.joe": quad(0, 0),
            "fence.joe": quad(2, 0, 1),
            "decal.joe": quad(0, 0, 0.01),
            "sky.joe": quad(-50, -50, 50, 100),
            "tree.joe": quad(5, 5),
        },
        {
            "asphalt.png": png((80, 80, 80)),
            "fence.png": png((200, 200, 200, 100), "RGBA"),
            "sky.png": png((40, 90, 250)),
            "tree.png": png((10, 200, 10, 255), "RGBA"),
        },
    )


def gltf_json(data: bytes) -> dict:
    length, kind = struct.unpack_from("<I4s", data, 12)
    assert kind == b"JSON"
    return json.loads(data[20 : 20 + length])


def nodes_by_name(document: dict) -> dict[str, dict]:
    return {node["name"]: node for node in document["nodes"]}


# ------------------------------------------------------------------------------- list.txt


def test_list_txt_is_read_as_a_token_stream_with_hash_comments() -> None:
    text = "# made by listedit\n17\n#entry 0\nroad.joe asphalt.png 1 0 0 0 1.0 0.0 0 1\n1.0 0.9 1.0 0.0 0 2 1 #x y\n"
    warnings: list[str] = []
    [entry] = track_module.parse_list(text, "list.txt", warnings)
    assert (entry.model, entry.texture, entry.line) == ("road.joe", "asphalt.png", 4)
    assert entry.values["mipmap"] == 1 and entry.values["clamptexture"] == 2 and entry.values["surface"] == 1
    assert entry.values["friction_tread"] == pytest.approx(0.9)
    assert warnings == []


def test_an_older_14_value_header_reads_with_zeros_and_a_warning() -> None:
    warnings: list[str] = []
    entries = track_module.parse_list("14\na.joe a.png 1 0 0 0 1 0 0 1 1 1 1 0\n", "list.txt", warnings)
    assert entries[0].values["isashadow"] == 0 and entries[0].values["surface"] == 0
    assert len(warnings) == 1 and "14 values" in warnings[0]


def test_a_truncated_last_object_is_dropped_with_a_warning() -> None:
    warnings: list[str] = []
    text = "17\n" + list_line("a.joe", "a.png") + "\nb.joe b.png 0 0\n"
    entries = track_module.parse_list(text, "objects/list.txt", warnings)
    assert [entry.model for entry in entries] == ["a.joe"]
    assert "objects/list.txt:3" in warnings[0] and "b.joe" in warnings[0]


def test_unknown_flag_values_and_words_are_warned_about_naming_the_line() -> None:
    warnings: list[str] = []
    text = (
        "17\r\n"
        + list_line("a.joe", "a.png", transparent_blend=7)
        + "\r\n"
        + list_line("b.joe", "b.png").replace(" 0 0 0 0 ", " zero 0 0 0 ", 1)
    )
    entries = track_module.parse_list(text, "list.txt", warnings)
    assert [entry.model for entry in entries] == ["a.joe"]
    assert entries[0].values["transparent_blend"] == 0
    assert any("list.txt:2" in warning and "transparent_blend 7" in warning for warning in warnings)
    assert any("list.txt:3" in warning and "'zero'" in warning for warning in warnings)


def test_a_value_that_is_not_finite_leaves_its_object_out_and_the_export_stands(tmp_path: Path) -> None:
    # float() reads "nan" and "inf", VDrift's stream reading does not; JSON cannot hold them.
    warnings: list[str] = []
    text = "17\n" + list_line("a.joe", "a.png") + "\n" + list_line("b.joe", "b.png")
    text += "\n" + list_line("c.joe", "c.png", friction_tread="inf")  # type: ignore[arg-type]
    text += "\n" + list_line("d.joe", "d.png", bump_wavelength="nan")  # type: ignore[arg-type]
    entries = track_module.parse_list(text, "list.txt", warnings)
    assert [entry.model for entry in entries] == ["a.joe", "b.joe"]
    assert any("list.txt:4: c.joe: friction_tread 'inf' is not a finite number" in warning for warning in warnings)
    assert any("list.txt:5: d.joe: bump_wavelength 'nan'" in warning for warning in warnings)
    folder = make_track(
        tmp_path / "track",
        [list_line("a.joe", "a.png"), list_line("b.joe", "a.png", rolling_drag="-inf")],  # type: ignore[arg-type]
        {"a.joe": quad(0, 0), "b.joe": quad(1, 1)},
        {"a.png": png((1, 2, 3))},
        track_txt="start position 0 = 0,nan,0\n",
    )
    with pytest.raises(scene.SceneError, match=r"track\.txt:1: .*start position 0 .* not finite"):
        scene.load(folder)
    (folder / "track.txt").write_text("cull faces = on\n")
    found = scene.load(folder)
    scene.save(found, tmp_path / "out.glb")
    assert [node["name"] for node in gltf_json((tmp_path / "out.glb").read_bytes())["nodes"][1:]] == ["a.joe"]


@pytest.mark.parametrize("text", ["", "seventeen\n", "3\na b c\n"])
def test_a_list_without_a_usable_header_is_one_clear_error(text: str) -> None:
    with pytest.raises(scene.SceneError, match="list.txt"):
        track_module.parse_list(text, "list.txt", [])


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["a.joe", "b c", "#x", "1", "ü.joe"]), st.integers(0, 3)), max_size=40))
def test_any_token_stream_reads_or_fails_cleanly(tokens: list[tuple[str, int]]) -> None:
    text = "17\n" + "\n".join(f"{name} {value}" for name, value in tokens)
    warnings: list[str] = []
    entries = track_module.parse_list(text, "list.txt", warnings)
    for entry in entries:
        assert set(entry.values) == set(track_module.FIELDS[2:])


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.sampled_from(list("ab1.#") + [chr(c) for c in b"\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x00"])))
def test_the_fast_ascii_tokenizer_agrees_with_reading_line_by_line(text: str) -> None:
    # Every ASCII blank str.split knows and every line end str.splitlines knows (\r\n as one),
    # with # comments anywhere: the same tokens on the same lines.
    def as_lists(found: tuple[list[str], object]) -> tuple[list[str], list[int]]:
        words, lines = found
        return words, [int(line) for line in lines]  # type: ignore[attr-defined]

    assert as_lists(track_module._tokens(text)) == track_module._line_tokens(text)
    assert as_lists(track_module._ascii_tokens(text + "x")) == track_module._line_tokens(text + "x")


# ------------------------------------------------------------------------------- tracks


def test_a_track_becomes_one_node_per_object_with_materials_from_its_flags(small_track: Path, tmp_path: Path) -> None:
    found = scene.load(small_track)
    assert found.warnings == []
    summary = found.summary()
    assert (summary["objects"], summary["textures"], summary["name"]) == (6, 4, "Test Track")
    output = tmp_path / "small.glb"
    scene.save(found, output)
    document = gltf_json(output.read_bytes())
    nodes = nodes_by_name(document)
    # One node per object in list order; a repeated model name gets " #2"; skybox in its group.
    root = document["nodes"][document["scenes"][0]["nodes"][0]]
    children = [document["nodes"][number]["name"] for number in root["children"]]
    assert children == ["road.joe", "fence.joe", "decal.joe", "tree.joe", "road.joe #2", "skybox", "start positions"]
    assert [document["nodes"][n]["name"] for n in nodes["skybox"]["children"]] == ["sky.joe"]
    for name in ("road.joe", "fence.joe", "sky.joe"):
        assert "translation" not in nodes[name] and "rotation" not in nodes[name]
    materials = document["materials"]

    def material(node_name: str) -> dict:
        mesh = document["meshes"][nodes[node_name]["mesh"]]
        return materials[mesh["primitives"][0]["material"]]

    assert material("road.joe")["alphaMode"] == "OPAQUE" and not material("road.joe")["doubleSided"]
    assert material("fence.joe")["alphaMode"] == "MASK" and material("fence.joe")["alphaCutoff"] == 0.5
    assert material("fence.joe")["doubleSided"] is True
    assert material("decal.joe")["alphaMode"] == "BLEND"
    assert "KHR_materials_unlit" in material("sky.joe")["extensions"]
    assert "KHR_materials_unlit" in material("tree.joe")["extensions"]
    assert "extensions" not in material("road.joe")
    assert document["extensionsUsed"] == ["KHR_materials_unlit"] and "extensionsRequired" not in document

    def sampler(node_name: str) -> dict:
        texture = document["textures"][material(node_name)["pbrMetallicRoughness"]["baseColorTexture"]["index"]]
        return document["samplers"][texture["sampler"]]

    assert sampler("road.joe") == {"wrapS": 10497, "wrapT": 10497, "minFilter": 9987, "magFilter": 9729}
    assert sampler("fence.joe")["wrapS"] == 33071 and sampler("fence.joe")["wrapT"] == 33071
    assert sampler("decal.joe")["wrapS"] == 10497 and sampler("decal.joe")["wrapT"] == 33071
    # One image per file, shared by the road and the decal; a mesh shared by the two roads.
    assert len(document["images"]) == 4
    assert nodes["road.joe"]["mesh"] == nodes["road.joe #2"]["mesh"]
    # list.txt's values travel in extras.
    assert nodes["road.joe"]["extras"]["vdrift"]["collideable"] == 1
    assert nodes["road.joe"]["extras"]["vdrift"]["texture"] == "asphalt.png"


def test_positions_turn_to_y_up_and_start_positions_follow_the_text_file_axes(
    small_track: Path, tmp_path: Path
) -> None:
    output = tmp_path / "small.glb"
    scene.save(scene.load(small_track), output)
    document = gltf_json(output.read_bytes())
    nodes = nodes_by_name(document)
    position_accessor = document["accessors"][
        document["meshes"][nodes["fence.joe"]["mesh"]]["primitives"][0]["attributes"]["POSITION"]
    ]
    # fence: x 2..3, y 0..1 at z 1 (Z up) -> glTF x 2..3, y 1, z -1..0.
    assert position_accessor["min"] == pytest.approx([2, 1, -1]) and position_accessor["max"] == pytest.approx(
        [3, 1, 0]
    )
    start = nodes["start position 0"]
    # (a, b, c) = (0, 0.5, -1.5) -> glTF (c, b, -a).
    assert start["translation"] == pytest.approx([-1.5, 0.5, 0])
    # Orientation (0, 270, 0): a turn about VDrift's Z by 270 + 90 degrees: facing +Y again.
    assert abs(start["rotation"][3]) == pytest.approx(1, abs=1e-6)


def test_the_monaco_start_rotation_matches_the_spec() -> None:
    settings_ini = scene.track.ini.parse(
        "start position 0 = -103.0935, -8.6245, 14.0480\nstart orientation 0 = 0, -80.27, 0\n", "track.txt"
    )
    [node] = track_module._start_positions(settings_ini)
    assert node.translation == pytest.approx((14.048, -8.6245, 103.0935))
    assert node.rotation == pytest.approx((0, 0.0848, 0, 0.9964), abs=1e-4)


def test_missing_models_and_textures_are_warnings_not_failures(tmp_path: Path) -> None:
    folder = make_track(
        tmp_path / "t",
        [list_line("here.joe", "gone.png"), list_line("gone.joe", "a.png"), list_line("Case.joe", "A.PNG")],
        {"here.joe": quad(0, 0), "case.joe": quad(1, 1)},
        {"a.png": png((1, 2, 3))},
    )
    found = scene.load(folder)
    assert found.summary()["objects"] == 2
    text = "\n".join(found.warnings)
    assert "gone.png" in text and "not found" in text
    assert "gone.joe" in text and "left out" in text
    # Names that match only ignoring case: used, saying which file was meant.
    assert "'case.joe'" in text and "'a.png'" in text and "differ in case" in text
    assert found.counts["objects_left_out"] == 1


def test_non_finite_texcoords_are_set_to_0_and_non_finite_positions_leave_the_object_out(tmp_path: Path) -> None:
    bad_uv = quad(0, 0)
    bad_uv.texcoords[1] = np.nan
    bad_position = quad(1, 1)
    bad_position.positions[0] = np.inf
    folder = make_track(
        tmp_path / "t",
        [list_line("uv.joe", "a.png"), list_line("pos.joe", "a.png")],
        {"uv.joe": bad_uv, "pos.joe": bad_position},
        {"a.png": png((1, 2, 3))},
    )
    found = scene.load(folder)
    assert found.summary()["objects"] == 1
    assert found.counts["texcoords_replaced"] == 1
    scene.save(found, tmp_path / "out.glb")  # would refuse NaN
    assert any("uv.joe" in warning and "set to 0" in warning for warning in found.warnings)
    assert any("pos.joe" in warning and "left out" in warning for warning in found.warnings)


def test_normals_stored_by_the_old_converter_are_swapped_back_as_vdrift_does(tmp_path: Path) -> None:
    swapped = quad(0, 0)
    swapped.normals[:] = [0, 1, 0]  # (x, z, y) of an up normal: at right angles to the face
    folder = make_track(tmp_path / "t", [list_line("s.joe", "a.png")], {"s.joe": swapped}, {"a.png": png((1, 2, 3))})
    found = scene.load(folder)
    [node] = [node for node in found.root.walk() if node.mesh is not None]
    assert mesh_of(node).normals[0].tolist() == pytest.approx([0, -0.0, 1])
    assert found.counts["normal_swaps"] == 1


def test_cull_faces_off_makes_every_material_double_sided(tmp_path: Path) -> None:
    folder = make_track(
        tmp_path / "t",
        [list_line("a.joe", "a.png")],
        {"a.joe": quad(0, 0)},
        {"a.png": png((1, 2, 3))},
        track_txt="cull faces = off\n",
    )
    found = scene.load(folder)
    assert all(node.material.double_sided for node in found.root.walk() if node.material is not None)


def test_an_obj_scene_has_one_group_per_object_and_a_material_per_texture(small_track: Path, tmp_path: Path) -> None:
    written = scene.save(scene.load(small_track), tmp_path / "small.obj")
    assert sorted(Path(name).name for name in written) == [
        "asphalt.png",
        "fence.png",
        "sky.png",
        "small.mtl",
        "small.obj",
        "tree.png",
    ]
    text = (tmp_path / "small.obj").read_text()
    assert text.count("\no ") == 6 and "mtllib small.mtl" in text
    library = (tmp_path / "small.mtl").read_text()
    assert "map_Kd fence.png" in library and "d 0.5" in library
    # Read back as one mesh: every face, Y up as gamepak's OBJ files are.
    mesh = models.load(tmp_path / "small.obj")
    assert mesh.face_count == 12
    bounds = mesh.bounds()
    assert bounds is not None and bounds[1][2] == pytest.approx(50)  # the sky's height, back to Z up


def test_obj_and_glb_of_a_car_draw_the_same_corners(tmp_path: Path) -> None:
    found = scene.load(make_car(tmp_path / "cars" / "TC", CAR))
    scene.save(found, tmp_path / "car.obj")
    scene.save(found, tmp_path / "car.glb")
    from_obj, from_glb = models.load(tmp_path / "car.obj"), models.load(tmp_path / "car.glb")

    from gamepak.models.scene.compare import same_drawing

    assert from_obj.face_count == from_glb.face_count
    assert same_drawing(from_obj, from_glb)


def test_a_gltf_gets_its_images_beside_it_and_nothing_is_overwritten(small_track: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    written = scene.save(scene.load(small_track), out / "small.gltf")
    assert sorted(Path(name).name for name in written) == [
        "asphalt.png",
        "fence.png",
        "sky.png",
        "small.gltf",
        "tree.png",
    ]
    document = json.loads((out / "small.gltf").read_text())
    assert sorted(image["uri"] for image in document["images"]) == ["asphalt.png", "fence.png", "sky.png", "tree.png"]
    before = (out / "small.gltf").read_bytes()
    with pytest.raises(Exception, match="exists"):
        scene.save(scene.load(small_track), out / "small.gltf")
    assert (out / "small.gltf").read_bytes() == before


def test_scene_cli_info_and_export(small_track: Path, tmp_path: Path) -> None:
    code, out, err = in_process_cli("model", "info", str(small_track / "objects"), "--json")
    assert code == 0, err
    info = json.loads(out)
    assert (info["kind"], info["objects"], info["textures"], info["triangles"]) == ("track", 6, 4, 12)
    code, _, err = in_process_cli("model", "export", str(small_track), "-o", str(tmp_path / "s.glb"))
    assert code == 0, err
    assert "6 objects" in err
    # The scene itself, not a few bytes that start like a glb: its 12 triangles and 6 objects.
    exported = glb_summary((tmp_path / "s.glb").read_bytes())
    assert exported["drawn_triangles"] == 12 and exported["nodes"] >= 6
    code, _, err = in_process_cli("model", "export", str(small_track), "-o", str(tmp_path / "s.ply"))
    assert code == 2 and ".glb, .gltf or .obj" in err
    code, _, err = in_process_cli("model", "info", str(tmp_path))
    assert code == 1 and "neither a VDrift track" in err and len(err.strip().splitlines()) == 1


def test_exported_scenes_pass_the_khronos_validator(small_track: Path, tmp_path: Path, gltf_validator: Path) -> None:

    files = scene.save(scene.load(small_track), tmp_path / "small.glb")
    out = tmp_path / "gltf"
    out.mkdir()
    files += scene.save(scene.load(small_track), out / "small.gltf")[-1:]
    files += scene.save(scene.load(make_car(tmp_path / "cars" / "TC", CAR)), tmp_path / "car.glb")
    if (SAMPLES / "vdrift" / "garage").is_dir():  # the real track too, when the samples are here
        files += scene.save(scene.load(SAMPLES / "vdrift" / "garage"), tmp_path / "garage.glb")
        files += scene.save(scene.load(SAMPLES / "vdrift" / "MCS"), tmp_path / "mcs.glb")
    assert not gltf_validator_errors(gltf_validator, files)


# ------------------------------------------------------------------------------- real samples


def test_the_real_garage_track_matches_the_spec(tmp_path: Path) -> None:
    garage = sample("vdrift/garage")
    found = scene.load(garage)
    summary = found.summary()
    assert (summary["objects"], summary["textures"], summary["name"]) == (35, 11, "Garage")
    assert found.warnings == []
    output = tmp_path / "garage.glb"
    scene.save(found, output)
    document = gltf_json(output.read_bytes())
    nodes = nodes_by_name(document)
    assert [document["nodes"][n]["name"] for n in nodes["skybox"]["children"]] == ["Cube.002.joe", "Cube.joe"]
    assert not any(material["alphaMode"] == "BLEND" for material in document["materials"])
    assert not any(material["doubleSided"] for material in document["materials"])
    assert len(document["images"]) == 11
    # Scene bounds of the non-skybox objects, in glTF axes.
    skybox = set(nodes["skybox"]["children"])
    lows, highs = [], []
    for number, node in enumerate(document["nodes"]):
        if "mesh" in node and number not in skybox:
            accessor = document["accessors"][
                document["meshes"][node["mesh"]]["primitives"][0]["attributes"]["POSITION"]
            ]
            lows.append(accessor["min"])
            highs.append(accessor["max"])
    assert np.min(lows, axis=0) == pytest.approx([-40.46, -0.18, -44.22], abs=0.01)
    assert np.max(highs, axis=0) == pytest.approx([21.20, 4.97, 20.00], abs=0.01)


# ------------------------------------------------------------------------------- cars


def make_car(folder: Path, car_text: str, *, body_alpha: int = 0) -> Path:
    folder.mkdir(parents=True)
    (folder / "about.txt").write_text("Test Car\n")
    (folder / f"{folder.name}.car").write_text(car_text)
    body = quad(-1, -2, 0, 2)
    body.corners = body.corners[:, ::-1].copy()  # stored clockwise, as the MCS body is
    body.normals[:] = [0, 0, 1]
    (folder / "body.joe").write_bytes(models.dumps(body, "joe"))
    (folder / "glass.joe").write_bytes(models.dumps(quad(-0.5, -0.5, 1), "joe"))
    (folder / "wheel.joe").write_bytes(models.dumps(quad(0.0, -0.5, -0.5, 1), "joe"))
    (folder / "body00.png").write_bytes(png((255, 255, 255, body_alpha), "RGBA"))
    (folder / "glass.png").write_bytes(png((100, 100, 255, 136), "RGBA"))
    (folder / "wheel.png").write_bytes(png((128, 128, 128)))
    parts = folder.parent / "carparts"
    (parts / "tire").mkdir(parents=True, exist_ok=True)
    (parts / "tire" / "touring.png").write_bytes(png((20, 20, 20)))
    (parts / "driver.joe").write_bytes(models.dumps(quad(0, 0, 0.5, 0.3), "joe"))
    (parts / "driver.png").write_bytes(png((200, 150, 100)))
    return folder


CAR = """# a test car
[body]
mesh = body.joe
texture = body00.png, body-misc1.png   ; misc maps are not used
[glass]
mesh = glass.joe
texture = glass.png
draw = transparent
[driver]
mesh = driver.joe
texture = driver.png
position = -0.35, -0.10, 0.15
rotation = 87.5, 0, 0
[engine]
position = 0, 1, 0
[wheel.fl]
mesh = wheel.joe
texture = wheel.png
position = -0.75, 1.25, -0.49
[wheel.fr]
mesh = wheel.joe
texture = wheel.png
scale = -1, 1, 1
position = 0.75, 1.25, -0.49
[wheel.fl.tire]
texture = tire/touring.png
size = 175, 65, 15
type = &tire/touring
[wheel.fr.tire]
texture = tire/touring.png
size = 175, 65, 15
[wheel.fl.brake]
radius = 0.14
"""


def test_a_car_places_its_parts_and_wheels_as_the_definition_says(tmp_path: Path) -> None:
    folder = make_car(tmp_path / "cars" / "TC", CAR)
    found = scene.load(folder)
    assert found.warnings == [], found.warnings
    output = tmp_path / "car.glb"
    scene.save(found, output)
    document = gltf_json(output.read_bytes())
    nodes = nodes_by_name(document)
    assert nodes["wheel fl"]["translation"] == pytest.approx([-0.75, -0.49, -1.25])
    assert nodes["wheel fr"]["translation"] == pytest.approx([0.75, -0.49, -1.25])
    assert nodes["wheel fr rim"]["scale"] == [-1, 1, 1] and "scale" not in nodes["wheel fl rim"]
    # The mirror lives on the node: both rims share one mesh, both tyres another.
    assert nodes["wheel fl rim"]["mesh"] == nodes["wheel fr rim"]["mesh"]
    assert nodes["wheel fl tire"]["mesh"] == nodes["wheel fr tire"]["mesh"]
    # A brake disc without a texture is not drawn; the driver comes from carparts/.
    assert "wheel fl brake" not in nodes
    assert nodes["driver"]["translation"] == pytest.approx([-0.35, 0.15, 0.10])
    assert nodes["driver"]["rotation"] == pytest.approx([0.6915, 0, 0, 0.7224], abs=1e-4)
    # Tyre: 175/65 R15 -> tread radius 0.1905 + 0.175 * 0.65.
    tire = document["accessors"][
        document["meshes"][nodes["wheel fl tire"]["mesh"]]["primitives"][0]["attributes"]["POSITION"]
    ]
    assert max(tire["max"][1], -tire["min"][1]) == pytest.approx(0.30425, abs=1e-3)
    assert document["nodes"][0]["extras"]["vdrift"]["ground_height"] == pytest.approx(-0.79425, abs=1e-4)

    def material(name: str) -> dict:
        return document["materials"][document["meshes"][nodes[name]["mesh"]]["primitives"][0]["material"]]

    assert material("glass")["alphaMode"] == "BLEND"
    assert material("body")["alphaMode"] == "OPAQUE"
    assert all(entry["doubleSided"] for entry in document["materials"])


def test_a_car_body_texture_alpha_is_baked_as_paint_and_its_winding_turned_outward(tmp_path: Path) -> None:
    from PIL import Image

    folder = make_car(tmp_path / "cars" / "TC", CAR, body_alpha=0)
    found = scene.load(folder, paint=(1.0, 0.0, 0.0))
    body = next(node for node in found.root.walk() if node.name == "body")
    image = found.images[image_of(body)]
    assert not image.has_alpha
    with Image.open(io.BytesIO(image.data)) as opened:
        assert opened.mode == "RGB" and opened.getpixel((0, 0)) == (255, 0, 0)
    # The body was stored clockwise with up normals: now every face agrees with its normals.
    assert (mesh_of(body).face_normals() @ np.array([0, 0, 1]) > 0).all()


def test_a_car_without_wheel_sections_says_which_layout_it_is(tmp_path: Path) -> None:
    folder = make_car(
        tmp_path / "cars" / "OLD", "[body]\nmesh = body.joe\ntexture = body00.png\n[wheel-0]\nmodel = oem\n"
    )
    found = scene.load(folder)
    assert any("[wheel-N] layout" in warning for warning in found.warnings)
    assert [node.name for node in found.root.children] == ["body"]


def test_a_car_value_that_is_not_numbers_is_one_error_naming_the_line(tmp_path: Path) -> None:
    folder = make_car(tmp_path / "cars" / "BAD", CAR.replace("position = -0.75, 1.25, -0.49", "position = left"))
    with pytest.raises(scene.SceneError, match=r"BAD\.car:\d+: \[wheel\.fl\] position"):
        scene.load(folder)
    code, _, err = in_process_cli("model", "export", str(folder), "-o", str(tmp_path / "bad.glb"))
    assert code == 1 and len(err.strip().splitlines()) == 1 and not (tmp_path / "bad.glb").exists()


@pytest.mark.parametrize(
    ("change", "words"),
    [
        # Found by reading: a two-number colour reached numpy's broadcasting (ValueError) when
        # the paint was baked; a 1e300 m tyre made infinite vertices, and the glTF writer's
        # JSON ValueError escaped.
        (("texture = driver.png", "texture = glass.png\ncolor = 0.5, 0.5"), r"\[driver\] color = .* holds 2 numbers"),
        (("size = 175, 65, 15", "size = 1e300, 65, 15"), r"\[wheel\.fl\.tire\] size = .* makes a 1e\+297 m wheel"),
        (("radius = 0.14", "radius = -1e300\ntexture = wheel.png"), r"\[wheel\.fl\.brake\] radius = .* 1e\+300 m"),
    ],
)
def test_a_car_colour_or_wheel_size_no_car_has_is_one_error_naming_the_line(
    tmp_path: Path, change: tuple[str, str], words: str
) -> None:
    folder = make_car(tmp_path / "cars" / "BAD", CAR.replace(*change))
    with pytest.raises(scene.SceneError, match=r"BAD\.car:\d+: " + words):
        scene.save(scene.load(folder), tmp_path / "bad.glb")


def test_a_car_part_scaled_flat_is_written_as_obj(tmp_path: Path) -> None:
    # Found by fuzz_read_scene: `scale = 0, 1, 1` made the node's matrix singular and numpy's
    # LinAlgError escaped the OBJ writer (it turns normals by the inverse).
    folder = make_car(tmp_path / "cars" / "FLAT", CAR.replace("rotation = 87.5, 0, 0", "scale = 0, 1, 1"))
    written = scene.save(scene.load(folder), tmp_path / "flat.obj")
    normals = [line for line in Path(written[-1]).read_text().splitlines() if line.startswith("vn ")]
    assert normals and all("nan" not in line for line in normals)


def test_ini_dialect_comments_lists_sections_and_sorted_children() -> None:
    parsed = scene.track.ini.parse(
        "top = 1\n[ wheel.rr ]\nposition = 1, 2 ,3 # c\n[wheel.fl]\nscale = -1,1,1 ; c\n[wheel.fl.tire]\nx = on\n",
        "x.car",
    )
    assert parsed.get("", "top") == "1"
    assert parsed.floats("wheel.rr", "position", 3) == [1, 2, 3]
    assert parsed.children("wheel") == ["fl", "rr"]
    assert parsed.flag("wheel.fl.tire", "x") and not parsed.flag("wheel.fl.tire", "y")
    assert parsed.where("wheel.fl", "scale") == "x.car:5"


def test_the_real_mcs_car_matches_the_spec(tmp_path: Path) -> None:
    folder = sample("vdrift/MCS")
    found = scene.load(folder)
    assert found.warnings == []
    output = tmp_path / "mcs.glb"
    scene.save(found, output)
    document = gltf_json(output.read_bytes())
    nodes = nodes_by_name(document)
    expected = {
        "fl": [-0.75, -0.49, -1.25],
        "fr": [0.75, -0.49, -1.25],
        "rl": [-0.75, -0.49, 1.29],
        "rr": [0.75, -0.49, 1.29],
    }
    for wheel, translation in expected.items():
        assert nodes[f"wheel {wheel}"]["translation"] == pytest.approx(translation)
    assert nodes["wheel fr rim"]["scale"] == [-1, 1, 1] and nodes["wheel rr rim"]["scale"] == [-1, 1, 1]
    assert nodes["steering"]["rotation"] == pytest.approx([0.6915, 0, 0, 0.7224], abs=1e-4)
    assert document["nodes"][0]["extras"]["vdrift"]["ground_height"] == pytest.approx(-0.794, abs=1e-3)
    body = next(node for node in found.root.walk() if node.name == "body")
    summed = mesh_of(body).normals[mesh_of(body).corners[:, :, 1]].sum(axis=1)
    assert ((mesh_of(body).face_normals() * summed).sum(axis=1) >= 0).all()
    assert not found.images[image_of(body)].has_alpha
    glass = next(node for node in found.root.walk() if node.name == "glass")
    assert glass.material is not None and glass.material.alpha_mode == "BLEND"
    assert any("carparts" in image.path for image in found.images.values())


# ------------------------------------------------------------------------------- the way back


def _file_bytes(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in (folder / "objects").iterdir()}


def test_an_unchanged_scene_imports_back_without_changing_a_byte(small_track: Path, tmp_path: Path) -> None:
    before = _file_bytes(small_track)
    scene.save(scene.load(small_track), tmp_path / "s.glb")
    code, _, err = in_process_cli("model", "import", str(tmp_path / "s.glb"), "--into", str(small_track))
    assert code == 0, err
    assert ": unchanged (6 objects as they were)" in err
    assert _file_bytes(small_track) == before


def test_an_edited_scene_changes_only_the_edited_model_and_adds_new_objects(small_track: Path, tmp_path: Path) -> None:
    from gamepak.models.scene.common import SceneMaterial

    with gamepak_open(small_track / "objects" / "objects.jpk") as pack:
        before = {entry.name: pack.read(entry) for entry in pack.infolist()}
    found = scene.load(small_track)
    nodes = {node.name: node for node in found.root.walk()}
    moved = mesh_of(nodes["fence.joe"])
    moved.positions = moved.positions + np.float32(2.0)
    found.root.children.append(
        SceneNode("barrel.joe", mesh=quad(9, 9), material=SceneMaterial(image=image_of(nodes["road.joe"])))
    )
    found.root.children.remove(nodes["tree.joe"])
    scene.save(found, tmp_path / "edited.glb")
    # --dry-run says what would change and writes nothing.
    untouched = _file_bytes(small_track)
    code, _, err = in_process_cli(
        "model", "import", str(tmp_path / "edited.glb"), "--into", str(small_track), "--dry-run"
    )
    assert code == 0 and "1 changed, 1 added, 0 removed" in err and "1 not in the scene kept" in err
    assert _file_bytes(small_track) == untouched

    code, _, err = in_process_cli("model", "import", str(tmp_path / "edited.glb"), "--into", str(small_track))
    assert code == 0, err
    with gamepak_open(small_track / "objects" / "objects.jpk") as pack:
        after = {entry.name: pack.read(entry) for entry in pack.infolist()}
    assert set(after) == set(before) | {"barrel.joe"}
    assert [name for name in before if after[name] != before[name]] == ["fence.joe"]
    warnings: list[str] = []
    entries = track_module.parse_list((small_track / "objects" / "list.txt").read_text(), "list.txt", warnings)
    assert [entry.model for entry in entries] == [
        "road.joe",
        "fence.joe",
        "decal.joe",
        "sky.joe",
        "tree.joe",
        "road.joe",
        "barrel.joe",
    ]
    # The new object: its texture from the material, list.txt's values from extras or defaults.
    assert entries[-1].texture == "asphalt.png" and entries[-1].values["collideable"] == 1
    # The list's own values travelled through extras unchanged.
    assert (
        entries[0].values
        == track_module.parse_list(
            "17\n" + list_line("road.joe", "asphalt.png", mipmap=1, collideable=1, surface=1), "x", []
        )[0].values
    )
    assert scene.load(small_track).summary()["objects"] == 7

    # --delete takes out the objects the scene lacks, and their models no other object names.
    code, _, err = in_process_cli(
        "model", "import", str(tmp_path / "edited.glb"), "--into", str(small_track), "--delete"
    )
    assert code == 0 and "1 removed" in err, err
    with gamepak_open(small_track / "objects" / "objects.jpk") as pack:
        assert "tree.joe" not in pack.namelist()
    assert scene.load(small_track).summary()["objects"] == 6


def test_import_into_something_that_is_not_a_track_is_one_line(tmp_path: Path) -> None:
    scene_file = tmp_path / "x.glb"
    scene_file.write_bytes(models.dumps(quad(0, 0), "glb"))
    code, _, err = in_process_cli("model", "import", str(scene_file), "--into", str(tmp_path))
    assert code == 1 and "not a VDrift track" in err and len(err.strip().splitlines()) == 1
    code, _, err = in_process_cli("model", "import", str(scene_file))
    assert code == 2 and "-o" in err


def test_the_same_faces_from_another_corner_and_order_are_the_same_geometry() -> None:
    from gamepak.models.scene.compare import same_drawing as _same_geometry

    original = quad(0, 0)
    turned = quad(0, 0)
    turned.corners = np.roll(turned.corners[::-1], 1, axis=1).copy()
    assert _same_geometry(original, turned)
    mirrored = quad(0, 0)
    mirrored.corners = mirrored.corners[:, ::-1].copy()  # the other winding is another face
    assert not _same_geometry(original, mirrored)
    moved = quad(0, 0.01)
    assert not _same_geometry(original, moved)


def test_a_texture_claiming_a_huge_size_is_not_decoded(tmp_path: Path) -> None:
    import zlib

    # A small RGBA PNG whose header says 20000 x 20000 (CRC made to match): the car's paint is
    # not baked into it (that would decode 400 million pixels), and it is kept as it is.
    data = bytearray(png((255, 255, 255, 0), "RGBA"))
    data[16:24] = struct.pack(">II", 20000, 20000)
    data[29:33] = struct.pack(">I", zlib.crc32(bytes(data[12:29])))
    folder = make_car(tmp_path / "cars" / "TC", CAR)
    (folder / "body00.png").write_bytes(bytes(data))
    found = scene.load(folder)
    assert any("too large to bake" in warning for warning in found.warnings)
    body = next(node for node in found.root.walk() if node.name == "body")
    assert found.images[image_of(body)].data == bytes(data)


def test_embedded_images_are_the_files_bytes_and_one_changed_before_writing_is_an_error(
    small_track: Path, tmp_path: Path
) -> None:
    # The images are copied file to file when the .glb is written (not held in memory): what
    # lands is each file's own bytes, and a file that changed size since the scene was read
    # is one clear error that leaves no output behind.
    found = scene.load(small_track)
    scene.save(found, tmp_path / "small.glb")
    data = (tmp_path / "small.glb").read_bytes()
    document = gltf_json(data)
    json_length = struct.unpack_from("<I", data, 12)[0]
    binary = data[20 + json_length + 8 :]
    for image in document["images"]:
        view = document["bufferViews"][image["bufferView"]]
        embedded = binary[view["byteOffset"] : view["byteOffset"] + view["byteLength"]]
        assert embedded == (small_track / "objects" / image["name"]).read_bytes()
    (small_track / "objects" / "fence.png").write_bytes(png((1, 2, 3, 4), "RGBA") + b"longer")
    with pytest.raises(scene.SceneError, match=r"fence\.png: changed while the scene was written"):
        scene.save(found, tmp_path / "again.glb")
    assert not list(tmp_path.glob("again*")) and not list(tmp_path.glob(".*again*"))


def test_a_texture_link_turned_elsewhere_after_reading_is_not_followed(small_track: Path, tmp_path: Path) -> None:
    # The file written is the file read: a link changed in between to another file of the same
    # size (outside the folder, say) is an error, not embedded.
    outside = tmp_path / "secret.png"
    texture = small_track / "objects" / "sky.png"
    outside.write_bytes(b"S" * texture.stat().st_size)
    (small_track / "objects" / "sky-real.png").write_bytes(texture.read_bytes())
    texture.unlink()
    texture.symlink_to("sky-real.png")
    found = scene.load(small_track)
    texture.unlink()
    texture.symlink_to(outside)
    with pytest.raises(scene.SceneError, match=r"sky\.png: changed while the scene was written"):
        scene.save(found, tmp_path / "out.glb")
    assert not (tmp_path / "out.glb").exists()


def test_compact_json_is_the_standard_librarys_json_and_never_writes_nan_as_null() -> None:
    from gamepak.models.scene.gltf import compact_json

    document = {"a": [1.5, 1e-7, 123456789.0, -0.0, 2**53], "name": "null and void", "nested": {"x": True}}
    assert json.loads(compact_json(document)) == document
    assert b" " not in compact_json({"a": [1, 2], "b": {"c": 3}})
    with pytest.raises(ValueError, match="JSON"):
        compact_json({"min": [float("nan")]})


def test_a_link_out_of_the_folders_a_scene_looks_in_is_not_followed(small_track: Path, tmp_path: Path) -> None:
    # Found by reading: without the web viewer's confinement, `objects/sky.png` linking to any
    # file on the machine was embedded in the exported scene. A link may lead anywhere among
    # the folders looked in (objects/, carparts/, trackparts/, the search folders).
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.png").write_bytes(png((1, 2, 3)))
    sky = small_track / "objects" / "sky.png"
    sky.unlink()
    sky.symlink_to(outside / "secret.png")
    (small_track / "objects" / "tree.png").unlink()
    (small_track / "objects" / "tree.png").symlink_to("asphalt.png")  # a link inside objects/
    found = scene.load(small_track)
    assert {Path(image.path).name for image in found.images.values()} == {"asphalt.png", "fence.png", "tree.png"}
    assert any("texture 'sky.png' is a link leading outside the folders" in warning for warning in found.warnings)
    allowed = scene.load(small_track, search=[str(outside)])
    assert "sky.png" in {Path(image.path).name for image in allowed.images.values()}
    # The scene's own files: a list.txt linking elsewhere is not read as the track's.
    (outside / "list.txt").write_text("17\n" + list_line("road.joe", "asphalt.png") + "\n")
    (small_track / "objects" / "list.txt").unlink()
    (small_track / "objects" / "list.txt").symlink_to(outside / "list.txt")
    with pytest.raises(scene.SceneError, match=r"list\.txt: leads outside its scene's folder \(a link\)"):
        scene.load(small_track)


def test_a_car_part_linking_out_of_the_folders_is_left_out(tmp_path: Path) -> None:
    folder = make_car(tmp_path / "cars" / "TC", CAR)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    driver = tmp_path / "cars" / "carparts" / "driver.joe"
    (outside / "driver.joe").write_bytes(driver.read_bytes())
    driver.unlink()
    driver.symlink_to(outside / "driver.joe")
    found = scene.load(folder)
    assert "driver" not in {node.name for node in found.root.walk()}
    assert any("mesh 'driver.joe' is a link leading outside" in warning for warning in found.warnings)


def test_a_name_holding_a_nul_is_refused_as_a_name(tmp_path: Path) -> None:
    # Found by reading: a texture name with a NUL (list.txt is text: any character but blanks)
    # reached os.listdir, whose ValueError escaped the scene reader.
    folder = make_track(tmp_path / "t", [list_line("a.joe", "sub\0dir/x.png")], {"a.joe": quad(0, 0)}, {})
    found = scene.load(folder)
    assert any("'sub\\x00dir/x.png' is not a name inside a folder" in warning for warning in found.warnings)
