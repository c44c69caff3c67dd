"""One --json shape (issue 31 item 9): every command's --json is indented the same way, and the
same thing has the same key in every verb (`file`, `members` a count, `size` and
`stored_size` bytes); `formats --json` and `extract --json` exist. The test finds the commands
that take --json in the parser itself, so a new one must be added here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import gamepak
from gamepak.cli import build_parser
from gamepak.core.jsontext import JSON_INDENT

from conftest import in_process_cli

# Keys that name, in some verb, what another verb calls by the shared key.
SYNONYMS = {
    "member_count": "members",
    "members_count": "members",
    "num_members": "members",
    "total_size": "size",
    "total_stored_size": "stored_size",
    "compressed_size": "stored_size",
    "path_count": "members",
}


def commands_with_json() -> set[str]:
    """Every (sub-)command whose parser takes --json, as 'ls', 'patch check', ..."""
    import argparse

    found: set[str] = set()

    def walk(parser: argparse.ArgumentParser, words: tuple[str, ...]) -> None:
        for action in parser._actions:
            if "--json" in action.option_strings:
                found.add(" ".join(words))
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    if isinstance(sub, argparse.ArgumentParser):
                        walk(sub, (*words, name))

    walk(build_parser("*"), ())
    return found


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    import numpy as np

    from gamepak.formats.rfg.peg import Peg, PixelFormat
    from gamepak.models import Mesh, save

    root = tmp_path_factory.mktemp("json")
    pak = root / "a.pak"
    with gamepak.create(pak) as writer:
        writer.add("x.txt", b"x" * 10)
        writer.add("y.txt", b"y")
    zipped = root / "b.zip"
    with gamepak.create(zipped) as writer:
        writer.add("x.txt", b"x" * 11)
        writer.add("y.txt", b"y" * 200)
    peg = Peg.new("p.cpeg_pc")
    peg.add_texture("t", np.full((8, 8, 4), 7, np.uint8), PixelFormat.DXT1)
    cpu, gpu = peg.to_bytes()
    (root / "p.cpeg_pc").write_bytes(cpu)
    (root / "p.gpeg_pc").write_bytes(gpu)
    save(Mesh.from_vertices([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [(0, 1, 2)]), root / "m.joe")
    changed = root / "c.pak"
    with gamepak.create(changed) as writer:
        writer.add("x.txt", b"z" * 10)
        writer.add("y.txt", b"y")
    patch = root / "p.gpatch"
    assert in_process_cli("patch", "make", str(pak), str(changed), "-o", str(patch))[0] == 0
    from sprite_bytes import simple_sprite

    sprites = root / "s.f"
    with gamepak.create(sprites, "j2me-table") as writer:
        writer.add("0", simple_sprite())
    return {
        "pak": pak,
        "zip": zipped,
        "peg": root / "p.cpeg_pc",
        "joe": root / "m.joe",
        "patch": patch,
        "root": root,
        "sprites": sprites,
    }


def _cases(files: dict[str, Path], tmp_path: Path) -> dict[str, list[str]]:
    game = tmp_path / "game.pak"
    shutil.copyfile(files["pak"], game)
    cases = {
        "ls": ["ls", str(files["zip"])],
        "info": ["info", str(files["zip"])],
        "detect": ["detect", str(files["pak"]), str(files["zip"])],
        "verify": ["verify", str(files["zip"])],
        "formats": ["formats"],
        "extract": ["extract", str(files["pak"]), "-o", str(tmp_path / "out")],
        "diff": ["diff", str(files["pak"]), str(files["zip"])],
        "model info": ["model", "info", str(files["joe"])],
        "texture ls": ["texture", "ls", str(files["peg"])],
        "sprite ls": ["sprite", "ls", str(files["sprites"])],
        "patch info": ["patch", "info", str(files["patch"])],
        "patch check": ["patch", "check", str(game), str(files["patch"])],
        "patch apply": ["patch", "apply", str(game), str(files["patch"])],
    }
    table = tmp_path / "t.xtbl"
    table.write_bytes(b"<root><Table><Row><Name>a</Name></Row></Table></root>")
    cases["table ls"] = ["table", "ls", str(table)]
    cases["table check"] = ["table", "check", str(table)]
    from test_rfg_zones import a_layer

    layer = tmp_path / "z.layer_pc"
    layer.write_bytes(a_layer())
    cases["zone ls"] = ["zone", "ls", str(layer)]
    try:
        import dask  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError:
        return cases
    catalog = tmp_path / "one.catalog"
    assert in_process_cli("catalog", str(files["root"]), "-o", str(catalog), "--scheduler", "synchronous")[0] == 0
    cases["catalog-diff"] = ["catalog-diff", str(catalog), str(catalog)]
    return cases


def _walk(document: Any, where: str = "$") -> list[str]:
    """What breaks the shared keys in `document`."""
    wrong = []
    if isinstance(document, dict):
        for key, value in document.items():
            if key in SYNONYMS:
                wrong.append(f"{where}.{key}: call it {SYNONYMS[key]!r}")
            if key == "members" and not isinstance(value, int):
                wrong.append(f"{where}.members is a count, not {type(value).__name__}")
            if key in ("size", "stored_size") and not isinstance(value, int):
                wrong.append(f"{where}.{key} is a number of bytes, not {value!r}")
            wrong += _walk(value, f"{where}.{key}")
    elif isinstance(document, list):
        for index, item in enumerate(document):
            wrong += _walk(item, f"{where}[{index}]")
    return wrong


def test_every_json_has_the_shared_shape(files: dict[str, Path], tmp_path: Path) -> None:
    cases = _cases(files, tmp_path)
    missing = commands_with_json() - set(cases)
    if "catalog-diff" in missing and "catalog" not in "".join(cases):
        missing.discard("catalog-diff")  # needs the catalog extra
    assert not missing, f"commands with --json the test does not run: {sorted(missing)}"
    wrong = []
    for name, arguments in cases.items():
        code, out, err = in_process_cli(*arguments, "--json")
        assert code in (0, 3), (name, err)
        document = json.loads(out)
        if out != json.dumps(document, indent=JSON_INDENT, ensure_ascii=False) + "\n":
            wrong.append(f"{name}: not the CLI's JSON layout (indent {JSON_INDENT})")
        wrong += [f"{name}: {problem}" for problem in _walk(document)]
    assert not wrong, "\n".join(wrong)


def test_the_shared_keys_say_the_same_thing(files: dict[str, Path], tmp_path: Path) -> None:
    """info's `members`/`size`/`stored_size` are the count and sums of ls's rows; verify's
    `members` the same count; extract says what it wrote where."""
    listed = json.loads(in_process_cli("ls", "--json", str(files["zip"]))[1])
    info = json.loads(in_process_cli("info", "--json", str(files["zip"]))[1])
    verified = json.loads(in_process_cli("verify", "--json", str(files["zip"]))[1])
    assert info["members"] == verified["members"] == len(listed) == 2
    assert info["size"] == sum(row["size"] for row in listed) == 211
    assert info["stored_size"] == sum(row["stored_size"] for row in listed)
    pak_rows = json.loads(in_process_cli("ls", "--json", str(files["pak"]))[1])
    assert [row["stored_size"] for row in pak_rows] == [10, 1]  # stored as they are: their size
    out = tmp_path / "out"
    extracted = json.loads(in_process_cli("extract", "--json", str(files["pak"]), "-o", str(out))[1])
    assert extracted["members"] == 2 and extracted["size"] == 11 and extracted["file"] == str(files["pak"])
    for row in extracted["written"]:
        assert Path(row["path"]).read_bytes() == (b"x" * 10 if row["name"] == "x.txt" else b"y")
    formats = json.loads(in_process_cli("formats", "--json")[1])
    pak = next(row for row in formats if row["name"] == "pak")
    assert ".pak" in pak["extensions"] and pak["signature"] is True and "align" in pak["options"]
