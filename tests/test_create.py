"""gamepak create and the writers: the traps a new user hit (issue 9 part 5, 8; issue 13 part 4, 5).
Each test here failed before its fix."""

from __future__ import annotations

import errno
import json
import os
import struct
from pathlib import Path
from typing import Any

import pytest

import gamepak
from gamepak.errors import (
    FormatLimitError,
    GamepakError,
    InvalidOptionError,
    NotAnArchiveError,
    UnsafePathError,
)
from gamepak.ops.inputs import plan_create

from conftest import in_process_cli

MANIFEST = ".gamepak-manifest.json"


def make(path: Path, members: list[tuple[str, bytes]], **options: Any) -> Path:
    with gamepak.create(path, **options) as writer:
        for name, data in members:
            writer.add(name, data)
    return path


def names(path: Path, format_name: str | None = None) -> list[str]:
    with gamepak.open(path, format_name) as archive:
        return list(archive.namelist())


@pytest.fixture
def extracted(tmp_path: Path) -> Path:
    """A JoePack extracted with --manifest."""
    pack = make(tmp_path / "orig.jpk", [("a.txt", b"alpha"), ("b.txt", b"bravo"), ("c.txt", b"charlie")])
    folder = tmp_path / "folder"
    with gamepak.open(pack) as archive:
        archive.extractall(folder, manifest=True)
    return folder


# -- manifest folders stay honest ----------------------------------------------------------------


def test_unchanged_manifest_folder_rebuilds_exactly(tmp_path: Path, extracted: Path) -> None:
    code, _, err = in_process_cli("create", str(tmp_path / "again.jpk"), str(extracted))
    assert code == 0, err
    assert (tmp_path / "again.jpk").read_bytes() == (tmp_path / "orig.jpk").read_bytes()


def test_added_file_is_included_and_said(tmp_path: Path, extracted: Path) -> None:
    (extracted / "new.txt").write_bytes(b"new")
    code, _, err = in_process_cli("create", str(tmp_path / "out.jpk"), str(extracted))
    assert code == 0, err
    assert names(tmp_path / "out.jpk") == ["a.txt", "b.txt", "c.txt", "new.txt"]
    assert "added 1 file not in the manifest" in err and "new.txt" in err


def test_removed_and_renamed_files_are_said_not_an_error(tmp_path: Path, extracted: Path) -> None:
    (extracted / "a.txt").unlink()
    (extracted / "b.txt").rename(extracted / "bee.txt")
    code, _, err = in_process_cli("create", str(tmp_path / "out.jpk"), str(extracted))
    assert code == 0, err
    assert names(tmp_path / "out.jpk") == ["c.txt", "bee.txt"]
    assert "left out 2 members whose file is gone" in err and "a.txt, b.txt" in err
    assert "bee.txt" in err and "gamepak update" in err


def test_extra_input_beside_a_manifest_folder_is_added(tmp_path: Path, extracted: Path) -> None:
    extra = tmp_path / "extra.txt"
    extra.write_bytes(b"x")
    code, _, err = in_process_cli("create", str(tmp_path / "out.jpk"), str(extracted), str(extra))
    assert code == 0, err
    assert names(tmp_path / "out.jpk") == ["a.txt", "b.txt", "c.txt", "extra.txt"]
    assert "extra.txt" in err


def test_format_comes_from_out_not_the_manifest(tmp_path: Path, extracted: Path) -> None:
    code, _, err = in_process_cli("create", str(tmp_path / "conv.pak"), str(extracted))
    assert code == 0, err
    with gamepak.open(tmp_path / "conv.pak") as archive:
        assert archive.format_name == "pak"
        assert archive.namelist() == ["a.txt", "b.txt", "c.txt"]
    assert "the manifest describes a jpk pack; writing pak" in err and "ignored" in err
    # --format wins over both; a name without an extension falls back to the manifest's format.
    assert in_process_cli("create", "--format", "zip", str(tmp_path / "conv.pak2"), str(extracted))[0] == 0
    assert gamepak.open(tmp_path / "conv.pak2").format_name == "zip"
    assert in_process_cli("create", str(tmp_path / "noext"), str(extracted))[0] == 0
    assert gamepak.open(tmp_path / "noext").format_name == "jpk"


