"""SyncFaction's modinfo.xml mods applied as patches: Replace, Edit (every LIST_ACTION, the
member's formatting kept), UserInput and --choose, the misc/table mirror, nested packs, zip mods,
hostile mods, revert, conflicts. Every mod here is written from SyncFaction's documented schema."""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
import zipfile
from pathlib import Path

import pytest

import gamepak
from gamepak.cli import main
from gamepak.ops.patch import PatchError
from gamepak.ops.patch.xmledit import XmlDocument, apply_edit, parse_tree

from conftest import SAMPLES
from conftest import pack_members as contents
from conftest import write_pack as build


def crlf(text: str) -> bytes:
    return text.replace("\n", "\r\n").encode()


WEAPONS = crlf(
    """<root>
	<Table>
		<Weapon>
			<Name>pistol</Name>
			<Damage>10</Damage>
			<_Editor>
				<Category>Entries:EDF</Category>
			</_Editor>
		</Weapon>
		<Weapon>
			<Name>pistol</Name>
			<Damage>11</Damage>
			<_Editor>
				<Category>Entries:Guerilla</Category>
			</_Editor>
		</Weapon>
		<!-- a comment the edits keep -->
		<Weapon>
			<Name>rifle</Name>
			<Damage>20</Damage>
			<Flags>  spaced &amp; escaped  </Flags>
		</Weapon>
	</Table>
</root>
"""
)
TWEAKS = crlf(
    """<root>
	<Table>
		<Tweak>
			<Name>fov</Name>
			<Value>60</Value>
		</Tweak>
	</Table>
</root>
"""
)
CAMERA = crlf("<root>\n\t<Table>\n\t\t<Camera>\n\t\t\t<Distance>5</Distance>\n\t\t</Camera>\n\t</Table>\n</root>\n")
ZONE_TABLE = b"<root><Table><Zone><Name>a</Name></Zone></Table></root>"


def member(path: Path, name: str) -> bytes:
    with gamepak.open(path) as archive:
        if "/" in name:
            outer, inner = name.split("/", 1)
            with archive.open_archive(outer) as nested:
                return nested.read(inner)
        return archive.read(name)


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def snapshot(game: Path) -> dict[str, str]:
    return {str(path.relative_to(game)): sha(path) for path in sorted(game.rglob("*")) if path.is_file()}


@pytest.fixture
def game(tmp_path: Path) -> Path:
    """A game folder: data/misc.vpp_pc and data/table.vpp_pc (sharing two tables, as the game's
    do) and data/terr01.vpp_pc holding a nested zone.str2_pc."""
    data = tmp_path / "game" / "data"
    data.mkdir(parents=True)
    build(data / "misc.vpp_pc", {"weapons.xtbl": WEAPONS, "tweak_table.xtbl": TWEAKS, "camera.xtbl": CAMERA})
    build(data / "table.vpp_pc", {"weapons.xtbl": WEAPONS, "tweak_table.xtbl": TWEAKS})
    zone = build(tmp_path / "zone.str2_pc", {"zone.xtbl": ZONE_TABLE, "mesh.cpeg_pc": b"\x01" * 64})
    build(data / "terr01.vpp_pc", {"zone.str2_pc": zone.read_bytes()})
    return tmp_path / "game"


def write_mod(folder: Path, modinfo: str, files: dict[str, bytes] | None = None, subfolder: str = "mod_files") -> Path:
    """A mod laid out as SyncFaction advises: modinfo.xml and its files in a subfolder."""
    base = folder / subfolder if subfolder else folder
    base.mkdir(parents=True, exist_ok=True)
    (base / "modinfo.xml").write_text(modinfo)
    for relative, data in (files or {}).items():
        (base / relative).parent.mkdir(parents=True, exist_ok=True)
        (base / relative).write_bytes(data)
    return folder


def edit_mod(folder: Path, edit: str, file: str = r"data\misc.vpp_pc\weapons.xtbl", action: str | None = None) -> Path:
    list_action = f' LIST_ACTION="{action}"' if action else ""
    return write_mod(
        folder,
        f'<Mod Name="edit test"><Changes><Edit File="{file}"{list_action}>{edit}</Edit></Changes></Mod>',
    )


def apply_edit_text(document: bytes, edit: str, action: str | None = None) -> bytes:
    list_action = f' LIST_ACTION="{action}"' if action else ""
    parsed = XmlDocument(document, "member")
    apply_edit(parsed, parse_tree(f"<Edit{list_action}>{edit}</Edit>".encode(), "edit"))
    return parsed.to_bytes()


