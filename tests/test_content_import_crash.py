"""`text import` and `table import` in place: a kill -9 that lands while the new bytes are being
written leaves the old file (or pack) and a temporary at most, which the next command on that
file removes; an import that changes nothing leaves the file untouched (issues 41, 42).

The kill is aimed, not timed: the child's first write of file data (os.write, os.pwrite, or a
kernel copy) writes half its bytes, tells the parent through a pipe, and waits to be killed."""

from __future__ import annotations

import json
import os
import select
import signal
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from test_rfg_locatext import TEXTS, sample_file
from test_rfg_xtbl import ITEMS, weapons

from gamepak.cli import main
from gamepak.formats.rfg.locatext import LocaText

from conftest import in_process_cli, pack_members, run_cli, write_pack

HOOKED = ("write", "pwrite", "copy_file_range", "sendfile")


def kill_mid_write(work: Callable[[], object]) -> None:
    """Run `work` in a forked child and kill it (SIGKILL) inside its first write of data;
    fails when `work` ends without writing."""
    read_end, write_end = os.pipe()
    real_write = os.write
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fork() with threads around: the child only imports
        pid = os.fork()
    if pid == 0:
        os.close(read_end)
        try:

            def hooked(name: str, original: Callable[..., int]) -> Callable[..., int]:
                def call(fd: int, *args: object) -> int:
                    if fd in (1, 2):
                        return original(fd, *args)
                    if name in ("write", "pwrite"):
                        data = memoryview(args[0])  # type: ignore[arg-type]
                        original(fd, data[: max(1, len(data) // 2)], *args[1:])
                    real_write(write_end, b"w")
                    time.sleep(60)
                    os._exit(3)

                return call

            for name in HOOKED:
                if hasattr(os, name):
                    setattr(os, name, hooked(name, getattr(os, name)))
            work()
            real_write(write_end, b"d")
        except BaseException as exc:  # said to the parent: a failure, not a missed write
            real_write(write_end, b"e" + repr(exc).encode()[:200])
        finally:
            os._exit(0)
    os.close(write_end)
    ready, _, _ = select.select([read_end], [], [], 60)
    said = os.read(read_end, 201) if ready else b""
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    os.close(read_end)
    assert said == b"w", "the work ended (or hung) without writing"


def temporaries(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if ".gamepak-" in path.name)


# -- text import -------------------------------------------------------------------------------------


def _translation(tmp_path: Path, target: Path, member: str | None = None) -> Path:
    out = tmp_path / "t.json"
    code, _, err = in_process_cli("text", "export", str(target), *([member] if member else []), "-o", str(out))
    assert code == 0, err
    rows = json.loads(out.read_text("utf-8"))
    rows[0]["text"] = "Go " * 2000  # long enough that half of it is a torn file
    out.write_text(json.dumps(rows, ensure_ascii=False), "utf-8")
    return out


def test_kill_during_text_import_of_a_loose_file_in_place(tmp_path: Path) -> None:
    target = sample_file(tmp_path)
    old = target.read_bytes()
    translation = _translation(tmp_path, target)
    kill_mid_write(lambda: main(["text", "import", str(target), str(translation), "-o", str(target), "--overwrite"]))
    assert target.read_bytes() == old
    assert temporaries(tmp_path), "the kill did not land while the new file was written"
    next_command = run_cli("text", "export", str(target))  # a new process, reading only
    assert next_command.returncode == 0, next_command.stderr
    assert temporaries(tmp_path) == []


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_kill_during_text_import_into_a_pack_in_place(tmp_path: Path) -> None:
    data = sample_file(tmp_path).read_bytes()
    pack = write_pack(tmp_path / "misc.vpp_pc", {"locatexts_xx_yy.rfglocatext": data, "other.txt": b"x" * 5000})
    old = pack_members(pack)
    translation = _translation(tmp_path, pack)
    kill_mid_write(lambda: main(["text", "import", str(pack), str(translation), "-o", str(pack), "--overwrite"]))
    assert pack_members(pack) == old
    assert temporaries(tmp_path), "the kill did not land while the new pack was written"
    next_command = run_cli("text", "export", str(pack))
    assert next_command.returncode == 0, next_command.stderr
    assert temporaries(tmp_path) == []


# -- table import -------------------------------------------------------------------------------------


def _sheets(tmp_path: Path, target: Path) -> Path:
    sheets = tmp_path / "sheets"
    code, _, err = in_process_cli("table", "export", str(target), "-o", str(sheets), "--as", "json")
    assert code == 0, err
    sheet = sheets / "weapons.xtbl.json"
    document = json.loads(sheet.read_text("utf-8"))
    document["rows"][1]["Magazine_Size"] = "7" * 4000
    sheet.write_text(json.dumps(document), "utf-8")
    return sheets


def test_kill_during_table_import_of_a_loose_table(tmp_path: Path) -> None:
    folder = tmp_path / "tables"
    folder.mkdir()
    target = folder / "weapons.xtbl"
    target.write_bytes(weapons())
    sheets = _sheets(tmp_path, target)
    kill_mid_write(lambda: main(["table", "import", str(target), str(sheets)]))
    assert target.read_bytes() == weapons()
    assert temporaries(folder), "the kill did not land while the new table was written"
    next_command = run_cli("table", "ls", str(target))
    assert next_command.returncode == 0, next_command.stderr
    assert temporaries(folder) == []


def test_kill_during_table_import_into_a_pack(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "table.vpp_pc", {"weapons.xtbl": weapons(), "items.xtbl": ITEMS})
    sheets = _sheets(tmp_path, pack)
    kill_mid_write(lambda: main(["table", "import", str(pack), str(sheets)]))
    assert pack_members(pack)["weapons.xtbl"] == weapons()
    assert temporaries(tmp_path), "the kill did not land while the new pack was written"
    next_command = run_cli("table", "ls", str(pack))
    assert next_command.returncode == 0, next_command.stderr
    assert temporaries(tmp_path) == []


# -- unchanged stays unchanged ------------------------------------------------------------------------


def _untouched(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mtime_ns


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("where", ["loose", "pack"])
def test_a_text_import_that_changes_nothing_leaves_the_file_untouched(tmp_path: Path, where: str) -> None:
    data = sample_file(tmp_path).read_bytes()
    target = tmp_path / "locatexts_xx_yy.rfglocatext"
    if where == "pack":
        target = write_pack(tmp_path / "misc.vpp_pc", {"locatexts_xx_yy.rfglocatext": data})
    out = tmp_path / "t.po"
    assert in_process_cli("text", "export", str(target), "-o", str(out))[0] == 0
    before = _untouched(target)
    time.sleep(0.01)
    for extra in (["--dry-run"], []):
        code, _, err = in_process_cli("text", "import", str(target), str(out), "-o", str(target), "--overwrite", *extra)
        assert code == 0 and "unchanged" in err, err
        assert _untouched(target) == before
    assert temporaries(tmp_path) == []


def test_text_import_dry_run_says_what_would_change_and_writes_nothing(tmp_path: Path) -> None:
    target = sample_file(tmp_path)
    out = tmp_path / "t.json"
    assert in_process_cli("text", "export", str(target), "-o", str(out))[0] == 0
    rows = json.loads(out.read_text("utf-8"))
    rows[0]["text"] = "Go"
    out.write_text(json.dumps(rows), "utf-8")
    before = _untouched(target)
    code, _, err = in_process_cli(
        "text", "import", str(target), str(out), "-o", str(target), "--overwrite", "--dry-run"
    )
    assert code == 0 and "would write" in err and "1 string changed" in err
    assert _untouched(target) == before
    code, _, err = in_process_cli("text", "import", str(target), str(out), "-o", str(target), "--overwrite")
    assert code == 0 and [entry.text for entry in LocaText.parse(target.read_bytes()).entries] == ["Go", *TEXTS[1:]]


@pytest.mark.parametrize("where", ["loose", "pack"])
def test_a_table_import_that_changes_nothing_leaves_the_file_untouched(tmp_path: Path, where: str) -> None:
    folder = tmp_path / "tables"
    folder.mkdir()
    if where == "loose":
        target = folder / "weapons.xtbl"
        target.write_bytes(weapons())
    else:
        target = write_pack(folder / "table.vpp_pc", {"weapons.xtbl": weapons(), "items.xtbl": ITEMS})
    sheets = tmp_path / "sheets"
    assert in_process_cli("table", "export", str(target), "-o", str(sheets))[0] == 0
    before = _untouched(target)
    time.sleep(0.01)
    for extra in (["--dry-run"], []):
        code, out, err = in_process_cli("table", "import", str(target), str(sheets), *extra)
        assert code == 0 and out == "" and "unchanged" in err, err
        assert _untouched(target) == before
    assert temporaries(folder) == []


def test_kill_during_a_j2me_text_import_in_place(tmp_path: Path) -> None:
    target = tmp_path / "strings.bin"
    target.write_bytes(b"one\0two\0")
    translation = tmp_path / "t.json"
    translation.write_text(json.dumps([{"index": 0, "text": "uno" * 2000}, {"index": 1, "text": "dos"}]), "utf-8")
    kill_mid_write(lambda: main(["text", "import", str(target), str(translation), "-o", str(target), "--overwrite"]))
    assert target.read_bytes() == b"one\0two\0"
    assert temporaries(tmp_path), "the kill did not land while the new file was written"
    next_command = run_cli("text", "export", str(target))
    assert next_command.returncode == 0, next_command.stderr
    assert temporaries(tmp_path) == []