def test_manifest_layout_options_are_kept_when_members_change(tmp_path: Path) -> None:
    pack = make(tmp_path / "orig.pak", [("a", b"1" * 10), ("b", b"2" * 10)], align=64)
    with gamepak.open(pack) as archive:
        archive.extractall(tmp_path / "f", manifest=True)
    (tmp_path / "f" / "c").write_bytes(b"3" * 10)
    assert in_process_cli("create", str(tmp_path / "out.pak"), str(tmp_path / "f"))[0] == 0
    with gamepak.open(tmp_path / "out.pak") as archive:
        assert [entry.offset % 64 for entry in archive.infolist()] == [0, 0, 0]


# -- JOE is a model, not an archive ----------------------------------------------------------------


def test_joe_in_create_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "a").write_bytes(b"x")
    code, _, err = in_process_cli("create", str(tmp_path / "y.joe"), str(tmp_path / "folder"))
    assert code == 2
    assert "model import" in err and "internal error" not in err
    code, _, err = in_process_cli("create", "--format", "joe", str(tmp_path / "y.bin"), str(tmp_path / "folder"))
    assert code == 2 and "model import" in err
    with pytest.raises(NotAnArchiveError, match="model import"):
        gamepak.create(tmp_path / "z.joe", "joe")
    assert issubclass(NotAnArchiveError, GamepakError)
    assert not list(tmp_path.glob("*.joe"))


# -- stored names of single files ----------------------------------------------------------------


def test_single_file_name_option_and_src_equals_name(tmp_path: Path) -> None:
    source = tmp_path / "local.bin"
    source.write_bytes(b"data")
    code, _, err = in_process_cli("create", str(tmp_path / "a.pak"), str(source), "--name", "maps/e1m1.bsp")
    assert code == 0, err
    assert names(tmp_path / "a.pak") == ["maps/e1m1.bsp"]
    other = tmp_path / "other.txt"
    other.write_bytes(b"o")
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "x.txt").write_bytes(b"x")
    code, _, err = in_process_cli(
        "create", str(tmp_path / "b.zip"), f"{source}=progs/a.dat", f"{other}=b.txt", f"{folder}=sub", str(other)
    )
    assert code == 0, err
    assert names(tmp_path / "b.zip") == ["progs/a.dat", "b.txt", "sub/x.txt", "other.txt"]


def test_name_option_misuse_is_a_usage_error(tmp_path: Path) -> None:
    one, two = tmp_path / "1", tmp_path / "2"
    one.write_bytes(b"1")
    two.write_bytes(b"2")
    code, _, err = in_process_cli("create", str(tmp_path / "a.pak"), str(one), str(two), "--name", "x")
    assert code == 2 and "--name" in err
    code, _, err = in_process_cli("create", str(tmp_path / "a.pak"), str(tmp_path), "--name", "x")
    assert code == 2 and "--name" in err
    with pytest.raises(GamepakError, match="--name"):
        plan_create(str(tmp_path / "a.pak"), [str(one), str(two)], name="x")
    code, _, err = in_process_cli("create", str(tmp_path / "a.pak"), str(tmp_path / "missing=x"))
    assert code == 1 and f"missing=x: cannot read: {os.strerror(errno.ENOENT)}" in err  # missing, not a misuse


def test_a_file_named_with_an_equals_sign_is_a_path(tmp_path: Path) -> None:
    odd = tmp_path / "a=b.txt"
    odd.write_bytes(b"x")
    assert in_process_cli("create", str(tmp_path / "a.pak"), str(odd))[0] == 0
    assert names(tmp_path / "a.pak") == ["a=b.txt"]


# -- symlinks, the output itself, temporaries ------------------------------------------------------


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    folder = tmp_path / "in"
    (folder / "real").mkdir(parents=True)
    (folder / "real" / "r.txt").write_bytes(b"real")
    (folder / "file.txt").write_bytes(b"file")
    outside = tmp_path / "secret.txt"
    outside.write_bytes(b"secret")
    os.symlink(outside, folder / "escape.txt")
    os.symlink("file.txt", folder / "inside.txt")
    os.symlink("real", folder / "linked_dir")
    return folder