# -- Edit: each LIST_ACTION, against hand-written expected bytes --------------------------------


def test_add_appends_after_the_last_child_indented_like_its_siblings() -> None:
    result = apply_edit_text(WEAPONS, "<Weapon><Name>cannon</Name><Damage>99</Damage></Weapon>")
    added = crlf("\t\t<Weapon>\n\t\t\t<Name>cannon</Name>\n\t\t\t<Damage>99</Damage>\n\t\t</Weapon>\n")
    assert result == WEAPONS.replace(b"\t</Table>", added + b"\t</Table>")


def test_add_new_merges_into_the_first_child_of_the_tag() -> None:
    result = apply_edit_text(WEAPONS, "<Weapon><Damage>5</Damage><Ammo>3</Ammo></Weapon>", "ADD_NEW")
    expected = WEAPONS.replace(b"<Damage>10</Damage>", b"<Damage>5</Damage>", 1).replace(
        crlf("\t\t\t</_Editor>\n\t\t</Weapon>"),
        crlf("\t\t\t</_Editor>\n\t\t\t<Ammo>3</Ammo>\n\t\t</Weapon>"),
        1,
    )
    assert result == expected


def test_replace_replaces_the_children() -> None:
    result = apply_edit_text(WEAPONS, "<Weapon><Name>only</Name></Weapon>", "REPLACE")
    assert result == crlf(
        "<root>\n\t<Table>\n\t\t<Weapon>\n\t\t\t<Name>only</Name>\n\t\t</Weapon>\n\t</Table>\n</root>\n"
    )


def test_combine_by_field_matches_on_every_field_and_appends_the_rest() -> None:
    edit = (
        r"<Weapon><Name>pistol</Name><_Editor><Category>Entries:Guerilla</Category></_Editor>"
        r'<Damage unit="hp">50</Damage></Weapon>'
        r"<Weapon><Name>laser</Name><Damage>1</Damage></Weapon>"
    )
    result = apply_edit_text(WEAPONS, edit, r"COMBINE_BY_FIELD:Name,_Editor\Category")
    expected = WEAPONS.replace(b"<Damage>11</Damage>", b'<Damage unit="hp">50</Damage>').replace(
        b"\t</Table>",
        crlf("\t\t<Weapon>\n\t\t\t<Name>laser</Name>\n\t\t\t<Damage>1</Damage>\n\t\t</Weapon>\n\t</Table>"),
    )
    assert result == expected


def test_combine_by_field_nested_as_in_syncfactions_example() -> None:
    upgrades = crlf(
        "<root>\n\t<Table>\n\t\t<Upgrade>\n\t\t\t<Name>sledgehammer</Name>\n\t\t\t<Levels>\n"
        "\t\t\t\t<Level>\n\t\t\t\t\t<Cost>0</Cost>\n\t\t\t\t\t<Value>0</Value>\n\t\t\t\t</Level>\n"
        "\t\t\t\t<Level>\n\t\t\t\t\t<Cost>25</Cost>\n\t\t\t\t\t<Value>1</Value>\n\t\t\t\t</Level>\n"
        "\t\t\t</Levels>\n\t\t</Upgrade>\n\t</Table>\n</root>\n"
    )
    edit = (
        '<Upgrade><Name>sledgehammer</Name><Levels LIST_ACTION="COMBINE_BY_FIELD:Value">'
        "<Level><Cost>0</Cost><Value>1</Value></Level></Levels></Upgrade>"
    )
    result = apply_edit_text(upgrades, edit, "COMBINE_BY_FIELD:Name")
    assert result == upgrades.replace(b"<Cost>25</Cost>", b"<Cost>0</Cost>")


def test_untouched_elements_keep_every_byte() -> None:
    """Comments, CDATA, references, odd spacing, LF endings and a declaration all survive;
    an element added to a self-closing one is laid out with the document's spaces."""
    document = (
        b'<?xml version="1.0" encoding="utf-8"?>\n<!-- top -->\n<root>\n  <Table>\n'
        b'    <Item   id = "a>b"  >\n      <Name>one</Name>\n      <Text><![CDATA[<raw> & stuff]]></Text>\n'
        b"      <Ref>&#65;&lt;&gt;</Ref>\n      <Empty/>\n    </Item>\n"
        b"    <Item><Name>two</Name><Count>1</Count></Item>\n  </Table>\n</root>\n<!-- tail -->\n"
    )
    edit = '<Item><Name>two</Name><Count>2</Count></Item><Item><Name>one</Name><Empty><Sub x="1">s</Sub></Empty></Item>'
    result = apply_edit_text(document, edit, "COMBINE_BY_FIELD:Name")
    expected = document.replace(b"<Count>1</Count>", b"<Count>2</Count>").replace(
        b"      <Empty/>\n", b'      <Empty>\n        <Sub x="1">s</Sub>\n      </Empty>\n'
    )
    assert result == expected


