"""How `gamepak extract` (and `convert`, and the commands that only read: `ls`, `info`, `cat`,
`detect`, `verify`, `formats`, `diff`) ends (issue 48 items 2 and 3): without the interpreter's
tear-down (`cli._quick_exit`), yet losing nothing a normal exit gives: atexit handlers run, stdout and
stderr arrive whole (also through a pipe), the exit code is kept, a running thread is waited
for, a closed pipe is still a quiet exit, and a failed extraction leaves nothing behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import gamepak

# Runs `gamepak.cli.run` as the console script does, after `setup` (Python source) ran.
PROBE = """
import atexit, sys
{setup}
from gamepak.cli import run
sys.argv[1:] = sys.argv[2:]
run()
"""
# The process's end says whether it skipped the tear-down (os._exit in the main process).
EXIT_MARK = """
import os
_exit, _main = os._exit, os.getpid()
def _reporting_exit(code):
    if os.getpid() == _main:
        os.write(2, b"quick exit\\n")
    _exit(code)
os._exit = _reporting_exit
"""


def _pak(path: Path, count: int) -> Path:
    with gamepak.create(path) as writer:
        for index in range(count):
            writer.add(f"d{index % 7}/m{index}.bin", bytes([index % 251]) * (index % 300))
    return path


def _run(setup: str, *arguments: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    env.pop("PYTHONUNBUFFERED", None)  # stdout through a pipe is then block-buffered
    return subprocess.run(
        [sys.executable, "-c", PROBE.format(setup=setup), "-", *arguments],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_extract_skips_the_tear_down_but_runs_atexit(tmp_path: Path) -> None:
    pak = _pak(tmp_path / "a.pak", 300)
    # What an atexit handler writes stays in the buffers (no newline, stdout a pipe) until flushed.
    setup = "atexit.register(lambda: (sys.stdout.write('out'), sys.stderr.write('atexit ran')))\n" + EXIT_MARK
    done = _run(setup, "extract", str(pak), "-o", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "out"
    assert done.stderr.splitlines() == [
        f"gamepak: extracted 300 members to {tmp_path / 'out'}",
        "atexit ranquick exit",
    ]
    assert len([file for file in (tmp_path / "out").rglob("*") if file.is_file()]) == 300
    # A command that does not ask for the quick exit (`create` writes a pack) ends as usual.
    folder = tmp_path / "out" / "d0"
    created = _run(setup, "create", str(tmp_path / "b.pak"), str(folder))
    assert created.returncode == 0, created.stderr
    assert created.stdout == "out" and created.stderr.endswith("atexit ran") and "quick exit" not in created.stderr


def test_json_through_a_pipe_arrives_whole(tmp_path: Path) -> None:
    """Block-buffered stdout (a pipe) is flushed before the process ends."""
    pak = _pak(tmp_path / "a.pak", 2000)
    done = _run("", "extract", str(pak), "-o", str(tmp_path / "out"), "--json", "-q")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["members"] == 2000 and len(report["written"]) == 2000


def test_a_failed_extraction_keeps_its_code_and_leaves_nothing(tmp_path: Path) -> None:
    pak = _pak(tmp_path / "a.pak", 300)
    out = tmp_path / "out"
    out.mkdir()
    (out / "d3").mkdir()
    (out / "d3" / "m3.bin").write_bytes(b"mine")
    done = _run(EXIT_MARK, "extract", str(pak), "-o", str(out))
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "m3.bin" in done.stderr  # the one error line; a normal exit
    assert sorted(str(path.relative_to(out)) for path in out.rglob("*")) == ["d3", "d3/m3.bin"]
    assert (out / "d3" / "m3.bin").read_bytes() == b"mine"


def test_a_running_thread_is_waited_for(tmp_path: Path) -> None:
    """With another thread alive the normal exit runs (it joins the thread)."""
    pak = _pak(tmp_path / "a.pak", 20)
    setup = (
        "import threading, time\n"
        "threading.Thread(target=lambda: (time.sleep(0.3), sys.stderr.write('thread done\\n'))).start()\n"
    )
    done = _run(setup, "extract", str(pak), "-o", str(tmp_path / "out"))
    assert done.returncode == 0 and done.stderr.splitlines()[-1] == "thread done"


@pytest.mark.parametrize("workers", [1, 2])
def test_forked_extraction_ends_quickly_and_whole(tmp_path: Path, workers: int) -> None:
    """Past the copier's threshold (forked workers) too: every file whole, the workers reaped."""
    pak = _pak(tmp_path / "a.pak", 1500)
    setup = f"import gamepak.ops.copier as copier; copier._worker_count = lambda: {workers}\n" + EXIT_MARK
    done = _run(setup, "extract", str(pak), "-o", str(tmp_path / "out"), "-q")
    assert (done.returncode, done.stderr) == (0, "quick exit\n")
    with gamepak.open(pak) as archive:
        for entry in archive.infolist():
            assert (tmp_path / "out" / entry.name).read_bytes() == archive.read(entry)