def test_symlink_leaving_the_folder_is_refused(tmp_path: Path, linked: Path) -> None:
    code, _, err = in_process_cli("create", str(tmp_path / "a.pak"), str(linked))
    assert code == 1
    assert "escape.txt" in err and "outside the folder" in err and "--follow" in err
    assert not (tmp_path / "a.pak").exists()


def test_inside_links_are_packed_and_skipped_folders_said(tmp_path: Path, linked: Path) -> None:
    (linked / "escape.txt").unlink()
    code, _, err = in_process_cli("create", str(tmp_path / "a.pak"), str(linked))
    assert code == 0, err
    assert names(tmp_path / "a.pak") == ["file.txt", "inside.txt", "real/r.txt"]
    assert "linked_dir/: a symlinked folder" in err


def test_follow_packs_links(tmp_path: Path, linked: Path) -> None:
    code, _, err = in_process_cli("create", "--follow", str(tmp_path / "a.pak"), str(linked))
    assert code == 0, err
    assert names(tmp_path / "a.pak") == ["escape.txt", "file.txt", "inside.txt", "linked_dir/r.txt", "real/r.txt"]
    with gamepak.open(tmp_path / "a.pak") as archive:
        assert archive.read("escape.txt") == b"secret"


def test_broken_symlink_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    os.symlink(tmp_path / "nowhere", folder / "broken")
    code, _, err = in_process_cli("create", "--follow", str(tmp_path / "a.pak"), str(folder))
    assert code == 1 and "broken" in err


def test_output_inside_the_input_is_never_packed(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "a.txt").write_bytes(b"a")
    assert in_process_cli("create", str(folder / "out.pak"), str(folder))[0] == 0
    code, _, err = in_process_cli("create", str(folder / "out.pak"), str(folder), "--overwrite")
    assert code == 0, err
    assert names(folder / "out.pak") == ["a.txt"]
    assert "out.pak: the output being written" in err
    code, _, err = in_process_cli("create", str(folder / "out.pak"), str(folder / "out.pak"), "--overwrite")
    assert code == 1 and "OUT cannot also be an INPUT" in err


def test_gamepak_temporaries_are_never_packed(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "a.txt").write_bytes(b"a")
    (folder / ".big.pak.gamepak-4242-0.tmp").write_bytes(b"stale")
    code, _, err = in_process_cli("create", str(tmp_path / "out.pak"), str(folder))
    assert code == 0, err
    assert names(tmp_path / "out.pak") == ["a.txt"]
    assert "a gamepak temporary file" in err


# -- the manifest is validated against its schema ----------------------------------------------------


def hostile(extracted: Path, change: object) -> None:
    path = extracted / MANIFEST
    document = json.loads(path.read_text())
    change(document)  # type: ignore[operator]
    path.write_text(json.dumps(document))


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d["exact"].update(file_size=2**40), "exact.file_size"),
        (lambda d: d["exact"].update(file_size=-1), "exact.file_size"),
        (lambda d: d["exact"].update(offsets=["x", 1, 2]), "exact.offsets[0]"),
        (lambda d: d["exact"].update(offsets=[1]), "exact.offsets"),
        (lambda d: d["exact"].update(offsets=[2**40, 0, 0]), "exact.offsets[0]"),
        (lambda d: d["exact"].update(name_field_size="big"), "exact.name_field_size"),
        (lambda d: d["exact"].update(name_fields={"0": 5}), "exact.name_fields.0"),
        (lambda d: d["exact"].update(name_fields={"99": "AAAA"}), "exact.name_fields"),
        (lambda d: d["exact"].update(fill=[[2**40, "AAAA"]]), "exact.fill[0]"),
        (lambda d: d["exact"].update(fill="junk"), "exact.fill"),
        (lambda d: d["exact"].update(sizes=[-5, 5, 7]), "exact.sizes[0]"),
        (lambda d: d["exact"].update(sizes=[1.5]), "exact.sizes[0]"),
        (lambda d: d["members"][0].update(size=-3), "members[0].size"),
        (lambda d: d["members"][0].update(name=7), "members[0].name"),
        (lambda d: d["members"][0].update(path=None), "members[0].path"),
        (lambda d: d.update(members={"a": 1}), "members"),
        (lambda d: d.update(format=3), "format"),
        (lambda d: d.update(format="rar"), "format"),
        (lambda d: d.update(options=[1]), "options"),
        (lambda d: d.update(exact=[]), "exact"),
        (lambda d: d.update(size=2**50), "size"),
    ],
)
def test_hostile_manifest_names_the_field(tmp_path: Path, extracted: Path, change: object, field: str) -> None:
    hostile(extracted, change)
    code, _, err = in_process_cli("create", str(tmp_path / "out.jpk"), str(extracted))
    assert code == 1, err
    assert f"manifest field {field}:" in err
    assert "internal error" not in err
    assert not (tmp_path / "out.jpk").exists()


