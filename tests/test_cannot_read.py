"""An input that cannot be read gives one line, the same from every command: `PATH: cannot
read: REASON`, exit 1 (`errors.cannot_read`, which every "cannot read" of gamepak calls).

The unreadable inputs are those a root user meets too: a folder given where a file is read, and
a dangling symbolic link (the name is there, the file it names is not)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import gamepak
from gamepak.errors import GamepakError, cannot_read

from conftest import in_process_cli, run_cli, write_pack

NO_FILE = os.strerror(errno.ENOENT)

# (id, arguments with {bad} for the unreadable input, the suffix its name needs, what a folder
# given there says: "folder" for `cannot read: a folder`, "pack" for the pack commands' own
# `a folder, not a pack`, None where a folder is a valid input: add, create, diff, a VDrift
# track for model info/export, a folder of tables or zones).
COMMANDS: list[tuple[str, list[str], str, str | None]] = [
    ("ls", ["ls", "{bad}"], ".pak", "pack"),
    ("info", ["info", "{bad}"], ".pak", "pack"),
    ("cat", ["cat", "{bad}", "a.txt"], ".pak", "pack"),
    ("verify", ["verify", "{bad}"], ".pak", "pack"),
    ("extract", ["extract", "{bad}", "-o", "{tmp}/out"], ".pak", "pack"),
    ("detect", ["detect", "{bad}"], ".pak", "folder"),
    ("convert", ["convert", "{bad}", "{tmp}/out.zip"], ".pak", "folder"),
    ("diff", ["diff", "{bad}", "{small}"], ".pak", None),
    ("add", ["add", "{small}", "{bad}"], ".txt", None),
    ("create", ["create", "{tmp}/new.pak", "{bad}"], ".txt", None),
    ("create-named", ["create", "{tmp}/new.pak", "{bad}=x.txt"], ".txt", None),
    ("rm", ["rm", "{bad}", "a.txt"], ".pak", "folder"),
    ("mv", ["mv", "{bad}", "a.txt", "b.txt"], ".pak", "folder"),
    ("compact", ["compact", "{bad}"], ".pak", "folder"),
    ("text-export", ["text", "export", "{bad}", "-o", "{tmp}/t.json"], ".bin", "folder"),
    ("text-import-file", ["text", "import", "{bad}", "{tmp}/t.po", "-o", "{tmp}/out.bin"], ".bin", "folder"),
    ("text-import-translation", ["text", "import", "{strings}", "{bad}", "-o", "{tmp}/out.bin"], ".po", "folder"),
    ("model-info", ["model", "info", "{bad}"], ".obj", None),
    ("model-export", ["model", "export", "{bad}", "-o", "{tmp}/m.glb"], ".joe", None),
    ("model-import", ["model", "import", "{bad}", "-o", "{tmp}/m.joe"], ".obj", "folder"),
    # A VDrift car: the folder given, its `.car` file the one that cannot be read.
    ("model-info-car", ["model", "info", "{tmp}"], ".car", "folder"),
    ("model-export-car", ["model", "export", "{tmp}", "-o", "{tmp}/car.glb"], ".car", "folder"),
    ("model-render", ["model", "render", "{bad}", "-o", "{tmp}/m.png"], ".joe", "folder"),
    ("sprite-ls", ["sprite", "ls", "{bad}"], ".bin", "folder"),
    ("sprite-export", ["sprite", "export", "{bad}", "-o", "{tmp}/sprites"], ".bin", "folder"),
    ("texture-ls", ["texture", "ls", "{bad}"], ".wad", "folder"),
    ("texture-export", ["texture", "export", "{bad}", "-o", "{tmp}/textures"], ".wad", "folder"),
    ("table-check", ["table", "check", "{bad}"], ".xtbl", None),
    ("zone-ls", ["zone", "ls", "{bad}"], ".rfgzone_pc", None),
]
CASES = [
    pytest.param(arguments, suffix, kind, said, id=f"{name}-{kind}")
    for name, arguments, suffix, folder in COMMANDS
    for kind, said in (("dangling", "dangling"), ("folder", folder))
    if said is not None
]
# A FIFO where a file is read: refused, never waited on (a FIFO's open waits for a writer).
FIFO_CASES = [pytest.param(arguments, suffix, id=name) for name, arguments, suffix, _ in COMMANDS]


def unreadable(tmp_path: Path, kind: str, suffix: str) -> Path:
    """A folder, a dangling symbolic link or a FIFO, named like the file a command reads."""
    path = tmp_path / f"unreadable{suffix}"
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(tmp_path / "gone")
    return path


def inputs(tmp_path: Path) -> dict[str, Path]:
    """The readable inputs the commands take besides the unreadable one."""
    small = write_pack(tmp_path / "small.pak", {"a.txt": b"a"})
    strings = tmp_path / "strings.bin"
    # A J2ME text pack: the sized file "hi", then the sized index table (1 start: 0).
    strings.write_bytes(b"\x03\x00hi\x00\x04\x00\x01\x00\x00\x00")
    (tmp_path / "t.po").write_text('msgid ""\nmsgstr ""\n', "utf-8")
    return {"tmp": tmp_path, "small": small, "strings": strings}


def expected_line(path: Path, said: str) -> str:
    if said == "pack":
        return f"gamepak: error: {path}: a folder, not a pack"
    reason = "a folder" if said == "folder" else NO_FILE
    return f"gamepak: error: {path}: cannot read: {reason}"


@pytest.mark.parametrize(("arguments", "suffix", "kind", "said"), CASES)
def test_every_command_says_one_line_for_an_unreadable_input(
    tmp_path: Path, arguments: list[str], suffix: str, kind: str, said: str
) -> None:
    given = inputs(tmp_path)
    bad = unreadable(tmp_path, kind, suffix)
    filled = [part.format(bad=bad, **given) for part in arguments]
    pack_bytes = given["small"].read_bytes()
    code, _, err = in_process_cli(*filled)
    assert (code, err.splitlines()) == (1, [expected_line(bad, said)])
    assert given["small"].read_bytes() == pack_bytes  # nothing was written
    assert not (tmp_path / "out").exists() and not (tmp_path / "new.pak").exists()


@pytest.mark.parametrize(("arguments", "suffix"), FIFO_CASES)
def test_a_fifo_is_refused_not_waited_on(tmp_path: Path, arguments: list[str], suffix: str) -> None:
    """In its own process, so that a command that waits fails the test (run_cli's timeout)
    instead of hanging the run."""
    given = inputs(tmp_path)
    bad = unreadable(tmp_path, "fifo", suffix)
    result = run_cli(*[part.format(bad=bad, **given) for part in arguments])
    reason = "not a regular file (a FIFO, device or socket)"
    assert (result.returncode, result.stderr.decode().splitlines()) == (
        1,
        [f"gamepak: error: {bad}: cannot read: {reason}"],
    )


# An input that is not there at all (nothing at the path, not even a link), as typed: said as
# every command says an input it cannot read, with the system's reason.
MISSING_INPUTS = [
    pytest.param(["add", "{small}", "{gone}"], "{gone}", errno.ENOENT, id="add"),
    pytest.param(["add", "{small}", "x.txt={gone}"], "x.txt={gone}", errno.ENOENT, id="add-equals"),  # no SRC=NAME
    pytest.param(["add", "{small}", "{small}/x.txt"], "{small}/x.txt", errno.ENOTDIR, id="add-through-a-file"),
    pytest.param(["create", "{tmp}/new.pak", "{gone}"], "{gone}", errno.ENOENT, id="create"),
    pytest.param(["create", "{tmp}/new.pak", "{gone}=x.txt"], "{gone}=x.txt", errno.ENOENT, id="create-named"),
    pytest.param(["create", "{tmp}/new.pak", "{small}/x"], "{small}/x", errno.ENOTDIR, id="create-through-a-file"),
    # The other commands that refuse a missing input before reading it (`cli.common.require_input`).
    pytest.param(["rm", "{gone}", "a.txt"], "{gone}", errno.ENOENT, id="rm-pack"),
    pytest.param(["texture", "ls", "{gone}"], "{gone}", errno.ENOENT, id="texture-ls"),
    pytest.param(["table", "import", "{gone}", "{tmp}"], "{gone}", errno.ENOENT, id="table-import"),
    pytest.param(["catalog", "{small}", "{gone}", "-o", "{tmp}/cat"], "{gone}", errno.ENOENT, id="catalog"),
]


@pytest.mark.parametrize(("arguments", "typed", "code"), MISSING_INPUTS)
def test_a_missing_input_is_one_cannot_read_line(tmp_path: Path, arguments: list[str], typed: str, code: int) -> None:
    given = {**inputs(tmp_path), "gone": tmp_path / "gone.txt"}
    pack_bytes = given["small"].read_bytes()
    said = in_process_cli(*[part.format(**given) for part in arguments])
    line = f"gamepak: error: {typed.format(**given)}: cannot read: {os.strerror(code)}"
    assert (said[0], said[2].splitlines()) == (1, [line])
    assert given["small"].read_bytes() == pack_bytes and not (tmp_path / "new.pak").exists()


def test_the_command_line_says_it_without_a_traceback(tmp_path: Path) -> None:
    """As a user runs it: its own process, one line on stderr, exit 1."""
    bad = unreadable(tmp_path, "folder", ".pak")
    result = run_cli("convert", str(bad), str(tmp_path / "out.zip"))
    assert (result.returncode, result.stderr.decode().splitlines()) == (
        1,
        [f"gamepak: error: {bad}: cannot read: a folder"],
    )
    assert not (tmp_path / "out.zip").exists()


@pytest.mark.parametrize("kind", ["folder", "dangling"])
def test_the_library_raises_its_own_error_naming_the_file(tmp_path: Path, kind: str) -> None:
    """`gamepak.open` of a folder raised an OSError naming no file (the folder opened; its first
    read failed): now the GamepakError every reader raises."""
    bad = unreadable(tmp_path, kind, ".pak")
    reason = "a folder" if kind == "folder" else NO_FILE
    with pytest.raises(GamepakError) as caught:
        gamepak.open(bad)
    assert str(caught.value) == f"{bad}: cannot read: {reason}"
    with pytest.raises(GamepakError) as caught:
        gamepak.detect(bad)
    assert str(caught.value) == f"{bad}: cannot read: {reason}"


def test_the_wording() -> None:
    missing = FileNotFoundError(errno.ENOENT, NO_FILE, "x.pak")
    assert str(cannot_read("x.pak", missing)) == f"x.pak: cannot read: {NO_FILE}"
    assert str(cannot_read(Path("x.pak"), missing)) == f"x.pak: cannot read: {NO_FILE}"
    folder = IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), "d")
    assert str(cannot_read("d", folder)) == "d: cannot read: a folder"  # as an fstat'ed folder is said
    assert str(cannot_read("x", OSError("no reason given"))) == "x: cannot read: no reason given"  # not "None"
    assert str(cannot_read("p.lmp", "a folder", what="the palette")) == "p.lmp: cannot read the palette: a folder"

    class OwnError(GamepakError):
        pass

    made = cannot_read("x", missing, error=OwnError)
    assert type(made) is OwnError  # made, not raised: the caller raises it (and chooses its cause)


@settings(max_examples=40, deadline=None)
@given(
    code=st.sampled_from(sorted(errno.errorcode)),
    name=st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=20),
)
@example(code=errno.EISDIR, name="folder.pak")
def test_any_os_error_is_one_line_naming_the_file(code: int, name: str) -> None:
    error = OSError(code, os.strerror(code))
    line = str(cannot_read(name, error))
    reason = "a folder" if code == errno.EISDIR else os.strerror(code)
    assert line == f"{name}: cannot read: {reason}" and "\n" not in line


@pytest.mark.parametrize("kind", ["folder", "dangling"])
def test_an_image_to_import_that_cannot_be_read_is_not_called_a_bad_image(tmp_path: Path, kind: str) -> None:
    """Pillow's OSError for the file itself (ENOENT, EISDIR) is the file's: `cannot read`; only
    what Pillow cannot decode is `not an image Pillow reads`."""
    from gamepak.core.pictures import read_rgba

    bad = unreadable(tmp_path, kind, ".png")
    reason = "a folder" if kind == "folder" else NO_FILE
    with pytest.raises(GamepakError) as caught:
        read_rgba(str(bad), lambda width, height: None)
    assert str(caught.value) == f"{bad}: cannot read: {reason}"
    junk = tmp_path / "junk.png"
    junk.write_bytes(b"not a picture")
    with pytest.raises(GamepakError, match=r"junk.png: not an image Pillow reads \(cannot identify"):
        read_rgba(str(junk), lambda width, height: None)


def test_the_catalog_walk_says_an_unreadable_file_as_every_command_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`catalog`'s walk records what it cannot read in its errors table: the same line, made by
    `cannot_read` (an OSError without a reason once said `cannot read: None`)."""
    from gamepak.catalog.discovery import iter_files

    folder = tmp_path / "games"
    folder.mkdir()
    dangling = unreadable(folder, "dangling", ".pak")
    gone = tmp_path / "gone.pak"
    found = list(iter_files([str(folder), str(gone)]))
    assert found == [
        (str(dangling), f"{dangling}: cannot read: {NO_FILE}"),
        (str(gone), f"{gone}: cannot read: {NO_FILE}"),
    ]

    def refused(path: object, *args: object, **kwargs: object) -> os.stat_result:
        raise OSError("refused without a reason")

    monkeypatch.setattr(os, "stat", refused)
    assert list(iter_files([str(gone)])) == [(str(gone), f"{gone}: cannot read: refused without a reason")]


def test_a_scene_opens_its_files_through_the_one_open_without_waiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A car's or track's files (definitions, lists, textures) are opened by
    `core.files.open_regular_os`, as every input is, not by a copy of it: its OSError
    carries the reason the scene's messages give."""
    from gamepak.core import files
    from gamepak.models.scene import ini

    opened: list[str] = []
    real = files.open_regular_os

    def recorded(path: str) -> tuple[int, os.stat_result]:
        opened.append(path)
        return real(path)

    monkeypatch.setattr(files, "open_regular_os", recorded)
    car = tmp_path / "a.car"
    car.write_text("[ body ]\nmass = 1\n")
    assert ini.read(str(car)).sections["body"]["mass"] == "1"
    fifo = unreadable(tmp_path, "fifo", ".ini")
    with pytest.raises(GamepakError) as caught:
        ini.read_text(str(fifo))
    assert str(caught.value) == f"{fifo}: cannot read: not a regular file (a FIFO, device or socket)"
    assert opened == [str(car), str(fifo)]
