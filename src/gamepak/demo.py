"""`make run`: the main job on data gamepak makes itself.

Builds a small mod folder, packs it into every archive format that takes named members, lists,
verifies and extracts each pack with a manifest, rebuilds it from the extracted folder and
checks the rebuild is byte-identical; then nests packs, edits, converts and compares packs,
makes and translates a J2ME text pack,
and makes, converts and renders a JOE model. Each step runs the real `gamepak` command line, printed
before it runs, so the output doubles as a tour of the CLI.

    python -m gamepak.demo build/demo
"""

from __future__ import annotations

import filecmp
import os
import shutil
import sys
from typing import Any

from .cli import main as gamepak_main

# (archive file name, format, source folder): RFG packfiles hold no folders, so the
# `.str2_pc` is made from a flat copy of the mod.
PACKS = [("mod.pak", "pak", "mod"), ("models.jpk", "jpk", "mod"), ("level.str2_pc", "vpp", "level")]
# Strings of the demo's J2ME text pack: Latin-1 accents and apostrophes (stored as 0x92).
STRINGS = ["New game", "Don't give up!", "Caf\u00e9 cr\u00e8me", "Stra\u00dfe", "Level 1: the jungle"]


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


def make_flat_folder(source: str, folder: str) -> None:
    """The mod's files under their bare names, for formats without folders."""
    for current, _, files in os.walk(source):
        for file_name in files:
            os.makedirs(folder, exist_ok=True)
            shutil.copyfile(os.path.join(current, file_name), os.path.join(folder, file_name))


def step(*arguments: str, expect: int = 0) -> None:
    """Run one gamepak command as a user would, stopping the demo if it fails."""
    print(f"\n$ gamepak {' '.join(arguments)}", flush=True)
    code = gamepak_main(list(arguments))
    sys.stdout.flush()
    if code != expect:
        raise SystemExit(f"demo step failed with exit code {code}")


def editing(workdir: str) -> None:
    """The modder's loop: change packs in place, sync an extracted folder back, convert, compare."""
    pak = os.path.join(workdir, "mod.pak")
    notes = os.path.join(workdir, "notes.txt")
    with open(notes, "w", encoding="utf-8") as handle:
        handle.write("Added after the pack was made.\n")
    step("add", pak, notes, "--name", "docs/notes.txt")
    step("mv", pak, "readme.txt", "README.txt")
    step("rm", pak, "textures/wall4.lmp")
    step("diff", os.path.join(workdir, "rebuilt-mod.pak"), pak, expect=3)
    extracted = os.path.join(workdir, "mod.pak.edited")
    step("extract", pak, "-o", extracted)
    with open(os.path.join(extracted, "default.cfg"), "ab") as handle:
        handle.write(b"bind space +jump\n")
    step("update", pak, extracted, "--dry-run")
    step("update", pak, extracted)
    step("compact", pak)
    step("verify", pak)
    archive_zip = os.path.join(workdir, "mod.zip")
    step("convert", pak, archive_zip)
    step("diff", pak, archive_zip)
    step("add", os.path.join(workdir, "dlc.vpp_pc"), notes, "--name", "level.str2_pc/notes.txt")
    step("ls", "-r", os.path.join(workdir, "dlc.vpp_pc"))


def nested_packs(workdir: str) -> None:
    """A .str2_pc inside a .vpp_pc, as in Red Faction Guerrilla's DLC packs."""
    outer = os.path.join(workdir, "dlc.vpp_pc")
    step("create", outer, os.path.join(workdir, "level.str2_pc"), os.path.join(workdir, "mod", "readme.txt"))
    step("ls", "-r", outer)
    step("cat", outer, "level.str2_pc/start.ent")
    step("verify", outer)


def j2me_packs(workdir: str) -> None:
    """A Gameloft text pack (no signature: detected by its structure) and its translation."""
    from .formats.j2me.string_tables import build_text_pack, encode_string

    strings = os.path.join(workdir, "strings.bin")
    raw = [encode_string(text, index) for index, text in enumerate(STRINGS)]
    with open(strings, "wb") as handle:
        handle.write(build_text_pack(raw))
    step("detect", strings)
    step("ls", "-l", strings)
    step("text", "export", strings, "-o", os.path.join(workdir, "strings.po"))
    step("text", "export", strings, "-o", os.path.join(workdir, "strings.csv"))
    copy = os.path.join(workdir, "strings-copy.bin")
    step("text", "import", strings, os.path.join(workdir, "strings.csv"), "-o", copy)
    if not filecmp.cmp(strings, copy, shallow=False):
        raise SystemExit("an unchanged export/import changed the text pack")
    print("unchanged export/import gave back the text pack byte for byte")
    numbered = os.path.join(workdir, "numbered")
    os.makedirs(numbered)
    for index in range(3):
        with open(os.path.join(numbered, f"{index}.bin"), "wb") as handle:
            handle.write(bytes([index]) * (10 + index))
    resources = os.path.join(workdir, "resources.bin")
    step("create", "--format", "j2me-table", resources, numbered)
    step("extract", "--format", "j2me-table", resources, "-o", os.path.join(workdir, "resources.extracted"))


