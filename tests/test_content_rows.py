"""The content registry's house: one module per family under `gamepak/content/rows/`, every row
defined there in the one ordered `KINDS` table (a row written but left out of it would reach no
surface), and the lookups in `gamepak.content` alone."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gamepak.content as content
import gamepak.content.rows as rows
from gamepak.content.spec import ContentKind, Family, Verb

from conftest import in_process_cli, write_pack


def _row_modules() -> dict[str, ModuleType]:
    return {
        info.name: importlib.import_module(f"{rows.__name__}.{info.name}")
        for info in pkgutil.iter_modules(rows.__path__)
    }


def test_every_row_of_the_family_modules_is_in_kinds_once() -> None:
    defined = [
        value for module in _row_modules().values() for value in vars(module).values() if isinstance(value, ContentKind)
    ]
    assert sorted(kind.name for kind in defined) == sorted(kind.name for kind in content.KINDS)
    assert len({kind.name for kind in content.KINDS}) == len(content.KINDS)
    assert all(any(kind is row for row in content.KINDS) for kind in defined)


def test_each_family_lives_in_one_module_with_its_rows() -> None:
    homes: dict[str, str] = {}
    for name, module in _row_modules().items():
        for value in vars(module).values():
            if isinstance(value, Family):
                assert value.name not in homes, f"family {value.name} defined twice"
                homes[value.name] = name
    assert set(homes) == set(content.FAMILIES)
    for module_name, module in _row_modules().items():
        for value in vars(module).values():
            if isinstance(value, ContentKind):
                assert homes[value.family.name] == module_name, f"{value.name} is not in its family's module"


def test_a_family_s_rows_alone_are_those_of_the_whole_table() -> None:
    """`kinds(family)` before the whole table is made imports the family's own row module only
    (`_HOMES`) and gives the rows `KINDS` gives that family, in the same order; every family
    has its home."""
    assert set(content._HOMES) == set(content.FAMILIES)
    for family, home in content._HOMES.items():
        assert content.FAMILIES[family] in vars(_row_modules()[home]).values()
    script = """
import sys
import gamepak.content as content
alone = {family: content.kinds(family) for family in content._HOMES}
loaded = sorted(name for name in sys.modules if name.startswith("gamepak.content.rows."))
print(loaded)
whole = {family: tuple(kind for kind in content.KINDS if kind.family.name == family) for family in content._HOMES}
print(alone == whole)
"""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.split("\n")[1] == "True"
    # One family asked for: its module alone.
    one = "import sys, gamepak.content as c; c.kinds('strings'); print(sorted(m for m in sys.modules if '.rows.' in m))"
    out = subprocess.run([sys.executable, "-c", one], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "['gamepak.content.rows.text']"


def test_text_import_loads_no_other_family_s_rows(tmp_path: Path) -> None:
    """`gamepak text import` of an RFG localization file reads the strings rows only."""
    import subprocess
    import sys

    from gamepak.formats.rfg.locatext import LocaEntry, build

    source = tmp_path / "a.rfglocatext"
    source.write_bytes(build([LocaEntry(7, "hi".encode("utf-16-le") + b"\0\0")]))
    po = tmp_path / "a.po"
    subprocess.run([sys.executable, "-m", "gamepak", "text", "export", str(source), "-o", str(po)], check=True)
    script = (
        "import sys, atexit\n"
        "atexit.register(lambda: sys.stderr.write('ROWS ' + repr(sorted(m for m in sys.modules if '.rows.' in m))))\n"
        "from gamepak.cli import run\n"
        f"sys.argv = ['gamepak', 'text', 'import', {str(source)!r}, {str(po)!r}, '-o', "
        f"{str(tmp_path / 'b.rfglocatext')!r}]\n"
        "run()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert "ROWS ['gamepak.content.rows.text']" in done.stderr


def test_the_lookups_are_the_package_s_own() -> None:
    """`kinds`, `get`, `of_member` and `for_path` read `gamepak.content.KINDS` (a test or a
    plug-in that swaps the table is heard) and no row module defines a lookup."""
    for name in ("kinds", "get", "of_member", "for_path", "exporter_for", "member_types", "readme_table"):
        assert getattr(content, name).__module__ == "gamepak.content"
    for module in _row_modules().values():
        assert not [
            value
            for value in vars(module).values()
            if callable(value) and getattr(value, "__module__", "") == module.__name__
        ]


# -- `of_member` by name and signature: found once per suffix ------------------------------------
def _found_plainly(name: str, family: str | None, head: bytes = b"", partners: bool = False) -> list[ContentKind]:
    """The rule `of_member` keeps (without probes): the rows, in order, whose extensions the name
    ends with, whose signature the head starts with, or (with `partners`) whose partner it is."""
    lowered = name.lower()
    return [
        kind
        for kind in content.kinds(family)
        if (kind.extensions and lowered.endswith(kind.extensions))
        or (head and kind.signed_by(head))
        or (partners and kind.partner_named_by(lowered))
    ]


_EXTENSIONS = sorted(
    {extension for kind in content.KINDS for extension in (*kind.extensions, *kind.partner_extensions)}
)
_SIGNATURES = sorted({signature for kind in content.KINDS for signature in kind.signatures})


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet="ab./_", max_size=10),
    st.sampled_from([*_EXTENSIONS, "", ".", ".txt", ".JOE", ".Cpeg_PC", "joe", ".bsp.txt", "_pc"]),
    st.sampled_from([None, *content.FAMILIES]),
    st.one_of(st.just(b""), st.binary(max_size=6), st.sampled_from(_SIGNATURES).map(lambda sig: sig + b"\0\1")),
    st.booleans(),
)
def test_of_member_is_the_rows_the_name_or_the_head_says(
    stem: str, extension: str, family: str | None, head: bytes, partners: bool
) -> None:
    name = stem + extension
    assert content.of_member(name, head, family=family, probe=False, partners=partners) == _found_plainly(
        name, family, head, partners
    )


def _row_named(extensions: tuple[str, ...]) -> ContentKind:
    return ContentKind("test-kind", content.FAMILIES["model"], "a test's row", extensions=extensions)


def test_an_extension_of_two_dots_is_looked_up_name_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    content.of_member("mesh.gz", family="model", probe=False)  # the table before is cached
    row = _row_named((".mesh.gz",))
    monkeypatch.setattr(content, "KINDS", (*content.KINDS, row))
    monkeypatch.setattr(content, "_BY_FAMILY", {})
    # Its suffix `.gz` alone would not say it: the swapped table is heard, name by name.
    assert content.of_member("thing.MESH.gz", family="model", probe=False) == [row]
    assert content.of_member("thing.gz", family="model", probe=False) == []
    assert content.of_member("thing.mesh.gz", probe=False) == [row]


def test_odd_suffixes_are_not_remembered_without_end() -> None:
    for number in range(3 * content._RowIndex.SUFFIXES_KEPT):
        content.of_member(f"file.{number}", family="model", probe=False)
    cached = content._INDEXES["model"].by_suffix
    assert cached is not None and len(cached) <= content._RowIndex.SUFFIXES_KEPT
    assert content.of_member("file.joe", family="model", probe=False) == _found_plainly("file.joe", "model")


# -- `verify` runs the rows' pack checks ------------------------------------------------------------
SEEN: list[tuple[str, str | None, str | None]] = []


def fake_verify(archive: Any, *, base: Any = None, source: str | None = None) -> list[Any]:
    """The `verify` verb of the test's own row: one warning naming what it was handed."""
    from gamepak.core.archive import Problem

    SEEN.append((archive.filename, base.filename if base is not None else None, source))
    return [Problem(f"fake: {len(archive)} member(s) looked at", severity="warning")]


