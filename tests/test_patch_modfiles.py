"""SyncFaction mods as strangers ship them: every documented form, nothing skipped silently, no
link followed, no bomb decoded, one line for every malformed mod file (issues 29 and 30)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

import pytest

import gamepak
from gamepak.formats.vcdiff import encode_varint
from gamepak.ops.patch.limits import limits

from conftest import in_process_cli
from conftest import pack_members as contents
from conftest import write_pack as pack

XDELTA3 = shutil.which("xdelta3")
needs_xdelta3 = pytest.mark.skipif(XDELTA3 is None, reason="xdelta3 is not installed (it makes the fixtures)")


def _one_line(err: str) -> bool:
    """One line of gamepak's own, not an internal error."""
    return err.count("\n") == 1 and "internal error" not in err and "Traceback" not in err


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _xdelta(old: Path, new: Path, out: Path, *options: str) -> Path:
    assert XDELTA3 is not None
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([XDELTA3, "-e", "-f", *options, "-s", str(old), str(new), str(out)], check=True)
    return out


def _run_windows(count: int, each: int, declared: int | None = None) -> bytes:
    """A VCDIFF delta by RFC 3284's layout: `count` windows, each one RUN of `each` bytes (the
    window declaring `declared` bytes, default `each`): tiny, decoding to count × each."""
    out = bytearray(b"\xd6\xc3\xc4\x00\x00")
    for _ in range(count):
        instructions = b"\x00" + encode_varint(each)  # code 0: RUN, size follows
        target = encode_varint(each if declared is None else declared)
        # Delta_Indicator, the three section lengths, then the data (one byte) and instructions.
        rest = b"\x00" + encode_varint(1) + encode_varint(len(instructions)) + encode_varint(0) + b"A" + instructions
        out += b"\x00" + encode_varint(len(target) + len(rest)) + target + rest
    return bytes(out)


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temp folder check and apply decode into, private to the test."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _game(tmp_path: Path) -> Path:
    game = tmp_path / "game"
    pack(game / "data" / "misc.vpp_pc", {"a.xtbl": b"<root>a</root>", "b.xtbl": b"<root>b</root>"})
    (game / "rfg.exe").write_bytes(b"MZ" + bytes(range(256)) * 64)
    (game / "foo" / "bar").mkdir(parents=True)
    (game / "foo" / "bar" / "test.a.b.c").write_bytes(b"deep file " * 500)
    return game


def _originals(game: Path) -> dict[str, str]:
    return {
        os.path.relpath(os.path.join(root, name), game): _sha(Path(root) / name)
        for root, _, names in os.walk(game)
        for name in names
    }


# -- issue 29 item 3: every form, at any depth, nothing skipped silently ----------------------------


@needs_xdelta3
def test_xdelta_at_any_depth_by_the_last_extension_rule_applies_and_reverts(tmp_path: Path, scratch: Path) -> None:
    game = _game(tmp_path)
    before = _originals(game)
    new = tmp_path / "new"
    new.mkdir()
    (new / "rfg.exe").write_bytes(b"MZ" + bytes(range(256)) * 63 + b"patched!" * 32)
    (new / "test.a.b.c").write_bytes(b"deep file " * 499 + b"DEEP FILE ")
    mod = tmp_path / "mod"
    _xdelta(game / "rfg.exe", new / "rfg.exe", mod / "rfg.xdelta")
    _xdelta(game / "foo" / "bar" / "test.a.b.c", new / "test.a.b.c", mod / "foo" / "bar" / "test.a.b.xdelta")
    code, _, err = in_process_cli("patch", "apply", str(game), str(mod))
    assert code == 0, err
    assert (game / "rfg.exe").read_bytes() == (new / "rfg.exe").read_bytes()
    assert (game / "foo" / "bar" / "test.a.b.c").read_bytes() == (new / "test.a.b.c").read_bytes()
    assert not os.listdir(scratch), "the decoded deltas were left in the temp folder"
    code, _, err = in_process_cli("patch", "revert", str(game))
    assert code == 0, err
    assert _originals(game) == before