def test_a_document_on_one_line_stays_on_one_line() -> None:
    result = apply_edit_text(ZONE_TABLE, "<Zone><Name>b</Name></Zone>")
    assert result == b"<root><Table><Zone><Name>a</Name></Zone><Zone><Name>b</Name></Zone></Table></root>"


def test_an_attribute_is_rewritten_in_place_and_inline_lists_stay_inline() -> None:
    document = b"<root>\n\t<Table>\n\t\t<A k=\"x id='1'\" id='2'/>\n\t\t<L><I>1</I><I>2</I></L>\n\t</Table>\n</root>"
    result = apply_edit_text(document, '<A id="3&amp;"/><L LIST_ACTION="REPLACE"><I>3</I></L>', "ADD_NEW")
    assert result == document.replace(b"id='2'", b'id="3&amp;"').replace(b"<I>1</I><I>2</I>", b"<I>3</I>")


def test_latin1_tables_keep_their_encoding() -> None:
    credits = b"<root>\r\n\t<Table>\r\n\t\t<Name>Kim Schl\xfcter</Name>\r\n\t</Table>\r\n</root>"
    result = apply_edit_text(credits, "<Extra>G\u00fcnther</Extra>")
    assert result == credits.replace(b"</Name>\r\n", b"</Name>\r\n\t\t<Extra>G\xfcnther</Extra>\r\n")


def test_every_action_is_a_fixed_point_on_its_own_result() -> None:
    for edit, action in [
        ("<Weapon><Name>cannon</Name></Weapon>", None),
        ("<Weapon><Damage>5</Damage><Ammo>3</Ammo></Weapon>", "ADD_NEW"),
        ("<Weapon><Name>only</Name></Weapon>", "REPLACE"),
        (
            "<Weapon><Name>rifle</Name><Damage>21</Damage></Weapon><Weapon><Name>new</Name></Weapon>",
            "COMBINE_BY_FIELD:Name",
        ),
    ]:
        once = apply_edit_text(WEAPONS, edit, action)
        assert once != WEAPONS
        assert apply_edit_text(once, edit, action) == once, action


def test_add_counts_identical_children() -> None:
    twins = "<Weapon><Name>twin</Name></Weapon><Weapon><Name>twin</Name></Weapon>"
    once = apply_edit_text(WEAPONS, twins)
    assert once.count(b"<Name>twin</Name>") == 2
    assert apply_edit_text(once, twins) == once
    assert apply_edit_text(once, twins + twins).count(b"<Name>twin</Name>") == 4


# -- applying mods to a game folder --------------------------------------------------------------


def test_replace_with_the_game_path_conventions_then_revert_exactly(game: Path, tmp_path: Path) -> None:
    before = snapshot(game)
    new_camera = crlf(
        "<root>\n\t<Table>\n\t\t<Camera>\n\t\t\t<Distance>9</Distance>\n\t\t</Camera>\n\t</Table>\n</root>\n"
    )
    mod = write_mod(
        tmp_path / "mod",
        # the old game's folder, `.vpp` for `.vpp_pc`, any case, backslashes
        r'<mod name="Camera"><changes><REPLACE file="build\pc\cache\MISC.vpp\Camera.XTBL" '
        r'newfile="Replacements\CAMERA.xtbl"/></changes></mod>',
        {"replacements/camera.xtbl": new_camera},
    )
    assert main(["patch", "check", str(game), str(mod)]) == 0
    assert main(["patch", "apply", str(game), str(mod)]) == 0
    assert member(game / "data" / "misc.vpp_pc", "camera.xtbl") == new_camera
    assert "camera.xtbl" not in contents(game / "data" / "table.vpp_pc")  # the mirror adds nothing
    again = gamepak.patch.apply(game, [mod])  # applying twice changes nothing
    assert not again.to_apply and again.ok
    assert main(["patch", "revert", str(game)]) == 0
    assert snapshot(game) == before


