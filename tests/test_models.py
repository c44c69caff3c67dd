"""JOE v3 models: reading, validation, byte-exact rewriting, OBJ/glTF/PLY conversion, the
preview renderer and the `gamepak model` commands."""

from __future__ import annotations

import base64
import io
import json
import struct
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gamepak
from gamepak import models
from gamepak.core.source import Source
from gamepak.errors import CorruptArchiveError, FormatLimitError, GamepakError
from gamepak.models import gltf, joe, obj, ply
from gamepak.models.mesh import Mesh, ModelError

from conftest import SAMPLES, gltf_validator_errors, in_process_cli, sample, sample_cases

PACK = "jpk/garage_objects.jpk"
# Stand-ins written by gamepak's own writer for the real models, used when ../shared/samples is
# absent: (faces, seed) per model. Their values are all distinct, as the real models' are.
STANDIN_MODELS = {"joe/road_cone.joe": (20, 1), "joe/toolbox.joe": (30, 2), "joe/road_cone-collision.joe": (12, 3)}
STANDIN_MEMBERS = {"joist.007.joe": (10, 4), "Cube.002.joe": (12, 5), "Wall.017.joe": (24, 6), "Floor.002.joe": (2, 7)}


def standin_model(face_count: int, seed: int) -> bytes:
    """A JOE model of random distinct positions, unit normals and texture coordinates."""
    rng = np.random.default_rng(seed)
    vertex_count, normal_count, texcoord_count = face_count + 2, face_count // 2 + 1, face_count + 3
    normals = rng.normal(size=(normal_count, 3))
    corners = np.stack(
        [rng.integers(0, count, (face_count, 3)) for count in (vertex_count, normal_count, texcoord_count)], axis=2
    )
    corners[0, :, 0] = [0, 1, 2]  # no face uses one index twice in its first corners: never degenerate
    mesh = Mesh(
        rng.uniform(-1, 1, (vertex_count, 3)),
        normals / np.linalg.norm(normals, axis=1, keepdims=True),
        rng.uniform(0, 1, (texcoord_count, 2)),
        corners,
        magic=b"IDP2",
    )
    return joe.write(mesh)


def sample_path(relative: str, folder: Path) -> Path:
    """The real sample when ../shared/samples has it, else its stand-in written into `folder`."""
    real = SAMPLES / relative
    if real.exists():
        return real
    target = folder / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    if relative == PACK:
        with gamepak.create(target, "jpk", overwrite=True) as writer:
            for name, (faces, seed) in STANDIN_MEMBERS.items():
                writer.add(name, standin_model(faces, seed))
    else:
        target.write_bytes(standin_model(*STANDIN_MODELS[relative]))
    return target


def _sample_ids() -> list[str]:
    """Every real model: standalone files and the members of the garage pack (or stand-ins)."""
    ids = [f"joe/{path.name}" for path in sorted((SAMPLES / "joe").glob("*.joe"))]
    pack = SAMPLES / PACK
    if pack.exists():
        with gamepak.open(pack) as opened:
            ids += [f"{PACK}:{name}" for name in opened.namelist()]
    return sample_cases(__file__, ids, [*STANDIN_MODELS, *(f"{PACK}:{name}" for name in STANDIN_MEMBERS)])


SAMPLE_IDS = _sample_ids()


def sample_bytes(sample_id: str) -> bytes:
    """A real model's bytes (a file, or PACK:MEMBER), or its stand-in's."""
    relative, _, member = sample_id.partition(":")
    if not (SAMPLES / relative).exists():
        return standin_model(*(STANDIN_MEMBERS[member] if member else STANDIN_MODELS[relative]))
    if member:
        with gamepak.open(SAMPLES / relative) as opened:
            return opened.read(member)
    return (SAMPLES / relative).read_bytes()


def triangle_bytes(magic: bytes = b"IDP2", texcoords: bool = True) -> bytes:
    """The smallest model the spec allows, built by hand: one triangle, one frame."""
    texcoord_count = 3 if texcoords else 0
    data = struct.pack("<4siii", magic, 3, 1, 1)
    # Face: vertex indices, normal indices, texcoord indices (faces come before the frame header).
    data += struct.pack("<9H", 0, 1, 2, 0, 0, 0, *((0, 1, 2) if texcoords else (0, 0, 0)))
    data += struct.pack("<iii", 3, texcoord_count, 1)  # verts, texcoords, normals
    data += struct.pack("<9f", 0, 0, 0, 1, 0, 0, 0, 1, 0)
    data += struct.pack("<3f", 0, 0, 1)  # normals come before texcoords on disk
    if texcoords:
        data += struct.pack("<6f", 0, 0, 1, 0, 0, 1)
    return data


def assert_same_geometry(original: Mesh, other: Mesh, *, unit_normals: bool = False) -> None:
    """Per-corner positions, normals and texcoords equal within float32 rounding."""
    assert other.face_count == original.face_count
    positions, normals, texcoords = original.corner_values()
    other_positions, other_normals, other_texcoords = other.corner_values()
    np.testing.assert_allclose(other_positions, positions, rtol=1e-6, atol=1e-6)
    assert (normals is None) == (other_normals is None)
    if normals is not None and other_normals is not None:
        if unit_normals:
            normals = normals / np.linalg.norm(normals, axis=2, keepdims=True)
        np.testing.assert_allclose(other_normals, normals, rtol=1e-5, atol=1e-6)
    assert (texcoords is None) == (other_texcoords is None)
    if texcoords is not None and other_texcoords is not None:
        np.testing.assert_allclose(other_texcoords, texcoords, rtol=1e-6, atol=1e-6)


# ----------------------------------------------------------------------------- real samples


@pytest.mark.parametrize("sample_id", SAMPLE_IDS)
def test_sample_reads_validates_and_rewrites_identically(sample_id: str) -> None:
    data = sample_bytes(sample_id)
    assert joe.sniff(Source.open(io.BytesIO(data))) > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no sample has NaNs or trailing bytes
        mesh = joe.read(data, name=sample_id)
    assert mesh.issues == []
    assert mesh.bad_indices() == []
    assert mesh.face_count > 0 and len(mesh.positions) > 0
    assert joe.write(mesh) == data


