"""Editing vs rewriting, on tmpfs, as whole `gamepak` commands in the same run.

- Replace one 1 KiB member of a 1 GiB PAK (`gamepak add --replace`) vs `gamepak create` of the
  same members: target <= 5% of the time (the edit appends and switches over in place).
- The same for a JoePack.
- `gamepak update` of a 423-member compressed + condensed `.vpp_pc` (the sample table.vpp_pc
  when present, else one built like it: level 1, members padded to 64 bytes) with one member
  changed in the second half vs `gamepak create` of the whole folder: reported (target <= 0.5;
  it depends on the RFG writer reusing the compressed bytes before the first change).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import gamepak

from _common import GAMEPAK, alternate, compile_bytecode, scratch

MEMBERS = 1024
MEMBER_SIZE = 1 << 20
SMALL = "data/small.bin"
ROUNDS = 5
SAMPLES = Path(os.environ.get("GAMEPAK_SAMPLES") or Path(__file__).resolve().parents[2] / "shared" / "samples")
TABLE_SAMPLE = SAMPLES / "vpp" / "table.vpp_pc"


def run(command: list[str]) -> float:
    """Wall time of one command, which must succeed (its one-line notes are not shown)."""
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def build_folder(folder: Path) -> None:
    """MEMBERS - 1 files of 1 MiB and one of 1 KiB, in a few folders."""
    chunk = os.urandom(MEMBER_SIZE)
    for index in range(MEMBERS - 1):
        path = folder / f"data/{index % 16:02}/m{index:04}.bin"
        path.parent.mkdir(parents=True, exist_ok=True)
        # Vary the first bytes so members differ.
        path.write_bytes(index.to_bytes(4, "little") + chunk[4:])
    (folder / SMALL).write_bytes(os.urandom(1024))


def bench_replace(work: Path, folder: Path, format_name: str) -> float:
    """Whole commands (start-up included), then the same work as library calls."""
    pack = work / f"big.{format_name}"
    subprocess.run([GAMEPAK, "create", str(pack), str(folder)], check=True, stderr=subprocess.DEVNULL)
    replacement = work / "replacement.bin"
    files = sorted(str(path) for path in folder.rglob("*") if path.is_file())

    def edit_command(round_number: int) -> float:
        replacement.write_bytes(os.urandom(1024))
        return run([GAMEPAK, "add", str(pack), str(replacement), "--name", SMALL, "--replace"])

    def create_command(round_number: int) -> float:
        target = work / f"rewrite{round_number}.{format_name}"
        seconds = run([GAMEPAK, "create", str(target), str(folder)])
        target.unlink()
        return seconds

    def edit_call(round_number: int) -> float:
        replacement.write_bytes(os.urandom(1024))
        start = time.perf_counter()
        with gamepak.edit(pack) as editor:
            editor.replace(SMALL, replacement)
        return time.perf_counter() - start

    def create_call(round_number: int) -> float:
        target = work / f"rewrite{round_number}.{format_name}"
        start = time.perf_counter()
        with gamepak.create(target) as writer:
            for path in files:
                writer.add(os.path.relpath(path, folder), path)
        seconds = time.perf_counter() - start
        target.unlink()
        return seconds

    medians = alternate(
        ROUNDS,
        {"create": create_command, "replace": edit_command, "create()": create_call, "edit()": edit_call},
    )
    with gamepak.open(pack) as archive:
        assert archive.read(SMALL) == replacement.read_bytes()
    command_ratio = medians["replace"] / medians["create"]
    call_ratio = medians["edit()"] / medians["create()"]
    print(
        f"{format_name}: replace 1 KiB in 1 GiB: commands {medians['replace'] * 1000:.1f} ms vs create "
        f"{medians['create'] * 1000:.1f} ms = {command_ratio:.1%}; library calls "
        f"{medians['edit()'] * 1000:.1f} ms vs {medians['create()'] * 1000:.1f} ms = {call_ratio:.1%} (target <= 5%)"
    )
    pack.unlink()
    return call_ratio


def table_folder(work: Path) -> tuple[Path, Path, dict[str, object]]:
    """A 423-member compressed + condensed pack and the folder it was extracted to."""
    pack = work / "table.vpp_pc"
    if TABLE_SAMPLE.exists():
        shutil.copyfile(TABLE_SAMPLE, pack)
        pack.chmod(0o644)
        print(f"vpp: using the sample {TABLE_SAMPLE}")
    else:
        rows = b"".join(b"  <Row><Name>item %d</Name><Value>%d</Value></Row>\n" % (i, i * 7) for i in range(700))
        with gamepak.create(pack, flags=3, level=1, align=64) as writer:
            for index in range(423):
                writer.add(f"table_{index:03}.xtbl", b"<root>\n" + rows[: 20000 + index * 97] + b"</root>\n")
        print("vpp: built a table.vpp_pc look-alike (sample not present)")
    with gamepak.open(pack) as archive:
        options = archive.layout_options()
        names = archive.namelist()
    folder = work / "table"
    subprocess.run([GAMEPAK, "extract", str(pack), "-o", str(folder)], check=True, stderr=subprocess.DEVNULL)
    changed = folder / names[len(names) * 3 // 4]
    changed.write_bytes(changed.read_bytes().replace(b"<", b"< ", 1))
    return pack, folder, options


def bench_update(work: Path) -> float:
    pack, folder, options = table_folder(work)
    original = pack.read_bytes()
    create_options = [f"-O{key}={value}" for key, value in options.items() if value is not None and key != "runtime"]

    def update(round_number: int) -> float:
        pack.write_bytes(original)
        return run([GAMEPAK, "update", str(pack), str(folder)])

    def create(round_number: int) -> float:
        target = work / f"table{round_number}.vpp_pc"
        seconds = run([GAMEPAK, "create", str(target), str(folder), *create_options])
        target.unlink()
        return seconds

    medians = alternate(ROUNDS, {"create": create, "update": update})
    ratio = medians["update"] / medians["create"]
    print(
        f"vpp: update of 1 changed member (second half) {medians['update'] * 1000:7.1f} ms, "
        f"create {medians['create'] * 1000:7.1f} ms: {ratio:.2f}x (target <= 0.5)"
    )
    return ratio


def main() -> None:
    compile_bytecode()
    work = scratch("edit")
    folder = work / "members"
    build_folder(folder)
    ratios = [bench_replace(work, folder, "pak"), bench_replace(work, folder, "jpk")]
    shutil.rmtree(folder)
    bench_update(work)
    shutil.rmtree(work)
    if max(ratios) > 0.05:
        sys.exit("an in-place replace took more than 5% of a rewrite")


if __name__ == "__main__":
    main()
