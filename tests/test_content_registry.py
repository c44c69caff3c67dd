"""The content registry walked through every surface: for every row (`gamepak.content.KINDS`),
a file of its kind is taken by the row for its family's command, which runs on it; the viewer
shows it loose and inside a pack with the same preview; the catalog gives it rows in its
family's table, loose and packed, and the `archives.kind` its family says; and the README's
table is the registry's. A row without a sample here fails `test_every_row_has_a_sample`: a new
kind is walked as soon as its row is added.
"""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from quake_bytes import bsp_bytes, mdl_bytes, qpic_bytes, wal_bytes

import gamepak.content as content
from gamepak import create

from web_fixtures import LANG_STRINGS, STRINGS, build_string_blob, build_text_pack, cube_joe, encode_string, peg_pair

README = Path(__file__).resolve().parents[1] / "README.md"
SEAM_ST = [(0x20, 1, 0), (0, 2, 1), (0, 3, 2), (0, 1, 3)]
SEAM_TRIANGLES = [(1, 0, 1, 2), (0, 0, 2, 3)]
SEAM_POSES = [[(0, 0, 0), (10, 0, 0), (0, 10, 0), (0, 0, 10)]]


@dataclass
class Sample:
    """Files of one kind: `loose` (name -> bytes; the first is the one the commands take) lying in
    a folder, and `packed` members of a pack of format `pack`; the CLI arguments of the family's
    command for the loose file and for the pack (`{file}`, `{pack}` filled in), and what its
    output must hold."""

    loose: dict[str, bytes]
    pack: str
    packed: dict[str, bytes]
    command: list[str]
    packed_command: list[str]
    shows: str
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return next(iter(self.loose))

    @property
    def member(self) -> str:
        return next(iter(self.packed))


def _locatext() -> bytes:
    from gamepak.formats.rfg.locatext import SIGNATURE, identifier_hash

    strings = [(identifier_hash("UI_MENU_START"), "Start"), (identifier_hash("UI_MENU_QUIT"), "Quit")]
    position, table, blob = 12 + 12 * len(strings), b"", b""
    for hash_value, text in strings:
        raw = text.encode("utf-16-le") + b"\0\0"
        table += struct.pack("<III", hash_value, position, len(raw))
        blob += raw
        position += len(raw)
    return struct.pack("<III", SIGNATURE, 3, len(strings)) + table + blob