def crate_mesh() -> Any:
    """A 2-unit cube, 12 triangles, with corner normals (the demo's crate; the tests' model too)."""
    from .models import Mesh

    corners = [(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]
    faces = [(0, 1, 3), (0, 3, 2), (4, 6, 7), (4, 7, 5), (0, 4, 5), (0, 5, 1),
             (2, 3, 7), (2, 7, 6), (0, 2, 6), (0, 6, 4), (1, 5, 7), (1, 7, 3)]  # fmt: skip
    normals = [(x / 3**0.5, y / 3**0.5, z / 3**0.5) for x, y, z in corners]
    return Mesh.from_vertices(corners, faces, normals=normals)


def models(workdir: str) -> None:
    """A JOE model made here: information, conversion to glTF and back, a preview image."""
    from .models import save

    crate = os.path.join(workdir, "crate.joe")
    save(crate_mesh(), crate)
    step("model", "info", crate)
    step("model", "export", crate, "-o", os.path.join(workdir, "crate.glb"))
    step("model", "import", os.path.join(workdir, "crate.glb"), "-o", os.path.join(workdir, "crate-from-glb.joe"))
    step("model", "render", crate, "-o", os.path.join(workdir, "crate.png"), "--size", "256")


def showcase(workdir: str) -> None:
    """Packs to look inside with `gamepak serve`: the crate's picture as an RFG texture (peg) in a
    .str2_pc inside a .vpp_pc, and the crate model with its picture in a VDrift pack."""
    from .formats.rfg.peg import Peg

    textures = os.path.join(workdir, "showcase", "textures")
    os.makedirs(textures)
    cpu, gpu = Peg.new("crate.cpeg_pc").to_bytes()
    peg = os.path.join(textures, "crate.cpeg_pc")
    for name, data in (("crate.cpeg_pc", cpu), ("crate.gpeg_pc", gpu)):
        with open(os.path.join(textures, name), "wb") as handle:
            handle.write(data)
    step("texture", "add", peg, os.path.join(workdir, "crate.png"), "--name", "crate", "--format", "DXT5")
    step("texture", "ls", peg)
    level = os.path.join(workdir, "showcase", "crates.str2_pc")
    step("create", level, textures)
    step("create", os.path.join(workdir, "showcase", "crates.vpp_pc"), level, os.path.join(workdir, "notes.txt"))
    os.remove(level)
    model = os.path.join(workdir, "showcase", "model")
    os.makedirs(model)
    for name in ("crate.joe", "crate.png"):
        shutil.copyfile(os.path.join(workdir, name), os.path.join(model, name))
    step("create", os.path.join(workdir, "showcase", "cars.jpk"), model)
    shutil.rmtree(textures)
    shutil.rmtree(model)


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    workdir = os.path.abspath(arguments[0] if arguments else "build/demo")
    shutil.rmtree(workdir, ignore_errors=True)
    make_mod_folder(os.path.join(workdir, "mod"))
    make_flat_folder(os.path.join(workdir, "mod"), os.path.join(workdir, "level"))
    print(f"demo folder: {workdir}")
    for file_name, format_name, folder in PACKS:
        source = os.path.join(workdir, folder)
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
    step("detect", *(os.path.join(workdir, name) for name, _, _ in PACKS))
    step("cat", os.path.join(workdir, "mod.pak"), "readme.txt")
    nested_packs(workdir)
    editing(workdir)
    j2me_packs(workdir)
    models(workdir)
    showcase(workdir)
    print(
        "\ndemo finished: every pack listed, verified, extracted and rebuilt byte for byte; "
        "packs edited in place, converted and compared"
    )
    command = os.path.relpath(os.path.join(os.path.dirname(sys.executable), "gamepak"))
    print(f"\nto look inside the demo's packs in a web browser:\n  {command} serve {os.path.relpath(workdir)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
