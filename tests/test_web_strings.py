"""The viewer's strings page reads the game's tables once per server, not once per page
(`web.strings.NameCache`): the first page's worker reads `table.vpp_pc` and sends its names
back; later pages' workers, forked from the server, look names up in their inherited copy."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

import gamepak
from gamepak.formats.rfg.locatext import LocaEntry, build, identifier_hash
from gamepak.formats.rfg.locatext import names as names_module
from gamepak.web import isolate, strings
from gamepak.web.app import create_app

from conftest import sample

PAGE = "/strings/language/locatexts_xx_yy.rfglocatext"
NAMES = ["UI_MENU_START", "UI_MENU_QUIT", "UI_MENU_OPTIONS"]


def locatext(names: list[str]) -> bytes:
    return build([LocaEntry(identifier_hash(name), f"text of {name}".encode("utf-16-le") + b"\0\0") for name in names])


def tables(path: Path, names: list[str]) -> None:
    rows = "".join(f"<Row><Name>{name}</Name></Row>" for name in names)
    with gamepak.create(path, overwrite=True) as writer:
        writer.add("menus.xtbl", f"<root><Table>{rows}</Table></root>".encode())


def count_table_reads(monkeypatch: pytest.MonkeyPatch, log: Path) -> None:
    """Each read of a table source appends a line to `log`, from the server or any worker it
    forks (a counter in memory would stay in the worker)."""
    documents = names_module.table_documents

    def counted(source: str) -> object:
        with open(log, "a") as handle:
            handle.write(f"{os.getpid()} {source}\n")
        return documents(source)

    monkeypatch.setattr(names_module, "table_documents", counted)


def reads(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


@pytest.mark.skipif(not isolate.available(), reason="previews run in forked workers only where fork exists")
def test_the_second_strings_page_reads_no_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "root"
    (root / "language").mkdir(parents=True)
    (root / "language" / "locatexts_xx_yy.rfglocatext").write_bytes(locatext(NAMES))
    tables(root / "table.vpp_pc", NAMES[:2])
    log = tmp_path / "reads.log"
    count_table_reads(monkeypatch, log)
    client = TestClient(create_app(str(root)), base_url="http://127.0.0.1")
    first = client.get(PAGE)
    assert first.status_code == 200 and "<code>UI_MENU_QUIT</code>" in first.text
    assert f"#{identifier_hash(NAMES[2]):08x}" in first.text  # no table names it
    assert len(reads(log)) == 1 and int(reads(log)[0].split()[0]) != os.getpid()  # read in the worker
    second = client.get(PAGE, params={"q": "quit"})
    assert second.status_code == 200 and "1 matching" in second.text and "<code>UI_MENU_QUIT</code>" in second.text
    assert len(reads(log)) == 1
    # New tables (another size, another time): read again, once.
    tables(root / "table.vpp_pc", NAMES)
    third = client.get(PAGE)
    assert "<code>UI_MENU_OPTIONS</code>" in third.text and len(reads(log)) == 2
    client.get(PAGE)
    assert len(reads(log)) == 2


def test_a_page_with_no_tables_beside_it_reads_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "locatexts_xx_yy.rfglocatext").write_bytes(locatext(NAMES))
    log = tmp_path / "reads.log"
    count_table_reads(monkeypatch, log)
    client = TestClient(create_app(str(tmp_path)), base_url="http://127.0.0.1")
    page = client.get("/strings/locatexts_xx_yy.rfglocatext")
    assert page.status_code == 200 and f"#{identifier_hash(NAMES[0]):08x}" in page.text
    assert reads(log) == []


def test_the_cache_keeps_at_most_its_memory(tmp_path: Path) -> None:
    small = {1: "A" * 10}
    cache = strings.NameCache(memory=3 * strings.names_size(small))
    keys = [((str(tmp_path / f"t{index}.vpp_pc"), index, index),) for index in range(4)]
    for key in keys:
        cache.keep(key, dict(small))
    kept = list(cache._sets)
    assert kept == keys[1:]  # the least recently kept went
    cache.keep(keys[0], {number: "B" * 100 for number in range(10)})  # larger than it all
    assert list(cache._sets) == keys[1:]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=400), min_size=1, max_size=12))
def test_the_cache_never_holds_more_than_its_memory(sizes: list[int]) -> None:
    cache = strings.NameCache(memory=1000)
    for index, size in enumerate(sizes):
        cache.keep(((f"t{index}", index, index),), {index: "x" * size})
        assert sum(size for _, size in cache._sets.values()) <= 1000
    last = ((f"t{len(sizes) - 1}", len(sizes) - 1, len(sizes) - 1),)
    assert (last in cache._sets) == (strings.NAME_OVERHEAD + sizes[-1] <= 1000)


@pytest.mark.skipif(not isolate.available(), reason="previews run in forked workers only where fork exists")
def test_the_games_tables_are_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table, strings_file = sample("vpp/table.vpp_pc"), sample("rfg/locatexts_ar_eg.rfglocatext")
    root = tmp_path / "root"
    root.mkdir()
    # Copied into the test's temporary folder: the server refuses links that leave its folder.
    (root / "table.vpp_pc").write_bytes(table.read_bytes())
    (root / strings_file.name).write_bytes(strings_file.read_bytes())
    log = tmp_path / "reads.log"
    count_table_reads(monkeypatch, log)
    client = TestClient(create_app(str(root)), base_url="http://127.0.0.1")
    first = client.get(f"/strings/{strings_file.name}").text
    second = client.get(f"/strings/{strings_file.name}").text
    assert first == second and len(reads(log)) == 1
    assert first.count("<code>") > 100, "the game's tables name most of its strings"


def test_the_strings_verb_keeps_no_names_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The server keeps the tables' names (NameCache) and hands them over as `identifiers`; the
    # verb's `names` reads the tables for its call, with no per-process cache beside the server's.
    from gamepak.content import previews as content_previews

    tables(tmp_path / "table.vpp_pc", NAMES[:2])
    log = tmp_path / "reads.log"
    count_table_reads(monkeypatch, log)
    data = locatext(NAMES)
    for _ in range(2):
        found = content_previews.locatext_strings(data, "x.rfglocatext", names=[str(tmp_path / "table.vpp_pc")])
        assert found is not None
        _, rows = found
        assert [key for _, key, _ in rows][:2] == NAMES[:2] and rows[2][1].startswith("#")
    assert len(reads(log)) == 2
    found = content_previews.locatext_strings(data, "x.rfglocatext", identifiers={})
    assert found is not None
    _, rows = found
    assert len(reads(log)) == 2 and all(key.startswith("#") for _, key, _ in rows)