def _samples() -> dict[str, Callable[[], Sample]]:
    def peg() -> Sample:
        cpu, gpu, _ = peg_pair()
        pair = {"crate.cpeg_pc": cpu, "crate.gpeg_pc": gpu}
        return Sample(pair, "vpp", pair, ["texture", "ls", "{file}"], ["texture", "ls", "{pack}"], "crate")

    def quake_image() -> Sample:
        # A Quake II WAL, loose and inside a PAK (`info` used to call it a J2ME pack).
        wal = wal_bytes(16, 16)
        return Sample(
            {"rock.wal": wal, "button.lmp": qpic_bytes(8, 4, bytes(range(32)))},
            "pak",
            {"textures/rock.wal": wal},
            ["texture", "ls", "{file}"],
            ["texture", "ls", "{pack}"],
            "16x16",
        )

    def joe() -> Sample:
        data = cube_joe()
        return Sample({"cube.joe": data}, "jpk", {"cube.joe": data}, ["model", "info", "{file}"],
                      ["model", "info", "{pack}", "cube.joe"], "faces")  # fmt: skip

    def mdl() -> Sample:
        data = mdl_bytes(st=SEAM_ST, triangles=SEAM_TRIANGLES, poses=SEAM_POSES)
        return Sample({"seam.mdl": data}, "pak", {"progs/seam.mdl": data}, ["model", "info", "{file}"],
                      ["model", "info", "{pack}", "progs/seam.mdl"], "format: mdl")  # fmt: skip

    def bsp() -> Sample:
        data = bsp_bytes()
        return Sample({"e1m1.bsp": data}, "pak", {"maps/e1m1.bsp": data}, ["model", "info", "{file}"],
                      ["model", "info", "{pack}", "maps/e1m1.bsp"], "format: bsp")  # fmt: skip

    def rfglocatext() -> Sample:
        data = _locatext()
        name = "locatexts_xx_yy.rfglocatext"
        return Sample({name: data}, "vpp", {name: data}, ["text", "export", "{file}", "--names"],
                      ["text", "export", "{pack}", name, "--names"], "Quit")  # fmt: skip

    def j2me_strings() -> Sample:
        pack = build_text_pack([encode_string(text, index) for index, text in enumerate(STRINGS)])
        blob = build_string_blob([text.encode("latin-1") for text in LANG_STRINGS])
        return Sample({"strings.bin": pack}, "j2me-table", {"0": blob, "1": bytes(range(40))},
                      ["text", "export", "{file}"], ["text", "export", "{pack}", "0"], LANG_STRINGS[1],
                      extra={"loose_shows": STRINGS[1], "browsed_as": "0.txt", "loose_is_pack": True})  # fmt: skip

    def xtbl() -> Sample:
        data = b"<root><Table><Weapon><Name>rifle</Name><Damage>5</Damage></Weapon></Table></root>\n"
        return Sample({"weapons.xtbl": data}, "vpp", {"weapons.xtbl": data}, ["table", "ls", "{file}"],
                      ["table", "ls", "{pack}"], "weapons.xtbl")  # fmt: skip

    def rfg_mesh() -> Sample:
        from rfg_mesh_bytes import build, quad_spec

        cpu, gpu = build(quad_spec())
        pair = {"quad.csmesh_pc": cpu, "quad.gsmesh_pc": gpu}
        return Sample(pair, "vpp", pair, ["model", "info", "{file}"],
                      ["model", "info", "{pack}", "quad.csmesh_pc"], "gpu_file: quad.gsmesh_pc")  # fmt: skip

    def sprite() -> Sample:
        # A sprite file on its own (as `extract` writes it) and a member of a J2ME pack.
        from sprite_bytes import simple_sprite

        data = simple_sprite()
        return Sample({"hero.bsprite": data}, "j2me-table", {"0": data, "1": bytes(range(40))},
                      ["texture", "ls", "{file}"], ["texture", "ls", "{pack}"], "module 000",
                      extra={"browsed_as": "0.bin"})  # fmt: skip

    def rfg_zone() -> Sample:
        from test_rfg_zones import a_layer

        data = a_layer()
        name = "dm_01.layer_pc"
        return Sample({name: data}, "vpp", {name: data}, ["zone", "ls", "{file}"], ["zone", "ls", "{pack}"],
                      "0x78800002")  # fmt: skip

    return {
        "peg": peg,
        "rfg-zone": rfg_zone,
        "sprite": sprite,
        "rfg-mesh": rfg_mesh,
        "quake-image": quake_image,
        "joe": joe,
        "mdl": mdl,
        "bsp": bsp,
        "rfglocatext": rfglocatext,
        "j2me-strings": j2me_strings,
        "xtbl": xtbl,
    }


SAMPLES = _samples()
# Kinds walked through every surface by their own tests, named here so that a new row is never
# skipped silently: folders, not files (tests/test_scenes.py, tests/test_web_scenes.py).
FOLDER_KINDS = {"scene": "a VDrift track or car folder"}
ROWS = [kind for kind in content.KINDS if kind.name not in FOLDER_KINDS]


def test_every_row_has_a_sample() -> None:
    assert {kind.name for kind in content.KINDS} == set(SAMPLES) | set(FOLDER_KINDS)


def _lay_out(root: Path, kind: content.ContentKind) -> tuple[Sample, Path, Path]:
    """The sample of `kind` as loose files in root/<kind>/ and a pack root/<kind>/pack.<ext>."""
    sample = SAMPLES[kind.name]()
    folder = root / kind.name
    folder.mkdir(parents=True)
    for name, data in sample.loose.items():
        (folder / name).write_bytes(data)
    extension = {"vpp": "vpp_pc", "j2me-table": "f"}.get(sample.pack, sample.pack)
    pack = folder / f"packed.{extension}"
    with create(pack, sample.pack) as writer:
        for name, data in sample.packed.items():
            writer.add(name, data)
    return sample, folder / sample.name, pack


@pytest.fixture(scope="module")
def laid_out(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, tuple[Sample, Path, Path]]]:
    root = tmp_path_factory.mktemp("kinds")
    return root, {kind.name: _lay_out(root, kind) for kind in ROWS}


@pytest.fixture(scope="module")
def catalog(laid_out: tuple[Path, dict[str, tuple[Sample, Path, Path]]]) -> dict[str, list[dict]]:
    from gamepak.catalog import build_catalog
    from gamepak.catalog.schema import read_table

    root, _ = laid_out
    out = root.parent / (root.name + ".catalog")
    build_catalog([str(root)], str(out), scheduler="synchronous")
    tables = ("archives", "textures", "models", "strings", "zone_objects", "errors")
    return {table: read_table(str(out), table).to_pylist() for table in tables}