@pytest.mark.parametrize("sample_id", SAMPLE_IDS)
@pytest.mark.parametrize("format_name", ["glb", "gltf", "obj", "ply"])
def test_sample_converts_and_comes_back(sample_id: str, format_name: str) -> None:
    mesh = joe.read(sample_bytes(sample_id))
    exported = models.dumps(mesh, format_name)
    back = models.loads(exported, format_name)
    assert_same_geometry(mesh, back, unit_normals=format_name in ("glb", "gltf"))
    # And on to JOE again: a valid model that reads back with the same geometry.
    again = joe.read(joe.write(back.with_normals()))
    assert_same_geometry(mesh, again, unit_normals=format_name in ("glb", "gltf"))


def test_obj_keeps_the_original_indexing() -> None:
    data = sample_bytes("joe/toolbox.joe")
    mesh = joe.read(data)
    back = obj.read(obj.write(mesh))
    back.magic = mesh.magic
    assert joe.write(back) == data


def test_library_load_and_load_member(tmp_path: Path) -> None:
    mesh = models.load(sample_path("joe/road_cone.joe", tmp_path / "in"))
    assert mesh.name == "road_cone"
    member = models.load_member(sample_path(PACK, tmp_path / "in"), "joist.007.joe")
    assert member.name == "joist.007" and member.face_count == 10
    written = models.save(member, tmp_path / "joist.glb")
    assert written == [str(tmp_path / "joist.glb")]
    with pytest.raises(gamepak.OutputExistsError):
        models.save(member, tmp_path / "joist.glb")
    models.save(member, tmp_path / "joist.glb", overwrite=True)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left


# --------------------------------------------------------------------------- the spec model


def test_minimal_triangle_from_the_spec() -> None:
    data = triangle_bytes()
    assert len(data) == 16 + 18 + 12 + 36 + 12 + 24
    mesh = joe.read(data)
    assert mesh.magic == b"IDP2"
    assert mesh.corners.tolist() == [[[0, 0, 0], [1, 0, 1], [2, 0, 2]]]
    assert mesh.positions.tolist() == [[0, 0, 0], [1, 0, 0], [0, 1, 0]]
    assert mesh.normals.tolist() == [[0, 0, 1]]
    assert mesh.texcoords.tolist() == [[0, 0], [1, 0], [0, 1]]
    assert joe.write(mesh) == data
    assert joe.sniff(Source.open(io.BytesIO(data))) == 1.0
    assert gamepak.detect(io.BytesIO(data))[0].format == "joe"


def test_any_magic_is_kept_and_idp2_is_the_default() -> None:
    for magic in (b"\0\0\0\0", b"ABCD"):
        data = triangle_bytes(magic)
        assert joe.write(joe.read(data)) == data
    mesh = joe.read(triangle_bytes(b"ABCD"))
    mesh.magic = None
    assert joe.write(mesh)[:4] == b"IDP2"


def test_texcoord_count_zero_is_allowed() -> None:
    data = triangle_bytes(texcoords=False)
    mesh = joe.read(data)
    assert len(mesh.texcoords) == 0
    assert joe.write(mesh) == data
    for format_name in ("glb", "obj", "ply"):
        back = models.loads(models.dumps(mesh, format_name), format_name)
        assert len(back.texcoords) == 0
        assert_same_geometry(mesh, back, unit_normals=True)


def test_extra_frames_are_read_and_written() -> None:
    single = triangle_bytes()
    frame = single[16:]
    data = struct.pack("<4siii", b"IDP2", 3, 1, 2) + frame + frame[:-4] + struct.pack("<f", 0.5)
    mesh = joe.read(data)
    assert len(mesh.frames) == 2
    assert mesh.extra_frames[0].texcoords[-1].tolist() == [0, 0.5]
    assert joe.write(mesh) == data


# ----------------------------------------------------------------------------- bad inputs


def corrupt_offset(data: bytes) -> CorruptArchiveError:
    with pytest.raises(CorruptArchiveError) as caught:
        joe.read(data, path="bad.joe")
    assert caught.value.path == "bad.joe"
    return caught.value


def test_index_past_its_array_names_the_offset() -> None:
    data = bytearray(triangle_bytes())
    struct.pack_into("<H", data, 16 + 6 + 2, 5)  # normal index of corner 1: only 1 normal
    error = corrupt_offset(bytes(data))
    assert error.offset == 16 + 8
    assert "normal index 5" in str(error)
    data = bytearray(triangle_bytes())
    struct.pack_into("<H", data, 16 + 4, 3)  # vertex index of corner 2
    assert corrupt_offset(bytes(data)).offset == 20


def test_counts_that_do_not_fit_are_refused_before_allocating() -> None:
    data = bytearray(triangle_bytes())
    struct.pack_into("<i", data, 16 + 18, 0x7FFFFFF0)  # a huge vertex count
    error = corrupt_offset(bytes(data))
    assert "past the end" in str(error) and error.offset == 34
    # Many frames of many faces in a tiny file.
    header = struct.pack("<4siii", b"IDP2", 3, 32000, 0x7FFFFFFF)
    assert corrupt_offset(header + b"\0" * 100).offset == 12
    # Truncated anywhere: always a CorruptArchiveError, never a numpy or struct error.
    whole = triangle_bytes()
    for cut in range(len(whole)):
        with pytest.raises(CorruptArchiveError):
            joe.read(whole[:cut])


def test_negative_and_excessive_counts() -> None:
    data = bytearray(triangle_bytes())
    struct.pack_into("<i", data, 16 + 18 + 8, -1)
    assert "negative normal count" in str(corrupt_offset(bytes(data)))
    too_many = struct.pack("<4siii", b"IDP2", 3, 32001, 1) + b"\0" * (32001 * 18 + 12)
    assert "at most 32000" in str(corrupt_offset(too_many))
    assert "version 4" in str(corrupt_offset(struct.pack("<4siii", b"IDP2", 4, 1, 1) + triangle_bytes()[16:]))
    assert "at least one frame" in str(corrupt_offset(struct.pack("<4siii", b"IDP2", 3, 1, 0)))


def test_non_finite_coordinates_warn_and_are_listed() -> None:
    data = bytearray(triangle_bytes())
    struct.pack_into("<f", data, 16 + 18 + 12 + 12, float("nan"))
    struct.pack_into("<f", data, 16 + 18 + 12 + 24, float("inf"))
    with pytest.warns(UserWarning, match="NaN or infinite"):
        mesh = joe.read(bytes(data))
    assert mesh.issues and "2 of the 3 positions" in mesh.issues[0]
    assert joe.write(mesh) == bytes(data)  # kept as they are
    assert mesh.summary()["issues"] == mesh.issues