def test_empty_joepack_with_a_name_field_size_rebuilds_exactly(tmp_path: Path) -> None:
    # Found by fuzz/fuzz_manifest_all.py: with no members the name field takes no bytes, and the
    # manifest check bounded it by the file's 16 bytes, refusing gamepak's own pack.
    pack = make(tmp_path / "empty.jpk", [], name_field_size=32)
    with gamepak.open(pack) as archive:
        archive.extractall(tmp_path / "out", manifest=True)
    code, _, err = in_process_cli("create", str(tmp_path / "again.jpk"), str(tmp_path / "out"))
    assert code == 0, err
    assert (tmp_path / "again.jpk").read_bytes() == pack.read_bytes()
    hostile(tmp_path / "out", lambda d: d["exact"].update(name_field_size=1 << 32))
    code, _, err = in_process_cli("create", str(tmp_path / "huge.jpk"), str(tmp_path / "out"))
    assert code == 1 and "manifest field exact.name_field_size:" in err


def test_empty_joepack_with_a_name_field_wider_than_the_option_rebuilds_exactly(tmp_path: Path) -> None:
    # The header's uint32 name field size of an empty pack (fuzz_manifest_all): too wide for the
    # writer's option, it is kept by the byte-exact layout alone.
    pack = tmp_path / "wide.jpk"
    pack.write_bytes(b"JPK01.00" + struct.pack("<II", 0, 0xFFFFFFFF))
    with gamepak.open(pack) as archive:
        assert archive.verify() == []
        assert archive.layout_options() == {"name_field_size": None}
        archive.extractall(tmp_path / "out", manifest=True)
    code, _, err = in_process_cli("create", str(tmp_path / "again.jpk"), str(tmp_path / "out"))
    assert code == 0, err
    assert (tmp_path / "again.jpk").read_bytes() == pack.read_bytes()


def test_manifest_option_values_are_validated(tmp_path: Path, extracted: Path) -> None:
    hostile(extracted, lambda d: d["options"].update(name_field_size="wide"))
    code, _, err = in_process_cli("create", str(tmp_path / "out.jpk"), str(extracted))
    assert code == 2 and "name_field_size" in err


def test_manifest_cannot_read_outside_its_folder(tmp_path: Path, extracted: Path) -> None:
    hostile(extracted, lambda d: d["members"][0].update(path="../../etc/passwd"))
    code, _, err = in_process_cli("create", str(tmp_path / "out.jpk"), str(extracted))
    assert code == 1 and ".." in err


# -- writers refuse unsafe and duplicate names ---------------------------------------------------------

WRITABLE = ["pak", "jpk", "vpp", "zip", "tar"]


@pytest.mark.parametrize("format_name", WRITABLE)
@pytest.mark.parametrize("name", ["../evil.joe", "a/../../evil", "/abs/path", "C:/evil", "a\\b", "..", "a/.."])
def test_writers_refuse_names_that_leave_the_folder(tmp_path: Path, format_name: str, name: str) -> None:
    writer = gamepak.create(tmp_path / "out", format_name)
    with pytest.raises(UnsafePathError):
        writer.add(name, b"x")
    source = make(tmp_path / "src.zip", [("ok", b"y")])
    with gamepak.open(source) as archive, pytest.raises(UnsafePathError):
        writer.add_member(name, archive, "ok")
    fine = "fine.txt" if writer.flat_names else "fine/./name.txt"
    writer.add(fine, b"ok")
    writer.close()
    assert names(tmp_path / "out", format_name) == [fine]