# -- the rows themselves -------------------------------------------------------------------------
@pytest.mark.parametrize("kind", content.KINDS, ids=lambda kind: kind.name)
def test_every_verb_is_a_function_of_its_family(kind: content.ContentKind) -> None:
    """Each verb names a function that exists, and a verb its family documents (one signature
    per verb); the module is imported only now, not by `import gamepak.content`."""
    for name, verb in kind.verbs.items():
        assert callable(verb.function()), (kind.name, name)
        own = {"line", "partner", "probe", "claims"}
        assert name in kind.family.verbs or name in own, f"{kind.name}: verb {name} has no signature in its family"
    if kind.claims is not None:
        assert callable(kind.claims.function())


def test_importing_the_registry_loads_no_module_it_names() -> None:
    import subprocess
    import sys

    named = sorted(
        {verb.module for kind in content.KINDS for verb in kind.verbs.values()} - {"gamepak.content.previews"}
    )
    code = f"import sys, gamepak.content; print([m for m in {named!r} if m in sys.modules])"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "[]"


def test_core_names_no_module_above_it() -> None:
    core = Path(content.__file__).resolve().parents[1] / "core"
    # (core/registry.py's format rows name format modules, models.joe among them: the archive
    # registry, not the content one.)
    above = re.compile(r"gamepak\.(ops|content|cli|web|catalog|fs)\b")
    for path in core.rglob("*.py"):
        assert not above.search(path.read_text(encoding="utf-8")), f"{path.name} names a module above core"


# -- the CLI ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ROWS, ids=lambda kind: kind.name)
def test_the_family_command_takes_the_kind_loose_and_packed(kind: content.ContentKind, laid_out) -> None:
    from conftest import in_process_cli

    _, found = laid_out
    sample, loose, pack = found[kind.name]
    assert content.for_path(kind.family.name, str(loose)) is kind
    for arguments, shows in (
        (sample.command, sample.extra.get("loose_shows", sample.shows)),
        (sample.packed_command, sample.shows),
    ):
        filled = [argument.format(file=loose, pack=pack) for argument in arguments]
        assert filled[0] == kind.family.command
        code, out, err = in_process_cli(*filled)
        assert code == 0, (filled, err)
        assert str(shows) in out + err, (filled, out, err)


# -- the viewer ------------------------------------------------------------------------------------
def _preview_shape(html: str) -> tuple[str, int, int]:
    """(preview kind, figures (textures), string rows) of a file page: what it shows, URLs aside."""
    found = re.search(r'class="preview preview-(\w+)"', html)
    return (found.group(1) if found else "none", html.count("<figure"), html.count('class="string"'))


@pytest.mark.parametrize("kind", ROWS, ids=lambda kind: kind.name)
def test_loose_and_packed_files_get_the_same_preview(kind: content.ContentKind, laid_out) -> None:
    from starlette.testclient import TestClient

    from gamepak.web.app import create_app

    root, found = laid_out
    sample, loose, pack = found[kind.name]
    client = TestClient(create_app(str(root)), base_url="http://127.0.0.1")
    member = sample.extra.get("browsed_as", sample.member)  # J2ME members are shown with an extension
    loose_page = client.get(f"/browse/{kind.name}/{loose.name}")
    packed_page = client.get(f"/browse/{kind.name}/{pack.name}/{member}")
    assert loose_page.status_code == packed_page.status_code == 200
    loose_shape, packed_shape = _preview_shape(loose_page.text), _preview_shape(packed_page.text)
    preview = kind.preview
    if preview == "table":
        assert f'href="/table/{kind.name}/{loose.name}"' in loose_page.text
        assert f'href="/table/{kind.name}/{pack.name}/{member}"' in packed_page.text
        return
    assert packed_shape[0] == preview, packed_page.text
    if sample.extra.get("loose_is_pack"):
        # A J2ME text pack is a pack of a string table and an index table: its page lists them,
        # shows its strings and links the same strings page.
        assert '<section class="strings">' in loose_page.text
        assert f'href="/strings/{kind.name}/{loose.name}"' in loose_page.text
    else:
        assert loose_shape[0] == preview, loose_page.text
    if sample.loose[sample.name] == sample.packed[sample.member]:
        assert loose_shape == packed_shape  # the same gallery, the same strings
    if preview == "strings":
        for path in (f"{kind.name}/{loose.name}", f"{kind.name}/{pack.name}/{member}"):
            assert client.get(f"/strings/{path}").status_code == 200
    if preview == "model":
        assert client.get(f"/model/{kind.name}/{loose.name}").content[:4] == b"glTF"
        glb = client.get(f"/model/{kind.name}/{pack.name}/{member}").content
        assert glb[:4] == b"glTF" and len(glb) > 200


