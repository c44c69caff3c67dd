"""`model import SCENE --into TRACK` (ops/scenes.py): what was not edited keeps its bytes, what
was edited is never dropped, and names, files and transforms a track cannot take are one line.

Tracks are built here from the spec (vdrift-scenes.md, joe-v3.md) with gamepak's own writers:
JOE models that carry magic 0 and zero normals as real walls do, duplicate positions, faces of
no area and NaN texture coordinates; a list.txt naming one model twice; a Latin-1 list.txt."""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_scenes import list_line, make_track, mesh_of, png, quad

from gamepak import models
from gamepak.models import scene
from gamepak.models.mesh import Mesh
from gamepak.models.scene import track as track_module

from conftest import in_process_cli, pack_members

ZERO_MAGIC = b"\0\0\0\0"


def odd_wall() -> Mesh:
    """A wall as the real tracks hold them: magic 0, every normal (0, 0, 0), one position
    stored twice, a face of no area and a NaN texture coordinate."""
    positions = np.array(
        [[0, 0, 0], [4, 0, 0], [4, 0, 3], [0, 0, 3], [4, 0, 0], [2, 0, 0]], dtype=np.float32
    )  # row 4 repeats row 1; row 5 lies on the edge 0-1
    texcoords = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [np.nan, 0.5], [0.5, 0]], dtype=np.float32)
    corners = np.zeros((4, 3, 3), np.int64)
    corners[:, :, 0] = [[0, 1, 2], [0, 2, 3], [4, 2, 3], [0, 5, 1]]  # the last: no area
    corners[:, :, 1] = 0
    corners[:, :, 2] = [[0, 1, 2], [0, 2, 3], [4, 2, 3], [0, 5, 1]]
    return Mesh(positions, np.zeros((1, 3), np.float32), texcoords, corners, magic=ZERO_MAGIC)