def test_text_named_joe_gets_a_clear_message(tmp_path: Path) -> None:
    text = b"# VDrift object list\nmodel = cone.joe\ntexture = cone.png\n"
    with pytest.raises(CorruptArchiveError, match="looks like a text file, not a JOE model"):
        joe.read(text)
    with pytest.raises(CorruptArchiveError, match="looks like a text file"):
        joe.read(b"hi\n")
    assert joe.sniff(Source.open(io.BytesIO(text))) == 0.0
    path = tmp_path / "list.joe"
    path.write_bytes(text)
    code, _, err = in_process_cli("model", "info", str(path))
    assert code == 1 and "looks like a text file, not a JOE model" in err and err.count("\n") == 1


def test_sniff_needs_an_exact_size_not_an_extension() -> None:
    data = triangle_bytes()
    assert joe.sniff(Source.open(io.BytesIO(data + b"\0"))) == 0.0
    assert joe.sniff(Source.open(io.BytesIO(data[:-1]))) == 0.0
    assert joe.sniff(Source.open(io.BytesIO(data[:10]))) == 0.0
    assert gamepak.detect(io.BytesIO(data), name="anything.bin")[0].format == "joe"


def test_trailing_bytes_are_an_issue_not_an_error() -> None:
    with pytest.warns(UserWarning, match="after the last frame"):
        mesh = joe.read(triangle_bytes() + b"junk")
    assert mesh.issues


@settings(max_examples=50, deadline=None)
@given(st.binary(min_size=0, max_size=200), st.integers(0, 3))
def test_random_bytes_only_raise_gamepak_errors(noise: bytes, prefix: int) -> None:
    heads = [b"", struct.pack("<4si", b"IDP2", 3), struct.pack("<4siii", b"IDP2", 3, 1, 1), triangle_bytes()[:40]]
    data = heads[prefix] + noise
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mesh = joe.read(data)
    except GamepakError:
        return
    assert joe.write(mesh)[4:] == data[4 : len(joe.write(mesh))]


# ---------------------------------------------------------------------------- round trips


@st.composite
def meshes(draw: st.DrawFn) -> Mesh:
    floats = st.floats(-1000, 1000, allow_nan=False, width=32)
    vertex_count = draw(st.integers(3, 12))
    normal_count = draw(st.integers(1, 6))
    texcoord_count = draw(st.sampled_from([0, 1, 5]))
    face_count = draw(st.integers(1, 10))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    positions = np.array(draw(st.lists(floats, min_size=vertex_count * 3, max_size=vertex_count * 3)), np.float32)
    normals = rng.normal(size=(normal_count, 3)).astype(np.float32)
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    texcoords = rng.uniform(-2, 2, size=(texcoord_count, 2)).astype(np.float32)
    corners = np.stack(
        [
            rng.integers(0, vertex_count, (face_count, 3)),
            rng.integers(0, normal_count, (face_count, 3)),
            rng.integers(0, max(texcoord_count, 1), (face_count, 3)),
        ],
        axis=2,
    )
    return Mesh(positions, normals, texcoords, corners)


@settings(max_examples=50, deadline=None)
@given(meshes())
def test_random_meshes_round_trip_through_every_format(mesh: Mesh) -> None:
    data = joe.write(mesh)
    assert joe.write(joe.read(data)) == data
    for format_name in ("glb", "obj", "ply"):
        back = models.loads(models.dumps(mesh, format_name), format_name)
        assert_same_geometry(mesh, back, unit_normals=True)


def test_obj_polygons_become_fans_and_negative_indices_resolve() -> None:
    text = b"""# a quad and a pentagon, relative indices on the second
v 0 0 0
v 1 0 0
v 1 1 0
v 0 1 0
vt 0 0
vn 0 0 1
f 1/1/1 2/1/1 3/1/1 4/1/1
v -0.5 0.5 0
f -5 -4 -3 -2 -1
"""
    mesh = obj.read(text)
    assert mesh.face_count == 2 + 3
    assert mesh.corners[:2, :, 0].tolist() == [[0, 1, 2], [0, 2, 3]]
    assert mesh.corners[2:, :, 0].tolist() == [[0, 1, 2], [0, 2, 3], [0, 3, 4]]
    # Corners without a normal took their face's flat normal; without texcoords, (0, 0). The
    # quad's `vt 0 0` is the image's bottom-left corner: JOE's (0, 1), v counted from the top.
    _, normals, texcoords = mesh.corner_values()
    assert normals is not None and texcoords is not None
    assert np.allclose(normals, [0, 0, 1])
    assert np.allclose(texcoords[:2], [0, 1]) and np.allclose(texcoords[2:], 0)
    assert joe.read(joe.write(mesh)).face_count == 5
    with pytest.raises(ModelError, match="past"):
        obj.read(b"v 0 0 0\nf 1 2 3\n")


def test_import_refuses_models_past_joes_limits() -> None:
    rng = np.random.default_rng(1)
    face_count = 32001
    up = np.array([[0, 0, 1]], np.float32)
    big = Mesh(rng.normal(size=(3, 3)), up, np.zeros((0, 2)), np.zeros((face_count, 3, 3), np.int64))
    big.corners[:, :, 0] = [0, 1, 2]
    with pytest.raises(FormatLimitError, match="at most 32000"):
        joe.write(big)
    wide = Mesh(rng.normal(size=(70000, 3)), up, np.zeros((0, 2)), np.zeros((1, 3, 3), np.int64))
    with pytest.raises(FormatLimitError, match="65536"):
        joe.write(wide)


def test_gltf_reader_applies_node_transforms_and_strips() -> None:
    import pygltflib

    mesh = joe.read(triangle_bytes())
    document = gltf.build(mesh)
    document.nodes[0].translation = [0.0, 10.0, 0.0]  # +Y in glTF is +Z in JOE
    blob = document.binary_blob()
    text = document.gltf_to_json()
    document = pygltflib.GLTF2.from_json(text)
    document.set_binary_blob(blob)
    back = gltf.read(gltf._glb(document.gltf_to_json().encode(), blob))
    positions, _, _ = back.corner_values()
    np.testing.assert_allclose(positions - [0, 0, 10], mesh.corner_values()[0], atol=1e-6)
    from gamepak.models import gltf_read

    strip = gltf_read._triangles(np.arange(5), gltf.TRIANGLE_STRIP)
    assert strip.tolist() == [[0, 1, 2], [2, 1, 3], [2, 3, 4]]


