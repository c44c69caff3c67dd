"""Many JOE models read at once (`joe_batch.read_many`, what a track's scene uses) give exactly
what reading them one by one gives: the same arrays, offsets, magic, issues, errors and
warnings, whatever is wrong with some of them; and `Archive.read_many` gives each member's bytes."""

from __future__ import annotations

import struct
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_models import standin_model as _standin

import gamepak
from gamepak.errors import GamepakError
from gamepak.models import joe, joe_batch
from gamepak.models.mesh import Mesh


def standin_model(faces: int, seed: int) -> bytes:
    """A JOE model of `faces` random faces (none: an empty model with a few unused values)."""
    if faces:
        return _standin(faces, seed)
    rng = np.random.default_rng(seed)
    return joe.write(Mesh(rng.uniform(-1, 1, (2, 3)), np.zeros((0, 3)), np.zeros((0, 2)), np.zeros((0, 3, 3))))


def _one_by_one(datas: list[bytes]) -> tuple[list[Mesh | GamepakError], list[str]]:
    results: list[Mesh | GamepakError] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for number, data in enumerate(datas):
            try:
                results.append(joe.read(data, path=f"pack:{number}", name=f"m{number}"))
            except GamepakError as exc:
                results.append(exc)
    return results, [str(warning.message) for warning in caught]


def _batched(datas: list[bytes]) -> tuple[list[Mesh | GamepakError], list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = joe_batch.read_many(
            datas, [f"pack:{number}" for number in range(len(datas))], [f"m{number}" for number in range(len(datas))]
        )
    return list(results), [str(warning.message) for warning in caught]


def assert_same(batched: list[Mesh | GamepakError], single: list[Mesh | GamepakError]) -> None:
    assert len(batched) == len(single)
    for got, expected in zip(batched, single):
        if isinstance(expected, GamepakError):
            assert type(got) is type(expected) and str(got) == str(expected)
            continue
        assert isinstance(got, Mesh) and isinstance(expected, Mesh)
        for name in ("positions", "normals", "texcoords", "corners"):
            mine, theirs = getattr(got, name), getattr(expected, name)
            assert mine.dtype == theirs.dtype and mine.shape == theirs.shape, name
            assert np.array_equal(mine, theirs, equal_nan=name != "corners"), name
        assert (got.offsets, got.magic, got.name, got.source, got.issues, got.frame_count) == (
            expected.offsets,
            expected.magic,
            expected.name,
            expected.source,
            expected.issues,
            expected.frame_count,
        )
        got.positions[:] = 0  # each mesh owns its arrays: editing one leaves the others be


def _corrupt(data: bytes, how: int) -> bytes:
    """The model `data` spoiled in one of the ways a track's stranger-made pack could be."""
    changed = bytearray(data)
    face_count = struct.unpack_from("<i", data, 8)[0]
    if how == 0:
        return data[:-1]  # truncated
    if how == 1:
        struct.pack_into("<H", changed, 16, 60000)  # vertex index past the vertices
        return bytes(changed)
    if how == 2:
        struct.pack_into("<f", changed, len(changed) - 4, float("nan"))  # a NaN texture coordinate
        return bytes(changed)
    if how == 3:
        struct.pack_into("<f", changed, 16 + 18 * face_count + 12, float("inf"))  # an infinite position
        return bytes(changed)
    if how == 4:
        return data + b"\0\0\0\0"  # bytes after the last frame (a warning, not an error)
    if how == 5:
        struct.pack_into("<i", changed, 4, 2)  # another version
        return bytes(changed)
    if how == 6:
        return b"not a model at all\n"
    struct.pack_into("<H", changed, 16 + 6, 60000)  # normal index past the normals
    return bytes(changed)


def test_spoiled_models_among_good_ones_read_as_one_by_one() -> None:
    good = [standin_model(faces, seed) for seed, faces in enumerate([1, 2, 5, 9, 30, 0, 3, 12])]
    datas = [*good]
    for how in range(8):
        datas.insert(how * 2 + 1, _corrupt(good[how], how) if how != 5 else _corrupt(good[4], how))
    batched, batched_warnings = _batched(datas)
    single, single_warnings = _one_by_one(datas)
    assert_same(batched, single)
    assert batched_warnings == single_warnings
    assert sum(isinstance(result, GamepakError) for result in single) >= 4


def test_a_model_of_many_frames_and_an_empty_list() -> None:
    mesh = joe.read(standin_model(4, 1))
    two_frames = joe.write(
        Mesh(mesh.positions, mesh.normals, mesh.texcoords, mesh.corners, extra_frames=[mesh], magic=b"IDP2")
    )
    datas = [two_frames, standin_model(4, 2)]
    batched, _ = _batched(datas)
    assert_same(batched, _one_by_one(datas)[0])
    assert isinstance(batched[0], Mesh) and batched[0].frame_count == 2
    assert joe_batch.read_many([], [], []) == []


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 40), st.integers(0, 9), st.integers(-1, 7), st.integers(0, 3)), min_size=1, max_size=12
    )
)
def test_any_mix_reads_as_one_by_one(plan: list[tuple[int, int, int, int]]) -> None:
    # Each model: faces, seed, how it is spoiled (-1: not), and 0-3 bytes of another model
    # before it in the batch, so models start at every alignment.
    datas = []
    for faces, seed, how, _ in plan:
        data = standin_model(faces, seed)
        datas.append(data if how < 0 or not faces else _corrupt(data, how))
    batched, batched_warnings = _batched(datas)
    single, single_warnings = _one_by_one(datas)
    assert_same(batched, single)
    assert batched_warnings == single_warnings


