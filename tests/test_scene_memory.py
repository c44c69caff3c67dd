"""A track's list.txt read within a small multiple of its size (issue 41): its tokens are split
out a block of lines at a time, never all at once (17 Python strings an object cost 10 times
the text), and equal names are kept once. benchmarks/bench_scenes.py reports `model info` and
`model export` of the worst lists per input byte."""

from __future__ import annotations

import json
import struct
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gamepak.models.scene import SceneError
from gamepak.models.scene import track as track_module

LINE = "road.joe a.png 1 0 0 0 1.0 0.0 0 1 1.0 0.9 1.0 0.0 0 0 0\n"


def _read(text: str) -> tuple[list[tuple[int, str, str, dict[str, float | int]]], list[str]] | str:
    """(entries, warnings) of `text`, or the error it gives."""
    warnings: list[str] = []
    try:
        entries = track_module.parse_list(text, "list.txt", warnings, allow_large=True)
    except SceneError as exc:
        return str(exc)
    return [(entry.line, entry.model, entry.texture, entry.values) for entry in entries], warnings


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(
            st.sampled_from(["17", "14", "x.joe", "é.png", "#c", "1", "0", "2.5", "nan", "1e3"]),
            st.sampled_from([" ", "\n", "\r\n", "\r", "\t", "\x0b", "\x1c", "\u2028", "\x85"]),
        ),
        max_size=120,
    ),
    st.integers(1, 40),
)
def test_a_list_read_in_blocks_reads_as_read_whole(pieces: list[str], block: int) -> None:
    """Blocks of any size (cut after a newline, an object carried across the cut) give the
    same objects, lines, warnings and errors as one block of the whole text."""
    text = "".join(pieces)
    saved = track_module.TOKEN_BLOCK
    try:
        track_module.TOKEN_BLOCK = 1 << 30
        whole = _read(text)
        track_module.TOKEN_BLOCK = block
        assert _read(text) == whole
    finally:
        track_module.TOKEN_BLOCK = saved


def test_objects_across_block_cuts_keep_their_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """An object written over several lines, cut by a block's end, reads whole with the line
    it starts on; a last object cut short is one warning, as before."""
    monkeypatch.setattr(track_module, "TOKEN_BLOCK", 8)
    text = "17\n" + LINE.replace(" 1.0 ", "\n1.0\n") * 3 + "last.joe b.png 1 0\n"
    warnings: list[str] = []
    entries = track_module.parse_list(text, "list.txt", warnings)
    assert [entry.line for entry in entries] == [2, 9, 16]  # 7 lines an object
    assert entries[2].values["friction_tread"] == 0.9
    assert warnings == ["list.txt:23: the last object (last.joe) stops after 4 of 17 values: left out"]


def test_reading_a_large_list_stays_within_a_small_multiple_of_it() -> None:
    """Before: every token split out at once, and an int64 line number per character: peak
    10 times the text (57 MB for 5.7 MB); now under 4, of which the entries keep 2 (an
    entry and its line number an object)."""
    text = "17\n" + LINE * 15_000
    track_module.parse_list("17\n" + LINE, "warm-up", [])  # imports numpy outside the trace
    tracemalloc.start()
    try:
        entries = track_module.parse_list(text, "list.txt", [])
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(entries) == 15_000
    assert peak < 4 * len(text), (kept, peak)
    # Equal names are one string each, and equal values one dict.
    assert len({id(entry.model) for entry in entries}) == 1
    assert len({id(entry.values) for entry in entries}) == 1


def _track(folder: Path, objects: int) -> Path:
    """A track of `objects` objects placing one square (no textures)."""
    import numpy as np

    import gamepak
    from gamepak import models
    from gamepak.models.mesh import Mesh

    square = Mesh.from_vertices(
        np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], np.float32),
        [[0, 1, 2], [0, 2, 3]],
        np.tile(np.array([[0, 0, 1]], np.float32), (4, 1)),
        np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32),
    )
    (folder / "objects").mkdir(parents=True)
    with gamepak.create(folder / "objects" / "objects.jpk") as writer:
        writer.add("road.joe", models.dumps(square, "joe"))
    (folder / "objects" / "list.txt").write_text("17\n" + LINE * objects)
    return folder


@pytest.mark.parametrize("chunk", [1, 7, 1000])
def test_a_glb_written_a_chunk_of_nodes_at_a_time_has_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """The nodes' JSON made a chunk at a time when the file is written (never one text of
    every node beside the document) gives the bytes of the document written at once."""
    from gamepak.models import scene
    from gamepak.models.scene import gltf

    loaded = scene.load(_track(tmp_path / "track", 40))
    whole = gltf.write(loaded)
    monkeypatch.setattr(gltf, "NODE_CHUNK", chunk)
    parts = gltf.glb_parts(loaded)
    chunks = sum(isinstance(part, gltf.NodesText) for part in parts)
    assert chunks == ((41 + chunk - 1) // chunk if chunk < 41 else 0)
    assert gltf.write(loaded) == whole
    scene.save(loaded, tmp_path / "t.glb")
    assert (tmp_path / "t.glb").read_bytes() == whole
    length = struct.unpack_from("<I", whole, 12)[0]
    assert len(json.loads(whole[20 : 20 + length])["nodes"]) == 41


def test_a_node_the_fast_encoder_cannot_write_makes_the_whole_text_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A null in any piece (orjson's word for what the standard library judges) sends the
    whole document through the one-text path, as before."""
    from gamepak.models import scene
    from gamepak.models.scene import gltf

    loaded = scene.load(_track(tmp_path / "track", 10))
    loaded.root.children[3].extras = {"note": None}
    whole = gltf.write(loaded)
    monkeypatch.setattr(gltf, "NODE_CHUNK", 2)
    parts = gltf.glb_parts(loaded)
    assert not any(isinstance(part, gltf.NodesText) for part in parts)
    assert gltf.write(loaded) == whole
