"""The seeds of the content harnesses (`fuzz_read_qimage`, `_mdl`, `_bsp`, `_wad`, `_locatext`,
`_xtbl`, `_scene`, `fuzz_import_translation`, `_sheet`): files laid out by hand from the specs'
byte layouts (tests/quake_bytes.py for Quake) or made by gamepak's writers. `seeds.write_seeds`
writes them with the others.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def spec_bytes() -> Any:
    """tests/quake_bytes.py: Quake files built from the spec's byte layouts by hand (the MDL,
    SPR and BSP readers have no writer to make seeds with)."""
    tests = str(HERE.parent / "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    import quake_bytes

    return quake_bytes


def wad_seeds() -> Iterator[tuple[str, bytes]]:
    """WADs made by gamepak's writer (a qpic, a miptex, the console font and a palette; a WAD3
    whose miptex carries its own palette) and one laid out by hand from the spec."""
    from gamepak.formats.quake import images

    from _fuzzing import pack_bytes

    quake = spec_bytes()
    qpic = quake.qpic_bytes(3, 2, bytes([1, 2, 255, 4, 5, 6]))
    miptex = quake.miptex_bytes(b"{fence", 16, 8)
    lumps = {"box": qpic, "{fence": miptex, "conchars": bytes(range(256)) * 64, "palette": bytes(range(256)) * 3}
    yield "wad2.wad", pack_bytes("wad", {}, list(lumps.items()))
    wad3_image = images.read_miptex(miptex, "hltest", "seed")
    wad3_image.palette = bytes(reversed(range(256))) * 3
    yield "wad3.wad", pack_bytes("wad", {"version": "WAD3"}, [("hltest", images.write_miptex(wad3_image))])
    yield "spec.wad", quake.wad_bytes([(b"BOX", 0x42, qpic), (b"wall", 0x44, miptex), (b"IBAR.BAK", 0x42, qpic)])
    yield "empty.wad", pack_bytes("wad", {}, [])


def qimage_seeds() -> Iterator[tuple[str, bytes]]:
    """One of each palette image: a qpic, miptex (with pixels, a WAD3 one with its palette,
    one without pixels as qbsp -notex writes), the console font, a WAL and sprites (single
    frames, and a group)."""
    import struct

    quake = spec_bytes()
    miptex = quake.miptex_bytes(b"sky1", 16, 8)
    yield "qpic.lmp", quake.qpic_bytes(3, 2, bytes([1, 2, 255, 4, 5, 6]))
    yield "miptex.mip", miptex
    yield "wad3.mip", miptex + struct.pack("<H", 256) + bytes(range(256)) * 3 + b"\0\0"
    yield "notex.mip", struct.pack("<16sII4I", b"skip", 64, 64, 0, 0, 0, 0)
    yield "conchars.lmp", bytes(range(256)) * 64
    yield "test.wal", quake.wal_bytes(16, 8)
    yield "frames.spr", quake.spr_bytes([(2, 2, b"\1\2\3\xff"), (3, 1, b"\4\5\6")])
    yield "group.spr", quake.spr_bytes([(2, 2, b"\1\2\3\4")], group=[(0.1, 2, 1, b"\5\6"), (0.3, 1, 1, b"\7")])


# An MDL's four vertices, two of them on the seam, and two triangles (one back-facing).
MDL_SHAPE: dict[str, Any] = {
    "st": [(0x20, 1, 0), (0, 2, 1), (0, 3, 2), (0, 1, 3)],
    "triangles": [(1, 0, 1, 2), (0, 0, 2, 3)],
    "poses": [[(0, 0, 0), (10, 0, 0), (0, 10, 0), (0, 0, 10)], [(1, 0, 0), (11, 0, 0), (1, 10, 0), (1, 0, 10)]],
}


def mdl_seeds() -> Iterator[tuple[str, bytes]]:
    """MDLs laid out from the spec: single frames, and a frame group with a skin group."""
    quake = spec_bytes()
    yield "frames.mdl", quake.mdl_bytes(**MDL_SHAPE)
    yield "groups.mdl", quake.mdl_bytes(**MDL_SHAPE, group_from=1, skin_group=True)
    yield "one-pose.mdl", quake.mdl_bytes(**{**MDL_SHAPE, "poses": MDL_SHAPE["poses"][:1]})


def bsp_seeds() -> Iterator[tuple[str, bytes]]:
    """Maps laid out from the spec: a BSP29 square face with a 16x16 texture, a fence texture,
    a BSP2 one, and one whose texture is missing (offset -1)."""
    import struct

    quake = spec_bytes()
    yield "bsp29.bsp", quake.bsp_bytes()
    yield "fence.bsp", quake.bsp_bytes(b"{fence")
    yield "bsp2.bsp", quake.bsp_bytes(bsp2=True)
    missing = bytearray(quake.bsp_bytes())
    (textures_at,) = struct.unpack_from("<i", missing, 4 + 8 * 2)
    struct.pack_into("<i", missing, textures_at + 4, -1)
    yield "missing-texture.bsp", bytes(missing)


def locatext_seeds() -> Iterator[tuple[str, bytes]]:
    """Localization files made by gamepak's writer (strings with a NUL, quotes, line ends,
    right-to-left text, an empty one; none at all), and one laid out by hand with a gap and two
    entries sharing a string (warnings, not errors)."""
    import struct

    from fuzz_import_translation import base_file

    from gamepak.formats.rfg.locatext import HEADER, SIGNATURE, LocaEntry, build

    yield "base.rfglocatext", base_file()
    texts = ["", "a\0b", "مرحبا", "x" * 40]
    yield (
        "odd.rfglocatext",
        build([LocaEntry(number * 7919, text.encode("utf-16-le") + b"\0\0") for number, text in enumerate(texts)]),
    )
    yield "none.rfglocatext", build([])
    table_end = HEADER.size + 3 * 12
    shared = struct.pack("<III", 1, table_end + 2, 4) + struct.pack("<III", 2, table_end + 2, 4)
    shared += struct.pack("<III", 3, table_end + 6, 2)
    yield "shared.rfglocatext", HEADER.pack(SIGNATURE, 3, 3) + shared + b"\0\0" + "z".encode("utf-16-le") + b"\0\0"


def translation_seeds() -> Iterator[tuple[str, bytes]]:
    """Translations of fuzz_import_translation's file in every form gamepak writes (one string
    changed, one key added), and forms other tools write: a PO with a fuzzy, an obsolete and a
    continued entry, a CSV with semicolons, RFGM's XML with a decimal hash."""
    from fuzz_import_translation import FORMS, base_file

    from gamepak.formats.rfg.locatext import LocaEntry, LocaText, encode_text, identifier_hash
    from gamepak.formats.rfg.locatext.translate import dump_translation

    table = LocaText.parse(base_file())
    table.name({identifier_hash(name): name for name in ("MENU_START", "MENU_QUIT", "EMPTY", "LINES")})
    table.entries[0].raw = encode_text("Go!", "seed")
    table.entries.append(LocaEntry(0xDEADBEEF, encode_text("new", "seed")))
    for form in FORMS:
        yield f"changed.{form}", dump_translation(table.entries, form, title="seed")
    yield (
        "tools.po",
        (
            b'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
            b'#, fuzzy\nmsgctxt "MENU_START"\nmsgid "Start"\nmsgstr "Los"\n\n'
            b'msgctxt "MENU_QUIT"\nmsgid ""\n"Quit"\nmsgstr ""\n"Ende"\n\n'
            b'#~ msgctxt "GONE"\n#~ msgid "x"\n#~ msgstr "y"\n'
        ),
    )
    yield "semicolons.csv", "\ufeffhash;identifier;text\r\n;MENU_QUIT;Fin\r\n".encode()
    yield (
        "rfgm.xml",
        b"<root><Entry><Identifier /><Hash>%d</Hash><String>Q</String></Entry></root>" % identifier_hash("MENU_QUIT"),
    )