def test_edits_apply_in_order_mirror_to_table_and_revert(game: Path, tmp_path: Path) -> None:
    before = snapshot(game)
    mod = write_mod(
        tmp_path / "mod",
        r"""<Mod Name="Stronger rifle">
  <Author>tester</Author>
  <Changes>
    <Edit File="data\misc.vpp\weapons.xtbl" LIST_ACTION="COMBINE_BY_FIELD:Name">
      <Weapon><Name>rifle</Name><Damage>25</Damage></Weapon>
    </Edit>
    <Edit File="data\misc.vpp\weapons.xtbl" LIST_ACTION="COMBINE_BY_FIELD:Name">
      <Weapon><Name>rifle</Name><Damage>30</Damage></Weapon>
    </Edit>
  </Changes>
</Mod>""",
    )
    plan = gamepak.patch.apply(game, [f"{mod}/"])  # a trailing slash names the same mod
    assert sorted(step.operation.where for step in plan.to_apply) == [
        "data/misc.vpp_pc: weapons.xtbl",
        "data/table.vpp_pc: weapons.xtbl",
    ]
    expected = WEAPONS.replace(b"<Damage>20</Damage>", b"<Damage>30</Damage>")
    assert member(game / "data" / "misc.vpp_pc", "weapons.xtbl") == expected
    assert member(game / "data" / "table.vpp_pc", "weapons.xtbl") == expected
    assert not gamepak.patch.apply(game, [mod]).to_apply
    assert gamepak.patch.revert(game, mod) == ["Stronger rifle"]  # by the mod's path
    assert snapshot(game) == before


def test_a_mod_that_edits_both_twins_is_not_mirrored(game: Path, tmp_path: Path) -> None:
    mod = write_mod(
        tmp_path / "mod",
        r"""<Mod Name="both"><Changes>
  <Edit File="data\misc.vpp_pc\tweak_table.xtbl" LIST_ACTION="COMBINE_BY_FIELD:Name">
    <Tweak><Name>fov</Name><Value>1</Value></Tweak></Edit>
  <Edit File="data\table.vpp_pc\tweak_table.xtbl" LIST_ACTION="COMBINE_BY_FIELD:Name">
    <Tweak><Name>fov</Name><Value>2</Value></Tweak></Edit>
</Changes></Mod>""",
    )
    gamepak.patch.apply(game, [mod])
    assert b"<Value>1</Value>" in member(game / "data" / "misc.vpp_pc", "tweak_table.xtbl")
    assert b"<Value>2</Value>" in member(game / "data" / "table.vpp_pc", "tweak_table.xtbl")


@pytest.mark.filterwarnings("ignore::gamepak.formats.rfg.writer.AsmUpdated")
def test_nested_str2_member(game: Path, tmp_path: Path) -> None:
    pack = game / "data" / "terr01.vpp_pc"
    before = sha(pack)
    mod = edit_mod(tmp_path / "mod", "<Zone><Name>b</Name></Zone>", r"data\TERR01.vpp_pc\Zone.str2_pc\zone.XTBL")
    plan = gamepak.patch.apply(game, [mod])
    assert [step.operation.where for step in plan.to_apply] == ["data/terr01.vpp_pc: zone.str2_pc/zone.xtbl"]
    assert member(pack, "zone.str2_pc/zone.xtbl") == ZONE_TABLE.replace(
        b"</Table>", b"<Zone><Name>b</Name></Zone></Table>"
    )
    assert member(pack, "zone.str2_pc/mesh.cpeg_pc") == b"\x01" * 64
    gamepak.patch.revert(game)
    assert sha(pack) == before


MOD_WITH_INPUTS = r"""<Mod Name="Camera options">
  <Author>tester</Author>
  <Description>Pick a field of view</Description>
  <WebLink Name="home">https://example.invalid/camera</WebLink>
  <UserInput>
    <ListBox Name="fov" DisplayName="Field of view">
      <Option Name="Normal">70</Option>
      <Option Name="Wide">110</Option>
    </ListBox>
    <ListBox Name="extra" DisplayName="Extra tweak">
      <Option Name="none"></Option>
      <Option Name="shake"><Tweak><Name>shake</Name><Value>1</Value></Tweak></Option>
    </ListBox>
    <ListBox Name="camera_file" DisplayName="Camera file">
      <Option Name="calm">files\calm.xtbl</Option>
      <Option Name="wild">files\wild.xtbl</Option>
    </ListBox>
  </UserInput>
  <Changes>
    <Edit File="data\misc.vpp_pc\tweak_table.xtbl" LIST_ACTION="COMBINE_BY_FIELD:Name">
      <Tweak><Name>fov</Name><Value><USER_INPUT>fov</USER_INPUT></Value></Tweak>
      <USER_INPUT>extra</USER_INPUT>
    </Edit>
    <Replace File="data\misc.vpp_pc\camera.xtbl" NewFileUserInput="camera_file"/>
  </Changes>
</Mod>"""
CALM = CAMERA.replace(b"<Distance>5", b"<Distance>4")
WILD = CAMERA.replace(b"<Distance>5", b"<Distance>40")