def test_bad_gltf_and_ply_give_model_errors() -> None:
    good = models.dumps(joe.read(triangle_bytes()), "glb")
    for data in (b"glTF" + good[4:40], b"{not json", good[:-8]):
        with pytest.raises(GamepakError):
            gltf.read(data)
    for data in (
        b"ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nend_header\n1\n",
        b"ply\nformat binary_little_endian 1.0\nelement vertex 9\nproperty float x\nproperty float y\n"
        b"property float z\nend_header\n\0\0",
    ):
        with pytest.raises(ModelError):
            ply.read(data)


def _gltf_document() -> dict:
    """A one-triangle `.gltf` as gamepak writes it, as JSON (its buffer a data URI)."""
    return json.loads(models.dumps(joe.read(triangle_bytes()), "gltf"))


def test_gltf_vertex_attributes_of_the_wrong_shape_are_refused() -> None:
    # Found by fuzz_read_model: a POSITION accessor of two components, or a NORMAL accessor with
    # fewer values than the vertices, reached the mesh code as numpy's ValueError or IndexError.
    for attribute, change, message in (
        ("POSITION", {"type": "VEC2"}, r"POSITION has 2 components, not 3"),
        ("NORMAL", {"count": 0}, r"0 NORMAL values for 3 vertices"),
        ("TEXCOORD_0", {"type": "SCALAR"}, r"TEXCOORD_0 has 1 components, not 2"),
    ):
        document = _gltf_document()
        accessor = document["meshes"][0]["primitives"][0]["attributes"][attribute]
        document["accessors"][accessor].update(change)
        document["accessors"][accessor].pop("min", None)
        document["accessors"][accessor].pop("max", None)
        with pytest.raises(ModelError, match=rf"a primitive of mesh 0: {message}"):
            gltf.read(json.dumps(document).encode())


def test_ply_faces_whose_indices_are_not_a_list_are_refused() -> None:
    # Found by fuzz_read_model: `property int vertex_indices` (one number a face) let a TypeError out.
    text = (
        b"ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
        b"element face 1\nproperty int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n2\n"
    )
    with pytest.raises(ModelError, match="vertex_indices is one number per face, not a list property"):
        ply.read(text)
    # Found by fuzz_read_model: an index past 64 bits let numpy's OverflowError out.
    huge = text.replace(b"property int vertex_indices", b"property list uchar int vertex_indices")
    huge = huge.replace(b"\n2\n", b"\n3 0 1 " + b"6" * 30 + b"\n")
    with pytest.raises(ModelError, match="PLY element 'face' is truncated or malformed"):
        ply.read(huge)
    # A list property with no faces at all is still a list: an empty model reads back.
    empty = Mesh.from_vertices(np.zeros((0, 3), np.float32), np.zeros((0, 3), np.int64))
    assert ply.read(models.dumps(empty, "ply")).face_count == 0


def test_gltf_nodes_reached_twice_are_refused() -> None:
    # Found by reading: nodes were only limited to 64 levels, so ten nodes each naming the next
    # one twice drew the mesh 1,024 times (64 such nodes: 2**64, a hang from a 2 KB file).
    document = _gltf_document()
    mesh = document["nodes"][0]["mesh"]
    document["nodes"] = [{"children": [number + 1, number + 1]} for number in range(10)] + [{"mesh": mesh}]
    document["scenes"] = [{"nodes": [0]}]
    with pytest.raises(ModelError, match=r"node \d+ is reached twice"):
        gltf.read(json.dumps(document).encode())


def test_a_gltf_accessor_of_zeros_is_sized_by_the_models_data() -> None:
    # Found by reading: an accessor without a buffer view is zeros, allocated from its count
    # alone: 2**40 positions asked numpy for 13 TB.
    document = _gltf_document()
    position = document["meshes"][0]["primitives"][0]["attributes"]["POSITION"]
    document["accessors"][position].pop("bufferView")
    document["accessors"][position]["count"] = 1 << 40
    with pytest.raises(ModelError, match=f"accessor {position} holds {1 << 40} values of zeros"):
        gltf.read(json.dumps(document).encode())


def test_a_ply_element_without_properties_is_not_walked_record_by_record() -> None:
    # Found by reading: an ASCII element with no properties was walked once per record it
    # claimed, reading nothing: `element junk 100000000` took 7 s, a larger count forever.
    import signal

    def too_slow(*_: object) -> None:
        raise TimeoutError("the PLY reader walked the empty records")

    for encoding, body in (("ascii", b"0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n"), ("binary_little_endian", None)):
        header = (
            f"ply\nformat {encoding} 1.0\nelement junk {10**18}\nelement vertex 3\nproperty float x\n"
            "property float y\nproperty float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n"
        ).encode()
        if body is None:
            body = struct.pack("<9f", 0, 0, 0, 1, 0, 0, 0, 1, 0) + struct.pack("<B3i", 3, 0, 1, 2)
        previous = signal.signal(signal.SIGALRM, too_slow)
        signal.alarm(10)
        try:
            assert ply.read(header + body).face_count == 1
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)


def test_ascii_ply_is_read() -> None:
    text = b"""ply
format ascii 1.0
element vertex 4
property float x
property float y
property float z
element face 1
property list uchar int vertex_indices
end_header
0 0 0
1 0 0
1 1 0
0 1 0
4 0 1 2 3
"""
    mesh = ply.read(text).with_normals()
    assert mesh.face_count == 2 and len(mesh.positions) == 4


# ------------------------------------------------------------------------- glTF-Validator


def test_exported_gltf_passes_the_khronos_validator(gltf_validator: Path, tmp_path: Path) -> None:
    files = []
    for number, sample_id in enumerate(SAMPLE_IDS):
        mesh = joe.read(sample_bytes(sample_id))
        files += models.save(mesh, tmp_path / f"model{number}.glb")
    mesh = joe.read(sample_bytes("joe/road_cone.joe"))
    files += models.save(mesh, tmp_path / "cone.gltf")
    # A texture: referenced from .gltf, embedded in .glb.
    from PIL import Image

    Image.new("RGB", (4, 4), (200, 80, 20)).save(tmp_path / "cone.png")
    files += models.save(mesh, tmp_path / "textured.gltf", texture="cone.png")
    files += models.save(mesh, tmp_path / "textured.glb", texture="cone.png")
    # Zero normals and no texcoords still validate.
    odd = joe.read(triangle_bytes(texcoords=False))
    odd.normals[:] = 0
    files += models.save(odd, tmp_path / "zero_normals.glb")
    files += models.save(
        Mesh(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 2)), np.zeros((0, 3, 3))), tmp_path / "empty.glb"
    )
    # A concave polygon cut by ear clipping (flat normals added, as `model import` does).
    files += models.save(models.loads(CONCAVE_PENTAGON, "obj").with_normals(), tmp_path / "concave.glb")
    assert not gltf_validator_errors(gltf_validator, files)


