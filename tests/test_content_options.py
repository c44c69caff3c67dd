"""`texture` and `model` refuse an option the content kind they were given does not take (its
row's `Verb.options`), in one line naming the option and the kind, as `text` does; an option
at its default, or one the kind takes, passes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from quake_bytes import mdl_bytes, qpic_bytes
from sprite_bytes import simple_sprite

import gamepak
from gamepak.cli.kind_options import refuse_untaken
from gamepak.cli.texture import KIND_OPTIONS
from gamepak.content import KINDS, get
from gamepak.errors import UsageError

from conftest import in_process_cli


@pytest.fixture
def picture(tmp_path: Path) -> Path:
    path = tmp_path / "pic.lmp"
    path.write_bytes(qpic_bytes(4, 2, bytes(range(8))))
    return path


@pytest.fixture
def sprites(tmp_path: Path) -> Path:
    path = tmp_path / "sprites.f"
    with gamepak.create(path, "j2me-table") as writer:
        writer.add("0", simple_sprite())
    return path


def _refused(code: int, err: str, *words: str) -> None:
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert all(word in lines[0] for word in words), err


@pytest.mark.parametrize(
    ("arguments", "option"),
    [
        (["ls", "{pic}", "--order", "RGBA"], "--order"),
        (["ls", "{pic}", "--peg", "x.cpeg_pc"], "--peg"),
        (["export", "{pic}", "-o", "{out}", "--as", "dds"], "--as"),
        (["import", "{pic}", "{out}", "--asm", "x.asm_pc"], "--asm"),
    ],
)
def test_a_quake_image_refuses_the_peg_options(
    picture: Path, tmp_path: Path, arguments: list[str], option: str
) -> None:
    filled = [word.format(pic=picture, out=tmp_path / "out") for word in arguments]
    code, _, err = in_process_cli("texture", *filled)
    _refused(code, err, option, "Quake palette images", "Red Faction Guerrilla texture sets")
    assert not (tmp_path / "out").exists()


def test_options_a_quake_image_takes_or_left_at_their_default_pass(picture: Path, tmp_path: Path) -> None:
    assert in_process_cli("texture", "ls", str(picture), "--order", "BGRA")[0] == 0
    code, _, err = in_process_cli("texture", "export", str(picture), "-o", str(tmp_path / "out"), "--as", "png")
    assert code == 0, err
    code, _, err = in_process_cli("texture", "import", str(picture), str(tmp_path / "out"), "--resize")
    assert code == 0, err


def test_a_peg_refuses_the_quake_palette(tmp_path: Path) -> None:
    peg = tmp_path / "crate.cpeg_pc"
    peg.write_bytes(b"GEKV" + bytes(60))
    code, _, err = in_process_cli("texture", "ls", str(peg), "--palette", "palette.lmp")
    _refused(code, err, "--palette", "Red Faction Guerrilla texture sets", "Quake palette images")


def test_sprites_refuse_what_they_ignored(sprites: Path, tmp_path: Path) -> None:
    code, _, err = in_process_cli("texture", "ls", str(sprites), "--palette", "palette.lmp")
    _refused(code, err, "--palette", "Gameloft J2ME sprites")
    code, _, err = in_process_cli("texture", "export", str(sprites), "-o", str(tmp_path / "o"), "--as", "dds")
    _refused(code, err, "--as", "Gameloft J2ME sprites")
    code, _, err = in_process_cli("texture", "import", str(sprites), str(tmp_path), "--resize")
    _refused(code, err, "--resize", "Gameloft J2ME sprites")
    assert in_process_cli("texture", "ls", str(sprites))[0] == 0


def _mdl() -> bytes:
    return mdl_bytes(st=[(0, 0, 0)] * 3, triangles=[(1, 0, 1, 2)], poses=[[(0, 0, 0), (9, 0, 0), (0, 9, 0)]])


def test_model_export_refuses_another_kind_s_options(tmp_path: Path) -> None:
    mdl = tmp_path / "thing.mdl"
    mdl.write_bytes(_mdl())
    code, _, err = in_process_cli("model", "export", str(mdl), "-o", str(tmp_path / "a.glb"), "--lod", "1")
    _refused(code, err, "--lod", "Red Faction Guerrilla meshes", "Quake alias models")
    code, _, err = in_process_cli("model", "export", str(mdl), "-o", str(tmp_path / "a.glb"), "--no-textures")
    _refused(code, err, "--no-textures", "Quake alias models")
    joe = tmp_path / "thing.joe"
    joe.write_bytes(b"\x00" * 16)
    code, _, err = in_process_cli("model", "export", str(joe), "-o", str(tmp_path / "b.glb"), "--frame", "0")
    _refused(code, err, "--frame", "Quake alias models", "VDrift JOE models")
    assert not (tmp_path / "a.glb").exists() and not (tmp_path / "b.glb").exists()
    code, _, err = in_process_cli("model", "export", str(mdl), "-o", str(tmp_path / "a.glb"), "--frame", "0")
    assert code == 0, err


@pytest.mark.parametrize("option", [["--frame", "0"], ["--lod", "1"], ["--scale", "2"], ["--no-textures"]])
def test_model_export_of_a_folder_refuses_another_kind_s_options_naming_scenes(
    tmp_path: Path, option: list[str]
) -> None:
    # A folder is a scene: the refusal names scenes, not the JOE row a name no row claims gets.
    (tmp_path / "track").mkdir()
    out = tmp_path / "a.glb"
    code, _, err = in_process_cli("model", "export", str(tmp_path / "track"), "-o", str(out), *option)
    _refused(code, err, option[0], "not VDrift track or car folders")
    assert "VDrift JOE models" not in err, err
    assert not out.exists()


def test_refuse_untaken_names_no_taker_when_no_row_takes_it() -> None:
    import argparse

    with pytest.raises(UsageError, match="--lod is not taken by `model` for Red Faction Guerrilla meshes"):
        refuse_untaken(argparse.Namespace(lod=2), get("rfg-mesh"), "export_pack", {"lod": ("--lod", 0)})
    refuse_untaken(argparse.Namespace(lod=0), get("rfg-mesh"), "export_pack", {"lod": ("--lod", 0)})


# -- `texture export` counts what the kind exports ---------------------------------------------------
def test_texture_export_of_sprites_counts_sprites_not_files(tmp_path: Path) -> None:
    pack = tmp_path / "two.f"
    with gamepak.create(pack, "j2me-table") as writer:
        writer.add("0", simple_sprite())
        writer.add("1", b"MThd not a sprite")
        writer.add("2", simple_sprite())
    code, _, err = in_process_cli("texture", "export", str(pack), "-o", str(tmp_path / "out"))
    assert code == 0, err
    assert f"exported 2 sprites (4 modules, 2 frames, 2 animations) to {tmp_path / 'out'}" in err, err


def test_texture_export_of_other_kinds_counts_textures(picture: Path, tmp_path: Path) -> None:
    code, _, err = in_process_cli("texture", "export", str(picture), "-o", str(tmp_path / "out"))
    assert code == 0 and f"exported 1 texture to {tmp_path / 'out'}" in err, err


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from([kind.name for kind in KINDS if kind.family.command == "texture"]),
    st.sampled_from(["ls", "export", "import", "add", "rm"]),
    st.dictionaries(st.sampled_from(sorted(KIND_OPTIONS)), st.sampled_from(["RGBA", "dds", True, "x", None])),
)
def test_an_option_is_refused_exactly_when_the_row_does_not_take_it(
    name: str, verb: str, given_options: dict[str, object]
) -> None:
    import argparse

    kind = get(name)
    taken = kind.verbs[verb].options if kind.has(verb) else ()
    defaults = {key: default for key, (_, default) in KIND_OPTIONS.items()}
    untaken = [
        key
        for key, value in given_options.items()
        if key not in taken and value is not None and value is not False and value != defaults[key]
    ]
    arguments = argparse.Namespace(**{**defaults, **given_options})
    if untaken:
        with pytest.raises(UsageError) as raised:
            refuse_untaken(arguments, kind, verb, KIND_OPTIONS)
        message = str(raised.value)
        assert "\n" not in message and kind.description in message
        assert any(message.startswith(KIND_OPTIONS[key][0] + " ") for key in untaken)
    else:
        refuse_untaken(arguments, kind, verb, KIND_OPTIONS)


def test_model_import_into_a_pack_refuses_a_scene_s_delete(tmp_path: Path) -> None:
    pack = tmp_path / "items.vpp_pc"
    pack.write_bytes(b"\xce\x0a\x89\x51" + bytes(60))
    before = pack.read_bytes()
    code, _, err = in_process_cli(
        "model", "import", str(tmp_path / "x.glb"), "--into", str(pack), "thing.csmesh_pc", "--delete"
    )
    _refused(code, err, "--delete", "Red Faction Guerrilla meshes")
    assert pack.read_bytes() == before


# -- `model export`: the mesh formats' --texture and --up ----------------------------------------
@pytest.mark.parametrize("option", [["--texture", "skin.png"], ["--up", "z"]])
def test_model_export_refuses_the_mesh_options_for_a_kind_with_its_own_export(
    tmp_path: Path, option: list[str]
) -> None:
    mdl = tmp_path / "thing.mdl"
    mdl.write_bytes(_mdl())
    out = tmp_path / "a.glb"
    code, _, err = in_process_cli("model", "export", str(mdl), "-o", str(out), *option)
    _refused(code, err, option[0], "Quake alias models", "is for the mesh formats (JOE, OBJ, glTF, PLY), not")
    # A mesh (named by its file: refused before either file is read) and a pack of meshes.
    code, _, err = in_process_cli("model", "export", str(tmp_path / "m.csmesh_pc"), "-o", str(out), *option)
    _refused(code, err, option[0], "Red Faction Guerrilla meshes")
    code, _, err = in_process_cli("model", "export", str(tmp_path / "p.vpp_pc"), "-o", str(tmp_path / "o"), *option)
    _refused(code, err, option[0], "Red Faction Guerrilla meshes")
    # A scene: refused before the folder is read (an empty folder is no scene: exit 1 else).
    (tmp_path / "track").mkdir()
    code, _, err = in_process_cli("model", "export", str(tmp_path / "track"), "-o", str(out), *option)
    _refused(code, err, option[0], "VDrift track or car folders")
    assert not out.exists() and not (tmp_path / "o").exists()


def test_the_mesh_formats_take_texture_and_up(tmp_path: Path) -> None:
    from gamepak.demo import crate_mesh
    from gamepak.models import dumps

    joe = tmp_path / "crate.joe"
    joe.write_bytes(dumps(crate_mesh(), "joe"))
    out = tmp_path / "crate.obj"
    code, _, err = in_process_cli("model", "export", str(joe), "-o", str(out), "--texture", "crate.png", "--up", "z")
    assert code == 0, err
    assert "crate.png" in (tmp_path / "crate.mtl").read_text()
