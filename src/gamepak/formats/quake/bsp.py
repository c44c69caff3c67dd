"""Quake maps: BSP29 (and BSP2 / 2PSB, their 32-bit variants).

Header (124 bytes): int32 version (29, or the ASCII `BSP2` / `2PSB`), then 15 lumps of
{int32 offset (absolute), int32 length}:

| # | lump         | record (BSP29) | fields read here                                          |
|---|--------------|----------------|-----------------------------------------------------------|
| 0 | entities     | text           | `{ "key" "value" ... }` blocks (counted)                  |
| 1 | planes       | 20             | float normal[3], float dist, int32 type                   |
| 2 | textures     | -              | int32 count, int32 offsets[count] (-1 = missing), miptex  |
| 3 | vertexes     | 12             | float x, y, z                                             |
| 4 | visibility   | bytes          |                                                           |
| 5 | nodes        | 24 (BSP2 44, 2PSB 32) |                                                    |
| 6 | texinfo      | 40             | float s[4], t[4], int32 miptex, int32 flags               |
| 7 | faces        | 20 (BSP2 28)   | plane, side, first surfedge, edge count, texinfo, styles[4], light offset |
| 8 | lighting     | bytes          |                                                           |
| 9 | clipnodes    | 8 (BSP2 12)    |                                                           |
| 10| leafs        | 28 (BSP2 44, 2PSB 32) |                                                    |
| 11| marksurfaces | 2 (BSP2 4)     |                                                           |
| 12| edges        | 4 (BSP2 8)     | vertex[2]                                                 |
| 13| surfedges    | 4              | int32 edge (negative = reversed)                          |
| 14| models       | 64             | float mins, maxs, origin[3]; int32 headnode[4], visleafs, first face, face count |

Lumps are not stored in index order and empty lumps share offsets; every non-empty lump must
lie inside the file, not overlap another, and be a whole number of records. Bytes after the
last lump (a `BSPX` block) are reported and ignored. Hexen II's version-29 maps have 80-byte
models (8 head nodes): a models lump of 80-byte records, not 64-byte ones, is read that way.
Opened through the registry, a BSP is a table with no members: `info` and `verify` read it;
the geometry is `models.quake`'s.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ...core.archive import Archive, Entry, Problem
from ...core.registry import made_on_first_use
from ...core.source import Source
from ...errors import FormatLimitError
from .images import ImageError, PaletteImage, read_miptex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    import numpy as np

    from ...core.archive import PendingMember
    from ...core.writer import ArchiveWriter, Output

LUMP_NAMES = (
    "entities",
    "planes",
    "textures",
    "vertexes",
    "visibility",
    "nodes",
    "texinfo",
    "faces",
    "lighting",
    "clipnodes",
    "leafs",
    "marksurfaces",
    "edges",
    "surfedges",
    "models",
)
HEADER = struct.Struct("<4s30i")
VERSION_29 = struct.pack("<i", 29)
VERSIONS = {VERSION_29: "BSP29", b"BSP2": "BSP2", b"2PSB": "2PSB"}
# Record sizes per variant (None: bytes, no records).
RECORDS: dict[str, dict[str, int]] = {
    "BSP29": {"planes": 20, "vertexes": 12, "nodes": 24, "texinfo": 40, "faces": 20, "clipnodes": 8, "leafs": 28,
              "marksurfaces": 2, "edges": 4, "surfedges": 4, "models": 64},
    "BSP2": {"planes": 20, "vertexes": 12, "nodes": 44, "texinfo": 40, "faces": 28, "clipnodes": 12, "leafs": 44,
             "marksurfaces": 4, "edges": 8, "surfedges": 4, "models": 64},
    "2PSB": {"planes": 20, "vertexes": 12, "nodes": 32, "texinfo": 40, "faces": 28, "clipnodes": 12, "leafs": 32,
             "marksurfaces": 4, "edges": 8, "surfedges": 4, "models": 64},
}  # fmt: skip
FACE_DTYPES = {
    20: [("plane", "<u2"), ("side", "<i2"), ("first", "<i4"), ("count", "<i2"), ("texinfo", "<i2"),
         ("styles", "u1", 4), ("light", "<i4")],
    28: [("plane", "<i4"), ("side", "<i4"), ("first", "<i4"), ("count", "<i4"), ("texinfo", "<i4"),
         ("styles", "u1", 4), ("light", "<i4")],
}  # fmt: skip
TEXINFO_DTYPE = [("s", "<f4", 4), ("t", "<f4", 4), ("miptex", "<i4"), ("flags", "<i4")]
MODEL_DTYPE = [("mins", "<f4", 3), ("maxs", "<f4", 3), ("origin", "<f4", 3), ("headnode", "<i4", 4),
               ("visleafs", "<i4"), ("first", "<i4"), ("count", "<i4")]  # fmt: skip
# Hexen II keeps version 29 with 8 hull head nodes: 80-byte models.
HEXEN2_MODEL_DTYPE = [("mins", "<f4", 3), ("maxs", "<f4", 3), ("origin", "<f4", 3), ("headnode", "<i4", 8),
                      ("visleafs", "<i4"), ("first", "<i4"), ("count", "<i4")]  # fmt: skip


class MapFormatError(ImageError):
    """A BSP whose lump table or records contradict each other or the file."""


@dataclass
class Lump:
    name: str
    offset: int
    length: int


@dataclass
class Geometry:
    """The arrays textured geometry needs, each index checked against what it points into."""

    vertexes: np.ndarray  # (V, 3) float32
    planes: np.ndarray  # (P, 4) float32: normal, dist
    faces: np.ndarray  # structured
    texinfo: np.ndarray  # structured
    corner_vertices: np.ndarray  # per surfedge: the vertex index it starts at
    models: np.ndarray  # structured
    textures: list[PaletteImage | None]


class MapFile:
    """A BSP's lump table over its bytes (`data` is kept; nothing is copied until asked)."""

    def __init__(self, data: bytes, label: str) -> None:
        self.data = data
        self.label = label
        if len(data) < HEADER.size:
            raise MapFormatError(f"BSP is {len(data)} bytes, shorter than its 124-byte header", path=label, offset=0)
        fields = HEADER.unpack_from(data)
        variant = VERSIONS.get(fields[0])
        if variant is None:
            (number,) = struct.unpack_from("<i", data)
            hint = " (Quake II)" if fields[0] == b"IBSP" else " (Half-Life)" if number == 30 else ""
            raise MapFormatError(
                f"BSP version {fields[0]!r}{hint} is not supported (29, BSP2, 2PSB)", path=label, offset=0
            )
        self.variant = variant
        self.lumps = [Lump(name, fields[1 + 2 * i], fields[2 + 2 * i]) for i, name in enumerate(LUMP_NAMES)]
        self.records = dict(RECORDS[variant])
        models = self.lumps[14].length
        # A models lump of 80-byte records and not 64-byte ones is Hexen II's (both: the plausible
        # one, whose face ranges fit, is chosen in `geometry`).
        self.hexen2 = models % 64 != 0 and models % 80 == 0
        if self.hexen2:
            self.records["models"] = 80
        self._check_lumps()

    def _check_lumps(self) -> None:
        size = len(self.data)
        records = self.records
        spans = []
        for index, lump in enumerate(self.lumps):
            where = 4 + 8 * index
            if lump.offset < 0 or lump.length < 0 or lump.offset + lump.length > size:
                raise MapFormatError(
                    f"lump {index} ({lump.name}): offset {lump.offset} + length {lump.length} lies outside the "
                    f"file ({size} bytes)",
                    path=self.label,
                    offset=where,
                )
            record = records.get(lump.name)
            if record and lump.length % record:
                raise MapFormatError(
                    f"lump {index} ({lump.name}): length {lump.length} is not a multiple of its {record}-byte records",
                    path=self.label,
                    offset=where + 4,
                )
            if lump.length:
                spans.append((lump.offset, lump.offset + lump.length, index))
        spans.sort()
        for (start, end, first), (next_start, _next_end, second) in zip(spans, spans[1:]):
            if next_start < end:
                raise MapFormatError(
                    f"lump {second} ({LUMP_NAMES[second]}) at {next_start} overlaps lump {first} "
                    f"({LUMP_NAMES[first]}, {start}..{end})",
                    path=self.label,
                    offset=4 + 8 * second,
                )
        self.end = max((end for _, end, _ in spans), default=HEADER.size)

    def lump(self, name: str) -> bytes:
        lump = self.lumps[LUMP_NAMES.index(name)]
        return self.data[lump.offset : lump.offset + lump.length]

    def count(self, name: str) -> int:
        lump = self.lumps[LUMP_NAMES.index(name)]
        return lump.length // self.records[name]

    def _array(self, name: str, dtype: Any) -> np.ndarray:
        import numpy as np

        lump = self.lumps[LUMP_NAMES.index(name)]
        kind = np.dtype(dtype)
        return np.frombuffer(self.data, kind, lump.length // kind.itemsize, lump.offset)

    def entity_count(self) -> int:
        text = self.lump("entities").partition(b"\0")[0]
        return text.count(b"{")

    def entities_text(self) -> str:
        return self.lump("entities").partition(b"\0")[0].decode("latin-1")

    def texture_offsets(self) -> list[int]:
        """The textures lump's offsets (from the lump start; -1 = missing), checked."""
        lump = self.lumps[2]
        data = self.lump("textures")
        if not data:
            return []
        if len(data) < 4:
            raise MapFormatError("textures lump is shorter than its count", path=self.label, offset=lump.offset)
        (count,) = struct.unpack_from("<i", data)
        if count < 0 or 4 + 4 * count > len(data):
            raise MapFormatError(
                f"texture count {count} does not fit the {len(data)}-byte textures lump",
                path=self.label,
                offset=lump.offset,
            )
        offsets = list(struct.unpack_from(f"<{count}i", data, 4))
        for number, offset in enumerate(offsets):
            if offset != -1 and not 4 + 4 * count <= offset <= len(data) - 40:
                raise MapFormatError(
                    f"texture {number}: offset {offset} lies outside the {len(data)}-byte textures lump",
                    path=self.label,
                    offset=lump.offset + 4 + 4 * number,
                )
        return offsets

    def miptex_spans(self) -> list[tuple[int, int] | None]:
        """(start, end) of each miptex record inside the textures lump (the next record's start
        or the lump end), None for a missing one."""
        import bisect

        offsets = self.texture_offsets()
        length = self.lumps[2].length
        ordered = sorted({offset for offset in offsets if offset >= 0} | {length})
        spans: list[tuple[int, int] | None] = []
        shared: dict[int, tuple[int, int]] = {}  # one tuple per record, however many slots name it
        for offset in offsets:
            if offset < 0:
                spans.append(None)
                continue
            span = shared.get(offset)
            if span is None:
                # bisect, not list.index: a lump of a million offsets must not cost a million squared.
                span = shared[offset] = (offset, ordered[bisect.bisect_right(ordered, offset)])
            spans.append(span)
        return spans

    def textures(self) -> list[PaletteImage | None]:
        """Each embedded miptex (None when missing); mips offsets checked inside their record.
        Slots naming the same record share one image (never a copy per slot: a lump of a
        million offsets naming one large miptex would otherwise need a million copies)."""
        lump = self.lumps[2]
        data = self.lump("textures")
        result: list[PaletteImage | None] = []
        read: dict[tuple[int, int], PaletteImage] = {}
        for span in self.miptex_spans():
            if span is None:
                result.append(None)
                continue
            if span not in read:
                start, end = span
                read[span] = read_miptex(data[start:end], None, self.label, base=lump.offset + start)
            result.append(read[span])
        return result

    def distinct_textures(self) -> list[tuple[tuple[int, int], PaletteImage]]:
        """(span in the textures lump, image) of each miptex record with pixels, once per record
        (a slot repeating an earlier slot's offset adds nothing): the images `texture` lists,
        exports and imports, in slot order."""
        seen: set[tuple[int, int]] = set()
        found = []
        for span, texture in zip(self.miptex_spans(), self.textures(), strict=True):
            if span is None or texture is None or not texture.mips or span in seen:
                continue
            seen.add(span)
            found.append((span, texture))
        return found

    def geometry(self) -> Geometry:
        """Vertexes, planes, faces, texinfo, the corner vertex of every surfedge, models and
        textures, with every index checked (`MapFormatError` naming the record and field)."""
        import numpy as np

        records = self.records
        vertexes = self._array("vertexes", "<f4").reshape(-1, 3)
        planes = self._array("planes", [("normal", "<f4", 3), ("dist", "<f4"), ("type", "<i4")])
        faces = self._array("faces", FACE_DTYPES[records["faces"]])
        texinfo = self._array("texinfo", TEXINFO_DTYPE)
        edges = self._array("edges", "<u2" if records["edges"] == 4 else "<u4").reshape(-1, 2).astype(np.int64)
        surfedges = self._array("surfedges", "<i4").astype(np.int64)
        models = self._array("models", HEXEN2_MODEL_DTYPE if self.hexen2 else MODEL_DTYPE)
        textures = self.textures()

        def fail(lump: str, index: int, field: str, message: str) -> MapFormatError:
            base = self.lumps[LUMP_NAMES.index(lump)].offset + index * records[lump]
            return MapFormatError(f"{lump} record {index}: {field} {message}", path=self.label, offset=base)

        def check(lump: str, values: np.ndarray, limit: int, field: str, low: int = 0, per_record: int = 1) -> None:
            """Every value in low..limit-1 (`per_record` values to a record, for the record's
            number and offset)."""
            bad = np.flatnonzero((values < low) | (values >= limit))
            if bad.size:
                index = int(bad[0])
                allowed = f"{low}..{limit - 1}" if limit > low else "there are none"
                raise fail(lump, index // per_record, field, f"{int(values[index])} is out of range ({allowed})")

        # Exact limits: an index 0 into an empty lump is as wrong as any other.
        check("surfedges", np.abs(surfedges), len(edges), "edge")
        check("edges", edges.reshape(-1), len(vertexes), "vertex", per_record=2)
        check("faces", faces["texinfo"].astype(np.int64), len(texinfo), "texinfo")
        check("faces", faces["plane"].astype(np.int64), len(planes), "plane")
        counts = faces["count"].astype(np.int64)
        firsts = faces["first"].astype(np.int64)
        check("faces", counts, 1 << 16, "edge count", 3)
        check("faces", firsts + counts, len(surfedges) + 1, "first surfedge + edge count")
        check("faces", firsts, len(surfedges) + 1, "first surfedge")
        check("texinfo", texinfo["miptex"].astype(np.int64), max(1, len(textures)), "miptex")
        check("models", models["first"].astype(np.int64) + models["count"], len(faces) + 1, "first face + face count")
        check("models", models["first"].astype(np.int64), len(faces) + 1, "first face")
        check("models", models["count"].astype(np.int64), len(faces) + 1, "face count")
        # Faces may share surfedges and models may share faces, so the glTF of every model can
        # hold far more corners than the file has bytes: counted before anything is built. A
        # real map's corners are its surfedges, 4 bytes each: one corner per byte of the file
        # is four times what it can hold.
        face_starts = np.concatenate([[0], np.cumsum(counts)])
        model_firsts = models["first"].astype(np.int64)
        corner_total = int((face_starts[model_firsts + models["count"]] - face_starts[model_firsts]).sum())
        if corner_total > len(self.data):
            raise MapFormatError(
                f"the models' faces hold {corner_total} corners, more than a {len(self.data)}-byte map can "
                "(faces that share their surfedges, or models that share their faces)",
                path=self.label,
                offset=self.lumps[14].offset,
            )
        corner_vertices = np.where(surfedges >= 0, edges[np.abs(surfedges), 0], edges[np.abs(surfedges), 1])
        plane_table = np.concatenate([planes["normal"], planes["dist"][:, None]], axis=1)
        return Geometry(vertexes, plane_table, faces, texinfo, corner_vertices, models, textures)

    def summary(self) -> dict[str, Any]:
        textures = self.textures()
        return {
            "version": self.variant + (" (Hexen II)" if self.hexen2 else ""),
            "lumps": [
                {"name": lump.name, "offset": lump.offset, "length": lump.length, "records": self.count(lump.name)}
                if lump.name in self.records
                else {"name": lump.name, "offset": lump.offset, "length": lump.length}
                for lump in self.lumps
            ],
            "entity_count": self.entity_count(),
            "textures": [
                None if texture is None else f"{texture.name} {texture.width}x{texture.height}" for texture in textures
            ],
            "faces": self.count("faces"),
            "models": self.count("models"),
            "trailing_bytes": len(self.data) - self.end,
        }


def sniff(source: Source) -> float:
    """1.0 for a BSP29/BSP2/2PSB header whose lumps lie inside the file."""
    head = source.pread(HEADER.size, 0)
    if len(head) < HEADER.size or head[:4] not in VERSIONS:
        return 0.0
    fields = HEADER.unpack(head)
    inside = all(fields[1 + 2 * i] >= 0 and fields[1 + 2 * i] + fields[2 + 2 * i] <= source.size for i in range(15))
    return 1.0 if inside else 0.5


MAX_FILE = 1 << 30


class Reader(Archive):
    """A BSP opened for `info` and `verify`: its lump table, texture names and entity count
    (a table with no members)."""

    format_name = "bsp"
    contents_hint = (
        "its textures come out with `gamepak texture export`, its geometry with `gamepak model export`, "
        "its lumps with `gamepak info`"
    )

    def _load(self) -> None:
        if self._source.size > MAX_FILE:
            raise self.corrupt(f"{self._source.size} bytes is too large for a BSP", 0)
        data = self._source.read_exact(self._source.size, 0, "BSP")
        self.map = MapFile(data, self.filename)
        self._names = []
        self._entries = []

    def header_fields(self) -> dict[str, Any]:
        return self.map.summary()

    def _check(self) -> list[Problem]:
        problems = []
        try:
            self.map.geometry()
        except ImageError as exc:
            problems.append(Problem(exc.reason, offset=exc.offset))
        trailing = len(self.map.data) - self.map.end
        if trailing:
            kind = " (a BSPX block)" if self.map.data[self.map.end : self.map.end + 4] == b"BSPX" else ""
            problems.append(
                Problem(f"{trailing} bytes after the last lump{kind}", severity="warning", offset=self.map.end)
            )
        return problems

    def _member_data(self, entries: list[Entry]) -> Any:
        return iter(())


def _make_writer() -> type[ArchiveWriter]:
    """The BSP writer's class (it refuses), made when something writes (`made_on_first_use`):
    reading a map imports nothing of the writing side."""
    from ...core.writer import ArchiveWriter

    class Writer(ArchiveWriter):
        """BSPs are compiled by map tools, not packed: creating one is refused."""

        format_name = "bsp"

        def _check_name(self, name: str) -> None:
            raise FormatLimitError(
                f"a BSP holds compiled map lumps, not members ({name!r}); compile it with a map tool"
            )

        def _write(self, out: Output, members: list[PendingMember]) -> None:
            raise FormatLimitError("a BSP cannot be created by gamepak; compile it with a map tool (qbsp)")

    return Writer


__getattr__ = made_on_first_use(globals(), {"Writer": _make_writer})