# ------------------------------------------------------------------------------- rendering


def assert_framed(picture: object, size: int) -> None:
    from gamepak.models.render import BACKGROUND

    pixels = np.asarray(picture)
    assert pixels.shape == (size, size, 3)
    drawn = (pixels != BACKGROUND).any(axis=2)
    assert drawn.mean() > 0.03, "the image is (nearly) blank"
    middle = drawn[size // 4 : 3 * size // 4, size // 4 : 3 * size // 4]
    assert middle.any(), "nothing drawn in the middle"
    assert not drawn[0].any() and not drawn[-1].any() and not drawn[:, 0].any() and not drawn[:, -1].any(), (
        "the model touches the edge of the image"
    )


@pytest.mark.parametrize("sample_id", ["joe/road_cone.joe", "joe/toolbox.joe", f"{PACK}:Cube.002.joe"])  # or stand-ins
def test_render_draws_the_model_framed(sample_id: str) -> None:
    from gamepak.models.render import render

    mesh = joe.read(sample_bytes(sample_id))
    assert_framed(render(mesh, 128), 128)
    # Moving and scaling the model changes nothing about the framing.
    mesh.positions = mesh.positions * 1000 + 5000
    assert_framed(render(mesh, 96), 96)


def test_render_refuses_a_model_with_nothing_to_draw() -> None:
    from gamepak.models.render import render

    mesh = joe.read(triangle_bytes())
    mesh.positions[:] = np.nan
    with pytest.raises(ModelError, match="nothing|no faces"):
        render(mesh, 64)


# ------------------------------------------------------------------------------------- CLI


def test_cli_export_archive_member_and_overwrite(tmp_path: Path) -> None:
    pack = str(sample_path(PACK, tmp_path / "in"))
    out = tmp_path / "joist.glb"
    code, _, err = in_process_cli("model", "export", pack, "joist.007.joe", "-o", str(out))
    assert code == 0, err
    back = gltf.read(out.read_bytes())
    assert_same_geometry(models.load_member(pack, "joist.007.joe"), back, unit_normals=True)
    code, _, err = in_process_cli("model", "export", pack, "joist.007.joe", "-o", str(out))
    assert code == 1 and "already exists" in err
    code, _, err = in_process_cli("model", "export", pack, "no-such.joe", "-o", str(tmp_path / "x.glb"))
    assert code == 1 and "no-such.joe" in err
    code, _, err = in_process_cli("model", "export", pack, "-o", str(tmp_path / "y.glb"))
    assert code == 1 and "ARCHIVE MEMBER" in err


def test_cli_export_obj_with_texture_and_import_back(tmp_path: Path) -> None:
    model = str(sample_path("joe/road_cone.joe", tmp_path / "in"))
    code, _, err = in_process_cli("model", "export", model, "-o", str(tmp_path / "cone.obj"), "--texture", "cone.png")
    assert code == 0, err
    assert b"map_Kd cone.png" in (tmp_path / "cone.mtl").read_bytes()
    assert b"mtllib cone.mtl" in (tmp_path / "cone.obj").read_bytes()
    for source in ("cone.obj",):
        code, _, err = in_process_cli("model", "import", str(tmp_path / source), "-o", str(tmp_path / "cone.joe"))
        assert code == 0, err
    original = models.load(model)
    assert (tmp_path / "cone.joe").read_bytes() == Path(model).read_bytes()  # OBJ keeps the indexing
    code, _, err = in_process_cli("model", "export", model, "-o", str(tmp_path / "cone.glb"))
    assert code == 0, err
    code, _, err = in_process_cli("model", "import", str(tmp_path / "cone.glb"), "-o", str(tmp_path / "from_glb.joe"))
    assert code == 0, err
    assert_same_geometry(original, models.load(tmp_path / "from_glb.joe"), unit_normals=True)
    code, _, err = in_process_cli("model", "export", model, "-o", str(tmp_path / "cone.ply"))
    assert code == 0 and (tmp_path / "cone.ply").read_bytes().startswith(b"ply\n")


def test_cli_info_json(tmp_path: Path) -> None:
    code, out, err = in_process_cli("model", "info", str(sample(PACK)), "Wall.017.joe", "--json")
    assert code == 0, err
    details = json.loads(out)
    assert details["member"] == "Wall.017.joe"
    assert (details["faces"], details["positions"], details["normals"], details["texcoords"]) == (24, 18, 12, 22)
    assert details["issues"] == []
    assert details["bounds"]["min"][0] == pytest.approx(-4.06713, abs=1e-4)
    assert details["texcoord_range"]["max"][1] == pytest.approx(0.99219, abs=1e-4)
    code, out, _ = in_process_cli("model", "info", str(sample("joe/toolbox.joe")))
    assert code == 0 and "faces: 65" in out


def test_cli_render(tmp_path: Path) -> None:
    from PIL import Image

    out = tmp_path / "preview.png"
    toolbox = sample_path("joe/toolbox.joe", tmp_path / "in")
    code, _, err = in_process_cli("model", "render", str(toolbox), "-o", str(out), "--size", "160")
    assert code == 0, err
    with Image.open(out) as picture:
        assert_framed(picture.convert("RGB"), 160)
    pack = sample_path(PACK, tmp_path / "in")
    code, _, err = in_process_cli("model", "render", str(pack), "Floor.002.joe", "-o", str(out))
    assert code == 1 and "already exists" in err


def test_cli_export_all(tmp_path: Path) -> None:
    pack = sample_path(PACK, tmp_path / "in")
    code, _, err = in_process_cli("model", "export-all", str(pack), "-o", str(tmp_path / "out"))
    assert code == 0, err
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    with gamepak.open(pack) as opened:
        names = opened.namelist()
    assert written == sorted(name[:-4] + ".glb" for name in names)
    code, _, err = in_process_cli("model", "export-all", str(pack), "-o", str(tmp_path / "out"))
    assert code == 1 and "already exists" in err
    code, _, err = in_process_cli("model", "export-all", str(pack), "-o", str(tmp_path / "obj"), "--format", "obj")
    assert code == 0 and len(list((tmp_path / "obj").iterdir())) == len(names)


def test_cli_export_all_skips_non_models(tmp_path: Path) -> None:
    source = tmp_path / "mixed.jpk"
    with gamepak.create(source, "jpk") as writer:
        writer.add("cone.joe", triangle_bytes())
        writer.add("list.txt", b"just some text\n")
        writer.add("notes.joe", b"a text file named like a model\n")
    code, _, err = in_process_cli("model", "export-all", str(source), "-o", str(tmp_path / "out"))
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["cone.glb"]
    assert "skipped 1 member that is not a model: list.txt" in err
    assert "skipped notes.joe" in err and "looks like a text file" in err


def test_import_gamepak_does_not_load_numpy() -> None:
    code = "import sys, gamepak; gamepak.detect; print('numpy' in sys.modules, 'pygltflib' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "False False"


# ------------------------------------------------------------------- traps a new user hit


CONCAVE_PENTAGON = b"""# an arrow-head: corner 1 is reflex, so a fan from corner 0 covers area outside it
v 0 0 0
v 2 1 0
v 4 0 0
v 4 3 0
v 0 3 0
f 1 2 3 4 5
"""


def triangle_areas(mesh: Mesh) -> np.ndarray:
    """Signed areas (+ for counter-clockwise seen from +Z) of the faces of a flat mesh."""
    corners = mesh.positions[mesh.corners[:, :, 0]].astype(np.float64)
    edges_a, edges_b = corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0]
    return 0.5 * (edges_a[:, 0] * edges_b[:, 1] - edges_a[:, 1] * edges_b[:, 0])