def files_with_times(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {path.name: (path.read_bytes(), path.stat().st_mtime_ns) for path in (folder / "objects").iterdir()}


@pytest.fixture
def odd_track(tmp_path: Path) -> Path:
    return make_track(
        tmp_path / "tracks" / "odd",
        [
            list_line("wall.joe", "wall.png", mipmap=1, collideable=1),
            list_line("road.joe", "asphalt.png", mipmap=1, surface=1),
            list_line("wall.joe", "wall.png", mipmap=1, collideable=1),
            list_line("leaf.joe", "wall.png", transparent_blend=2),
        ],
        {"wall.joe": odd_wall(), "road.joe": quad(0, 0, size=10), "leaf.joe": odd_wall()},
        {"wall.png": png((120, 120, 120)), "asphalt.png": png((60, 60, 60))},
    )


def test_joe_models_with_magic_0_zero_normals_and_nan_texcoords_come_back_unchanged(
    odd_track: Path, tmp_path: Path
) -> None:
    stored = pack_members(odd_track / "objects" / "objects.jpk")
    assert stored["wall.joe"][:4] == ZERO_MAGIC  # the fixture is what the issue describes
    before = files_with_times(odd_track)
    scene.save(scene.load(odd_track), tmp_path / "odd.glb")
    code, _, err = in_process_cli("model", "import", str(tmp_path / "odd.glb"), "--into", str(odd_track), "--dry-run")
    assert code == 0 and "unchanged (4 objects" in err and "would" not in err, err
    code, _, err = in_process_cli("model", "import", str(tmp_path / "odd.glb"), "--into", str(odd_track))
    assert code == 0 and "unchanged (4 objects" in err, err
    assert files_with_times(odd_track) == before  # not a byte, not a time


def blender_like(path: Path, out: Path, nudge: float = 0.003) -> None:
    """The scene at `path` as a tool that re-exports it leaves it: every normal moved by `nudge`
    per component (then made unit again), every face started at its second corner and the faces
    in reverse order."""
    data = bytearray(path.read_bytes())
    json_length = struct.unpack_from("<I", data, 12)[0]
    document = json.loads(data[20 : 20 + json_length])
    blob = 20 + json_length + 8
    views = document["bufferViews"]
    for mesh in document["meshes"]:
        for primitive in mesh["primitives"]:
            normals = document["accessors"][primitive["attributes"]["NORMAL"]]
            start = blob + views[normals["bufferView"]].get("byteOffset", 0) + normals.get("byteOffset", 0)
            values = np.frombuffer(bytes(data[start : start + normals["count"] * 12]), np.float32).reshape(-1, 3)
            moved = values + np.float32(nudge)
            moved /= np.linalg.norm(moved, axis=1, keepdims=True)
            data[start : start + moved.nbytes] = moved.astype(np.float32).tobytes()
            indices = document["accessors"][primitive["indices"]]
            size = 2 if indices["componentType"] == 5123 else 4
            start = blob + views[indices["bufferView"]].get("byteOffset", 0) + indices.get("byteOffset", 0)
            dtype = "<u2" if size == 2 else "<u4"
            faces = np.frombuffer(bytes(data[start : start + indices["count"] * size]), dtype).reshape(-1, 3)
            turned = np.roll(faces, -1, axis=1)[::-1]
            data[start : start + turned.nbytes] = turned.astype(dtype).tobytes()
    out.write_bytes(bytes(data))


def test_float_noise_in_normals_and_renumbered_faces_are_not_a_change(odd_track: Path, tmp_path: Path) -> None:
    before = files_with_times(odd_track)
    scene.save(scene.load(odd_track), tmp_path / "odd.glb")
    blender_like(tmp_path / "odd.glb", tmp_path / "noisy.glb")
    code, _, err = in_process_cli("model", "import", str(tmp_path / "noisy.glb"), "--into", str(odd_track))
    assert code == 0 and "unchanged (4 objects" in err, err
    assert files_with_times(odd_track) == before
    # Past the tolerance (0.005 per component), a normal is an edit.
    blender_like(tmp_path / "odd.glb", tmp_path / "turned.glb", nudge=0.05)
    code, _, err = in_process_cli(
        "model", "import", str(tmp_path / "turned.glb"), "--into", str(odd_track), "--dry-run"
    )
    assert code == 0 and "would change" in err and "road.joe" in err, err
    assert files_with_times(odd_track) == before


def test_one_moved_object_changes_only_its_model_and_is_named(odd_track: Path, tmp_path: Path) -> None:
    found = scene.load(odd_track)
    nodes = {node.name: node for node in found.root.walk()}
    moved = mesh_of(nodes["road.joe"])
    moved.positions = moved.positions + np.float32(1.0)
    scene.save(found, tmp_path / "moved.glb")
    stored = pack_members(odd_track / "objects" / "objects.jpk")
    list_bytes = (odd_track / "objects" / "list.txt").read_bytes()
    code, _, err = in_process_cli("model", "import", str(tmp_path / "moved.glb"), "--into", str(odd_track), "--dry-run")
    assert code == 0 and "1 changed, 0 added, 0 removed, 3 unchanged" in err, err
    assert "would be changed: road.joe" in err
    code, _, err = in_process_cli("model", "import", str(tmp_path / "moved.glb"), "--into", str(odd_track))
    assert code == 0 and "changed: road.joe (model road.joe replaced)" in err, err
    after = pack_members(odd_track / "objects" / "objects.jpk")
    assert {name for name in stored if after[name] != stored[name]} == {"road.joe"}
    assert (odd_track / "objects" / "list.txt").read_bytes() == list_bytes


def test_an_edited_instance_of_a_shared_model_becomes_a_new_model_and_the_other_keeps_it(
    odd_track: Path, tmp_path: Path
) -> None:
    found = scene.load(odd_track)
    nodes = {node.name: node for node in found.root.walk()}
    assert nodes["wall.joe"].mesh is nodes["wall.joe #2"].mesh  # one model, two objects
    edited = nodes["wall.joe #2"]
    old = mesh_of(edited)
    edited.mesh = Mesh(old.positions + np.float32(5.0), old.normals, old.texcoords, old.corners, magic=old.magic)
    scene.save(found, tmp_path / "edited.glb")
    stored = pack_members(odd_track / "objects" / "objects.jpk")
    code, _, err = in_process_cli("model", "import", str(tmp_path / "edited.glb"), "--into", str(odd_track))
    assert code == 0 and "1 changed" in err, err
    assert "wall.joe #2 now drawn by the new model wall-2.joe (wall.joe kept for wall.joe, which differs)" in err
    after = pack_members(odd_track / "objects" / "objects.jpk")
    assert after["wall.joe"] == stored["wall.joe"]  # the unedited instance keeps its model
    assert after["wall-2.joe"][:4] == ZERO_MAGIC  # the new model keeps the old one's magic
    entries = track_module.parse_list((odd_track / "objects" / "list.txt").read_text(), "list.txt", [])
    assert [entry.model for entry in entries] == ["wall.joe", "road.joe", "wall-2.joe", "leaf.joe"]
    reread = {node.name: node for node in scene.load(odd_track).root.walk()}
    assert mesh_of(reread["wall-2.joe"]).bounds() == ([5.0, 5.0, 5.0], [9.0, 5.0, 8.0])
    assert mesh_of(reread["wall.joe"]).bounds() == ([0.0, 0.0, 0.0], [4.0, 0.0, 3.0])


def test_both_instances_edited_alike_replace_the_shared_model(odd_track: Path, tmp_path: Path) -> None:
    found = scene.load(odd_track)
    nodes = {node.name: node for node in found.root.walk()}
    shared = mesh_of(nodes["wall.joe"])
    shared.positions = shared.positions + np.float32(2.0)  # one mesh object: both nodes move
    scene.save(found, tmp_path / "both.glb")
    code, _, err = in_process_cli("model", "import", str(tmp_path / "both.glb"), "--into", str(odd_track))
    assert code == 0 and "2 changed" in err and "wall.joe, wall.joe #2 (model wall.joe replaced)" in err, err
    assert "wall-2.joe" not in pack_members(odd_track / "objects" / "objects.jpk")


def test_a_latin_1_list_keeps_its_bytes_when_an_object_is_added(tmp_path: Path) -> None:
    track = make_track(
        tmp_path / "tracks" / "latin",
        [list_line("road.joe", "asphalt.png"), list_line("sign.joe", "caf\xe9.png", nolighting=1)],
        {"road.joe": quad(0, 0), "sign.joe": quad(3, 3)},
        {"asphalt.png": png((60, 60, 60)), "caf\xe9.png": png((200, 10, 10))},
    )
    list_path = track / "objects" / "list.txt"
    text = list_path.read_text("utf-8").replace("17\n", "17\n# made on Windows: caf\xe9\n", 1).replace("\n", "\r\n")
    list_path.write_bytes(text.encode("latin-1"))
    original = list_path.read_bytes()
    assert b"caf\xe9.png" in original
    found = scene.load(track)
    from gamepak.models.scene.common import SceneNode

    found.root.children.append(SceneNode("barrel.joe", mesh=quad(9, 9), material=found.root.children[0].material))
    scene.save(found, tmp_path / "added.glb")
    code, _, err = in_process_cli("model", "import", str(tmp_path / "added.glb"), "--into", str(track))
    assert code == 0 and "1 added" in err and "added: barrel.joe (model barrel.joe, new)" in err, err
    new = list_path.read_bytes()
    assert new.startswith(original)  # every old byte kept, the new object after them
    assert b"\xef\xbf\xbd" not in new and b"\r\nbarrel.joe\r\nasphalt.png\r\n" in new
    entries = track_module.parse_list(new.decode("latin-1"), "list.txt", [])
    assert [entry.texture for entry in entries] == ["asphalt.png", "caf\xe9.png", "asphalt.png"]


def test_an_unchanged_real_garage_round_trip_changes_nothing(tmp_path: Path) -> None:
    from conftest import sample

    garage = sample("vdrift/garage")
    import shutil

    shutil.copytree(garage, tmp_path / "garage")
    before = files_with_times(tmp_path / "garage")
    scene.save(scene.load(tmp_path / "garage"), tmp_path / "garage.glb")
    blender_like(tmp_path / "garage.glb", tmp_path / "noisy.glb")
    for scene_file in ("garage.glb", "noisy.glb"):
        code, _, err = in_process_cli("model", "import", str(tmp_path / scene_file), "--into", str(tmp_path / "garage"))
        assert code == 0 and "unchanged (35 objects" in err, err
    assert files_with_times(tmp_path / "garage") == before


# ------------------------------------------------------------------------------- kill -9


def _killed_mid_write(track: Path, scene_file: Path, temporary_prefix: str) -> tuple[str, int]:
    """Fork a child that imports `scene_file` into `track`; the first write into a temporary
    whose name starts with `temporary_prefix` writes half its bytes, tells the parent (name and
    size on disk) and waits; the parent kills it with SIGKILL then. Returns what the child said."""
    import select
    import signal
    import time
    import warnings

    read_end, write_end = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fork() in a process with threads: the child only imports
        pid = os.fork()
    if pid == 0:  # the child
        try:
            os.close(read_end)
            originals = {name: getattr(os, name) for name in ("write", "pwrite", "copy_file_range")}

            def target_of(fd: int) -> str:
                try:
                    return os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))
                except OSError:
                    return ""

            def stop_halfway(fd: int, name: str, call: object, *args: object) -> object:
                if not target_of(fd).startswith(temporary_prefix):
                    return call(*args)  # type: ignore[operator]
                if name == "copy_file_range":
                    args = (*args[:2], max(1, int(args[2]) // 2), *args[3:])  # type: ignore[call-overload]
                else:
                    data = bytes(args[1])  # type: ignore[call-overload]
                    args = (args[0], data[: max(1, len(data) // 2)], *args[2:])
                call(*args)  # type: ignore[operator]
                os.fsync(fd)
                report = f"{target_of(fd)} {os.fstat(fd).st_size}\n".encode()
                originals["write"](write_end, report)
                time.sleep(120)  # killed here
                os._exit(3)

            for name, call in originals.items():
                if name == "copy_file_range":
                    setattr(os, name, lambda *args, _c=call, _n=name: stop_halfway(args[1], _n, _c, *args))
                else:
                    setattr(os, name, lambda *args, _c=call, _n=name: stop_halfway(args[0], _n, _c, *args))
            from gamepak.ops.scenes import import_scene

            import_scene(scene_file, track)
        except BaseException:
            os._exit(1)
        os._exit(0)
    os.close(write_end)
    try:
        ready, _, _ = select.select([read_end], [], [], 60)
        said = os.read(read_end, 1000).decode() if ready else ""
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(read_end)
    assert said, "the import never wrote into the temporary (or ended first)"
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    name, size = said.split()
    return name, int(size)


@pytest.mark.parametrize("temporary", [".objects.jpk.gamepak-", ".list.txt.gamepak-"])
def test_a_kill_mid_write_leaves_the_old_track_and_the_next_import_removes_the_temporary(
    odd_track: Path, tmp_path: Path, temporary: str
) -> None:
    from gamepak.models.scene.common import SceneNode

    scene.save(scene.load(odd_track), tmp_path / "same.glb")
    found = scene.load(odd_track)
    # A new object whose model name is longer than the pack's name field: the pack is rebuilt
    # into a temporary (and list.txt gets a line, through its own temporary).
    long_name = "a_barrel_with_a_name_longer_than_any_in_the_pack.joe"
    found.root.children.append(SceneNode(long_name, mesh=quad(9, 9), material=found.root.children[0].material))
    scene.save(found, tmp_path / "added.glb")
    objects = odd_track / "objects"
    before = files_with_times(odd_track)

    name, size = _killed_mid_write(odd_track, tmp_path / "added.glb", temporary)
    left = [path.name for path in objects.iterdir() if path.name.startswith(temporary)]
    assert left == [name] and (objects / name).stat().st_size == size > 0  # the kill landed mid-write
    now = {path: value for path, value in files_with_times(odd_track).items() if path != name}
    if temporary.startswith(".list"):
        # The pack was already edited (a step that stands alone: VDrift loads it with an unused
        # member), list.txt not yet: it is the old one.
        assert now["list.txt"] == before["list.txt"]
        assert long_name in pack_members(objects / "objects.jpk")
    else:
        assert now == before  # nothing replaced yet

    # The next import removes the dead process's temporary, even one that changes nothing.
    code, _, err = in_process_cli("model", "import", str(tmp_path / "same.glb"), "--into", str(odd_track))
    assert code == 0 and "unchanged (4 objects" in err, err
    assert not [path.name for path in objects.iterdir() if ".gamepak-" in path.name]
    code, _, err = in_process_cli("model", "import", str(tmp_path / "added.glb"), "--into", str(odd_track))
    assert code == 0 and "1 added" in err, err
    entries = track_module.parse_list((objects / "list.txt").read_text(), "list.txt", [])
    assert [entry.model for entry in entries][-1] == long_name


# ------------------------------------------------------------------------------- odd inputs


def _cli_subprocess(*arguments: str, timeout: float = 60) -> tuple[int, str]:
    """Run the CLI in a child process that is killed after `timeout` seconds (a read blocked
    on a FIFO would hang this test run otherwise): (exit code, stdout and stderr)."""
    import subprocess
    import sys

    import gamepak

    src = str(Path(gamepak.__file__).resolve().parent.parent)  # the gamepak this test runs
    environment = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    finished = subprocess.run(
        [sys.executable, "-m", "gamepak", *arguments],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=environment,
    )
    return finished.returncode, finished.stdout + finished.stderr


def test_a_fifo_among_a_tracks_files_is_skipped_with_a_warning_never_opened(tmp_path: Path) -> None:
    track = make_track(
        tmp_path / "tracks" / "fifo",
        [
            list_line("road.joe", "asphalt.png"),
            list_line("sign.joe", "pipe.png"),
            list_line("loose.joe", "asphalt.png"),
        ],
        {"road.joe": quad(0, 0), "sign.joe": quad(3, 3)},
        {"asphalt.png": png((60, 60, 60))},
    )
    os.mkfifo(track / "objects" / "pipe.png")  # a texture nobody writes to: opening it blocks
    os.mkfifo(track / "objects" / "loose.joe")  # a loose model, likewise
    (track / "objects" / "objects.jpk").rename(track / "objects" / "kept.jpk")  # loose models are read
    write_models = {"road.joe": quad(0, 0), "sign.joe": quad(3, 3)}
    for name, mesh in write_models.items():
        (track / "objects" / name).write_bytes(models.dumps(mesh, "joe"))
    code, err = _cli_subprocess("model", "export", str(track), "-o", str(tmp_path / "fifo.glb"))
    assert code == 0, err
    assert "pipe.png" in err and "loose.joe" in err and err.count("not a regular file") == 2, err
    document = json.loads(
        (tmp_path / "fifo.glb").read_bytes()[20:][
            : struct.unpack_from("<I", (tmp_path / "fifo.glb").read_bytes(), 12)[0]
        ]
    )
    assert [node["name"] for node in document["nodes"] if "mesh" in node] == ["road.joe", "sign.joe"]
    code, err = _cli_subprocess("model", "info", str(track))
    assert code == 0 and "not a regular file" in err, err


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("evil model.joe", "blank"),
        ("#evil.joe", "starts with '#'"),
        ("two\nlines.joe", "blank"),
        ("bell\x07.joe", "control character"),
    ],
)
def test_a_node_name_list_txt_cannot_hold_as_one_token_is_refused_naming_the_node(
    odd_track: Path, tmp_path: Path, name: str, reason: str
) -> None:
    from gamepak.models.scene.common import SceneNode

    found = scene.load(odd_track)
    found.root.children.append(SceneNode(name, mesh=quad(9, 9), material=found.root.children[0].material))
    scene.save(found, tmp_path / "named.glb")
    before = files_with_times(odd_track)
    code, _, err = in_process_cli("model", "import", str(tmp_path / "named.glb"), "--into", str(odd_track))
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert repr(name) in err and reason in err and "list.txt" in err
    assert files_with_times(odd_track) == before


def _with_node_field(path: Path, out: Path, node_name: str, field: str, value: object) -> None:
    data = path.read_bytes()
    json_length = struct.unpack_from("<I", data, 12)[0]
    document = json.loads(data[20 : 20 + json_length])
    for node in document["nodes"]:
        if node.get("name") == node_name:
            node[field] = value
    text = json.dumps(document).encode()
    text += b" " * (-len(text) % 4)
    rest = data[20 + json_length :]
    body = struct.pack("<I4s", len(text), b"JSON") + text + rest
    out.write_bytes(struct.pack("<4sII", b"glTF", 2, 12 + len(body)) + body)


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("matrix", [1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1], "cannot be inverted"),
        ("scale", [1.0, 0.0, 1.0], "cannot be inverted"),
        ("matrix", [1.0, 2.0, 3.0], "matrix is not 16 finite numbers"),
        ("translation", [1.0, "x", 3.0], "translation is not 3 finite numbers"),
        ("rotation", [0, 0, 0], "rotation is not 4 finite numbers"),
    ],
)
def test_a_node_transform_that_cannot_be_used_is_one_line_naming_the_node(
    odd_track: Path, tmp_path: Path, field: str, value: object, said: str
) -> None:
    scene.save(scene.load(odd_track), tmp_path / "s.glb")
    _with_node_field(tmp_path / "s.glb", tmp_path / "bad.glb", "road.joe", field, value)
    before = files_with_times(odd_track)
    code, _, err = in_process_cli("model", "import", str(tmp_path / "bad.glb"), "--into", str(odd_track))
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert "('road.joe')" in err and said in err and "internal error" not in err, err
    assert files_with_times(odd_track) == before
    code, _, err = in_process_cli("model", "import", str(tmp_path / "bad.glb"), "-o", str(tmp_path / "x.joe"))
    assert code == 1 and said in err, err


# ------------------------------------------------------------------------------- budgets


def _peak_of(*arguments: str) -> tuple[int, str, int]:
    """(exit code, stderr, traced peak bytes) of the CLI run in this process."""
    import tracemalloc

    tracemalloc.start()
    try:
        code, _, err = in_process_cli(*arguments)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return code, err, peak


def test_a_list_of_a_million_objects_is_refused_before_it_is_read(tmp_path: Path) -> None:
    track = make_track(
        tmp_path / "tracks" / "huge",
        [list_line("road.joe", "a.png")],
        {"road.joe": quad(0, 0)},
        {"a.png": png((1, 2, 3))},
    )
    list_path = track / "objects" / "list.txt"
    line = (list_line("road.joe", "a.png") + "\n").encode()
    list_path.write_bytes(b"17\n" + line * 1_000_000)  # 45 MB, as the campaign's 60 MB list
    for command in (("model", "export", str(track), "-o", str(tmp_path / "o.glb")), ("model", "info", str(track))):
        code, err, peak = _peak_of(*command)
        assert code == 1 and len(err.strip().splitlines()) == 1 and "--allow-large" in err, err
        assert str(list_path) in err and peak < 8 << 20, peak  # nothing of it held
    scene.save(
        scene.load(make_track(tmp_path / "small", [list_line("road.joe", "a.png")], {"road.joe": quad(0, 0)}, {})),
        tmp_path / "s.glb",
    )
    code, err, peak = _peak_of("model", "import", str(tmp_path / "s.glb"), "--into", str(track))
    assert code == 1 and "--allow-large" in err and peak < 8 << 20, (err, peak)


def test_a_list_of_short_objects_past_the_object_budget_is_refused_before_its_tokens_are_split(tmp_path: Path) -> None:
    track = make_track(
        tmp_path / "tracks" / "many",
        [list_line("road.joe", "a.png")],
        {"road.joe": quad(0, 0)},
        {"a.png": png((1, 2, 3))},
    )
    list_path = track / "objects" / "list.txt"
    # 7 MB: under the size limit, but 200,000 objects of one-letter tokens.
    list_path.write_bytes(b"17\n" + b"m t 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n" * 200_000)
    code, err, peak = _peak_of("model", "export", str(track), "-o", str(tmp_path / "o.glb"))
    assert code == 1 and "200000" not in err and "tokens, more than 100000 objects" in err, err
    assert peak < 8 * list_path.stat().st_size, peak  # a small multiple of the input
    assert not (tmp_path / "o.glb").exists()


def test_sharing_values_keeps_a_large_track_export_within_a_small_multiple(tmp_path: Path) -> None:
    track = make_track(
        tmp_path / "tracks" / "wide",
        [list_line("road.joe", "a.png")],
        {"road.joe": quad(0, 0)},
        {"a.png": png((1, 2, 3))},
    )
    line = (list_line("road.joe", "a.png") + "\n").encode()
    (track / "objects" / "list.txt").write_bytes(b"17\n" + line * 20_000)
    found = scene.load(track)
    nodes = [node for node in found.root.walk() if node.mesh is not None]
    assert len(nodes) == 20_000
    assert len({id(node.extras) for node in nodes}) == 1 and len({id(node.material) for node in nodes}) == 1


def test_three_hundred_thousand_nodes_reusing_one_mesh_decode_it_once_and_share_one_model(
    odd_track: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from gamepak.models import gltf_read as gltf

    scene.save(scene.load(odd_track), tmp_path / "s.glb")
    data = (tmp_path / "s.glb").read_bytes()
    json_length = struct.unpack_from("<I", data, 12)[0]
    document = json.loads(data[20 : 20 + json_length])
    mesh = next(node["mesh"] for node in document["nodes"] if node.get("name") == "road.joe")
    first = len(document["nodes"])
    count = 300_000
    document["nodes"] += [{"name": f"n{number}", "mesh": mesh} for number in range(count)]
    document["nodes"][0]["children"] += list(range(first, first + count))
    text = json.dumps(document, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 4)
    body = struct.pack("<I4s", len(text), b"JSON") + text + data[20 + json_length :]
    (tmp_path / "many.glb").write_bytes(struct.pack("<4sII", b"glTF", 2, 12 + len(body)) + body)
    decoded = []
    original = gltf._mesh_pieces

    def recorded(*args: Any) -> Any:
        decoded.append(args[4])
        return original(*args)

    monkeypatch.setattr(gltf, "_mesh_pieces", recorded)
    start = time.perf_counter()
    # Past the scene node budget (core/content_limits.py): read with --allow-large.
    code, _, err = in_process_cli(
        "model", "import", str(tmp_path / "many.glb"), "--into", str(odd_track), "--allow-large"
    )
    seconds = time.perf_counter() - start
    assert code == 0 and f"{count} added" in err, err[-500:]
    assert decoded == [mesh]  # one mesh, decoded once
    assert seconds < 120  # minutes before (222 s in the campaign); seconds now
    members = pack_members(odd_track / "objects" / "objects.jpk")
    assert set(members) == {"wall.joe", "road.joe", "leaf.joe", "n0.joe"}  # one new model, shared
    assert (odd_track / "objects" / "list.txt").read_bytes().count(b"\nn0.joe\n") == count


def test_a_value_edited_in_extras_rewrites_only_its_token(odd_track: Path, tmp_path: Path) -> None:
    found = scene.load(odd_track)
    nodes = {node.name: node for node in found.root.walk()}
    nodes["road.joe"].extras = {"vdrift": {**nodes["road.joe"].extras["vdrift"], "mipmap": 0, "friction_tread": 0.5}}
    scene.save(found, tmp_path / "values.glb")
    list_path = odd_track / "objects" / "list.txt"
    before = list_path.read_bytes()
    stored = pack_members(odd_track / "objects" / "objects.jpk")
    code, _, err = in_process_cli("model", "import", str(tmp_path / "values.glb"), "--into", str(odd_track))
    assert code == 0 and "changed: road.joe (list.txt mipmap, friction_tread)" in err, err
    after = list_path.read_bytes()
    old_line = list_line("road.joe", "asphalt.png", mipmap=1, surface=1).encode()
    new_line = old_line.replace(b"asphalt.png 1 ", b"asphalt.png 0 ").replace(
        b" 0 0 0 0 0 0 0 0 0 1", b" 0 0 0 0 0.5 0 0 0 0 1"
    )
    assert old_line in before and after == before.replace(old_line, new_line), (old_line, after)
    assert pack_members(odd_track / "objects" / "objects.jpk") == stored


# ------------------------------------------------------------------------------- Blender


BLENDER_PYTHON = os.environ.get("GAMEPAK_BLENDER_PYTHON", "")
ROUND_TRIP = """
import sys, bpy
bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.ops.import_scene.gltf(filepath=sys.argv[1])
bpy.ops.export_scene.gltf(filepath=sys.argv[2])
"""


def _through_blender(source: Path, out: Path) -> None:
    """`source` imported into Blender and exported again, both with Blender's defaults."""
    import subprocess

    subprocess.run(
        [BLENDER_PYTHON, "-c", ROUND_TRIP, str(source), str(out)], check=True, capture_output=True, timeout=600
    )


@pytest.mark.skipif(
    not (BLENDER_PYTHON and Path(BLENDER_PYTHON).exists()),
    reason="Blender's bpy (GAMEPAK_BLENDER_PYTHON, made by `make test`) is not available",
)
@pytest.mark.parametrize("which", ["odd", "garage"])
def test_a_blender_round_trip_with_its_defaults_changes_no_object(odd_track: Path, tmp_path: Path, which: str) -> None:
    import shutil

    from conftest import sample

    if which == "garage":
        track = tmp_path / "garage"
        shutil.copytree(sample("vdrift/garage"), track)
        for path in track.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        objects = 35
    else:
        track, objects = odd_track, 4
    before = files_with_times(track)
    scene.save(scene.load(track), tmp_path / "exported.glb")
    _through_blender(tmp_path / "exported.glb", tmp_path / "blender.glb")
    code, _, err = in_process_cli("model", "import", str(tmp_path / "blender.glb"), "--into", str(track))
    assert code == 0 and f"unchanged ({objects} objects" in err, err
    assert files_with_times(track) == before
