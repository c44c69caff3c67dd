"""Start-up of every command vs the floor of any console script, `python -c "import re"` (pip's
`gamepak` wrapper imports `re`), bytecode compiled first. Target <= 1.3x (1.4 tolerated for
noise): argparse declares every command and a command imports what it needs only when it runs.

Each command is timed on a small input (or with --help where the real run would be long or
needs a server), in alternating rounds, median of ROUNDS."""

from __future__ import annotations

import shutil
import subprocess
import sys

import gamepak

from _common import GAMEPAK, alternate, compile_bytecode, run, scratch

ROUNDS = 15


def main() -> None:
    compile_bytecode()
    work = scratch("startup")
    small = str(work / "small.pak")
    with gamepak.create(small) as writer:
        for index in range(20):
            writer.add(f"maps/e1m{index}.bsp", bytes(100))
    other = str(work / "other.pak")
    shutil.copy(small, other)
    (work / "new.txt").write_bytes(b"new")
    runs = {
        'python -c "import re"': [sys.executable, "-c", "import re"],
        "gamepak --version": [GAMEPAK, "--version"],
        "gamepak --help": [GAMEPAK, "--help"],
        "gamepak ls": [GAMEPAK, "ls", small],
        "gamepak info": [GAMEPAK, "info", small],
        "gamepak verify": [GAMEPAK, "verify", small],
        "gamepak diff": [GAMEPAK, "diff", small, other],
        "gamepak extract --help": [GAMEPAK, "extract", "--help"],
        "gamepak add --dry-run": [GAMEPAK, "add", other, str(work / "new.txt"), "--dry-run"],
        "gamepak rm --help": [GAMEPAK, "rm", "--help"],
        "gamepak update --help": [GAMEPAK, "update", "--help"],
        "gamepak create --help": [GAMEPAK, "create", "--help"],
        "gamepak convert --help": [GAMEPAK, "convert", "--help"],
        "gamepak model export --help": [GAMEPAK, "model", "export", "--help"],
        "gamepak text export --help": [GAMEPAK, "text", "export", "--help"],
        "gamepak mount --help": [GAMEPAK, "mount", "--help"],
        "gamepak catalog --help": [GAMEPAK, "catalog", "--help"],
        "gamepak patch apply --help": [GAMEPAK, "patch", "apply", "--help"],
    }
    for command in ("texture", "serve"):  # the commands still being built, once they exist
        if subprocess.run([GAMEPAK, command, "--help"], capture_output=True).returncode == 0:
            runs[f"gamepak {command} --help"] = [GAMEPAK, command, "--help"]
    medians = alternate(ROUNDS, {name: (lambda _, argv=argv: run(argv)) for name, argv in runs.items()})
    base = medians['python -c "import re"']
    for name, seconds in medians.items():
        ratio = seconds / base
        verdict = (
            "" if name.startswith("python") else ("  ok" if ratio <= 1.3 else "  noise?" if ratio <= 1.4 else "  SLOW")
        )
        print(f"{name:32} {seconds * 1000:7.1f} ms  {ratio:.2f}x{verdict}")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
