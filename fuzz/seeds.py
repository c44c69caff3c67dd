#!/usr/bin/env python3
"""Write the seed corpus of every fuzz harness: small files made by gamepak's own writers, plus
the real samples (and the packs, models and textures inside them) when ../shared/samples exists.

    python fuzz/seeds.py OUT_FOLDER [--samples FOLDER]

Each harness `fuzz_read_X.py` / `fuzz_rebuild_X.py` gets OUT_FOLDER/<harness>/ with the seeds of
format X. Existing files are kept (a corpus grows across runs); seeds are rewritten. The samples
are read from where they are and copied only into OUT_FOLDER, never into the repository.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_SAMPLES = HERE.parent.parent / "shared" / "samples"
# Larger samples make every execution slow (table.vpp_pc inflates 22 MB): the writers' small
# packs cover the same code paths.
MAX_SAMPLE_BYTES = 1 << 20
# Kinds whose harness does much per byte: the game's 726 KB localization file is exported and
# imported in four forms per input (a dozen executions a second instead of hundreds).
MAX_SAMPLE_BYTES_OF = {"locatext": 64 << 10}

MEMBERS = [
    ("maps/e1m1.bsp", b"IBSP" + bytes(range(60))),
    ("readme.txt", b"hello world\n" * 5),
    ("sound/b.wav", b"RIFF\x02\x00\x00\x00"),
    ("empty.bin", b""),
]
# (format, writer options, member names flat?) of each seed pack.
PACKS = {
    "pak": [("pak", {}), ("pak", {"align": 16}), ("pak", {"directory": "start"})],
    "jpk": [("jpk", {}), ("jpk", {"name_field_size": 32})],
    "vpp": [("vpp", {"flags": flags}) for flags in range(4)] + [("vpp", {"flags": 3, "align": 16, "level": 9})],
    "zip": [("zip", {"compression": name}) for name in ("store", "deflate", "bzip2", "lzma")],
    "tar": [("tar", {}), ("tar.gz", {})],
    "j2me": [("j2me-table", {}), ("j2me-offsets", {}), ("j2me-end-offsets", {}), ("j2me-sized", {})],
}


def _members_for(format_name: str) -> list[tuple[str, bytes]]:
    if format_name.startswith("j2me"):
        return [(str(index), data) for index, (_, data) in enumerate(MEMBERS)]
    if format_name == "vpp":  # RFG names hold no folders
        return [(name.rsplit("/", 1)[-1], data) for name, data in MEMBERS]
    return MEMBERS


def _pack(format_name: str, options: dict[str, object], members: list[tuple[str, bytes]]) -> bytes:
    import gamepak

    extension = {"tar.gz": ".tar.gz"}.get(format_name, f".{format_name}")
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, f"seed{extension}")
        with gamepak.create(path, format_name.removesuffix(".gz"), **options) as writer:
            for name, data in members:
                writer.add(name, data)
        return Path(path).read_bytes()


def pack_seeds(kind: str) -> Iterator[tuple[str, bytes]]:
    """Seeds for one archive format: each writer option set, with the usual members, one
    member and none."""
    for format_name, options in PACKS[kind]:
        label = "-".join([format_name, *(f"{key}{value}" for key, value in options.items())])
        members = _members_for(format_name.removesuffix(".gz"))
        yield f"{label}.bin", _pack(format_name, options, members)
        yield f"{label}-one.bin", _pack(format_name, options, members[:1])
        if not format_name.startswith("j2me-sized"):
            yield f"{label}-empty.bin", _pack(format_name, options, [])


def joe_seeds() -> Iterator[tuple[str, bytes]]:
    """A quad and a triangle with normals and texture coordinates, in one and in two frames."""
    import numpy as np

    from gamepak.models import joe
    from gamepak.models.mesh import Mesh

    positions = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0.5, 0.5, 1]], np.float32)
    normals = np.array([[0, 0, 1], [0, 0, -1]], np.float32)
    texcoords = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    # (vertex, normal, texcoord) index per corner of each face
    corners = np.array(
        [[[0, 0, 0], [1, 0, 1], [2, 0, 2]], [[0, 0, 0], [2, 0, 2], [3, 0, 3]], [[1, 1, 1], [4, 1, 2], [2, 1, 3]]]
    )
    mesh = Mesh(positions, normals, texcoords, corners)
    yield "one-frame.joe", joe.write(mesh)
    mesh.extra_frames = [Mesh(positions * 2, normals, texcoords, corners)]
    yield "two-frames.joe", joe.write(mesh)


def peg_seeds() -> Iterator[tuple[str, bytes]]:
    """Texture pairs (CPU file, then GPU file) in every pixel format the writer encodes."""
    import numpy as np

    from gamepak.errors import GamepakError
    from gamepak.formats.rfg.peg import Peg, PixelFormat

    pixels = np.random.default_rng(0).integers(0, 256, (8, 8, 4), dtype=np.uint8)
    for fmt in PixelFormat:
        peg = Peg.new("seed.cpeg_pc")
        try:
            peg.add_texture("first", pixels, fmt)
            peg.add_texture("second", pixels[:4, :4], fmt, mips=1)
        except GamepakError:
            continue  # a format the writer cannot encode
        cpu, gpu = peg.to_bytes()
        yield f"{fmt.label}.peg", cpu + gpu


def asm_seeds() -> Iterator[tuple[str, bytes]]:
    """A container table of two containers, one with a CPU+GPU primitive pair."""
    from gamepak.formats.rfg.asm import AsmContainer, AsmFile, AsmPrimitive

    textures = AsmContainer("effects", 2, 1, 6144, 900, [100, 800], [AsmPrimitive("fx.cpeg_pc", 1, 0, 0, 1, 100, 800)])
    empty = AsmContainer("empty", 0, 0, 2048, 0)
    yield "two-containers.asm_pc", AsmFile([textures, empty]).to_bytes()
    yield "none.asm_pc", AsmFile([]).to_bytes()


def gpatch_seeds() -> Iterator[tuple[str, bytes]]:
    """Patch files made against fuzz_read_gpatch's base pack: a replace (a delta or the bytes),
    an add, a remove, a rename, and all of them in one patch."""
    from fuzz_read_gpatch import BASE_MEMBERS, base_pack

    import gamepak

    base = dict(BASE_MEMBERS)
    variants = {
        "replace": {**base, "readme.txt": b"hello there\n" * 20},
        "add": {**base, "maps/e1m2.bsp": b"IBSP new"},
        "remove": {name: data for name, data in base.items() if name != "sound/b.wav"},
        "rename": {("maps/start.bsp" if name == "maps/e1m1.bsp" else name): data for name, data in base.items()},
    }
    variants["all"] = {
        "maps/start.bsp": base["maps/e1m1.bsp"],
        "readme.txt": b"hello there\n" * 20,
        "maps/e1m2.bsp": b"IBSP new",
    }
    with tempfile.TemporaryDirectory() as folder:
        base_path = os.path.join(folder, "base.pak")
        base_pack(base_path)
        for label, members in variants.items():
            modded = os.path.join(folder, f"{label}.pak")
            with gamepak.create(modded, "pak") as writer:
                for name, data in members.items():
                    writer.add(name, data)
            out = os.path.join(folder, f"{label}.gpatch")
            gamepak.patch.make(base_path, modded, out, name=label)
            with open(out, "rb") as handle:
                yield f"{label}.gpatch", handle.read()


def vcdiff_append(source: bytes, added: bytes) -> bytes:
    """A VCDIFF delta (RFC 3284's layout, xdelta3's Adler-32) turning `source` into `source +
    added`: one window, a COPY of the whole source and an ADD."""
    import zlib

    from gamepak.formats.vcdiff import encode_varint

    instructions = bytes([19]) + encode_varint(len(source)) + bytes([1]) + encode_varint(len(added))  # COPY, ADD
    addresses = encode_varint(0)
    target = source + added
    sections = encode_varint(len(added)) + encode_varint(len(instructions)) + encode_varint(len(addresses))
    body = encode_varint(len(target)) + b"\x00" + sections + zlib.adler32(target).to_bytes(4, "big")
    body += added + instructions + addresses
    window = bytes([1 | 4]) + encode_varint(len(source)) + encode_varint(0) + encode_varint(len(body)) + body
    return b"\xd6\xc3\xc4\x00\x00" + window


def mod_seeds() -> Iterator[tuple[str, bytes]]:
    """SyncFaction mods for fuzz_read_mod's game: loose archives with a delete list and options,
    a modinfo.xml with an edit, a replace and a user input, a hash list, an `.xdelta` of the
    game's exe, and one of them zipped."""
    import hashlib
    import io
    import zipfile

    from fuzz_read_mod import EXE

    from _fuzzing import frame

    loose = {
        "data/misc.vpp_pc/a.xtbl": b"<root><Table><x>2</x></Table></root>",
        "data/misc.vpp_pc/new.xtbl": b"<root>new</root>",
        "data/misc.vpp_pc/.delete.json": b'["b.xtbl"]',
        "data/misc.vpp_pc/.options.json": b'{"Mode": "Compressed"}',
        "readme.txt": b"a mod",
    }
    yield "loose", frame(loose)
    modinfo = (
        b'<Mod Name="seed"><Author>me</Author><Changes>'
        b'<Edit File="data\\misc.vpp\\a.xtbl" LIST_ACTION="REPLACE"><x><USER_INPUT>v</USER_INPUT></x></Edit>'
        b'<Replace File="data\\misc.vpp_pc\\b.xtbl" NewFile="files\\b.xtbl"/></Changes>'
        b'<UserInput><ListBox Name="v" DisplayName="V"><Option Name="one">1</Option><Option Name="two">2</Option>'
        b"</ListBox></UserInput></Mod>"
    )
    yield "modinfo", frame({"m/modinfo.xml": modinfo, "m/files/b.xtbl": b"<root>B</root>", "m/unused.txt": b"?"})
    hashes = {"data/misc.vpp_pc": hashlib.sha256(b"not the result").hexdigest().upper()}
    yield "hashes", frame({**loose, ".mod.hashes.json": json.dumps(hashes).encode()})
    yield "xdelta", frame({"rfg.xdelta": vcdiff_append(EXE, b"patched"), "data/rfg.txt": b"whole file"})
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in loose.items():
            archive.writestr(f"My Mod/{name}", data)
    yield "zipped.zip", buffer.getvalue()


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

    quake = spec_bytes()
    qpic = quake.qpic_bytes(3, 2, bytes([1, 2, 255, 4, 5, 6]))
    miptex = quake.miptex_bytes(b"{fence", 16, 8)
    lumps = {"box": qpic, "{fence": miptex, "conchars": bytes(range(256)) * 64, "palette": bytes(range(256)) * 3}
    yield "wad2.wad", _pack("wad", {}, list(lumps.items()))
    wad3_image = images.read_miptex(miptex, "hltest", "seed")
    wad3_image.palette = bytes(reversed(range(256))) * 3
    yield "wad3.wad", _pack("wad", {"version": "WAD3"}, [("hltest", images.write_miptex(wad3_image))])
    yield "spec.wad", quake.wad_bytes([(b"BOX", 0x42, qpic), (b"wall", 0x44, miptex), (b"IBAR.BAK", 0x42, qpic)])
    yield "empty.wad", _pack("wad", {}, [])


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
    from fuzz_import_sheet import base_table

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

    from _fuzzing import frame

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
        "tracks/t/objects/objects.jpk": _pack(
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


def sample_seeds(samples: Path) -> Iterator[tuple[str, str, bytes]]:
    """(kind, name, bytes) of the real samples and of the packs, models and texture pairs they
    hold (one level deep)."""
    import gamepak
    from gamepak.errors import GamepakError

    kinds = {".pak": "pak", ".jpk": "jpk", ".vpp_pc": "vpp", ".str2_pc": "vpp", ".joe": "joe", ".asm_pc": "asm"}
    kinds.update({".wad": "wad", ".lmp": "qimage", ".wal": "qimage", ".spr": "qimage", ".mdl": "mdl", ".bsp": "bsp"})
    kinds.update({".rfglocatext": "locatext", ".xtbl": "xtbl"})
    for path in sorted(samples.rglob("*")):
        kind = kinds.get(path.suffix.lower())
        if kind is None or path.stat().st_size > MAX_SAMPLE_BYTES_OF.get(kind, MAX_SAMPLE_BYTES):
            continue
        data = path.read_bytes()
        yield kind, path.name, data
        if kind not in ("pak", "jpk", "vpp"):
            continue
        try:
            with gamepak.open(path) as archive:
                members = {entry.name: entry for entry in archive.infolist() if entry.size <= MAX_SAMPLE_BYTES}
                for name, entry in members.items():
                    inner = kinds.get(os.path.splitext(name)[1].lower())
                    if inner is not None and entry.size <= MAX_SAMPLE_BYTES_OF.get(inner, MAX_SAMPLE_BYTES):
                        yield inner, f"{path.name}-{name.replace('/', '_')}", archive.read(entry)
                for name, entry in members.items():
                    if name.lower().endswith(".cpeg_pc") and name[:-8] + ".gpeg_pc" in members:
                        gpu = archive.read(members[name[:-8] + ".gpeg_pc"])
                        yield "peg", f"{path.name}-{name}", archive.read(entry) + gpu
        except GamepakError as exc:
            print(f"seeds: skipping what {path} holds: {exc}", file=sys.stderr)


def image_seeds() -> Iterator[tuple[str, bytes]]:
    """Images a modder imports: PNG (RGB and RGBA), an RLE TGA, a BMP, and DDS files gamepak
    and other tools write (a peg texture's own, one with padding after its chain)."""
    import io

    import numpy as np
    from PIL import Image

    from gamepak.formats.rfg.peg import Peg, PixelFormat

    pixels = np.random.default_rng(1).integers(0, 256, (8, 8, 4), dtype=np.uint8)
    for name, mode, fmt, options in (
        ("rgba.png", "RGBA", "PNG", {}),
        ("rgb.png", "RGB", "PNG", {}),
        ("rle.tga", "RGBA", "TGA", {"compression": "tga_rle"}),
        ("plain.bmp", "RGB", "BMP", {}),
    ):
        out = io.BytesIO()
        Image.fromarray(pixels[:, :, : len(mode)], mode).save(out, fmt, **options)
        yield name, out.getvalue()
    peg = Peg.new("seed.cpeg_pc")
    peg.add_texture("dxt", pixels, PixelFormat.DXT1)
    peg.add_texture("rgba", pixels, PixelFormat.A8R8G8B8, mips=1)
    dds = peg.to_dds("dxt")
    yield "dxt1.dds", dds
    yield "dxt1-padded.dds", dds + bytes(8)
    yield "8888.dds", peg.to_dds("rgba")


def harness_kinds() -> dict[str, str]:
    """Each harness's name and the format its seeds are: fuzz_read_pak -> pak (`all`: every
    archive format)."""
    return {path.stem: path.stem.split("_", 2)[2] for path in sorted(HERE.glob("fuzz_*.py"))}


def write_seeds(out: Path, samples: Path | None) -> dict[str, int]:
    """Write every harness's seeds under `out`; returns how many each got."""
    by_kind: dict[str, list[tuple[str, bytes]]] = {kind: list(pack_seeds(kind)) for kind in PACKS}
    by_kind["joe"] = list(joe_seeds())
    by_kind["peg"] = list(peg_seeds())
    by_kind["asm"] = list(asm_seeds())
    by_kind["gpatch"] = list(gpatch_seeds())
    by_kind["mod"] = list(mod_seeds())
    by_kind["image"] = list(image_seeds())
    by_kind["wad"] = list(wad_seeds())
    by_kind["qimage"] = list(qimage_seeds())
    by_kind["mdl"] = list(mdl_seeds())
    by_kind["bsp"] = list(bsp_seeds())
    by_kind["locatext"] = list(locatext_seeds())
    by_kind["translation"] = list(translation_seeds())
    by_kind["xtbl"] = list(xtbl_seeds())
    by_kind["scene"] = list(scene_seeds())
    by_kind["sheet"] = list(sheet_seeds())
    if samples is not None and samples.is_dir():
        for kind, name, data in sample_seeds(samples):
            by_kind[kind].append((f"sample-{name}", data))
    # Harnesses over every archive format (detection, extraction) take all their seeds.
    by_kind["all"] = [(f"{kind}-{name}", data) for kind in PACKS for name, data in by_kind[kind]]
    counts = {}
    for harness, kind in harness_kinds().items():
        folder = out / harness
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in by_kind[kind]:
            # The content's hash keeps two seeds of one name apart.
            digest = hashlib.sha1(data).hexdigest()[:8]
            (folder / f"seed-{name}-{digest}").write_bytes(data)
        counts[harness] = len(by_kind[kind])
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("out", type=Path, help="the corpus folder (one subfolder per harness)")
    parser.add_argument("--samples", type=Path, default=DEFAULT_SAMPLES, help="the real samples (default: %(default)s)")
    args = parser.parse_args(argv)
    samples = args.samples if args.samples.is_dir() else None
    if samples is None:
        print(f"seeds: {args.samples} is absent: seeds from gamepak's writers only", file=sys.stderr)
    counts = write_seeds(args.out, samples)
    print(f"seeds: {sum(counts.values())} seed files for {len(counts)} harnesses in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
