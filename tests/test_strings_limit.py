"""One size limit for a strings file, whoever reads it whole for its strings
(`core.content_limits`'s `strings_bytes`): the viewer's preview of a file, its strings page and
the catalog's `strings` rows all keep it, and `allow_large` (`--allow-large`) lifts it to the
cap of any whole read, as it lifts the other content budgets. The viewer's pages parse in a
memory-capped worker and send the server at most a page of rows, so a file at the limit costs
the server no more than a small one."""

from __future__ import annotations

from pathlib import Path

import pytest

from gamepak.core.content_limits import ContentLimits, current, limits
from gamepak.core.files import MAX_WHOLE_FILE_BYTES
from gamepak.errors import GamepakError
from gamepak.formats.rfg.locatext import LocaEntry, build
from gamepak.web import previews, strings
from gamepak.web.site import Site

from conftest import write_pack

NAME = "locatexts_xx_yy.rfglocatext"


def locatext(count: int = 3) -> bytes:
    return build([LocaEntry(number + 1, f"string {number}".encode("utf-16-le") + b"\0\0") for number in range(count)])


def test_the_strings_limit_is_64_mib_and_allow_large_lifts_it() -> None:
    assert ContentLimits().strings_bytes == current().strings_bytes == 64 << 20
    assert current().strings_byte_budget() == 64 << 20
    with limits(allow_large=True):
        assert current().strings_byte_budget() == MAX_WHOLE_FILE_BYTES
    with limits(strings_bytes=10):
        assert current().strings_byte_budget() == 10


@pytest.fixture
def site(tmp_path: Path) -> Site:
    (tmp_path / NAME).write_bytes(locatext())
    return Site(str(tmp_path))


def test_the_file_preview_keeps_the_limit(site: Site) -> None:
    place = site.resolve([NAME], as_file=True)
    assert previews.preview(place).kind == "strings"
    smaller = place.size - 1
    with limits(strings_bytes=smaller):
        assert previews.preview(place).kind != "strings"  # past the limit: shown as text or hex
        with limits(allow_large=True):
            assert previews.preview(place).kind == "strings"


def test_the_strings_page_keeps_the_limit(site: Site) -> None:
    place = site.resolve([NAME], as_file=True)
    assert len(strings.read_strings(place)[1]) == 3
    with limits(strings_bytes=place.size - 1):
        with pytest.raises(GamepakError, match=f"{NAME}: {place.size} bytes, more than"):
            strings.read_strings(place)
        with limits(allow_large=True):
            assert len(strings.read_strings(place)[1]) == 3


def test_the_catalog_keeps_the_limit(tmp_path: Path) -> None:
    import duckdb

    from gamepak.catalog import build_catalog

    root = tmp_path / "in"
    root.mkdir()
    data = locatext()
    write_pack(root / "p.vpp_pc", {NAME: data})
    (root / NAME).write_bytes(data)

    def catalog(out: str) -> tuple[int, list[tuple[str, str]]]:
        build_catalog([str(root)], str(tmp_path / out), scheduler="synchronous")
        found = list((tmp_path / out / "strings").glob("*.parquet"))
        rows = f"SELECT count(*) FROM '{tmp_path}/{out}/strings/*.parquet'"
        count = duckdb.execute(rows).fetchall()[0][0] if found else 0
        errors = duckdb.execute(f"SELECT path, message FROM '{tmp_path}/{out}/errors/*.parquet'").fetchall()
        return count, errors

    assert catalog("all")[0] == 6
    with limits(strings_bytes=len(data) - 1):
        count, errors = catalog("limited")
        with limits(allow_large=True):
            assert catalog("allowed")[0] == 6
    assert count == 0
    assert len(errors) == 2 and all(f"at most {len(data) - 1} are read" in message for _, message in errors), errors


def test_a_preview_lists_the_first_strings_and_the_server_gets_one_page(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What crosses from the worker to the server is bounded by rows, not by the file's size:
    # a file at the limit (64 MiB, 200,000 strings) rendered whole took the server 170 MiB.
    monkeypatch.setattr(previews, "PREVIEW_STRINGS", 2)
    monkeypatch.setattr(strings, "PAGE_ROWS", 2)
    place = site.resolve([NAME], as_file=True)
    shown = previews.preview(place)
    assert shown.strings == ["string 0", "string 1"]
    assert shown.notes == ["3 strings: the first 2 are shown (all on the strings page)"]
    names = strings.TableNames([], (), None)
    page = strings.page_strings(place, names, "", 2)
    assert (page.rows, page.total, page.matched) == ([(2, "#00000003", "string 2")], 3, 3)
    page = strings.page_strings(place, names, "string 1", 0)
    assert (len(page.rows), page.total, page.matched) == (1, 3, 1)


def test_the_text_commands_keep_the_limit(tmp_path: Path) -> None:
    """`text export` and `text import` read a strings file (loose or a pack's member, RFG or
    J2ME) of at most `strings_bytes`, refused before it is read; `--allow-large` lifts it."""
    from conftest import in_process_cli

    loose = tmp_path / NAME
    loose.write_bytes(locatext())
    pack = write_pack(tmp_path / "misc.vpp_pc", {NAME: locatext()})
    j2me = tmp_path / "strings.bin"
    j2me.write_bytes(b"Hello\0World\0")
    size = loose.stat().st_size
    for path, member, label in (
        (loose, [], str(loose)),
        (pack, [NAME], f"{pack}/{NAME}"),
        (j2me, [], str(j2me)),
    ):
        export = ["text", "export", str(path), *member, "-o", str(tmp_path / "out.json")]
        with limits(strings_bytes=path.stat().st_size if path is j2me else size):
            assert in_process_cli(*export, "--overwrite")[0] == 0
        with limits(strings_bytes=(path.stat().st_size if path is j2me else size) - 1):
            code, _, err = in_process_cli(*export, "--overwrite")
            assert code == 1 and f"{label}: " in err and "a strings file is read with; --allow-large lifts this" in err
            assert in_process_cli(*export, "--overwrite", "--allow-large")[0] == 0
            imported = ["text", "import", str(path), *member, str(tmp_path / "out.json"), "-o", str(tmp_path / "new")]
            code, _, err = in_process_cli(*imported)
            assert code == 1 and "--allow-large lifts this" in err and not (tmp_path / "new").exists()
            assert in_process_cli(*imported, "--allow-large")[0] == 0
            (tmp_path / "new").unlink()
