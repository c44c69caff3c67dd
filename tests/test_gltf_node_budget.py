"""The glTF node budget of a scene import (issue 41): a document of more nodes than
`core.content_limits` allows is refused while its nodes are read, one node at a time, never
after its whole JSON became dicts (a 14 MB glTF of 300,000 nodes reusing one mesh took
35 bytes per input byte). The counting reader gives what `json.loads` gives."""

from __future__ import annotations

import json
import struct
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_scenes import list_line, make_track, png, quad

from gamepak.core.content_limits import current, limits
from gamepak.models import gltf_document, gltf_read
from gamepak.models.mesh import ModelError

from conftest import in_process_cli


def glb(document: dict[str, Any], blob: bytes = b"") -> bytes:
    text = json.dumps(document, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 4)
    body = struct.pack("<I4s", len(text), b"JSON") + text
    if blob:
        body += struct.pack("<I4s", len(blob), b"BIN\0") + blob
    return struct.pack("<4sII", b"glTF", 2, 12 + len(body)) + body


def many_nodes(count: int) -> dict[str, Any]:
    """A scene of one triangle drawn by `count` nodes (as the campaign's reproducer)."""
    return {
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"name": "root", "children": list(range(1, count + 1))}]
        + [{"name": f"n{number}", "mesh": 0} for number in range(count)],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3"}],
        "bufferViews": [{"buffer": 0, "byteLength": 36}],
        "buffers": [{"byteLength": 36}],
    }


TRIANGLE = struct.pack("<9f", 0, 0, 0, 1, 0, 0, 0, 1, 0)


def test_the_default_budget_is_far_above_a_real_track() -> None:
    assert current().scene_node_budget() == 110_000  # pau: 1,659 objects
    assert current().scene_node_budget(allow_large=True) is None
    with limits(allow_large=True):
        assert current().scene_node_budget() is None


def test_a_scene_within_the_budget_reads_as_without_one() -> None:
    data = glb(many_nodes(50), TRIANGLE)
    with limits(scene_nodes=51):  # 50 nodes and the root
        counted, _ = gltf_read.read_nodes(data, name="s.glb", max_nodes=current().scene_node_budget())
    plain, _ = gltf_read.read_nodes(data, name="s.glb")
    assert [(node.number, node.name) for node in counted] == [(node.number, node.name) for node in plain]
    assert len(counted) == 50


def test_a_scene_past_the_budget_is_one_line_naming_the_file() -> None:
    data = glb(many_nodes(50), TRIANGLE)
    with pytest.raises(ModelError) as caught:
        gltf_read.read_nodes(data, path="/x/s.glb", max_nodes=50)
    message = str(caught.value)
    assert message.startswith("/x/s.glb: more than 50 nodes (at character ")
    assert "--allow-large" in message and "\n" not in message


def test_refusing_many_nodes_never_builds_them_all() -> None:
    # 60,000 nodes refused at 1,000: the reader holds the text and at most 1,000 nodes (the
    # whole document as dicts is ~10 bytes per input byte, orjson's tree ~13 more).
    data = glb(many_nodes(60_000), TRIANGLE)
    tracemalloc.start()
    try:
        with pytest.raises(ModelError, match="more than 1,000 nodes"):
            gltf_read.read_nodes(data, name="s.glb", max_nodes=1_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * len(data), peak / len(data)


def test_the_cli_refuses_without_allow_large_and_reads_with_it(tmp_path: Path) -> None:
    track = make_track(
        tmp_path / "t", [list_line("road.joe", "a.png")], {"road.joe": quad(0, 0)}, {"a.png": png((1, 2, 3))}
    )
    (tmp_path / "s.glb").write_bytes(glb(many_nodes(50), TRIANGLE))
    command = ("model", "import", str(tmp_path / "s.glb"), "--into", str(track), "--dry-run")
    with limits(scene_nodes=10):
        code, _, err = in_process_cli(*command)
        assert code == 1 and "more than 10 nodes" in err and "Traceback" not in err, err
        assert len(err.strip().splitlines()) == 1
        code, _, err = in_process_cli(*command, "--allow-large")
    assert code == 0 and "50 added" in err, err
    # One warning for the nodes without a texture, not one per node (300,000 lines before).
    assert err.count("no texture") == 1 and "50 nodes have no texture (node 'n0', 'n1', ...)" in err, err


@pytest.mark.parametrize(
    "text",
    [
        b'{"nodes":[{"name":"a"} {"name":"b"}]}',  # no comma between nodes
        b'{"nodes":[{"name":"a"},]}',  # trailing comma
        b'{"nodes":[{"name":"a"}',  # cut short
        b'{"nodes" [1]}',  # no colon
        b"{nodes:[]}",  # unquoted key
        b'{"nodes":[]} x',  # extra data
        b'{"a":1 "b":2}',  # no comma between members
        b"\xff{}",  # not UTF-8
        b"[1, 2]",  # not an object
        b"",
        b'{"nodes":[' + b"[" * 5000 + b"]" * 5000 + b"]}",  # nested too deeply
    ],
)
def test_malformed_json_is_one_model_error(text: bytes) -> None:
    with pytest.raises(ModelError) as caught:
        gltf_document.load_document(text, "s.gltf", max_nodes=100)
    assert str(caught.value).startswith("s.gltf: not a readable glTF file: ")
    with pytest.raises(ModelError):  # as without a budget
        gltf_document.load_document(text, "s.gltf")


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=8,
)


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["nodes", "asset", "scene", "x", "é"]), JSON_VALUES, max_size=4),
    st.lists(st.dictionaries(st.sampled_from(["name", "mesh", "children"]), JSON_VALUES, max_size=3), max_size=5),
    st.sampled_from(["", " ", "\n\t ", "\r\n"]),
    st.booleans(),
)
def test_the_counting_reader_reads_what_json_loads_reads(
    document: dict[str, Any], nodes: list[Any], space: str, bom: bool
) -> None:
    document = {**document, "nodes": nodes}
    text = json.dumps(document, ensure_ascii=False, separators=("," + space, space + ":" + space))
    data = (b"\xef\xbb\xbf" if bom else b"") + (space + text + space).encode()
    assert gltf_document.load_document(data, "s.gltf", max_nodes=len(nodes)).json == json.loads(text)
    if nodes:
        with pytest.raises(ModelError, match=f"more than {len(nodes) - 1} nodes"):
            gltf_document.load_document(data, "s.gltf", max_nodes=len(nodes) - 1)


def test_the_nodes_read_keep_no_dict_per_node() -> None:
    # What read_nodes hands a scene import for 20,000 nodes reusing one mesh: a NodeMeshes and
    # a name each. The nodes' dicts (kept by the pieces' closures) and two bound methods per
    # node took 39 bytes per input byte of peak for 100,000 nodes; they go once read.
    data = glb(many_nodes(20_000), TRIANGLE)
    tracemalloc.start()
    try:
        found, _ = gltf_read.read_nodes(data, name="s.glb", max_nodes=30_000)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(found) == 20_000 and found[-1].name == "n19999"
    assert held < 8 * len(data), held / len(data)  # 6.1 now, 15 before