def test_flat_formats_refuse_folders(tmp_path: Path) -> None:
    from gamepak.formats import zip as zip_format

    class FlatWriter(zip_format.Writer):
        flat_names = True

    writer = FlatWriter(tmp_path / "flat.zip")
    with pytest.raises(FormatLimitError, match="no folders"):
        writer.add("maps/e1m1.bsp", b"x")
    writer.add("e1m1.bsp", b"x")
    writer.close()
    assert names(tmp_path / "flat.zip") == ["e1m1.bsp"]


@pytest.mark.parametrize("format_name", WRITABLE)
def test_writers_refuse_nul_and_empty_names(tmp_path: Path, format_name: str) -> None:
    writer = gamepak.create(tmp_path / "out", format_name)
    for name in ("", "a\0b"):
        with pytest.raises(FormatLimitError):
            writer.add(name, b"x")
    writer.abort()


@pytest.mark.parametrize("format_name", WRITABLE)
def test_duplicates_need_allow_duplicates(tmp_path: Path, format_name: str) -> None:
    writer = gamepak.create(tmp_path / "out", format_name)
    writer.add("x", b"1")
    with pytest.raises(FormatLimitError, match="allow_duplicates"):
        writer.add("x", b"2")
    writer.abort()
    make(tmp_path / "dup", [("x", b"1"), ("x", b"2")], format=format_name, allow_duplicates=True)
    assert names(tmp_path / "dup", format_name) == ["x", "x"]


def test_nameless_formats_refuse_duplicates_even_when_allowed(tmp_path: Path) -> None:
    writer = gamepak.create(tmp_path / "out", "j2me-table", allow_duplicates=True)
    writer.add("0", b"1")
    with pytest.raises(FormatLimitError, match="cannot hold two"):
        writer.add("0", b"2")
    writer.abort()


def test_cli_allow_duplicates(tmp_path: Path) -> None:
    for folder in ("one", "two"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "a.txt").write_text(folder)
    inputs = [str(tmp_path / "one" / "a.txt"), str(tmp_path / "two" / "a.txt")]
    code, _, err = in_process_cli("create", str(tmp_path / "a.pak"), *inputs)
    assert code == 1 and "--allow-duplicates" in err and "nothing was written" in err
    assert not (tmp_path / "a.pak").exists()
    code, _, err = in_process_cli("create", "--allow-duplicates", str(tmp_path / "a.pak"), *inputs)
    assert code == 0, err
    assert names(tmp_path / "a.pak") == ["a.txt", "a.txt"]