@needs_xdelta3
def test_a_delta_the_game_lacks_or_that_matches_two_files_is_refused_naming_it(tmp_path: Path, scratch: Path) -> None:
    game = _game(tmp_path)
    before = _originals(game)
    mod = tmp_path / "mod"
    _xdelta(game / "rfg.exe", game / "rfg.exe", mod / "foo" / "nothing.xdelta")
    code, _, err = in_process_cli("patch", "check", str(game), str(mod))
    assert code == 1 and "nothing.xdelta" in err and "has no foo/nothing.*" in err, err
    shutil.rmtree(mod)
    (game / "foo" / "bar" / "test.a.b.d").write_bytes(b"twin")
    before = _originals(game)
    _xdelta(game / "rfg.exe", game / "rfg.exe", mod / "foo" / "bar" / "test.a.b.xdelta")
    code, _, err = in_process_cli("patch", "apply", str(game), str(mod))
    assert code == 1 and "test.a.b.c" in err and "test.a.b.d" in err and _one_line(err), err
    assert _originals(game) == before and not os.listdir(scratch)


def test_every_file_is_applied_or_listed_as_ignored_with_its_reason(
    tmp_path: Path, scratch: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    game = _game(tmp_path)
    mod = tmp_path / "mod"
    loose = mod / "data" / "misc.vpp_pc"
    loose.mkdir(parents=True)
    (loose / "a.xtbl").write_bytes(b"<root>A</root>")
    (loose / ".options.json").write_text(json.dumps({"Mode": "Compressed"}))
    (mod / "readme.txt").write_text("my mod")
    (mod / "screenshot.png").write_bytes(b"\x89PNG")
    (mod / ".DS_Store").write_bytes(b"x")
    (mod / "rfg.exe").write_bytes(b"a whole new exe")  # a whole file: replaces the game's
    (mod / "new_folder").mkdir()
    (mod / "new_folder" / "something.else").write_bytes(b"added")  # a whole file the game lacks
    ignored = ["readme.txt", "screenshot.png", ".DS_Store", ".options.json"]
    for verb in ("check", "apply"):
        code, _, err = in_process_cli("patch", verb, str(game), str(mod))
        assert code == 0, err
        for name in ignored:
            assert any(name in line and "ignored:" in line for line in err.splitlines()), (verb, name, err)
    assert (game / "rfg.exe").read_bytes() == b"a whole new exe"
    assert (game / "new_folder" / "something.else").read_bytes() == b"added"
    assert contents(game / "data" / "misc.vpp_pc")["a.xtbl"] == b"<root>A</root>"
    code, out, err = in_process_cli("patch", "info", str(mod), "--json")
    assert code == 0, err
    document = json.loads(out)
    assert sorted(Path(item["file"]).name for item in document["ignored"]) == sorted(ignored)
    assert {"action": "replace file", "file": "rfg.exe", "size": 15} in document["changes"]
    code, out, _ = in_process_cli("patch", "info", str(mod))
    assert "ignored: 4" in out and "readme.txt: documentation" in out
    # Revert takes the added file away and gives the exe back.
    assert in_process_cli("patch", "revert", str(game))[0] == 0
    assert not (game / "new_folder" / "something.else").exists()
    assert (game / "rfg.exe").read_bytes().startswith(b"MZ")


def test_a_mod_of_documentation_only_is_refused_saying_what_it_holds(tmp_path: Path) -> None:
    game = _game(tmp_path)
    mod = tmp_path / "mod"
    mod.mkdir()
    (mod / "readme.txt").write_text("nothing here")
    code, _, err = in_process_cli("patch", "apply", str(game), str(mod))
    assert code == 1 and "changes nothing" in err and "readme.txt" in err


def test_files_beside_modinfo_that_it_does_not_name_are_listed(tmp_path: Path) -> None:
    game = _game(tmp_path)
    mod = tmp_path / "mod"
    (mod / "files").mkdir(parents=True)
    (mod / "files" / "a.xtbl").write_bytes(b"<root>new</root>")
    (mod / "files" / "unused.xtbl").write_bytes(b"<root>?</root>")
    (mod / "modinfo.xml").write_text(
        '<Mod Name="m"><Changes><Replace File="data\\misc.vpp_pc\\a.xtbl" NewFile="files\\a.xtbl"/></Changes></Mod>'
    )
    code, _, err = in_process_cli("patch", "check", str(game), str(mod))
    assert code == 0 and "unused.xtbl: ignored: beside modinfo.xml, and not named by it" in err, err
    assert "files/a.xtbl: ignored" not in err
    code, out, _ = in_process_cli("patch", "info", str(mod), "--json")
    assert [item["file"] for item in json.loads(out)["ignored"]] == ["files/unused.xtbl"]
    # A loose archive beside modinfo.xml: info lists it, apply applies both.
    (mod / "data" / "misc.vpp_pc").mkdir(parents=True)
    (mod / "data" / "misc.vpp_pc" / "b.xtbl").write_bytes(b"<root>loose</root>")
    code, out, _ = in_process_cli("patch", "info", str(mod), "--json")
    document = json.loads(out)
    assert document["syncfaction_changes"] == [
        {"action": "put", "file": "data/misc.vpp_pc", "member": "b.xtbl", "size": 18}
    ]
    code, out, _ = in_process_cli("patch", "info", str(mod))
    assert "beside modinfo.xml: 1" in out and "put data/misc.vpp_pc/b.xtbl (18 bytes)" in out
    code, _, err = in_process_cli("patch", "apply", str(game), str(mod))
    assert code == 0, err
    assert contents(game / "data" / "misc.vpp_pc") == {"a.xtbl": b"<root>new</root>", "b.xtbl": b"<root>loose</root>"}


# -- issue 29 item 4: secondary compression ------------------------------------------------------------


@needs_xdelta3
def test_a_stock_xdelta3_delta_with_lzma_secondary_applies(tmp_path: Path, scratch: Path) -> None:
    game = _game(tmp_path)
    misc = game / "data" / "misc.vpp_pc"
    modded = pack(tmp_path / "modded.vpp_pc", {"a.xtbl": b"<root>changed</root>" * 40, "b.xtbl": b"<root>b</root>"})
    delta = _xdelta(misc, modded, tmp_path / "mod" / "data" / "misc.xdelta")  # xdelta3's default: -S lzma
    header = subprocess.run([XDELTA3 or "", "printhdr", str(delta)], capture_output=True, text=True).stdout
    assert "lzma" in header
    code, _, err = in_process_cli("patch", "apply", str(game), str(tmp_path / "mod"))
    assert code == 0, err
    assert misc.read_bytes() == modded.read_bytes()


@needs_xdelta3
def test_a_djw_secondary_is_refused_naming_the_cause_and_the_fix(tmp_path: Path, scratch: Path) -> None:
    game = _game(tmp_path)
    new = tmp_path / "new.exe"
    new.write_bytes(b"".join(b"line %d of text the source lacks\n" % number for number in range(5000)))
    delta = _xdelta(game / "rfg.exe", new, tmp_path / "mod" / "rfg.xdelta", "-S", "djw")
    header = subprocess.run([XDELTA3 or "", "printhdrs", str(delta)], capture_output=True, text=True).stdout
    assert "VCD_DATACOMP" in header  # the data section is djw-coded
    code, _, err = in_process_cli("patch", "check", str(game), str(tmp_path / "mod"))
    assert code == 1 and "djw secondary compressor" in err and "xdelta3 -e -S none" in err, err
    assert "other bytes" not in err


@needs_xdelta3
@pytest.mark.parametrize("secondary", [[], ["-S", "none"]])
def test_a_delta_made_for_other_bytes_says_so(tmp_path: Path, scratch: Path, secondary: list[str]) -> None:
    game = _game(tmp_path)
    other = tmp_path / "other.exe"
    other.write_bytes(b"another exe entirely" * 100)
    new = tmp_path / "new.exe"
    new.write_bytes(b"another exe entirely" * 99 + b"patched")
    _xdelta(other, new, tmp_path / "mod" / "rfg.xdelta", *secondary)
    before = _originals(game)
    code, _, err = in_process_cli("patch", "apply", str(game), str(tmp_path / "mod"))
    assert code == 1 and "made for other bytes" in err, err
    assert _originals(game) == before and not os.listdir(scratch)


def test_a_garbage_xdelta_is_refused_and_leaves_no_scratch_file(tmp_path: Path, scratch: Path) -> None:
    game = _game(tmp_path)
    mod = tmp_path / "mod"
    mod.mkdir()
    (mod / "rfg.xdelta").write_bytes(b"\xd6\xc3\xc4\x00\x00" + os.urandom(64))
    code, _, err = in_process_cli("patch", "check", str(game), str(mod))
    assert code == 1 and "rfg.xdelta" in err and _one_line(err), err
    assert not os.listdir(scratch)


# -- issue 30 item 1: no link followed ------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "symlink") or os.name == "nt", reason="needs POSIX symlinks")
@pytest.mark.parametrize(
    "where",
    ["data/misc.vpp_pc/a.xtbl", "data/dlc01_l1.vpp_pc", "data/misc.vpp_pc", "deep/er/file.bin", "modinfo.xml"],
)
def test_a_symlink_anywhere_in_a_mod_is_refused_before_anything_is_written(
    tmp_path: Path, where: str, scratch: Path
) -> None:
    game = _game(tmp_path)
    private = tmp_path / "private"
    private.mkdir()
    (private / "id_rsa").write_bytes(b"SECRET KEY")
    mod = tmp_path / "mod"
    (mod / "data" / "misc.vpp_pc").mkdir(parents=True)
    (mod / "data" / "misc.vpp_pc" / "b.xtbl").write_bytes(b"<root>B</root>")
    link = mod / where
    if link.is_dir():
        shutil.rmtree(link)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(private if where == "data/misc.vpp_pc" else private / "id_rsa")
    before = _originals(game)
    for verb in ("check", "apply"):
        code, _, err = in_process_cli("patch", verb, str(game), str(mod))
        assert code == 1 and "symbolic link" in err and where.split("/")[-1] in err, err
        assert _one_line(err) and "Traceback" not in err
    assert _originals(game) == before
    code, _, err = in_process_cli("patch", "info", str(mod))
    assert code == 1 and "symbolic link" in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_special_file_in_a_mod_is_refused(tmp_path: Path) -> None:
    game = _game(tmp_path)
    mod = tmp_path / "mod" / "data" / "misc.vpp_pc"
    mod.mkdir(parents=True)
    os.mkfifo(mod / "a.xtbl")
    code, _, err = in_process_cli("patch", "check", str(game), str(tmp_path / "mod"))
    assert code == 1 and "a.xtbl: not a regular file" in err, err


def test_a_zip_link_entry_is_refused(tmp_path: Path) -> None:
    game = _game(tmp_path)
    archive = tmp_path / "mod.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        link = zipfile.ZipInfo("data/misc.vpp_pc/a.xtbl")
        link.create_system = 3
        link.external_attr = (0o120777 << 16) | 0x20
        zipped.writestr(link, "/etc/passwd")
    code, _, err = in_process_cli("patch", "apply", str(game), str(archive))
    assert code == 1 and "a.xtbl" in err and "symbolic link" in err, err


# -- issue 30 item 2: budgets --------------------------------------------------------------------------


def test_an_xdelta_bomb_is_refused_from_its_headers_before_a_byte_is_decoded(tmp_path: Path, scratch: Path) -> None:
    import time
    import tracemalloc

    game = _game(tmp_path)
    mod = tmp_path / "mod"
    mod.mkdir()
    bomb = _run_windows(512, 16 << 20)  # 8 GiB of 'A' from a few KB
    assert len(bomb) < 16384
    (mod / "rfg.xdelta").write_bytes(bomb)
    before = _originals(game)
    tracemalloc.start()
    started = time.monotonic()
    try:
        code, _, err = in_process_cli("patch", "check", str(game), str(mod))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 1 and "8589934592 bytes" in err and "member may hold" in err, err
    assert time.monotonic() - started < 10 and peak < 64 << 20
    assert not os.listdir(scratch) and _originals(game) == before
    # Under the 4 GiB member limit but past 16x the file: --allow-large lifts that one.
    (mod / "rfg.xdelta").write_bytes(_run_windows(4, 1 << 20))
    with limits(floor=1 << 20):
        code, _, err = in_process_cli("patch", "check", str(game), str(mod))
    assert code == 1 and "16 times" in err and "--allow-large" in err, err
    assert not os.listdir(scratch)
    with limits(floor=1 << 20, growth=1000):
        code, _, err = in_process_cli("patch", "apply", str(game), str(mod))
    assert code == 0, err
    assert (game / "rfg.exe").read_bytes() == b"A" * (4 << 20)


def test_a_delta_whose_windows_lie_about_their_size_stops_at_the_first_byte_over(tmp_path: Path, scratch: Path) -> None:
    game = _game(tmp_path)
    mod = tmp_path / "mod"
    mod.mkdir()
    (mod / "rfg.xdelta").write_bytes(_run_windows(2, 1 << 20, declared=10))
    code, _, err = in_process_cli("patch", "apply", str(game), str(mod))
    assert code == 1 and "more than the window's 10 bytes" in err, err
    assert not os.listdir(scratch)


def test_a_zip_member_that_declares_far_more_than_it_replaces_is_refused_unread(tmp_path: Path) -> None:
    game = _game(tmp_path)
    archive = tmp_path / "mod.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        zipped.writestr("data/misc.vpp_pc/a.xtbl", b"\0" * (4 << 20))
        zipped.writestr("data/misc.vpp_pc/new.bin", b"\0" * (2 << 20))
    assert archive.stat().st_size < 64 << 10
    with limits(floor=1 << 20, new_file=1 << 20):
        code, _, err = in_process_cli("patch", "check", str(game), str(archive))
        assert code == 1 and "a.xtbl" in err and "times the 14 bytes it replaces" in err, err
        code, _, err = in_process_cli("patch", "check", "--allow-large", str(game), str(archive))
        assert code == 0, err
    with limits(new_file=1 << 20):
        code, _, err = in_process_cli("patch", "check", str(game), str(archive))
        assert code == 1 and "new.bin" in err and "a new file may hold" in err, err
        code, _, err = in_process_cli("patch", "apply", "--allow-large", str(game), str(archive))
    assert code == 0, err
    assert len(contents(game / "data" / "misc.vpp_pc")["a.xtbl"]) == 4 << 20


def test_a_zip_member_that_inflates_past_what_it_declares_is_stopped(tmp_path: Path) -> None:
    game = _game(tmp_path)
    archive = tmp_path / "mod.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        zipped.writestr("data/misc.vpp_pc/a.xtbl", b"\0" * (8 << 20))
    data = bytearray(archive.read_bytes())
    # Both the local header's and the central directory's uncompressed size say 100 bytes.
    real = (8 << 20).to_bytes(4, "little")
    assert data.count(real) == 2
    archive.write_bytes(bytes(data).replace(real, (100).to_bytes(4, "little")))
    before = _originals(game)
    code, _, err = in_process_cli("patch", "apply", str(game), str(archive))
    assert code == 1 and "a.xtbl" in err and ("past the 100 bytes" in err or "cannot be read" in err), err
    assert _originals(game) == before


def test_a_gpatch_declaring_a_large_member_is_refused_before_its_blob_is_read(tmp_path: Path) -> None:
    base = pack(tmp_path / "base.pak", {"a.txt": b"small"})
    modded = pack(tmp_path / "modded.pak", {"a.txt": os.urandom(300_000)})
    patch_file = tmp_path / "big.gpatch"
    gamepak.patch.make(base, modded, patch_file)
    with limits(floor=1000):
        code, out, _ = in_process_cli("patch", "check", str(base), str(patch_file))
        assert code == 1 and "refuse" in out and "a.txt" in out and "--allow-large" in out, out
        code, _, err = in_process_cli("patch", "apply", str(base), str(patch_file), "--allow-large")
    assert code == 0, err
    assert contents(base) == contents(modded)


# -- issue 30 items 5 and 8: one line for every malformed mod file -----------------------------------


def _deep_json(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


@pytest.mark.parametrize(
    "name", ["data/misc.vpp_pc/.delete.json", "data/misc.vpp_pc/.options.json", ".mod.hashes.json"]
)
def test_json_nested_3000_deep_in_a_mod_is_one_line(tmp_path: Path, name: str) -> None:
    game = _game(tmp_path)
    mod = tmp_path / "mod"
    (mod / "data" / "misc.vpp_pc").mkdir(parents=True)
    (mod / "data" / "misc.vpp_pc" / "a.xtbl").write_bytes(b"<root>A</root>")
    (mod / name).write_bytes(_deep_json(3000))
    code, _, err = in_process_cli("patch", "apply", str(game), str(mod))
    assert code == 1 and "nested" in err and _one_line(err), err


def _manifest_patch(tmp_path: Path, change: dict[str, object]) -> Path:
    base = pack(tmp_path / "base.pak", {"a.txt": b"a", "b.txt": b"b"})
    modded = pack(tmp_path / "modded.pak", {"a.txt": b"A", "c.txt": b"b"})
    good = tmp_path / "good.gpatch"
    gamepak.patch.make(base, modded, good)
    with zipfile.ZipFile(good) as zipped:
        entries = {info.filename: zipped.read(info) for info in zipped.infolist()}
    manifest = json.loads(entries["patch.json"])
    manifest.update(change.get("manifest", {}))  # type: ignore[call-overload]
    for operation in manifest["operations"]:
        operation.update(change.get("operation", {}))  # type: ignore[call-overload]
    entries["patch.json"] = change["raw"] if "raw" in change else json.dumps(manifest).encode()  # type: ignore[assignment]
    bad = tmp_path / "bad.gpatch"
    with zipfile.ZipFile(bad, "w") as zipped:
        for name, data in entries.items():
            zipped.writestr(name, data)
    return bad


@pytest.mark.parametrize(
    "change",
    [
        {"manifest": {"links": 7}},
        {"manifest": {"name": ["x"]}},
        {"raw": b'{"format": "gamepak-patch", "version": 1, "operations": ' + _deep_json(3000) + b"}"},
        {"operation": {"member": ["a.txt"]}},
        {"operation": {"op": "rename", "new_member": ["c.txt"]}},
        {"operation": {"member": "dir/"}},
    ],
    ids=["links-7", "name-list", "deep", "member-list", "new-member-list", "member-dir"],
)
def test_one_schema_for_patch_json_in_info_check_and_apply(tmp_path: Path, change: dict[str, object]) -> None:
    bad = _manifest_patch(tmp_path, change)
    target = tmp_path / "base.pak"
    before = target.read_bytes()
    for verb in (["info"], ["check", str(target)], ["apply", str(target)]):
        code, _, err = in_process_cli("patch", *verb, str(bad))
        assert code == 1 and _one_line(err) and "Traceback" not in err, (verb, err)
    assert target.read_bytes() == before


def test_a_new_member_on_an_operation_that_is_not_a_rename_is_not_kept(tmp_path: Path) -> None:
    base = pack(tmp_path / "base.pak", {"a.txt": b"a"})
    patch_file = tmp_path / "p.gpatch"
    gamepak.patch.make(base, pack(tmp_path / "modded.pak", {"a.txt": b"A"}), patch_file)
    with zipfile.ZipFile(patch_file) as zipped:
        entries = {info.filename: zipped.read(info) for info in zipped.infolist()}
    manifest = json.loads(entries["patch.json"])
    manifest["operations"][0]["new_member"] = ["x"]  # a replace: the field is not read
    entries["patch.json"] = json.dumps(manifest).encode()
    with zipfile.ZipFile(patch_file, "w") as zipped:
        for name, data in entries.items():
            zipped.writestr(name, data)
    with gamepak.patch.Patch.open(patch_file) as opened:
        assert opened.operations[0].new_member is None
    code, _, err = in_process_cli("patch", "apply", str(base), str(patch_file))
    assert code == 0, err


def test_a_modinfo_with_a_bogus_encoding_is_one_line(tmp_path: Path) -> None:
    game = _game(tmp_path)
    mod = tmp_path / "mod"
    mod.mkdir()
    (mod / "modinfo.xml").write_bytes(b"<?xml version='1.0' encoding='bogus-enc'?><Mod Name='x'/>")
    for verb in (["info", str(mod)], ["check", str(game), str(mod)]):
        code, _, err = in_process_cli("patch", *verb)
        assert code == 1 and "bogus-enc" in err and _one_line(err), err


def test_a_delta_blob_larger_than_what_it_decodes_to_is_refused_unread(tmp_path: Path) -> None:
    """A `zstd-delta` blob declaring far more bytes than its operation's size (a deflate bomb in
    the patch zip) is refused when the patch is opened, before it is inflated."""
    base = pack(tmp_path / "base.pak", {"a.txt": b"a" * 1000})
    patch_file = tmp_path / "p.gpatch"
    gamepak.patch.make(base, pack(tmp_path / "modded.pak", {"a.txt": b"a" * 999 + b"b"}), patch_file)
    with zipfile.ZipFile(patch_file) as zipped:
        entries = {info.filename: zipped.read(info) for info in zipped.infolist()}
    assert json.loads(entries["patch.json"])["operations"][0]["encoding"] == "zstd-delta"
    entries["blobs/0"] = b"\0" * (8 << 20)
    with zipfile.ZipFile(patch_file, "w", zipfile.ZIP_DEFLATED) as zipped:
        for name, data in entries.items():
            zipped.writestr(name, data)
    code, _, err = in_process_cli("patch", "check", str(base), str(patch_file))
    assert code == 1 and "blobs/0 declares 8388608 bytes" in err and _one_line(err), err
