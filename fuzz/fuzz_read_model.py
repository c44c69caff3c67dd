#!/usr/bin/env python3
"""Fuzz the model readers a stranger's file reaches through `model import` and `model convert`:
glTF (.glb and .gltf), OBJ and PLY (`gamepak.models.loads`, and `gltf.read_nodes`, which the
scene import walks). Any input may only be refused with a gamepak error; a model read is written
as JOE and read back with the same face count.

The first byte of an input picks the reader (`FORMATS[byte % 4]`); the rest is the file.

    python fuzz/fuzz_read_model.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

from _fuzzing import expected_errors, fuzz

FORMATS = ("glb", "gltf", "obj", "ply")


def TestOneInput(data: bytes) -> None:
    from gamepak import models
    from gamepak.models import gltf

    if not data:
        return
    format_name = FORMATS[data[0] % len(FORMATS)]
    body = data[1:]
    with expected_errors():
        mesh = models.loads(body, format_name, name=f"fuzz.{format_name}")
        again = models.loads(models.dumps(mesh, "joe"), "joe", name="again.joe")
        assert again.face_count == mesh.face_count, "the JOE written holds another face count"
    if format_name in ("glb", "gltf"):
        with expected_errors():
            nodes, _ = gltf.read_nodes(body, name=f"fuzz.{format_name}")
            for node in nodes:
                assert isinstance(node.name, str), f"node {node.number}: a name that is not text"
                assert all(isinstance(image, str) for image in node.images), f"node {node.number}: an image name"


def main() -> None:
    fuzz(TestOneInput, "gamepak.core", "gamepak.models")


if __name__ == "__main__":
    main()
