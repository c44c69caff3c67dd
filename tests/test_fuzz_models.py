"""Fuzzing the model readers and every exporter with mutated files: only gamepak's own errors
may come out, and whatever a reader accepts, every exporter writes (or refuses with a
GamepakError) and the result reads back.

`make test` runs a small budget; `make fuzz` a larger one (GAMEPAK_FUZZ_EXAMPLES examples per
test).
"""

from __future__ import annotations

import contextlib
import os
import struct
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gamepak import models
from gamepak.errors import GamepakError
from gamepak.models import joe
from gamepak.models.mesh import Mesh
from gamepak.models.render import render_png

FUZZ_EXAMPLES = int(os.environ.get("GAMEPAK_FUZZ_EXAMPLES", "40"))
FUZZ = settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
EXPORT_FORMATS = ("glb", "gltf", "obj", "ply", "joe")
# Values that break naive code: NaN, infinities, signed zero, huge and tiny floats.
SPECIAL_FLOATS = (float("nan"), float("inf"), float("-inf"), -0.0, 3.4e38, -3.4e38, 1e-45)
# Counts and indices at the edges of their fields.
SPECIAL_INTEGERS = (0, 1, -1, 2, 3, 0x7FFF, 0xFFFF, 0x10000, 0x7FFFFFFF, -0x80000000)


def base_model() -> bytes:
    """A small two-frame model written by gamepak's own writer: a quad and a triangle with
    normals and texture coordinates."""
    positions = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0.5, 0.5, 1]], np.float32)
    normals = np.array([[0, 0, 1], [0, 0, -1]], np.float32)
    texcoords = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    corners = np.array(
        [
            [[0, 0, 0], [1, 0, 1], [2, 0, 2]],
            [[0, 0, 0], [2, 0, 2], [3, 0, 3]],
            [[1, 1, 1], [4, 1, 2], [2, 1, 3]],
        ]
    )
    mesh = Mesh(positions, normals, texcoords, corners)
    second = Mesh(positions * 2, normals, texcoords, corners)
    mesh.extra_frames = [second]
    return joe.write(mesh)


BASE = base_model()


@st.composite
def mutated(draw: st.DrawFn, base: bytes) -> bytes:
    """`base` with a few bytes, floats or integers overwritten, then maybe cut or extended."""
    data = bytearray(base)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["byte", "float", "int32", "uint16"]))
        size = {"byte": 1, "float": 4, "int32": 4, "uint16": 2}[kind]
        position = draw(st.integers(0, max(0, len(data) - size)))
        if kind == "byte":
            data[position] = draw(st.integers(0, 255))
        elif kind == "float":
            struct.pack_into("<f", data, position, draw(st.sampled_from(SPECIAL_FLOATS)))
        elif kind == "int32":
            struct.pack_into("<i", data, position, draw(st.sampled_from(SPECIAL_INTEGERS)))
        else:
            struct.pack_into("<H", data, position, draw(st.sampled_from(SPECIAL_INTEGERS)) & 0xFFFF)
    ending = draw(st.sampled_from(["keep", "cut", "extend"]))
    if ending == "cut":
        del data[draw(st.integers(0, len(data))) :]
    elif ending == "extend":
        data += draw(st.binary(max_size=64))
    return bytes(data)


def read_quietly(data: bytes, format_name: str) -> Mesh | None:
    """The mesh, or None when the reader refused the data with a GamepakError."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return models.loads(data, format_name, name="fuzz")
        except GamepakError:
            return None


def export_everywhere(mesh: Mesh) -> None:
    """Every exporter writes the mesh, or refuses it with a GamepakError; what is written
    reads back with the same face count."""
    for format_name in EXPORT_FORMATS:
        try:
            written = models.dumps(mesh, format_name)
        except GamepakError:
            continue
        back = read_quietly(written, format_name)
        assert back is not None, f"{format_name}: gamepak cannot read what it wrote"
        assert back.face_count == mesh.face_count or format_name in ("glb", "gltf", "ply")
    with contextlib.suppress(GamepakError):
        render_png(mesh, 16)
    mesh.summary()


def test_the_base_model_is_valid() -> None:
    mesh = joe.read(BASE)
    assert mesh.frame_count == 2 and mesh.face_count == 3
    export_everywhere(mesh)


@FUZZ
@given(mutated(BASE))
def test_joe_reader_and_every_exporter(data: bytes) -> None:
    mesh = read_quietly(data, "joe")
    if mesh is not None:
        assert joe.write(mesh)[4:] == data[4 : len(joe.write(mesh))]
        export_everywhere(mesh)


@pytest.mark.parametrize("format_name", ["glb", "obj", "ply"])
@FUZZ
@given(data=st.data())
def test_other_readers_and_every_exporter(format_name: str, data: st.DataObject) -> None:
    source = models.dumps(joe.read(BASE), format_name)
    mesh = read_quietly(data.draw(mutated(source)), format_name)
    if mesh is not None:
        export_everywhere(mesh)