def test_a_loose_map_is_a_file_with_its_3d_view_and_gallery(laid_out) -> None:
    from starlette.testclient import TestClient

    from gamepak.web.app import create_app

    root, _ = laid_out
    client = TestClient(create_app(str(root)), base_url="http://127.0.0.1")
    page = client.get("/browse/bsp/e1m1.bsp").text
    assert "0 members" not in page and 'class="preview preview-model"' in page
    assert "/texture/bsp/e1m1.bsp?name=wall" in page
    texture = client.get("/texture/bsp/e1m1.bsp?name=wall")
    assert texture.status_code == 200 and texture.content[:8] == b"\x89PNG\r\n\x1a\n"


# -- the catalog -----------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ROWS, ids=lambda kind: kind.name)
def test_the_catalog_lists_the_kind_loose_and_packed(kind: content.ContentKind, laid_out, catalog) -> None:
    from gamepak.core.opening import detect
    from gamepak.core.registry import get_format

    _, found = laid_out
    _, loose, pack = found[kind.name]
    table = kind.family.catalog
    if table is None:
        return  # tables: members only (checked by the members rows of every catalog test)
    rows = catalog[table]
    assert any(row["archive_path"] == str(loose) for row in rows), (table, kind.name)
    assert any(row["archive_path"] == str(pack) for row in rows), (table, kind.name)
    archives = [row for row in catalog["archives"] if row["path"] == str(loose)]
    assert len(archives) == 1, kind.name
    formats = [d.format for d in detect(str(loose)) if d.has_magic]
    packed_format = formats and get_format(formats[0]).kind == "archive"
    expected = "archive" if packed_format else kind.family.archive_kind
    if expected is None or (not formats and kind.name == "j2me-strings"):
        expected = "archive"  # a J2ME text pack is a pack (j2me-sized) holding the strings
    assert archives[0]["kind"] == expected, archives[0]
    for row in catalog["archives"]:
        assert row["kind"] in ("archive", "table", "model", "texture", "strings", "zone"), row


def test_loose_quake_images_and_wal_are_textures_rows(laid_out, catalog) -> None:
    _, found = laid_out
    _, loose, _ = found["quake-image"]
    names = {(Path(row["archive_path"]).name, row["name"]) for row in catalog["textures"]}
    assert {("rock.wal", "rock"), ("button.lmp", "button"), ("e1m1.bsp", "wall"), ("seam.mdl", "skin0")} <= names
    kinds = {Path(row["path"]).name: row["kind"] for row in catalog["archives"] if row["depth"] == 0}
    assert kinds["e1m1.bsp"] == "model" and kinds["locatexts_xx_yy.rfglocatext"] == "strings"
    assert kinds["rock.wal"] == "texture" and json.loads(
        next(r for r in catalog["archives"] if r["path"] == str(loose))["header"]
    ) == {"textures": 1}


def test_the_j2me_strings_of_a_pack_member_are_strings_rows(laid_out, catalog) -> None:
    _, found = laid_out
    _, _, pack = found["j2me-strings"]
    rows = [row for row in catalog["strings"] if row["archive_path"] == str(pack)]
    assert [row["string"] for row in rows] == LANG_STRINGS and {row["member"] for row in rows} == {"0"}


# -- info and detect ------------------------------------------------------------------------------
# Extensions of content kinds that are neither a format nor pointed at a command, and why.
NO_POINTER = {
    ".glb": "a binary glTF: any tool reads it",
    ".mip": "a Quake miptex lump written out by `extract`",
    ".car": "a VDrift car's definition, read with its folder",
    ".xtbl": "XML text",
}


