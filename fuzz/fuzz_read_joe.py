#!/usr/bin/env python3
"""Fuzz the VDrift JOE model reader (`gamepak.models.loads`): any input may only be refused with
a gamepak error; on what it accepts, every frame is built and the summary computed.

    python fuzz/fuzz_read_joe.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

from _fuzzing import expected_errors, fuzz


def TestOneInput(data: bytes) -> None:
    from gamepak import models

    with expected_errors():
        mesh = models.loads(data, "joe", name="fuzz.joe")
        for frame in mesh.frames:
            assert len(frame.corners) == mesh.face_count, "a frame has another face count than the model"
        mesh.summary()


def main() -> None:
    fuzz(TestOneInput, "gamepak.core", "gamepak.models.joe", "gamepak.models.mesh")


if __name__ == "__main__":
    main()