def test_create_lists_every_refused_name_at_once(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    for index in range(3):
        (folder / (f"{index}" + "n" * 60)).write_bytes(b"x")
    code, _, err = in_process_cli("create", str(tmp_path / "a.pak"), str(folder))
    assert code == 1 and "3 members cannot go" in err
    assert all(f"{index}" + "n" * 60 in err for index in range(3))


def test_manifest_of_a_pack_with_duplicates_rebuilds(tmp_path: Path) -> None:
    pack = make(tmp_path / "dup.pak", [("x", b"first"), ("x", b"second")], allow_duplicates=True)
    with gamepak.open(pack) as archive:
        archive.extractall(tmp_path / "f", manifest=True)
    code, _, err = in_process_cli("create", str(tmp_path / "again.pak"), str(tmp_path / "f"))
    assert code == 0, err
    assert (tmp_path / "again.pak").read_bytes() == pack.read_bytes()


# -- writer options are validated up front: exit 2 ---------------------------------------------------


@pytest.mark.parametrize(
    ("out", "option"),
    [
        ("a.pak", "align="),
        ("a.pak", "align=abc"),
        ("a.pak", "align=0"),
        ("a.pak", "directory=middle"),
        ("a.pak", "level=abc"),
        ("a.pak", "finish=maybe"),
        ("a.pak", "flags=7"),
        ("a.jpk", "name_field_size=abc"),
        ("a.jpk", "name_field_size=-1"),
        ("a.bin:j2me-end-offsets", "terminator=300"),
        ("a.bin:j2me-table", "align=4"),
        ("a.vpp_pc", "level=abc"),
        ("a.vpp_pc", "finish=maybe"),
        ("a.vpp_pc", "flags=7"),
        ("a.str2_pc", "window_bits=x"),
        ("a.zip", "compression=maybe"),
        ("a.tar", "level=abc"),
    ],
)
def test_bad_option_values_exit_2(tmp_path: Path, out: str, option: str) -> None:
    (tmp_path / "m.txt").write_bytes(b"x")
    out_name, _, format_name = out.partition(":")
    arguments = ["create", str(tmp_path / out_name), str(tmp_path / "0.txt" if format_name else tmp_path / "m.txt")]
    if format_name:
        (tmp_path / "0.txt").write_bytes(b"x")
        arguments[1:1] = ["--format", format_name]
    code, _, err = in_process_cli(*arguments, "-O", option)
    assert code == 2, err
    key = option.partition("=")[0]
    assert key in err and "internal error" not in err
    assert not (tmp_path / out_name).exists()


def test_invalid_option_error_names_the_option(tmp_path: Path) -> None:
    with pytest.raises(InvalidOptionError) as caught:
        gamepak.create(tmp_path / "a.pak", directory="middle")
    assert caught.value.option == "directory"
    assert "'end', 'start'" in str(caught.value)
    assert issubclass(InvalidOptionError, GamepakError)
    writer = gamepak.create(tmp_path / "a.pak", align=4, directory="START")
    assert writer.options == {"align": 4, "directory": "start"}
    writer.abort()


# -- the editor's writers follow the same name rules -------------------------------------------------


@pytest.mark.parametrize("suffix", [".pak", ".jpk", ".vpp_pc", ".zip"])
def test_edits_refuse_unsafe_names(tmp_path: Path, suffix: str) -> None:
    pack = make(tmp_path / f"p{suffix}", [("a.txt", b"a")])
    before = pack.read_bytes()
    with pytest.raises(UnsafePathError):
        with gamepak.edit(pack) as editor:
            editor.add("../evil.joe", b"x")
    with pytest.raises(UnsafePathError):
        with gamepak.edit(pack) as editor:
            editor.rename("a.txt", "/abs.txt")
    assert pack.read_bytes() == before
    extra = tmp_path / "extra"
    extra.write_bytes(b"x")
    code, _, err = in_process_cli("add", str(pack), str(extra), "--name", "..\\evil")
    assert code == 1 and "backslash" in err
    assert pack.read_bytes() == before


@pytest.mark.parametrize("suffix", [".pak", ".vpp_pc", ".zip"])
def test_edits_keep_the_duplicates_a_pack_had(tmp_path: Path, suffix: str) -> None:
    pack = make(tmp_path / f"p{suffix}", [("x", b"1"), ("x", b"2"), ("y", b"y")], allow_duplicates=True)
    with gamepak.edit(pack, compact=True) as editor:
        editor.remove("y")
    with gamepak.open(pack) as archive:
        assert [(entry.name, archive.read(entry)) for entry in archive.infolist()] == [("x", b"1"), ("x", b"2")]


@pytest.mark.parametrize(
    ("format_name", "name", "option", "given", "kept"),
    [
        ("pak", "a.pak", "align", "0x10", 16),
        ("zip", "a.zip", "level", " 9", 9),
        ("vpp", "a.str2_pc", "level", "4", 4),
        ("vpp", "a.str2_pc", "finish", "off", False),
        ("vpp", "a.str2_pc", "finish", 1, True),
    ],
)
def test_every_format_takes_the_same_spellings(
    tmp_path: Path, format_name: str, name: str, option: str, given: object, kept: object
) -> None:
    """Numbers as text and booleans as yes/no, on/off or 1/0 mean the same to every writer
    (the packfile writer once had checkers of its own, with other spellings and wordings)."""
    options: dict[str, Any] = {option: given}
    writer = gamepak.create(tmp_path / name, format_name, **options)
    assert writer.options[option] == kept
    writer.abort()


@pytest.mark.parametrize(("format_name", "name"), [("pak", "a.pak"), ("vpp", "a.vpp_pc")])
def test_every_format_words_a_bad_number_alike(tmp_path: Path, format_name: str, name: str) -> None:
    with pytest.raises(
        InvalidOptionError, match=r"option align=many: takes a whole number from 1 to 1048576.*, not 'many'"
    ):
        gamepak.create(tmp_path / name, format_name, align="many")