def test_archive_read_many_gives_each_members_bytes(tmp_path: Path) -> None:
    members = {f"m{number}.joe": standin_model(number, number) for number in range(6)}
    path = tmp_path / "objects.jpk"
    with gamepak.create(path) as writer:
        for name, data in members.items():
            writer.add(name, data)
    with gamepak.open(path) as pack:
        wanted = ["m3.joe", "m0.joe", "m5.joe", "m3.joe"]
        assert pack.read_many(wanted) == [members[name] for name in wanted]
        assert pack.read_many([]) == []


def test_archive_read_many_of_a_member_past_the_end_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "objects.jpk"
    with gamepak.create(path) as writer:
        writer.add("a.joe", standin_model(3, 1))
        writer.add("b.joe", standin_model(3, 2))
    data = path.read_bytes()
    path.write_bytes(data[:-10])  # b's data now runs past the end
    with gamepak.open(path) as pack, pytest.raises(GamepakError, match="runs past the end"):
        pack.read_many(pack.infolist())


def _random_mesh(seed: int, faces: int, normals: int, texcoords: int, zero_normals: bool) -> Mesh:
    rng = np.random.default_rng(seed)
    vertex_count = max(3, faces)
    normal_values = rng.normal(size=(normals, 3))
    if zero_normals and normals:
        normal_values[rng.integers(0, normals)] = 0  # takes a face's normal instead
    corners = np.stack(
        [rng.integers(0, max(count, 1), (faces, 3)) for count in (vertex_count, normals, texcoords)], axis=2
    )
    return Mesh(rng.normal(size=(vertex_count, 3)), normal_values, rng.uniform(size=(texcoords, 2)), corners)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 9), st.integers(0, 12), st.integers(0, 5), st.integers(0, 5), st.booleans()),
        min_size=1,
        max_size=8,
    )
)
def test_many_meshes_packed_at_once_give_each_meshs_own_vertices(plan: list[tuple[int, int, int, int, bool]]) -> None:
    # What a scene writes for thousands of meshes in one pass is exactly what the single-model
    # export gives each: meshes with and without normals and texture coordinates, zero normals.
    from gamepak.models.gltf import vertex_arrays
    from gamepak.models.vertex_batch import vertex_arrays_many

    meshes = [_random_mesh(*fields) for fields in plan]
    for together, alone in zip(vertex_arrays_many(meshes), [vertex_arrays(mesh) for mesh in meshes]):
        for mine, theirs in zip(together, alone):
            if theirs is None:
                assert mine is None
            else:
                assert mine is not None and mine.dtype == theirs.dtype and np.array_equal(mine, theirs)
