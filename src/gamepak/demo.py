"""`make run`: the main job on data gamepak makes itself.

Builds a small mod folder, packs it into every archive format that takes named members, lists,
verifies and extracts each pack with a manifest, rebuilds it from the extracted folder and
checks the rebuild is byte-identical. Each step runs the real `gamepak` command line, printed
before it runs, so the output doubles as a tour of the CLI.

    python -m gamepak.demo build/demo
"""

from __future__ import annotations

import filecmp
import os
import shutil
import sys

from .cli import main as gamepak_main

# (archive file name, format) pairs the demo builds from the same folder.
PACKS = [("mod.pak", "pak"), ("models.jpk", "jpk")]


def make_mod_folder(folder: str) -> None:
    """A small, deterministic mod: a config, a text file, some binary 'textures'."""
    files = {
        "default.cfg": b"bind w +forward\nbind s +back\nname player\n",
        "readme.txt": "A demo pack made by gamepak.\nCaf\u00e9 d\u00e9j\u00e0 vu.\n".encode(),
        "maps/start.ent": b'{\n"classname" "worldspawn"\n"message" "Hello"\n}\n',
    }
    for index in range(5):
        files[f"textures/wall{index}.lmp"] = bytes((index * 37 + offset) % 256 for offset in range(4096 + index))
    for name, data in files.items():
        path = os.path.join(folder, *name.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data)


def step(*arguments: str) -> None:
    """Run one gamepak command as a user would, stopping the demo if it fails."""
    print(f"\n$ gamepak {' '.join(arguments)}", flush=True)
    code = gamepak_main(list(arguments))
    sys.stdout.flush()
    if code != 0:
        raise SystemExit(f"demo step failed with exit code {code}")


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    workdir = os.path.abspath(arguments[0] if arguments else "build/demo")
    shutil.rmtree(workdir, ignore_errors=True)
    source = os.path.join(workdir, "mod")
    make_mod_folder(source)
    print(f"demo folder: {workdir}")
    for file_name, format_name in PACKS:
        archive = os.path.join(workdir, file_name)
        extracted = os.path.join(workdir, f"{file_name}.extracted")
        rebuilt = os.path.join(workdir, f"rebuilt-{file_name}")
        step("create", archive, source, "--format", format_name)
        step("ls", "-l", archive)
        step("info", archive)
        step("verify", archive)
        step("extract", archive, "-o", extracted, "--manifest")
        step("create", rebuilt, extracted)
        if not filecmp.cmp(archive, rebuilt, shallow=False):
            raise SystemExit(f"{rebuilt} differs from {archive}")
        print(f"rebuilt {file_name} byte for byte")
    step("detect", *(os.path.join(workdir, name) for name, _ in PACKS))
    step("cat", os.path.join(workdir, "mod.pak"), "readme.txt")
    print("\ndemo finished: every pack listed, verified, extracted and rebuilt byte for byte")
    return 0


if __name__ == "__main__":
    sys.exit(main())