# A table whose schema names a field of every kind, as the game's tables lay them out.
XTBL_DESCRIPTION = """\
\t<TableDescription>
\t\t<Name>Weapon</Name>
\t\t<Type>TableDescription</Type>
\t\t<Element><Name>Name</Name><Type>String</Type><Unique>true</Unique></Element>
\t\t<Element><Name>Magazine_Size</Name><Type>Int</Type><MinValue>0</MinValue></Element>
\t\t<Element><Name>Spread</Name><Type>Float</Type></Element>
\t\t<Element><Name>Class</Name><Type>Selection</Type><Choice>bullet</Choice><Choice>thrown</Choice></Element>
\t\t<Element><Name>Flags</Name><Type>Flags</Type><Flag>shatter</Flag></Element>
\t\t<Element><Name>Item</Name><Type>Reference</Type>
\t\t\t<Reference><File>fuzz.xtbl</File><Type>Weapon.Name</Type></Reference></Element>
\t\t<Element><Name>Effect</Name><Type>Filename</Type><Extension>effect</Extension></Element>
\t\t<Element><Name>Groups</Name><Type>List</Type><Element><Name>Group</Name><Type>String</Type></Element></Element>
\t\t<Element><Name>Needs</Name><Type>Grid</Type><Element><Name>Need</Name><Type>Element</Type>
\t\t\t<Element><Name>Stat</Name><Type>String</Type></Element></Element></Element>
\t\t<Element><Name>Offset</Name><Type>Vector</Type><X><Name>X</Name><Type>Float</Type></X></Element>
\t\t<Element><Name>Pick</Name><Type>ComboElement</Type><Element><Name>A</Name><Type>Int</Type></Element></Element>
\t</TableDescription>
"""
XTBL_ROWS = """\
\t\t<Weapon>
\t\t\t<Name>pistol</Name>
\t\t\t<Magazine_Size>16</Magazine_Size>
\t\t\t<Spread>1.5</Spread>
\t\t\t<Class>bullet</Class>
\t\t\t<!-- left by the editor -->
\t\t\t<Flags><Flag>shatter</Flag></Flags>
\t\t\t<Item>grenade</Item>
\t\t\t<Effect><Filename>muzzle.effect</Filename></Effect>
\t\t\t<Groups><Group>a</Group><Group>b</Group></Groups>
\t\t\t<Needs><Need><Stat>kills</Stat></Need></Needs>
\t\t\t<Offset><X>0.5</X></Offset>
\t\t\t<Pick><A>1</A></Pick>
\t\t\t<_Editor><Category>Entries</Category></_Editor>
\t\t</Weapon>
\t\t<Weapon><Name>grenade</Name><Class>thrown</Class><Spread/></Weapon>
"""


