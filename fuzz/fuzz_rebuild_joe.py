#!/usr/bin/env python3
"""Fuzz the model writers by round trip from JOE: a model the JOE reader accepts is written back
as JOE byte for byte (the magic aside) and reads back the same; every other exporter (glb, glTF,
OBJ, PLY) writes it or refuses it with a gamepak error, and what it writes reads back.

    python fuzz/fuzz_rebuild_joe.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

from _fuzzing import expected_errors, fuzz, quiet

# Exporters that keep every face (glTF and PLY may merge or drop degenerate ones).
KEEP_FACES = ("joe", "obj")


def TestOneInput(data: bytes) -> None:
    import numpy as np

    from gamepak import models
    from gamepak.models import joe

    mesh = None
    with expected_errors():
        mesh = models.loads(data, "joe", name="fuzz.joe")
    if mesh is None:
        return
    written = joe.write(mesh)
    assert written[4:] == data[4 : len(written)], "a JOE model does not write back byte for byte"
    with quiet():
        again = models.loads(written, "joe")
    for before, after in zip(mesh.frames, again.frames, strict=True):
        for field in ("positions", "normals", "texcoords", "corners"):
            assert np.array_equal(getattr(before, field), getattr(after, field), equal_nan=True), field
    for format_name in ("glb", "gltf", "obj", "ply"):
        exported = None
        with expected_errors():
            exported = models.dumps(mesh, format_name)
        if exported is None:
            continue
        with quiet():
            back = models.loads(exported, format_name)
        if format_name in KEEP_FACES:
            assert back.face_count == mesh.face_count, f"{format_name}: {back.face_count} faces of {mesh.face_count}"


def main() -> None:
    fuzz(TestOneInput, "gamepak.core", "gamepak.models")


if __name__ == "__main__":
    main()