def test_convert_skips_the_tear_down_too_and_its_output_is_whole(tmp_path: Path) -> None:
    """`convert` closes what it opened, so it ends quickly as well; a refused convert as usual."""
    pak = _pak(tmp_path / "a.pak", 40)
    setup = "atexit.register(lambda: sys.stderr.write('atexit ran'))\n" + EXIT_MARK
    target = tmp_path / "a.zip"
    done = _run(setup, "convert", str(pak), str(target))
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [f"gamepak: wrote {target} (40 members, pak -> zip)", "atexit ranquick exit"]
    with gamepak.open(pak) as source, gamepak.open(target) as converted:
        assert [(entry.name, converted.read(entry.name)) for entry in converted.infolist()] == [
            (entry.name, source.read(entry)) for entry in source.infolist()
        ]
    refused = _run(setup, "convert", str(pak), str(target))  # the output exists now
    assert refused.returncode == 1 and refused.stderr.endswith("atexit ran") and "quick exit" not in refused.stderr


def test_reading_commands_skip_the_tear_down_with_their_output_and_code(tmp_path: Path) -> None:
    """The commands that only read end quickly too (and the edits' dry runs, which write
    nothing): stdout (a pipe: block-buffered) arrives whole, atexit handlers run, and the exit
    code is the command's (verify's and diff's 1 and 3 too)."""
    pak = _pak(tmp_path / "a.pak", 300)
    other = _pak(tmp_path / "b.pak", 299)
    setup = "atexit.register(lambda: sys.stderr.write('atexit ran'))\n" + EXIT_MARK
    with gamepak.open(pak) as archive:
        names = archive.namelist()
        member = archive.read("d3/m3.bin")
    expected = {
        ("ls", str(pak)): (0, "".join(f"{name}\n" for name in names)),
        ("cat", str(pak), "d3/m3.bin"): (0, member.decode("latin-1")),
        ("verify", str(pak)): (0, f"{pak}: OK (300 members)\n"),
        ("diff", str(pak), str(other), "-q"): (3, ""),
    }
    for arguments, (code, stdout) in expected.items():
        done = _run(setup, *arguments)
        assert (done.returncode, done.stdout) == (code, stdout), arguments
        assert done.stderr.endswith("atexit ranquick exit\n"), (arguments, done.stderr)
    dry_runs = (
        ("add", str(pak), str(other), "--dry-run"),
        ("rm", str(pak), "d3/m3.bin", "--dry-run"),
        ("mv", str(pak), "d3/m3.bin", "m3.bin", "--dry-run"),
        ("compact", str(pak), "--dry-run"),
    )
    for arguments in (("info", str(pak)), ("detect", str(pak)), ("formats",), ("diff", str(pak), str(pak)), *dry_runs):
        done = _run(setup, *arguments)
        assert done.returncode == 0 and done.stdout.endswith("\n"), (arguments, done.stderr)
        assert done.stderr.endswith("atexit ranquick exit\n"), (arguments, done.stderr)
    broken = tmp_path / "broken.pak"  # its last member's data cut short: verify reports it
    with gamepak.create(broken, directory="start") as writer:
        writer.add("whole.bin", bytes(100))
        writer.add("cut.bin", bytes(100))
    broken.write_bytes(broken.read_bytes()[:-40])
    failed = _run(setup, "verify", str(broken))
    assert failed.returncode == 1 and "cut.bin" in failed.stderr, failed.stderr
    assert failed.stderr.endswith("atexit ranquick exit\n"), failed.stderr
    refused = _run(setup, "ls", str(tmp_path / "missing.pak"))  # an error: the normal exit
    assert refused.returncode == 1 and refused.stderr.endswith("atexit ran"), refused.stderr


def test_a_reader_gone_before_the_listing_ends_is_a_quiet_exit(tmp_path: Path) -> None:
    """`gamepak ls BIG | head -1`: the closed pipe ends the run as before (exit 0, no traceback,
    no `Exception ignored` line), though `ls` asks for the quick exit."""
    pak = tmp_path / "big.pak"
    with gamepak.create(pak) as writer:
        for index in range(20000):
            writer.add(f"a/long/folder/name/for/a/big/listing/m{index}.bin", b"")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    command = [sys.executable, "-c", PROBE.format(setup=""), "-", "ls", str(pak)]
    listing = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert listing.stdout is not None and listing.stderr is not None
    first = listing.stdout.readline()
    listing.stdout.close()  # the reader goes away, as `head -1` does
    errors = listing.stderr.read()
    assert listing.wait(timeout=60) == 0, errors
    assert first == b"a/long/folder/name/for/a/big/listing/m0.bin\n" and errors == b""