@pytest.mark.parametrize("reverse", [False, True])
def test_concave_polygons_are_cut_in_their_own_winding(reverse: bool) -> None:
    text = CONCAVE_PENTAGON
    if reverse:
        text = text.replace(b"f 1 2 3 4 5", b"f 5 4 3 2 1")
    mesh = obj.read(text)
    areas = triangle_areas(mesh)
    polygon_area = 4 * 3 - 0.5 * 4 * 1  # the rectangle minus the notch
    # Before: the fan from corner 0 gave a flipped face and covered the notch.
    assert mesh.face_count == 3
    assert np.allclose(abs(areas.sum()), polygon_area) and np.allclose(np.abs(areas).sum(), polygon_area)
    assert (areas < 0).all() if reverse else (areas > 0).all()
    # The same in PLY.
    ply_text = b"ply\nformat ascii 1.0\nelement vertex 5\nproperty float x\nproperty float y\nproperty float z\n"
    ply_text += b"element face 1\nproperty list uchar int vertex_indices\nend_header\n"
    ply_text += b"0 0 0\n2 1 0\n4 0 0\n4 3 0\n0 3 0\n5 0 1 2 3 4\n"
    assert np.allclose(triangle_areas(ply.read(ply_text)).sum(), polygon_area)
    # Convex polygons keep their fan.
    square = obj.read(b"v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\n")
    assert square.corners[:, :, 0].tolist() == [[0, 1, 2], [0, 2, 3]]


def test_concave_polygon_in_a_tilted_plane() -> None:
    rotation = np.array([[1, 0, 0], [0, 0.6, -0.8], [0, 0.8, 0.6]])
    flat = obj.read(CONCAVE_PENTAGON)
    lines = ["v " + " ".join(f"{value:.9g}" for value in row) for row in flat.positions @ rotation.T]
    tilted = obj.read(("\n".join(lines) + "\nf 1 2 3 4 5\n").encode())
    assert sorted(map(sorted, tilted.corners[:, :, 0].tolist())) == sorted(map(sorted, flat.corners[:, :, 0].tolist()))
    normals = tilted.face_normals()
    assert np.allclose(normals, rotation @ [0, 0, 1], atol=1e-6)


def test_obj_repeated_vertices_are_merged_so_joe_can_hold_them(tmp_path: Path) -> None:
    # 23,000 triangles, each written with its own three `v` lines (69,000 of them), over a
    # grid of 12,000 distinct points: before, the 69,000 positions passed JOE's 65,536.
    rng = np.random.default_rng(7)
    grid = np.stack(np.meshgrid(np.arange(120), np.arange(100), [0.0]), axis=-1).reshape(-1, 3)
    picks = rng.integers(0, len(grid), size=(23000, 3))
    lines = [f"v {x:g} {y:g} {z:g}" for x, y, z in grid[picks].reshape(-1, 3)]
    lines += [f"f {3 * n + 1} {3 * n + 2} {3 * n + 3}" for n in range(len(picks))]
    path = tmp_path / "big.obj"
    path.write_text("\n".join(lines) + "\n")
    code, _, err = in_process_cli("model", "import", str(path), "-o", str(tmp_path / "big.joe"))
    assert code == 0, err
    mesh = models.load(tmp_path / "big.joe")
    assert len(mesh.positions) == len(np.unique(grid[picks].reshape(-1, 3), axis=0)) <= 12000
    file_corners = grid[picks]
    np.testing.assert_array_equal(mesh.corner_values()[0], file_corners[:, :, [0, 2, 1]] * [1, -1, 1])  # Y up


def test_obj_and_gltf_are_y_up_like_blender_and_up_changes_it(tmp_path: Path) -> None:
    mesh = joe.read(triangle_bytes())
    mesh.positions[:] = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
    text = models.dumps(mesh, "obj").decode()
    assert "v 1 3 -2\n" in text  # Z up in JOE, Y up in the OBJ file
    assert "v 1 2 3\n" in models.dumps(mesh, "obj", up="z").decode()
    assert "vn 0 1 -0\n" in text  # the normal turned too
    # OBJ and glTF agree, and both come back to JOE's axes.
    from_obj = models.loads(text.encode(), "obj")
    from_glb = models.loads(models.dumps(mesh, "glb"), "glb")
    np.testing.assert_array_equal(from_obj.corner_values()[0], mesh.corner_values()[0])
    np.testing.assert_array_equal(from_glb.corner_values()[0], mesh.corner_values()[0])
    assert models.DEFAULT_UP == {"joe": "z", "glb": "y", "gltf": "y", "obj": "y", "ply": "z"}
    # The CLI: --up on export and import.
    (tmp_path / "m.joe").write_bytes(joe.write(mesh))
    assert in_process_cli("model", "export", str(tmp_path / "m.joe"), "-o", str(tmp_path / "y.obj"))[0] == 0
    assert "v 1 3 -2\n" in (tmp_path / "y.obj").read_text()
    code, _, _ = in_process_cli("model", "export", str(tmp_path / "m.joe"), "-o", str(tmp_path / "z.obj"), "--up", "z")
    assert code == 0 and "v 1 2 3\n" in (tmp_path / "z.obj").read_text()
    code, _, err = in_process_cli(
        "model", "import", str(tmp_path / "z.obj"), "-o", str(tmp_path / "z.joe"), "--up", "z"
    )
    assert code == 0, err
    np.testing.assert_array_equal(models.load(tmp_path / "z.joe").positions, mesh.positions)
    code, _, err = in_process_cli(
        "model", "export", str(tmp_path / "m.joe"), "-o", str(tmp_path / "x.obj"), "--up", "x"
    )
    assert code == 2