def xtbl_seeds() -> Iterator[tuple[str, bytes]]:
    """Tables laid out as the schema module documents them: one with a schema naming every
    kind of field (LF, and CRLF), one without a schema whose rows share a line, a Latin-1 one
    with its declaration, and one with no rows."""
    described = f"<root>\n\t<Table>\n{XTBL_ROWS}\t</Table>\n\t<TableTemplates/>\n{XTBL_DESCRIPTION}</root>\n"
    yield "described.xtbl", described.encode()
    yield "crlf.xtbl", described.replace("\n", "\r\n").encode()
    yield (
        "undescribed.xtbl",
        b"<root><Table><R><N>1</N><M>2</M></R><R><N>2</N><L><i>x</i><i>y</i></L></R></Table></root>",
    )
    latin = '<?xml version="1.0" encoding="windows-1252"?>\n<root>\n <Table>\n  <R><N>\xe9</N></R>\n </Table>\n</root>'
    yield "latin.xtbl", latin.encode("cp1252")
    yield "empty.xtbl", b"<root><Table></Table></root>"


SEED_CAR = """# a car laid out as MCS.car is
[body]
mesh = body.joe
texture = body00.png, body-misc1.png
[glass]
mesh = quad.joe
texture = glass.png
draw = transparent
[driver]
mesh = driver.joe
texture = outside.png
position = -0.35, -0.10, 0.15
rotation = 87.5, 0, 0
color = 0.5, 0.5, 0.5
[steering]
mesh = quad.joe
texture = outside/secret.png
position = 0, 0.3, 0.2
[wheel.fl]
mesh = quad.joe
texture = wheel.png
position = -0.75, 1.25, -0.49
[wheel.fl.tire]
texture = tire/touring.png
size = 175, 65, 15
[wheel.fl.brake]
texture = wheel.png
radius = 0.14
[wheel.fr]
mesh = quad.joe
texture = wheel.png
position = 0.75, 1.25, -0.49
scale = -1, 1, 1
[wheel.fr.tire]
size = 175, 250, 15
"""


