"""Peak resident memory per input byte of the table (`.xtbl`) and string (`.rfglocatext`)
readers on the worst inputs of issue 41, each command in a fresh process under GNU time.

Inputs: the campaign's 32 MB table of 8 M `<A/>` elements (loose, and in a pack) and 24 MB
`.rfglocatext` of 2,000,000 empty strings, both refused by the budgets before anything is
built (`core/content_limits.py`); a CSV adding 1,000,000 rows to a table; and the largest
inputs the budgets let through: a table of 500,000 elements at one per 12 bytes, an
`.rfglocatext` of 200,000 strings. The floor is `gamepak formats` (the interpreter and the
CLI); "per byte" is (peak - floor) / the input's bytes, printed beside each case's goal
(issue 41: a small multiple of the input, 8 at most, for every command; what is refused
before anything is built stays near the input's size).

    python benchmarks/bench_content_memory.py [--compare OTHER_CHECKOUT/src]
"""

from __future__ import annotations

import argparse
import struct
import subprocess
import sys
from pathlib import Path

from _common import run_with_peak, scratch

HERE = Path(__file__).resolve().parent.parent / "src"
sys.path.insert(0, str(HERE))


def build(folder: Path) -> dict[str, Path]:
    """The inputs, written once into `folder`."""
    import gamepak

    paths: dict[str, Path] = {}
    bomb = b"<root><Table>" + b"<A/>" * (8_000_000 - 8) + b"</Table></root>"
    paths["bomb.xtbl"] = folder / "bomb.xtbl"
    paths["bomb.xtbl"].write_bytes(bomb)
    weapons = (
        b"<root><Table><Weapon><Name>pistol</Name><Magazine_Size>16</Magazine_Size></Weapon></Table>"
        b"<TableDescription><Name>Weapon</Name><Element><Name>Name</Name><Type>String</Type></Element>"
        b"<Element><Name>Magazine_Size</Name><Type>Int</Type></Element></TableDescription></root>"
    )
    paths["bomb.vpp_pc"] = folder / "bomb.vpp_pc"
    with gamepak.create(paths["bomb.vpp_pc"], overwrite=True) as writer:
        writer.add("bomb.xtbl", bomb)
        writer.add("weapons.xtbl", weapons)
    dense = b"<root><Table>" + b"<A>abcdefgh</A>" * 499_000 + b"</Table></root>"  # 15 bytes an element
    paths["dense.xtbl"] = folder / "dense.xtbl"
    paths["dense.xtbl"].write_bytes(dense)
    paths["weapons.xtbl"] = folder / "tables" / "weapons.xtbl"
    paths["weapons.xtbl"].parent.mkdir()
    paths["weapons.xtbl"].write_bytes(weapons)
    sheets = folder / "sheets"
    sheets.mkdir()
    rows = b"".join(b"r%d,1\r\n" % number for number in range(1_000_000))
    (sheets / "weapons.xtbl.csv").write_bytes(b"\xef\xbb\xbfName,Magazine_Size\r\npistol,16\r\n" + rows)
    paths["sheets"] = sheets
    paths["empty.rfglocatext"] = folder / "empty.rfglocatext"
    paths["empty.rfglocatext"].write_bytes(_locatext([""] * 2_000_000))
    paths["large.rfglocatext"] = folder / "large.rfglocatext"
    paths["large.rfglocatext"].write_bytes(_locatext([f"string number {n}" for n in range(200_000)]))
    return paths