def _fake_row() -> ContentKind:
    return ContentKind(
        "fake-table",
        content.FAMILIES["table"],
        "a test's tables, checked inside zips",
        extensions=(".fake",),
        packs=("zip",),
        verbs={"verify": Verb("test_content_rows:fake_verify", ("base", "source"))},
    )


def test_a_row_s_verify_verb_joins_verify(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new kind's pack check reaches `gamepak verify` by its row and its pack formats' entry in
    `cli.reading.PACK_CHECKS` (the start-up index `test_startup` holds to the rows: verify of a
    format no row checks does not import the registry), `--base` opened for it."""
    from gamepak.cli import reading

    monkeypatch.setattr(content, "KINDS", (*content.KINDS, _fake_row()))
    monkeypatch.setitem(reading.PACK_CHECKS, "zip", ("fake-table",))
    SEEN.clear()
    pack = write_pack(tmp_path / "mod.zip", {"a.fake": b"a", "b.txt": b"b"})
    base = write_pack(tmp_path / "base.zip", {"a.fake": b"x"})
    code, _, err = in_process_cli("verify", str(pack))
    assert code == 0 and "warning: " in err and "fake: 2 member(s) looked at" in err, err
    code, _, err = in_process_cli("verify", str(pack), "--base", str(base))
    assert code == 0 and "fake: 2 member(s) looked at" in err, err
    assert [(str(pack), None, str(pack)), (str(pack), str(base), str(pack))] == SEEN
    # Not its pack format: not asked.
    other = write_pack(tmp_path / "other.pak", {"a.fake": b"a"})
    assert in_process_cli("verify", str(other))[0] == 0 and len(SEEN) == 2


def test_verify_checks_a_pack_s_tables_then_its_zones(tmp_path: Path) -> None:
    """The RFG rows' checks, by their rows: a pack with a broken table and a broken zone gets
    the table's warning first, then the zone's error, as before the registry ran them."""
    assert [kind.name for kind in content.verifiers("vpp")] == ["xtbl", "rfg-zone"]
    assert content.verifiers("pak") == []
    pack = write_pack(tmp_path / "both.vpp_pc", {"broken.xtbl": b"<root><Table>", "x.layer_pc": b"\x00" * 8})
    code, _, err = in_process_cli("verify", str(pack))
    lines = err.splitlines()
    table = next(number for number, line in enumerate(lines) if "table broken.xtbl" in line)
    zone = next(number for number, line in enumerate(lines) if "zone x.layer_pc" in line)
    assert code == 1 and table < zone, err