def sheet_seeds() -> Iterator[tuple[str, bytes]]:
    """fuzz_import_sheet's table exported as CSV and JSON, with a cell changed, a row added
    and one removed; and a CSV of semicolons from a spreadsheet."""

    from gamepak.formats.rfg.xtbl import Table
    from gamepak.formats.rfg.xtbl.sheet import to_csv, to_json

    table = Table(base_table(), "seed.xtbl")
    yield "unchanged.csv", to_csv(table)
    yield "unchanged.json", to_json(table)
    table.set(0, "Spread", "2.5")
    table.set(0, "Groups", '["a", "c", {"<Other>": "d"}]')
    table.add_row({"Name": "knife", "Class": "bullet", "Offset.X": "1"})
    table.remove_row(1)
    edited = Table(table.write(), "seed.xtbl")
    yield "edited.csv", to_csv(edited)
    yield "edited.json", to_json(edited)
    yield "semicolons.csv", "\ufeffName;Spread\r\npistol;3\r\ngrenade;\r\n".encode()


def scene_seeds() -> Iterator[tuple[str, bytes]]:
    """VDrift data folders laid out as the spec says (vdrift-scenes.md): a track whose models
    are in objects.jpk, with flags, comments, start positions and a surface; a track of loose
    models with a 14-value header; a car with glass, a driver, a steering wheel and wheels (one
    mirrored) with a tyre and brake. Some names lead to the links the harness plants in
    carparts/ (`outside.png`, `outside/secret.png`)."""
    import numpy as np
    from fuzz_read_scene import png

    from gamepak.models import joe
    from gamepak.models.mesh import Mesh

    from _fuzzing import frame, pack_bytes

    positions = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], np.float32)
    normals = np.tile(np.array([[0, 0, 1]], np.float32), (4, 1))
    texcoords = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    quad = joe.write(Mesh.from_vertices(positions, [[0, 1, 2], [0, 2, 3]], normals, texcoords))
    flipped = joe.write(Mesh.from_vertices(positions * 2, [[0, 2, 1], [0, 3, 2]], normals, texcoords))

    def line(model: str, texture: str, *values: float) -> str:
        return " ".join([model, texture, *map(str, values)])

    listed = "\n".join(
        [
            "17",
            "# File generated by listedit",
            line("road.joe", "asphalt.png", 1, 0, 0, 0, 0, 0, 0, 1, 0.9, 1.0, 0.01, 0, 0, 0, 1),
            "#entry 1",
            line("fence.joe", "fence.png", 0, 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 1, 3, 2),
            line("sky.joe", "outside.png", 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0),
            line("road.joe", "outside/secret.png", 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0),
        ]
    )
    track = {
        "tracks/t/objects/list.txt": listed.encode(),
        "tracks/t/objects/objects.jpk": pack_bytes(
            "jpk", {}, [("road.joe", quad), ("fence.joe", flipped), ("sky.joe", quad)]
        ),
        "tracks/t/objects/asphalt.png": png(),
        "tracks/t/objects/fence.png": png(alpha=100),
        "tracks/t/track.txt": b"cull faces = off\nstart position 0 = 1, 2, 3\nstart orientation 0 = 0, 270, 0\n",
        "tracks/t/surfaces.txt": b"[surface-01]\nType = asphalt\nFrictionTread = 0.9\n",
        "tracks/t/about.txt": b"Fuzz Track\nby the seeds\n",
    }
    yield "track", frame(track)
    loose = {
        "tracks/loose/objects/list.txt": b"14\nroad.joe asphalt.png 1 0 0 0 0 0 0 1 0 0 0 0\nmissing.joe x.png",
        "tracks/loose/objects/road.joe": quad,
        "tracks/loose/objects/asphalt.png": png(3, 1),
    }
    yield "loose-track", frame(loose)
    car = {
        "cars/c/c.car": SEED_CAR.encode(),
        "cars/c/about.txt": b"Fuzz Car\n",
        "cars/c/body.joe": flipped,
        "cars/c/quad.joe": quad,
        "cars/c/body00.png": png(alpha=0),
        "cars/c/glass.png": png(alpha=136),
        "cars/c/wheel.png": png(),
        "carparts/driver.joe": quad,
        "carparts/tire/touring.png": png(1, 1),
    }
    yield "car", frame(car)
    yield "both", frame({**track, **car})


