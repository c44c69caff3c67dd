"""A content kind made for tests/test_content_registry.py's "one module plus one row" check: a
model stored as two files, as RFG's meshes are (`.cxmesh`: a header with the counts, `XMSH`
first; `.gxmesh` beside it: the geometry, here `GEOM` and a JOE model). Nothing in gamepak knows it: the
test adds its one row to the registry and every surface takes it.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

HEADER = struct.Struct("<4sII")  # magic, vertices, faces


def make(geometry: bytes, vertices: int, faces: int) -> dict[str, bytes]:
    return {"thing.cxmesh": HEADER.pack(b"XMSH", vertices, faces), "thing.gxmesh": b"GEOM" + geometry}


def partner(name: str) -> str:
    return name[: -len(".cxmesh")] + ".gxmesh"


def _counts(data: bytes) -> tuple[int, int]:
    from gamepak.errors import GamepakError

    if len(data) < HEADER.size or data[:4] != b"XMSH":
        raise GamepakError("not an example mesh (no XMSH at offset 0)")
    _, vertices, faces = HEADER.unpack_from(data)
    return vertices, faces


def counts(data: bytes, label: str) -> dict[str, Any]:
    vertices, faces = _counts(data)
    return {"vertices": vertices, "faces": faces}


def info(data: bytes, label: str) -> dict[str, Any]:
    return {"format": "xmesh", **counts(data, label)}


def stats(data: bytes, label: str) -> tuple[int, int, int]:
    return (*_counts(data), 1)


def glb(data: bytes, label: str, *, partner: Callable[[], bytes]) -> bytes:
    from gamepak.models import dumps, loads

    return bytes(dumps(loads(partner()[4:], "joe", path=label), "glb"))


def export(data: bytes, label: str, output: str, *, partner: Callable[[], bytes], overwrite: bool = False) -> None:
    from gamepak.core.atomic import write_bytes

    write_bytes(output, glb(data, label, partner=partner), overwrite=overwrite)


def row() -> Any:
    """The one row that makes the kind known."""
    from gamepak.content import FAMILIES, ContentKind, Verb

    module = __name__
    return ContentKind(
        "xmesh",
        FAMILIES["model"],
        "Example two-file meshes (a header and its geometry beside it)",
        extensions=(".cxmesh",),
        signatures=(b"XMSH",),
        types={".cxmesh": "model/xmesh"},
        verbs={
            "partner": Verb(f"{module}:partner"),
            "counts": Verb(f"{module}:counts"),
            "info": Verb(f"{module}:info"),
            "stats": Verb(f"{module}:stats"),
            "glb": Verb(f"{module}:glb", ("partner",)),
            "export": Verb(f"{module}:export", ("partner", "overwrite")),
        },
    )