def _locatext(texts: list[str]) -> bytes:
    count = len(texts)
    position = 12 + 12 * count
    entries, blobs = [], []
    for number, text in enumerate(texts):
        raw = text.encode("utf-16-le") + b"\0\0"
        entries.append(struct.pack("<III", number, position, len(raw)))
        blobs.append(raw)
        position += len(raw)
    return struct.pack("<III", 0xA84C7F73, 3, count) + b"".join(entries) + b"".join(blobs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", type=Path, help="another checkout's src, measured the same way")
    arguments = parser.parse_args()
    folder = scratch("content-memory")
    paths = build(folder)
    out = folder / "out"
    gamepak = [sys.executable, "-m", "gamepak"]
    cases = [
        ("table ls bomb.xtbl (32 MB)", paths["bomb.xtbl"], ["table", "ls", str(paths["bomb.xtbl"])], 3),
        ("table ls bomb.vpp_pc", paths["bomb.xtbl"], ["table", "ls", str(paths["bomb.vpp_pc"])], 3),
        ("table check bomb.vpp_pc", paths["bomb.xtbl"], ["table", "check", str(paths["bomb.vpp_pc"])], 3),
        (
            "table export --as json bomb.vpp_pc",
            paths["bomb.xtbl"],
            ["table", "export", str(paths["bomb.vpp_pc"]), "-o", str(out / "b"), "--as", "json", "--overwrite"],
            3,
        ),
        ("table ls dense.xtbl (500k elements)", paths["dense.xtbl"], ["table", "ls", str(paths["dense.xtbl"])], 2),
        ("table check dense.xtbl", paths["dense.xtbl"], ["table", "check", str(paths["dense.xtbl"])], 8),
        (
            "table export --as json dense.xtbl",
            paths["dense.xtbl"],
            ["table", "export", str(paths["dense.xtbl"]), "-o", str(out / "d"), "--as", "json", "--overwrite"],
            8,
        ),
        (
            "table export --as csv dense.xtbl",
            paths["dense.xtbl"],
            ["table", "export", str(paths["dense.xtbl"]), "-o", str(out / "c"), "--as", "csv", "--overwrite"],
            8,
        ),
        (
            "table import 1,000,000-row CSV",
            paths["sheets"] / "weapons.xtbl.csv",
            ["table", "import", str(paths["weapons.xtbl"]), str(paths["sheets"]), "--dry-run"],
            3,
        ),
        (
            "text export json 2M empty strings",
            paths["empty.rfglocatext"],
            ["text", "export", str(paths["empty.rfglocatext"]), "-o", str(out / "e.json"), "--names", "--overwrite"],
            2,
        ),
        (
            "text export po 2M empty strings",
            paths["empty.rfglocatext"],
            ["text", "export", str(paths["empty.rfglocatext"]), "-o", str(out / "e.po"), "--names", "--overwrite"],
            2,
        ),
        (
            "text export json 200k strings",
            paths["large.rfglocatext"],
            ["text", "export", str(paths["large.rfglocatext"]), "-o", str(out / "l.json"), "--names", "--overwrite"],
            8,
        ),
        (
            "text export po 200k strings",
            paths["large.rfglocatext"],
            ["text", "export", str(paths["large.rfglocatext"]), "-o", str(out / "l.po"), "--names", "--overwrite"],
            8,
        ),
    ]
    out.mkdir()
    trees = {"this tree": HERE} if arguments.compare is None else {"compared": arguments.compare, "this tree": HERE}
    for tree_name, src in trees.items():
        _, floor, _ = run_with_peak([*gamepak, "formats"], src)
        print(f"{tree_name}: floor (gamepak formats) {floor:.1f} MiB")
        for label, measured, command, goal in cases:
            seconds, peak, finished = run_with_peak([*gamepak, *command], src, stderr=subprocess.PIPE)
            size = measured.stat().st_size
            per_byte = max(0.0, (peak - floor) * (1 << 20) / size)
            said = finished.stderr.decode("utf-8", "replace").strip().splitlines()
            outcome = f"exit {finished.returncode}" + (f": {said[-1][:70]}" if said else "")
            verdict = "ok" if per_byte <= goal else "OVER"
            print(
                f"  {label:38} input {size / 1e6:6.1f} MB  {seconds:6.2f} s  peak {peak:7.1f} MiB  "
                f"goal <= {goal}, measured {per_byte:5.2f} per input byte: {verdict}  ({outcome})"
            )


if __name__ == "__main__":
    main()