def base_table() -> bytes:
    """The seeds' table with a schema (`xtbl_seeds`' first): what fuzz_import_sheet edits."""
    return next(xtbl_seeds())[1]


def zone_seeds() -> Iterator[tuple[str, bytes]]:
    """RFG zones for fuzz_read_zone, laid out by hand from ../shared/specs/rfg-zones.md: a layer
    of two objects (a string, a bool, an op; a parent in the file and one outside it), a layer
    of the list kinds and handle properties, values kept as bytes (two NULs, a bool of 2, a NaN,
    an unknown type with non-zero padding, an empty buffer) with bytes after the objects, a
    territory cell with its 87,368-byte relation section, an empty layer, and one written by the
    zone writer with an object added; and the documents `zone export` writes of three of them
    (fuzz_read_zone takes an input starting with `{` for a document a user edited)."""
    import struct

    from gamepak.formats.rfg.zone.model import RELATION_SIZE, ZoneObject, read
    from gamepak.formats.rfg.zone.names import default_names, property_hash

    dummy = default_names().class_hash_of("object_dummy")

    def prop(type_code: int, name: str | int, value: bytes, padding: bytes | None = None) -> bytes:
        name_hash = property_hash(name) if isinstance(name, str) else name
        pad = bytes(-len(value) % 4) if padding is None else padding
        return struct.pack("<HHI", type_code, len(value), name_hash) + value + pad

    def obj(handle: int, props: list[bytes], parent: int = 0xFFFFFFFF, class_hash: int = dummy) -> bytes:
        records = b"".join(props)
        none = 0xFFFFFFFF
        head = struct.pack("<II6fHH", class_hash, handle, 0, 0, 0, 1, 1, 1, 0xFF00, 56 + len(records))
        return head + struct.pack("<IIIIHH", parent, none, none, 1, len(props), len(records)) + records

    def zone(objects: list[bytes], flags: int = 4, relation: bytes = b"", trailing: bytes = b"") -> bytes:
        return struct.pack("<4sIIIII", b"ZONE", 36, len(objects), 0, 0, flags) + relation + b"".join(objects) + trailing

    def op(x: float) -> bytes:
        return struct.pack("<12f", x, 2, 3, 1, 0, 0, 0, 1, 0, 0, 0, 1)

    first = obj(0x78800001, [prop(4, "dummy_type", b"crate\0"), prop(5, "op", op(1))], parent=0x78000005)
    second = obj(0x78800002, [prop(5, "enabled", b"\x01"), prop(5, "op", op(4))], parent=0x78800001)
    layer = zone([first, second])
    yield "layer.layer_pc", layer
    lists = obj(
        0x78800003,
        [
            prop(5, "yellow_num_points", struct.pack("<I", 3)),
            prop(6, "yellow_polygon", struct.pack("<6f", 0, 0, 1, 0, 1, 1)),
            prop(5, "yellow_num_triangles", struct.pack("<I", 1)),
            prop(6, "yellow_triangles", struct.pack("<3H", 0, 1, 2)),
            prop(6, "obj_links", struct.pack("<2I", 0x78800001, 0x78800002)),
            prop(5, "host_handle", struct.pack("<I", 0x78800002)),
            prop(5, "bb", struct.pack("<6f", 0, 0, 0, 1, 1, 1)),
            prop(5, "nav_orient", struct.pack("<9f", 1, 0, 0, 0, 1, 0, 0, 0, 1)),
            prop(5, "spawn_prob", struct.pack("<f", 0.5)),
            prop(5, "binary_flags", struct.pack("<H", 3)),
        ],
    )
    with_lists = zone([first, second, lists])
    yield "lists.layer_pc", with_lists
    odd = obj(
        0x78800004,
        [
            prop(4, "dummy_type", b"two\0\0"),
            prop(5, "enabled", b"\x02"),
            prop(5, "spawn_prob", struct.pack("<f", float("nan"))),
            prop(7, 0x12345678, b"abc", padding=b"\x09"),
            prop(6, "yellow_triangles", b""),
        ],
        class_hash=0x01020304,
    )
    odd_values = zone([odd, first], trailing=b"tail")
    yield "odd-values.layer_pc", odd_values
    relation = bytes(range(256)) * (RELATION_SIZE // 256) + bytes(RELATION_SIZE % 256)
    yield "cell.rfgzone_pc", zone([first], flags=0, relation=relation)
    yield "empty.layer_pc", zone([])
    written = read(layer)
    added = written.add(ZoneObject(dummy, 0, struct.pack("<6f", 0, 0, 0, 2, 2, 2), 0xFF01))
    added.set_value("op", "op", {"position": [7.0, 8.0, 9.0], "orient": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]})
    added.set_value("display_name", "string", "written")
    yield "written.layer_pc", written.to_bytes()
    # The documents `zone export` writes, as a user edits them (no relation section: the file
    # beside the document is not part of an input).
    import orjson

    from gamepak.formats.rfg.zone.document import to_document

    for name, data in (("layer", layer), ("lists", with_lists), ("odd-values", odd_values)):
        yield f"{name}.layer_pc.json", orjson.dumps(to_document(read(data)), option=orjson.OPT_INDENT_2)