def test_user_input_default_is_the_first_option(game: Path, tmp_path: Path) -> None:
    mod = write_mod(tmp_path / "mod", MOD_WITH_INPUTS, {"files/calm.xtbl": CALM, "files/wild.xtbl": WILD})
    assert main(["patch", "apply", str(game), str(mod)]) == 0
    for pack in ("misc.vpp_pc", "table.vpp_pc"):  # tweak_table.xtbl is in both
        assert member(game / "data" / pack, "tweak_table.xtbl") == TWEAKS.replace(b"60", b"70")
    assert member(game / "data" / "misc.vpp_pc", "camera.xtbl") == CALM


def test_user_input_chosen_on_the_command_line(game: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mod = write_mod(tmp_path / "mod", MOD_WITH_INPUTS, {"files/calm.xtbl": CALM, "files/wild.xtbl": WILD})
    choose = ["--choose", "FOV=Wide", "--choose", "extra=shake", "--choose", "camera_file=wild"]
    assert main(["patch", "check", str(game), str(mod), *choose]) == 0
    assert main(["patch", "apply", "--dry-run", str(game), str(mod), *choose]) == 0
    assert "apply" in capsys.readouterr().out
    before = snapshot(game)
    assert main(["patch", "apply", str(game), str(mod), *choose]) == 0
    shake = crlf("\t\t<Tweak>\n\t\t\t<Name>shake</Name>\n\t\t\t<Value>1</Value>\n\t\t</Tweak>\n")
    expected = TWEAKS.replace(b"60", b"110").replace(b"\t</Table>", shake + b"\t</Table>")
    assert member(game / "data" / "table.vpp_pc", "tweak_table.xtbl") == expected
    assert member(game / "data" / "misc.vpp_pc", "camera.xtbl") == WILD
    # the library takes the same choices
    assert not gamepak.patch.check(
        game, [mod], choices={"fov": "Wide", "extra": "shake", "camera_file": "wild"}
    ).to_apply
    gamepak.patch.revert(game)
    assert snapshot(game) == before and not (tmp_path / "game.gamepak-undo").exists()


@pytest.mark.parametrize(
    ("choice", "named"),
    [
        ("zoom=Wide", ["'fov'", "'extra'", "'camera_file'"]),
        ("fov=Ultra", ["'Normal'", "'Wide'"]),
        ("fov", ["NAME=OPTION"]),
    ],
)
def test_unknown_input_or_option_is_a_usage_error(
    game: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], choice: str, named: list[str]
) -> None:
    mod = write_mod(tmp_path / "mod", MOD_WITH_INPUTS, {"files/calm.xtbl": CALM, "files/wild.xtbl": WILD})
    before = snapshot(game)
    assert main(["patch", "apply", str(game), str(mod), "--choose", choice]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and all(name in error for name in named)
    assert snapshot(game) == before


def test_choices_with_no_modinfo_mod_are_a_usage_error(game: Path, tmp_path: Path) -> None:
    loose = tmp_path / "loose" / "data" / "misc.vpp_pc"
    loose.mkdir(parents=True)
    (loose / "camera.xtbl").write_bytes(CALM)
    with pytest.raises(gamepak.errors.UsageError, match="only modinfo.xml mods"):
        gamepak.patch.check(game, [tmp_path / "loose"], choices={"fov": "Wide"})


def test_info_shows_metadata_inputs_and_changes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mod = write_mod(tmp_path / "mod", MOD_WITH_INPUTS, {"files/calm.xtbl": CALM})
    assert main(["patch", "info", str(mod), "--choose", "fov=Wide", "--choose", "extra=shake"]) == 0
    out = capsys.readouterr().out
    for text in (
        "name: Camera options",
        "author: tester",
        "description: Pick a field of view",
        "link: https://example.invalid/camera",
        "fov: Field of view",
        "* Wide",
        "edit data/misc.vpp_pc: tweak_table.xtbl (COMBINE_BY_FIELD:Name, 2 elements)",
        r"replace data/misc.vpp_pc: camera.xtbl with files\calm.xtbl",
    ):
        assert text in out, text
    assert main(["patch", "info", str(mod), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["inputs"][0] == {
        "name": "fov",
        "display_name": "Field of view",
        "options": ["Normal", "Wide"],
        "chosen": "Normal",
    }
    assert [change["op"] for change in document["changes"]] == ["edit", "replace"]


def test_a_zip_mod_applies_and_reverts_by_its_path(game: Path, tmp_path: Path) -> None:
    folder = write_mod(tmp_path / "mod", MOD_WITH_INPUTS, {"files/calm.xtbl": CALM, "files/wild.xtbl": WILD})
    archive = tmp_path / "camera_mod.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zip_file:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                zip_file.write(path, path.relative_to(folder).as_posix())
    before = snapshot(game)
    assert main(["patch", "apply", str(game), str(archive), "--choose", "camera_file=wild"]) == 0
    assert member(game / "data" / "misc.vpp_pc", "camera.xtbl") == WILD
    assert main(["patch", "revert", str(game), str(archive)]) == 0
    assert snapshot(game) == before


def test_modinfo_at_the_mod_root_and_the_data_folder_as_target(game: Path, tmp_path: Path) -> None:
    mod = write_mod(tmp_path / "mod", MOD_WITH_INPUTS, {"files/calm.xtbl": CALM}, subfolder="")
    gamepak.patch.apply(game / "data", [mod])  # as patch files are applied: the data folder
    assert member(game / "data" / "misc.vpp_pc", "camera.xtbl") == CALM
    assert gamepak.patch.revert(game / "data") == ["Camera options"]
    assert member(game / "data" / "misc.vpp_pc", "camera.xtbl") == CAMERA


def test_a_folder_with_loose_archives_beside_modinfo_gives_both(game: Path, tmp_path: Path) -> None:
    mod = write_mod(tmp_path / "mod", MOD_WITH_INPUTS, {"files/calm.xtbl": CALM})
    (mod / "data" / "misc.vpp_pc").mkdir(parents=True)
    (mod / "data" / "misc.vpp_pc" / "extra.xtbl").write_bytes(b"<root><Table/></root>")
    plan = gamepak.patch.apply(game, [mod])
    assert sorted(step.patch.name for step in plan.to_apply) == ["Camera options"] * 3 + ["mod"]
    assert member(game / "data" / "misc.vpp_pc", "extra.xtbl") == b"<root><Table/></root>"
    assert member(game / "data" / "misc.vpp_pc", "camera.xtbl") == CALM


def test_a_conflict_with_another_patch_is_reported(
    game: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    modded = tmp_path / "modded"
    shutil.copytree(game, modded)
    with gamepak.edit(modded / "data" / "misc.vpp_pc") as editor:
        editor.replace("weapons.xtbl", WEAPONS.replace(b"<Damage>10</Damage>", b"<Damage>1</Damage>"))
    gamepak.patch.make(game, modded, tmp_path / "other.gpatch", name="other")
    mod = edit_mod(tmp_path / "mod", "<Weapon><Name>cannon</Name></Weapon>")
    before = snapshot(game)
    assert main(["patch", "apply", str(game), str(tmp_path / "other.gpatch"), str(mod)]) == 1
    assert "data/misc.vpp_pc: weapons.xtbl is changed differently by other, edit test" in capsys.readouterr().err
    assert snapshot(game) == before
    # Two modinfo mods editing one table stack, as SyncFaction applies them in order: the
    # second's edits apply on top of the first's, in one change, and revert takes both back.
    second = edit_mod(tmp_path / "second", "<Weapon><Name>laser</Name></Weapon>")
    assert gamepak.patch.check(game, [mod, second]).ok
    code = main(["patch", "apply", str(game), str(mod), str(second)])
    assert code == 0 and "its edits apply on top of" in capsys.readouterr().err
    table = member(game / "data" / "misc.vpp_pc", "weapons.xtbl")
    assert b"cannon" in table and b"laser" in table
    gamepak.patch.revert(game)
    assert snapshot(game) == before


def test_stacked_mods_revert_one_at_a_time_latest_first(game: Path, tmp_path: Path) -> None:
    """Two mods whose edits of one table went into one change revert as SyncFaction's order
    implies: the later one alone gives back the table with only the earlier one's edits; the
    earlier one cannot go first (its edits are inside the later change) and says so."""

    def named_mod(name: str, weapon: str) -> Path:
        edit = f'<Edit File="data\\misc.vpp_pc\\weapons.xtbl"><Weapon><Name>{weapon}</Name></Weapon></Edit>'
        return write_mod(tmp_path / name, f'<Mod Name="{name}"><Changes>{edit}</Changes></Mod>')

    first, second = named_mod("first", "cannon"), named_mod("second", "laser")
    alone = tmp_path / "alone"
    shutil.copytree(game, alone)
    gamepak.patch.apply(alone, [first])
    only_first = member(alone / "data" / "misc.vpp_pc", "weapons.xtbl")
    before = snapshot(game)
    plan = gamepak.patch.apply(game, [first, second])
    # (weapons.xtbl of misc.vpp_pc and its mirror in table.vpp_pc)
    assert [(step.patch.path, step.action) for step in plan.steps] == [(str(first), "stacked")] * 2 + [
        (str(second), "apply")
    ] * 2
    both = member(game / "data" / "misc.vpp_pc", "weapons.xtbl")
    assert b"cannon" in both and b"laser" in both
    with pytest.raises(PatchError, match="first's edits were applied inside second's change"):
        gamepak.patch.revert(game, first)
    assert member(game / "data" / "misc.vpp_pc", "weapons.xtbl") == both
    assert gamepak.patch.revert(game, second) == ["second"]
    assert member(game / "data" / "misc.vpp_pc", "weapons.xtbl") == only_first
    gamepak.patch.revert(game, first)
    assert snapshot(game) == before
    assert not Path(str(game) + ".gamepak-undo").exists()


# -- hostile and broken mods: one clear error, nothing written -------------------------------------


def zip_mod(path: Path, entries: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zip_file:
        for name, data in entries.items():
            zip_file.writestr(zipfile.ZipInfo(name), data)
    return path


def declare_size(path: Path, name: str, size: int) -> None:
    """Rewrite the central directory's uncompressed size of `name` (what zipfile believes)."""
    data = bytearray(path.read_bytes())
    at = data.index(b"PK\x01\x02")
    while True:
        name_length = struct.unpack_from("<H", data, at + 28)[0]
        if data[at + 46 : at + 46 + name_length] == name.encode():
            struct.pack_into("<I", data, at + 24, size)
            break
        extra, comment = struct.unpack_from("<HH", data, at + 30)
        at += 46 + name_length + extra + comment
    path.write_bytes(bytes(data))


REPLACE_MOD = '<Mod Name="r"><Changes><Replace File="data\\misc.vpp_pc\\camera.xtbl" NewFile="{new}"/></Changes></Mod>'
BOMB = (
    '<?xml version="1.0"?><!DOCTYPE Mod [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
    '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><Mod Name="&c;"><Changes/></Mod>'
)


def hostile_mods(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    mods: dict[str, tuple[Path, str]] = {}
    mods["climbing NewFile"] = (
        write_mod(tmp_path / "climb", REPLACE_MOD.format(new=r"..\..\..\secret.xtbl")),
        "'..' would leave",
    )
    mods["absolute NewFile"] = (write_mod(tmp_path / "absolute", REPLACE_MOD.format(new="/etc/passwd")), "absolute")
    mods["missing NewFile"] = (
        write_mod(tmp_path / "missing", REPLACE_MOD.format(new="nope.xtbl")),
        "no file 'nope.xtbl'",
    )
    mods["missing member"] = (
        write_mod(tmp_path / "member", REPLACE_MOD.format(new="x").replace("camera", "nothing"), {"x": b"x"}),
        "change 1: data/misc.vpp_pc has no member 'nothing.xtbl'",
    )
    mods["missing pack"] = (
        write_mod(tmp_path / "pack", REPLACE_MOD.format(new="x").replace("misc", "absent"), {"x": b"x"}),
        "the game has no data/absent.vpp_pc",
    )
    mods["entity bomb"] = (write_mod(tmp_path / "bomb", BOMB), "DTD")
    mods["not XML"] = (write_mod(tmp_path / "broken", "<Mod><Changes>"), "not well-formed")
    mods["unknown LIST_ACTION"] = (
        edit_mod(tmp_path / "action", "<Weapon/>", action="COMBINE_BY_TEXT"),
        "LIST_ACTION 'COMBINE_BY_TEXT'",
    )
    mods["edit of a non-XML member"] = (
        edit_mod(tmp_path / "binary", "<X>1</X>", r"data\terr01.vpp_pc\zone.str2_pc\mesh.cpeg_pc"),
        "only .xtbl",
    )
    loop = (
        '<Mod Name="loop"><UserInput><ListBox Name="a"><Option Name="x"><USER_INPUT>b</USER_INPUT></Option></ListBox>'
        '<ListBox Name="b"><Option Name="y"><USER_INPUT>a</USER_INPUT></Option></ListBox></UserInput>'
        "<Changes><USER_INPUT>a</USER_INPUT></Changes></Mod>"
    )
    mods["user inputs in a loop"] = (write_mod(tmp_path / "loop", loop), "a loop")
    mods["zip entry climbing out"] = (
        zip_mod(tmp_path / "climb.zip", {"m/modinfo.xml": REPLACE_MOD.format(new="x").encode(), "../evil.xtbl": b"x"}),
        "'..' would leave",
    )
    mods["zip entry absolute"] = (
        zip_mod(tmp_path / "abs.zip", {"m/modinfo.xml": REPLACE_MOD.format(new="x").encode(), "/evil.xtbl": b"x"}),
        "absolute",
    )
    huge = zip_mod(tmp_path / "huge.zip", {"m/modinfo.xml": REPLACE_MOD.format(new="x").encode()})
    declare_size(huge, "m/modinfo.xml", 3 << 30)
    mods["modinfo.xml declaring 3 GiB"] = (huge, "declares 3221225472 bytes")
    lying = zip_mod(tmp_path / "lying.zip", {"m/modinfo.xml": REPLACE_MOD.format(new="x").encode(), "m/x": b"x" * 100})
    declare_size(lying, "m/x", 2 << 30)
    mods["NewFile declaring more than it holds"] = (lying, "not the 2147483648 it declares")
    return mods


def test_hostile_mods_are_refused_with_one_line_and_nothing_written(
    game: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(game)
    for label, (mod, message) in hostile_mods(tmp_path).items():
        capsys.readouterr()
        assert main(["patch", "apply", str(game), str(mod)]) == 1, label
        error = capsys.readouterr().err
        assert error.startswith("gamepak: error: ") and error.count("\n") == 1, (label, error)
        assert message in error, (label, error)
        assert snapshot(game) == before, label
        assert not (tmp_path / "game.gamepak-undo").exists(), label


def test_a_dtd_in_a_game_member_is_refused(game: Path, tmp_path: Path) -> None:
    with gamepak.edit(game / "data" / "misc.vpp_pc") as editor:
        editor.replace("weapons.xtbl", BOMB.replace("Mod", "root").encode())
    mod = edit_mod(tmp_path / "mod", "<Weapon/>")
    with pytest.raises(PatchError, match="DTD"):
        gamepak.patch.check(game, [mod])


def test_a_table_without_root_table_is_refused(game: Path, tmp_path: Path) -> None:
    with gamepak.edit(game / "data" / "misc.vpp_pc") as editor:
        editor.replace("weapons.xtbl", b"<root><Other/></root>")
    with pytest.raises(PatchError, match=r"no <root><Table>"):
        gamepak.patch.check(game, [edit_mod(tmp_path / "mod", "<Weapon/>")])


def test_a_single_pack_is_not_a_target_for_modinfo_mods(game: Path, tmp_path: Path) -> None:
    with pytest.raises(PatchError, match="game folder"):
        gamepak.patch.check(game / "data" / "misc.vpp_pc", [edit_mod(tmp_path / "mod", "<Weapon/>")])


# -- the real game's tables (an extra layer; skipped without ../shared) -------------------------


@pytest.mark.skipif(not (SAMPLES / "vpp" / "table.vpp_pc").exists(), reason="../shared/samples is absent")
def test_real_tables_round_trip_and_the_documented_example(tmp_path: Path) -> None:
    with gamepak.open(SAMPLES / "vpp" / "table.vpp_pc") as archive:
        for entry in archive.infolist():
            data = archive.read(entry)
            assert XmlDocument(data, entry.name).to_bytes() == data, entry.name
    game = tmp_path / "game"
    (game / "data").mkdir(parents=True)
    shutil.copy(SAMPLES / "vpp" / "table.vpp_pc", game / "data" / "table.vpp_pc")
    original = sha(game / "data" / "table.vpp_pc")
    mod = write_mod(
        tmp_path / "mod",
        # SyncFaction's documented example (docs/modding/modinfo.md): a free sledgehammer upgrade
        r"""<Mod Name="example"><Changes>
<Edit File="data\table.vpp_pc\upgrades.xtbl" LIST_ACTION="COMBINE_BY_FIELD:Name">
  <Upgrade><Name>sledgehammer</Name>
    <Levels LIST_ACTION="COMBINE_BY_FIELD:Value"><Level><Cost>0</Cost><Value>1</Value></Level></Levels>
  </Upgrade>
</Edit></Changes></Mod>""",
    )
    with gamepak.open(game / "data" / "table.vpp_pc") as archive:
        old = archive.read("upgrades.xtbl")
    gamepak.patch.apply(game, [mod])
    with gamepak.open(game / "data" / "table.vpp_pc") as archive:
        new = archive.read("upgrades.xtbl")
    assert new == old.replace(b"<Cost>25</Cost>", b"<Cost>0</Cost>", 1)
    gamepak.patch.revert(game)
    assert sha(game / "data" / "table.vpp_pc") == original