@pytest.mark.parametrize("kind", content.KINDS, ids=lambda kind: kind.name)
def test_info_and_detect_point_a_content_file_at_its_command(kind: content.ContentKind) -> None:
    """`gamepak info`/`detect` of a loose file of a content kind that is no pack names the
    command of a kind that takes it (core's pointer table, checked against the registry)."""
    from gamepak.core.registry import format_for_path, other_command_for

    for extension in kind.extensions + kind.partner_extensions:
        name = "x" + extension
        if format_for_path(name) is not None or extension in NO_POINTER:
            continue
        pointer = other_command_for(name)
        assert pointer is not None, f"{kind.name}: nothing points a {extension} file at its command"
        commands = {row.family.command for row in content.KINDS if row.named_by(name)}
        assert any(f"gamepak {command} " in pointer for command in commands), (extension, pointer)


# -- the README ------------------------------------------------------------------------------------
def test_the_readme_table_is_the_registry() -> None:
    text = README.read_text(encoding="utf-8")
    assert content.readme_table() in text, "README.md's content kinds table differs: python -m gamepak.content"
    for kind in content.KINDS:
        assert f"| `{kind.name}` |" in text


# -- a new kind is one module plus one row ---------------------------------------------------------
def test_a_new_kind_is_one_module_and_one_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A model kind gamepak does not know (tests/content_kind_example.py, stored as two files as
    RFG's meshes are) is taken by every surface once its row is in the registry."""
    import content_kind_example as example
    from starlette.testclient import TestClient

    from gamepak.catalog import build_catalog
    from gamepak.catalog.schema import read_table
    from gamepak.models import loads
    from gamepak.web.app import create_app

    from conftest import in_process_cli

    monkeypatch.setattr(content, "KINDS", (*content.KINDS, example.row()))
    monkeypatch.setattr(content, "_BY_FAMILY", {})
    files = example.make(cube_joe(), 8, 12)
    root = tmp_path / "root"
    root.mkdir()
    for name, data in files.items():
        (root / name).write_bytes(data)
    with create(root / "packed.zip") as writer:
        for name, data in files.items():
            writer.add(f"meshes/{name}", data)
    loose = root / "thing.cxmesh"
    # The CLI: `model info` and `model export`, loose and packed (the partner read beside it).
    code, out, err = in_process_cli("model", "info", str(loose))
    assert code == 0 and "format: xmesh" in out and "faces: 12" in out, err
    for arguments, output in (
        ([str(loose)], "loose.glb"),
        ([str(root / "packed.zip"), "meshes/thing.cxmesh"], "packed.glb"),
    ):
        code, _, err = in_process_cli("model", "export", *arguments, "-o", str(tmp_path / output))
        assert code == 0, err
        assert loads((tmp_path / output).read_bytes(), "glb").face_count == 12
    # The viewer: the 3D view of the loose and the packed file.
    client = TestClient(create_app(str(root)), base_url="http://127.0.0.1")
    for path in ("thing.cxmesh", "packed.zip/meshes/thing.cxmesh"):
        assert 'class="preview preview-model"' in client.get(f"/browse/{path}").text
        assert loads(client.get(f"/model/{path}").content, "glb").face_count == 12
    # The catalog: its models rows, loose and packed, and the loose file's archives row.
    build_catalog([str(root)], str(tmp_path / "out"), scheduler="synchronous")
    models = read_table(str(tmp_path / "out"), "models").to_pylist()
    assert {(Path(row["archive_path"]).name, row["format"], row["triangles"]) for row in models} == {
        ("thing.cxmesh", "xmesh", 12),
        ("packed.zip", "xmesh", 12),
    }
    archives = {
        Path(row["path"]).name: row["kind"] for row in read_table(str(tmp_path / "out"), "archives").to_pylist()
    }
    assert archives["thing.cxmesh"] == "model"
    # The README's table gets its row.
    assert "| `xmesh` | Example two-file meshes" in content.readme_table()


# -- bad input -------------------------------------------------------------------------------------
def test_a_file_of_no_kind_or_a_truncated_one_is_one_line(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from gamepak.web.app import create_app

    from conftest import in_process_cli

    notes = tmp_path / "notes.txt"
    notes.write_text("just some notes\nabout things\n")
    code, out, err = in_process_cli("text", "export", str(notes), "-o", str(tmp_path / "notes.json"))
    assert code == 1 and out == "" and err.count("\n") == 1, err
    assert str(notes) in err and "neither" in err and "J2ME strings" in err
    assert not (tmp_path / "notes.json").exists()
    broken = tmp_path / "broken.bsp"
    broken.write_bytes(bsp_bytes()[:40])
    code, _, err = in_process_cli("model", "info", str(broken))
    assert code == 1 and err.count("\n") == 1 and str(broken) in err and "Traceback" not in err, err
    page = TestClient(create_app(str(tmp_path)), base_url="http://127.0.0.1").get("/browse/broken.bsp")
    assert page.status_code == 200 and 'class="preview preview-hex"' in page.text and "no preview" in page.text


def test_the_strings_page_names_from_the_served_folders_tables(tmp_path: Path, monkeypatch) -> None:
    """The game's table.vpp_pc at the top of the served folder names the strings of a
    localization file deeper down; the names are looked up once for the pages of one file."""
    from starlette.testclient import TestClient

    from gamepak.formats.rfg.locatext import names as names_module
    from gamepak.web.app import create_app

    (tmp_path / "language").mkdir()
    (tmp_path / "language" / "locatexts_xx_yy.rfglocatext").write_bytes(_locatext())
    with create(tmp_path / "table.vpp_pc") as vpp:
        vpp.add("menus.xtbl", b"<root><Table><Menu><Name>UI_MENU_QUIT</Name></Menu></Table></root>")
    looked_up = []
    find_names = names_module.find_names

    def counting(*arguments: object, **options: object) -> object:
        looked_up.append(1)
        return find_names(*arguments, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(names_module, "find_names", counting)
    # In this process (not a forked preview worker, whose cache and counter this test cannot see).
    from gamepak.web import isolate

    monkeypatch.setattr(isolate, "available", lambda: False)
    client = TestClient(create_app(str(tmp_path)), base_url="http://127.0.0.1")
    page = client.get("/strings/language/locatexts_xx_yy.rfglocatext", params={"q": "ui_menu_quit"})
    assert page.status_code == 200 and "1 matching" in page.text and "<code>UI_MENU_QUIT</code>" in page.text
    assert "<code>UI_MENU_START</code>" not in client.get("/strings/language/locatexts_xx_yy.rfglocatext").text
    assert len(looked_up) == 1


# -- kinds of two files, of a page and a table of their own ------------------------------------------
def test_a_mesh_missing_its_partner_or_pack_is_one_line(tmp_path: Path) -> None:
    """A loose mesh without its GPU file: `model info`, the catalog and the viewer each say so
    in one line naming the partner; a pack that is not there is named by `model export`."""
    from rfg_mesh_bytes import build, quad_spec
    from starlette.testclient import TestClient

    from gamepak.catalog import build_catalog
    from gamepak.catalog.schema import read_table
    from gamepak.web.app import create_app

    from conftest import in_process_cli

    cpu, _ = build(quad_spec())
    (tmp_path / "alone.csmesh_pc").write_bytes(cpu)
    code, out, err = in_process_cli("model", "info", str(tmp_path / "alone.csmesh_pc"))
    assert code == 1 and out == "" and err.count("\n") == 1 and "alone.gsmesh_pc" in err, err
    page = TestClient(create_app(str(tmp_path)), base_url="http://127.0.0.1").get("/browse/alone.csmesh_pc")
    assert "no preview" in page.text and "alone.gsmesh_pc is not beside it" in page.text
    build_catalog([str(tmp_path)], str(tmp_path / "out"), scheduler="synchronous")
    errors = read_table(str(tmp_path / "out"), "errors").to_pylist()
    assert [row["stage"] for row in errors] == ["models"] and "alone.gsmesh_pc" in errors[0]["message"]
    missing = tmp_path / "missing.vpp_pc"
    code, _, err = in_process_cli("model", "export", str(missing), "-o", str(tmp_path / "meshes"))
    assert code == 1 and str(missing) in err and err.count("\n") == 1, err


def test_export_all_leaves_the_kinds_that_find_their_own_files(tmp_path: Path) -> None:
    """`model export-all` converts members from their bytes alone: a mesh (whose pair `model
    export PACK` writes) is not a model to it, as the README's table says."""
    from rfg_mesh_bytes import build, quad_spec

    from conftest import in_process_cli

    cpu, gpu = build(quad_spec())
    pack = tmp_path / "meshes.vpp_pc"
    with create(pack) as writer:
        writer.add("quad.csmesh_pc", cpu)
        writer.add("quad.gsmesh_pc", gpu)
        writer.add("cube.joe", cube_joe())
    code, _, err = in_process_cli("model", "export-all", str(pack), "-o", str(tmp_path / "out"))
    assert code == 0 and "2 members that are not models" in err, err
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == ["cube.glb"]
    assert "`model export-all`" not in next(
        line for line in content.readme_table().splitlines() if line.startswith("| `rfg-mesh`")
    )