def sprite_seeds() -> Iterator[tuple[str, bytes]]:
    """Gameloft BSPRITE v3 sprites (`fuzz_read_sprite`) laid out by hand from the spec
    (tests/sprite_bytes.py): modules, flipped FModules, an empty frame, an anim with an offset
    and frame 255; each encoding with its largest index, each colour format, two palettes; one
    without modules, one with a module of no pixels. And one made by gamepak's writer from pixels (`codec.encode`)."""
    import numpy as np

    from gamepak.formats.j2me.sprite import AFrame, Anim, FModule, Frame, Sprite, codec

    spec_bytes()  # puts tests/ on the path
    import sprite_bytes as hand

    yield "simple.f", hand.simple_sprite()
    # One FModule (flipped), its frame (rect as stored, never checked), an AFrame with an offset, its anim.
    one = ([(0, 0, 0, 1)], [(1, 0)], [(0, 0, 3, 2)], [(0, 1, 1, 0, 1)], [(1, 0)])
    for code, name in codec.ENCODINGS.items():
        colours = min(codec.ENCODING_COLOURS[code], 8)
        pixels = np.array([[0, 1, colours - 1], [colours - 1, colours - 1, colours - 1]], dtype=np.uint8)
        palette = [0x7C1F] + [0x8000 | (number * 0x0421) for number in range(1, colours)]
        module = codec.encode(code, pixels, colours)
        yield f"{name}.f", hand.sprite_bytes([(3, 2)], *one, [module], palettes=[palette], encoding=code)
    for code, name in codec.PIXEL_FORMATS.items():
        entries = [0x00FF00FF, 0xFF102030] if code == 0x8888 else [0x7C1F if code == 0x5515 else 0xF81F, 0xFFFF]
        palettes = [entries, entries[::-1]]
        yield f"{name}.f", hand.sprite_bytes([(1, 1)], *one, [b"\1"], pixel_format=code, palettes=palettes)
    yield "no-modules.f", hand.sprite_bytes([], [], [(0, 0)], [(0, 0, 0, 0)], [(0, 1, 0, 0, 0)], [(1, 0)], [])
    # A module without pixels (0 x 3, no data) placed beside one with them: drawn as nothing.
    yield (
        "zero-size.f",
        hand.sprite_bytes(
            [(0, 3), (1, 1)],
            [(0, 1, 1, 0), (1, 0, 0, 0)],
            [(2, 0)],
            [(0, 0, 1, 1)],
            [(0, 1, 0, 0, 0)],
            [(1, 0)],
            [b"", b"\3"],
        ),
    )
    sprite = Sprite(
        modules=[(4, 3), (2, 2)],
        fmodules=[FModule(0, -4, -3, 0), FModule(1, 0, 0, 3), FModule(0, 1, -1, 2)],
        frames=[Frame(2, 0, (-4, -3, 6, 5)), Frame(1, 2, (1, -1, 4, 3))],
        aframes=[AFrame(0, 2, 0, 0, 0), AFrame(1, 0, 3, -2, 1), AFrame(255, 1, 0, 0, 0)],
        anims=[Anim(3, 0), Anim(1, 1)],
        pixel_format=0x5515,
        colours=16,
        palettes=[[0x7C1F] + [0x8000 | (number * 0x0842) for number in range(1, 16)]],
        encoding=0x27F1,
    )
    sprite.module_data = [
        codec.encode(0x27F1, np.array([[1, 1, 1, 2], [0, 0, 0, 0], [3, 4, 5, 5]], dtype=np.uint8), 16),
        codec.encode(0x27F1, np.array([[7, 7], [7, 15]], dtype=np.uint8), 16),
    ]
    yield "written.f", sprite.to_bytes()