def test_export_all_without_models_exits_1(tmp_path: Path) -> None:
    source = tmp_path / "table.jpk"
    with gamepak.create(source, "jpk") as writer:
        for number in range(5):
            writer.add(f"file{number}.xtbl", b"<root/>\n")
    code, _, err = in_process_cli("model", "export-all", str(source), "-o", str(tmp_path / "out"))
    assert code == 1
    assert "skipped 5 members that are not models: file0.xtbl, file1.xtbl, file2.xtbl and 2 more" in err
    assert "no model exported (5 members skipped)" in err
    assert not (tmp_path / "out").exists()


def test_joe_without_its_extension_and_with_trailing_bytes(tmp_path: Path) -> None:
    path = tmp_path / "model.bin"
    path.write_bytes(triangle_bytes() + b"\0" * 37)
    assert models.format_for_file(path) == "joe"
    assert models.format_for_data(path.read_bytes()) == "joe"
    code, _, err = in_process_cli("model", "export", str(path), "-o", str(tmp_path / "model.glb"))
    assert code == 0, err
    assert "37 bytes after the last frame are ignored" in err
    assert models.load(tmp_path / "model.glb").face_count == 1
    # Random bytes with trailing data are still not a model.
    (tmp_path / "noise.bin").write_bytes(b"\x01\x02\x03\x04" + triangle_bytes()[4:] + b"junk")
    assert models.format_for_file(tmp_path / "noise.bin") is None


@pytest.mark.parametrize("format_name", ["glb", "gltf", "obj", "ply"])
@pytest.mark.parametrize(
    ("where", "value"), [(16 + 18 + 12 + 4, float("nan")), (16 + 18 + 12 + 36 + 12 + 8, float("inf"))]
)
def test_non_finite_values_are_refused_by_every_exporter(
    tmp_path: Path, format_name: str, where: int, value: float
) -> None:
    data = bytearray(triangle_bytes())
    struct.pack_into("<f", data, where, value)  # a position's y, or a texcoord's u
    path = tmp_path / "bad.joe"
    path.write_bytes(bytes(data))
    with pytest.warns(UserWarning):
        mesh = models.load(path)
    # The value's vertex record: position 0 at byte 46, texcoord 1 at byte 102.
    kind, record = ("position 0", 46) if where < 16 + 18 + 12 + 36 else ("texcoord 1", 102)
    with pytest.raises(ModelError, match=rf"bad.joe: frame 0: {kind} \(.*(nan|inf).*\) at byte {record} is NaN"):
        models.dumps(mesh, format_name)
    code, _, err = in_process_cli("model", "export", str(path), "-o", str(tmp_path / f"out.{format_name}"))
    assert code == 1 and "internal error" not in err and "NaN or infinite" in err and f"byte {record}" in err
    assert not list(tmp_path.glob("out.*"))
    assert joe.write(mesh) == bytes(data)  # JOE keeps them as they are


def many_frames(frame_count: int, extra: bytes = b"") -> bytes:
    return struct.pack("<4siii", b"IDP2", 3, 0, frame_count) + struct.pack("<iii", 0, 0, 0) * frame_count + extra


