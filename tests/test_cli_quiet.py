"""Issue 42 item 2: `-q` on every command drops every summary and progress line; warnings and
errors stay on stderr, and what a command is asked to print (a listing, a file's bytes, JSON)
stays on stdout.

Every verb of `gamepak --help` runs here twice on its own copy of one small workspace: as
written, then with -q. With -q nothing reaches stderr (these inputs give no warning), and stdout
is the same as without it, or empty for a command whose output is its summary."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from sprite_bytes import simple_sprite
from test_cli_options_anywhere import verbs
from test_rfg_xtbl import weapons
from test_rfg_zones import a_layer

import gamepak
from gamepak.formats.j2me.string_tables import build_text_pack, encode_string

from conftest import in_process_cli
from web_fixtures import cube_joe, image_bytes, peg_pair, picture

# (verb, arguments after the verb, what -q keeps on stdout: "same" (the command's output),
# "listing" (the lines before its last, a summary) or "nothing" (its output was a summary)).
# In order: later commands use what earlier ones made.
RUNS: list[tuple[str, list[str], str]] = [
    ("formats", [], "same"),
    ("detect", ["a.pak"], "same"),
    ("ls", ["a.pak"], "same"),
    ("info", ["a.pak"], "same"),
    ("cat", ["a.pak", "a.txt"], "same"),
    ("verify", ["a.pak"], "nothing"),
    ("extract", ["a.pak", "-o", "out"], "nothing"),
    ("create", ["made.pak", "mymod"], "nothing"),
    ("add", ["made.pak", "extra.txt"], "nothing"),
    ("mv", ["made.pak", "extra.txt", "moved.txt"], "nothing"),
    ("rm", ["made.pak", "moved.txt"], "nothing"),
    ("rm", ["made.pak", "one.txt", "--dry-run"], "listing"),
    ("update", ["a.pak", "out"], "nothing"),
    ("compact", ["made.pak"], "nothing"),
    ("convert", ["a.pak", "a.zip"], "nothing"),
    ("diff", ["a.pak", "a.pak"], "nothing"),
    ("model info", ["cube.joe"], "same"),
    ("model export", ["cube.joe", "-o", "cube.obj"], "nothing"),
    ("model import", ["cube.obj", "-o", "back.joe"], "nothing"),
    ("model render", ["cube.joe", "-o", "cube.png", "--size", "32"], "nothing"),
    ("model export-all", ["models.pak", "-o", "models"], "nothing"),
    ("text export", ["strings.bin", "-o", "strings.json"], "nothing"),
    ("text import", ["strings.bin", "strings.json", "-o", "strings2.bin"], "nothing"),
    ("texture ls", ["crate.cpeg_pc"], "same"),
    ("texture export", ["crate.cpeg_pc", "-o", "textures"], "nothing"),
    ("texture import", ["crate.cpeg_pc", "textures"], "nothing"),
    ("texture add", ["crate.cpeg_pc", "decal.png", "--name", "decal", "--format", "8888"], "nothing"),
    ("texture rm", ["crate.cpeg_pc", "decal"], "nothing"),
    ("texture build", ["wadsrc", "-o", "built.wad"], "nothing"),
    ("table ls", ["weapons.xtbl"], "same"),
    ("table export", ["weapons.xtbl", "-o", "sheets"], "nothing"),
    ("table import", ["weapons.xtbl", "sheets"], "nothing"),
    ("table check", ["weapons.xtbl"], "same"),
    ("sprite ls", ["sprites.f"], "same"),
    ("sprite export", ["sprites.f", "-o", "sprites"], "nothing"),
    ("sprite import", ["sprites.f", "sprites"], "nothing"),
    ("zone ls", ["z.layer_pc"], "same"),
    ("zone export", ["z.layer_pc", "-o", "zones"], "nothing"),
    ("zone import", ["z.layer_pc", "zones"], "nothing"),
    ("zone check", ["z.layer_pc"], "same"),
    ("patch make", ["a.pak", "b.pak", "-o", "fix.gpatch"], "nothing"),
    ("patch info", ["fix.gpatch"], "same"),
    ("patch check", ["game.pak", "fix.gpatch"], "same"),
    ("patch apply", ["game.pak", "fix.gpatch"], "nothing"),
    ("patch revert", ["game.pak"], "nothing"),
    ("mount", ["a.pak", "mnt"], "nothing"),
    ("unmount", ["mnt"], "nothing"),
    ("catalog", ["a.pak", "-o", "a.catalog", "--scheduler", "synchronous", "--hash", "none"], "nothing"),
    ("catalog-diff", ["a.catalog", "a.catalog"], "nothing"),
    ("serve", ["a.pak", "--port", "0"], "same"),
]


def _workspace(root: Path) -> None:
    root.mkdir()
    with gamepak.create(root / "a.pak") as pak:
        pak.add("a.txt", b"a" * 100)
        pak.add("maps/x.txt", b"x")
    for name in ("b.pak", "game.pak"):
        with gamepak.create(root / name) as pak:
            pak.add("a.txt", b"A" * 100 if name == "b.pak" else b"a" * 100)
            pak.add("maps/x.txt", b"x")
    (root / "mymod").mkdir()
    (root / "mymod" / "one.txt").write_bytes(b"one")
    (root / "mymod" / "two.txt").write_bytes(b"two")
    (root / "extra.txt").write_bytes(b"extra")
    (root / "cube.joe").write_bytes(cube_joe())
    with gamepak.create(root / "models.pak") as pak:
        pak.add("cube.joe", cube_joe())
    (root / "strings.bin").write_bytes(build_text_pack([encode_string(t, i) for i, t in enumerate(["New", "Old"])]))
    cpu, gpu, _ = peg_pair()
    (root / "crate.cpeg_pc").write_bytes(cpu)
    (root / "crate.gpeg_pc").write_bytes(gpu)
    (root / "decal.png").write_bytes(image_bytes("PNG", picture(16, 16)))
    (root / "wadsrc").mkdir()
    (root / "wadsrc" / "wall.png").write_bytes(image_bytes("PNG", picture(16, 16)))
    (root / "weapons.xtbl").write_bytes(weapons())
    (root / "z.layer_pc").write_bytes(a_layer())
    with gamepak.create(root / "sprites.f", "j2me-table") as writer:
        writer.add("0", simple_sprite())
        writer.add("1", simple_sprite())
    (root / "mnt").mkdir()


def _no_server_and_no_fuse(monkeypatch: pytest.MonkeyPatch) -> None:
    """`serve` answers once it is ready and `mount` once mounted, without serving or mounting."""
    from gamepak.fs import fuse
    from gamepak.web import server

    def serve(*args: object, ready: object = None, **kwargs: object) -> None:
        ready("http://127.0.0.1:1/")  # type: ignore[operator]

    monkeypatch.setattr(server, "serve", serve)
    monkeypatch.setattr(fuse, "load_fuse", lambda: None)
    monkeypatch.setattr(fuse, "mount", lambda *args, **kwargs: None)
    monkeypatch.setattr(fuse, "unmount", lambda *args, **kwargs: None)


def _run_all(root: Path, quiet: bool) -> list[tuple[int, str, str]]:
    results = []
    cwd = os.getcwd()
    os.chdir(root)
    try:
        for verb, arguments, _ in RUNS:
            words = [*verb.split(), *(["-q"] if quiet else []), *arguments]
            results.append(in_process_cli(*words))
    finally:
        os.chdir(cwd)
    return results


def test_every_verb_is_run() -> None:
    assert {verb for verb, _, _ in RUNS} == set(verbs())


def test_quiet_drops_every_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _no_server_and_no_fuse(monkeypatch)
    _workspace(tmp_path / "loud")
    shutil.copytree(tmp_path / "loud", tmp_path / "quiet")
    loud = _run_all(tmp_path / "loud", quiet=False)
    quiet = _run_all(tmp_path / "quiet", quiet=True)
    failures = []
    for (verb, arguments, keeps), (code, out, err), (quiet_code, quiet_out, quiet_err) in zip(
        RUNS, loud, quiet, strict=True
    ):
        line = f"gamepak {verb} -q {' '.join(arguments)}"
        assert code == quiet_code == 0, (line, err, quiet_err)
        if keeps == "nothing":
            # The run without -q said something (so -q has something to drop).
            assert out or err, f"`{line}`: prints nothing even without -q"
        expected_out = {"same": out, "listing": "".join(out.splitlines(keepends=True)[:-1]), "nothing": ""}[keeps]
        if quiet_err or quiet_out.replace("\\", "/").replace(str(tmp_path / "quiet"), "") != expected_out.replace(
            "\\", "/"
        ).replace(str(tmp_path / "loud"), ""):
            failures.append(f"`{line}` printed {quiet_out!r} {quiet_err!r}")
    assert not failures, "\n".join(failures)


def test_warnings_and_errors_stay_with_quiet(tmp_path: Path) -> None:
    code, _, err = in_process_cli("ls", "-q", str(tmp_path / "missing.pak"))
    assert code == 1 and "error:" in err and "missing.pak" in err, err
    (tmp_path / "mymod").mkdir()
    (tmp_path / "mymod" / "a.txt").write_bytes(b"a")
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "mymod" / "linked")  # a symlinked folder: skipped, said
    code, _, err = in_process_cli("create", "-q", str(tmp_path / "m.pak"), str(tmp_path / "mymod"))
    assert code == 0 and "skipped" in err and "wrote" not in err, err