def rfgmesh_seeds() -> Iterator[tuple[str, bytes]]:
    """RFG mesh pairs laid out by hand from the spec (tests/rfg_mesh_bytes.py), framed as
    fuzz_read_rfgmesh reads them: a static quad strip (2009, and the remaster's with u32
    indices and three UV sets), a triangle list, two LODs with two materials, every texture
    slot, a strip restart, and character meshes (2009 and remaster) with bones, spheres,
    cylinders and blend weights."""
    from fuzz_read_rfgmesh import join_mesh_pair

    spec_bytes()  # puts tests/ on the path
    import rfg_mesh_bytes as meshes

    materials = [
        meshes.MaterialSpec(),
        meshes.MaterialSpec(
            textures=[("b_d.tga", "Diffuse_Map"), ("b_n.tga", "Normal_Map"), ("b_s.tga", "Specular_Map")]
        ),
    ]
    character = {
        "kind": "character",
        "vertex_format": 3,
        "bones": [0, 1, 2],
        "spheres": [(7, 1, (0.0, 1.5, 0.0), 0.25)],
        "cylinders": [(8, 2, (0.0, 1.0, 0.0), (0.1, 0.2, 0.3), 0.05, 0.4)],
    }
    lods = meshes.quad_spec(lod_ids=[0, 1], materials=materials)
    lods.submeshes = [[(0, [0, 1, 2, 3]), (1, [2, 3, 4, 5])], [(0, [0, 1, 2, 3])]]
    specs = {
        "static": meshes.quad_spec(),
        "remaster": meshes.quad_spec(remaster=True, index_size=4, vertex_format=41, uv_sets=3),
        "list": meshes.quad_spec(topology=1, submeshes=[[(0, [0, 1, 2, 2, 1, 3])]]),
        "restart": meshes.quad_spec(submeshes=[[(0, [0, 1, 2, 3, 0xFFFF, 2, 3, 4, 5])]]),
        "lods": lods,
        "character": meshes.quad_spec(**character),
        "character-remaster": meshes.quad_spec(**{**character, "vertex_format": 42}, remaster=True, uv_sets=3),
    }
    for name, spec in specs.items():
        yield f"{name}.mesh", join_mesh_pair(*meshes.build(spec))