def test_many_empty_frames_load_without_an_object_per_frame() -> None:
    import tracemalloc

    data = many_frames(100_000)
    tracemalloc.start()
    try:
        mesh = joe.read(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Before: numpy arrays for every frame (584 MB for 250,000 frames); now one table.
    assert peak < 24 << 20, f"{peak / 2**20:.0f} MiB"
    assert mesh.frame_count == 100_000
    assert joe.write(mesh) == data
    # Exporting frame 0 (turned to Y up) builds none of the others.
    assert models.dumps(mesh, "obj").startswith(b"#")
    assert isinstance(mesh.extra_frames, joe.FrameList) and not mesh.extra_frames._built
    assert mesh.extra_frames[-1].face_count == 0 and len(mesh.extra_frames[5:8]) == 3
    # Counts the file cannot hold are refused before any table is built.
    with pytest.raises(CorruptArchiveError, match="100001 frames of 0 faces need more"):
        joe.read(struct.pack("<4siii", b"IDP2", 3, 0, 100_001) + data[16:])


def frames_of(counts: list[int]) -> tuple[bytes, list[int]]:
    """A one-face model whose frames have the given vertex counts; returns the bytes and each
    frame's offset."""
    data = struct.pack("<4siii", b"IDP2", 3, 1, len(counts))
    offsets = []
    for count in counts:
        offsets.append(len(data))
        data += struct.pack("<9H", 0, 1, 2, 0, 0, 0, 0, 0, 0)
        data += struct.pack("<iii", count, 0, 1) + struct.pack(f"<{3 * count}f", *range(3 * count))
        data += struct.pack("<3f", 0, 0, 1)
    return data, offsets


def test_frames_of_different_sizes_are_checked_each() -> None:
    data, offsets = frames_of([3, 4, 3, 5, 3, 3, 6, 2])  # frame 7 has 2 vertices: index 2 is past them
    error = corrupt_offset(data)
    assert "frame 7 face 0 corner 2: vertex index 2 is past the 2 vertices" in str(error)
    assert error.offset == offsets[7] + 4
    data, offsets = frames_of([3, 4, 3, 5])
    mesh = joe.read(data)
    assert [len(frame.positions) for frame in mesh.frames] == [3, 4, 3, 5]
    assert joe.write(mesh) == data
    mesh.extra_frames[1].positions[0, 0] = 42.0  # an edited frame is written from its arrays
    assert joe.write(mesh) != data and joe.read(joe.write(mesh)).extra_frames[1].positions[0, 0] == 42.0
    broken = bytearray(data)
    nan_at = offsets[2] + 18 + 12 + 4 * 4
    struct.pack_into("<f", broken, nan_at, float("nan"))
    with pytest.warns(
        UserWarning,
        match=rf"frame 2: 1 of the 3 positions are NaN or infinite \(first: position 1 at byte {nan_at - 4}\)",
    ):
        joe.read(bytes(broken))


def test_model_info_of_a_large_joe_costs_about_twice_its_size(tmp_path: Path) -> None:
    """A 16 MB, 40-frame JOE: `model info` peaks well under 2x the file plus Python itself
    (it took ~7x: every float's running count for the NaN check, and the file read twice)."""
    import dataclasses
    import subprocess
    import sys

    import numpy as np

    from gamepak.models import Mesh, dumps
    from gamepak.models.joe import read

    rng = np.random.default_rng(0)
    mesh = Mesh.from_vertices(
        rng.random((20000, 3)).astype(np.float32).tolist(), rng.integers(0, 20000, (20000, 3)).tolist()
    )
    one = read(dumps(mesh, "joe"))
    path = tmp_path / "big.joe"
    path.write_bytes(dumps(dataclasses.replace(one, extra_frames=[one] * 39), "joe"))
    size_mib = path.stat().st_size / (1 << 20)
    script = (
        "import sys; from gamepak.cli import main; main(['model', 'info', sys.argv[1]]); "
        "print(next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM')) // 1024)"
    )
    baseline = (
        "import gamepak.models, gamepak.models.joe, numpy; "
        "print(next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM')) // 1024)"
    )
    peak = int(
        subprocess.run(
            [sys.executable, "-c", script, str(path)], capture_output=True, text=True, check=True
        ).stdout.split()[-1]
    )
    floor = int(
        subprocess.run([sys.executable, "-c", baseline], capture_output=True, text=True, check=True).stdout.split()[-1]
    )
    assert peak - floor < 2 * size_mib + 8, (peak, floor, size_mib)


def test_a_ply_property_declared_twice_is_one_clear_error() -> None:
    # Found by the fuzz tests: numpy refused the record type with its own ValueError.
    text = b"ply\nformat binary_little_endian 1.0\nelement vertex 1\nproperty float x\nproperty float y\n"
    text += b"property float y\nend_header\n" + bytes(12)
    with pytest.raises(models.ModelError, match="declares property 'y' twice"):
        models.loads(text, "ply")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        # Not -0: PLY's reader merges vertices equal as numbers (0 and -0 alike), flipped or not.
        # Not below 2**-28: 1 - v is a double near 1, on a grid of 2**-52; a float32 v under
        # 2**-29 has a finer spacing than that grid, so no file storing 1 - v can give it back
        # bit for bit (hypothesis found -1.3e-9 one ulp off).
        st.floats(-64, 64, width=32).filter(lambda value: (value == 0 and str(value) == "0.0") or abs(value) >= 2**-28),
        min_size=6,
        max_size=6,
    )
)
def test_obj_and_ply_flip_v_and_give_the_same_float32_back(values: list[float]) -> None:
    # OBJ and PLY count v from the image's bottom row, JOE from its top: the files hold 1 - v,
    # and reading them gives every texture coordinate back bit for bit.
    texcoords = np.array(values, dtype=np.float32).reshape(3, 2)
    corners = np.array([[[0, 0, 0], [1, 0, 1], [2, 0, 2]]], dtype=np.int64)
    mesh = Mesh(np.eye(3, dtype=np.float32), np.array([[0, 0, 1]], np.float32), texcoords, corners)
    obj_text = obj.write(mesh).decode()
    first = next(line for line in obj_text.splitlines() if line.startswith("vt "))
    assert float(first.split()[2]) == 1.0 - float(texcoords[0, 1])
    for format_name in ("obj", "ply"):
        back = models.loads(models.dumps(mesh, format_name), format_name)
        _, _, got = back.corner_values()
        expected = mesh.corner_values()[2]
        assert got is not None and expected is not None
        assert np.array_equal(got.view(np.uint32), expected.view(np.uint32))


# ------------------------------------------------------------------------- glTF from strangers


def _gltf_with_external_buffer(folder: Path, uri: str) -> tuple[Path, bytes]:
    """(a .gltf whose one buffer is the file `uri` names (relative to the .gltf's folder), the
    buffer's bytes)."""
    data = models.dumps(joe.read(triangle_bytes()), "gltf")
    document = json.loads(data)
    blob_uri = document["buffers"][0]["uri"]

    blob = base64.b64decode(blob_uri.partition(",")[2])
    folder.mkdir(parents=True, exist_ok=True)
    document["buffers"][0]["uri"] = uri
    path = folder / "model.gltf"
    path.write_text(json.dumps(document))
    return path, blob


def test_gltf_buffers_beside_the_file_are_read_and_none_outside(tmp_path: Path) -> None:
    """A buffer file beside the .gltf (or below it) is read; one that climbs out of its folder,
    an absolute path, a link leading elsewhere or a URI scheme is refused, naming the buffer,
    before anything is read: a model from a stranger must not carry away other files."""
    import os

    path, blob = _gltf_with_external_buffer(tmp_path / "mod", "data/model%20buffer.bin")
    (tmp_path / "mod" / "data").mkdir()
    (tmp_path / "mod" / "data" / "model buffer.bin").write_bytes(blob)
    expected = joe.read(triangle_bytes()).corner_values()[0]
    back = gltf.read(path.read_bytes(), path=str(path))
    assert back.face_count == 1 and np.allclose(np.sort(back.corner_values()[0].ravel()), np.sort(expected.ravel()))

    (tmp_path / "secret.bin").write_bytes(blob)
    os.symlink(tmp_path / "secret.bin", tmp_path / "mod" / "link.bin")
    for uri in (
        "../secret.bin",
        "data/../../secret.bin",
        str(tmp_path / "secret.bin"),
        "link.bin",
        "file:///etc/passwd",
        "%2e%2e/secret.bin",
    ):
        path, _ = _gltf_with_external_buffer(tmp_path / "mod", uri)
        with pytest.raises(ModelError, match=r"buffer 0 .*outside the glTF's folder|buffer 0 .*not a file beside"):
            gltf.read(path.read_bytes(), path=str(path))
