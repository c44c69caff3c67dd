"""Content kinds in a real browser (Chromium, as tests/test_web_browser.py drives it): a loose
Quake map shows the textured 3D view and texture gallery the same map inside a PAK shows, and
the strings page of an RFG localization file names its strings from the tables beside it and
filters by identifier.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from quake_bytes import bsp_bytes
from test_web_browser import CHROMIUM, Watched, browser, serving, wait_until, watched

from gamepak import create

__all__ = ["browser", "watched"]  # the fixtures, shared with test_web_browser

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"needs Chromium at {CHROMIUM}")

NAMES = ["UI_MENU_START", "UI_MENU_QUIT", "MIS_TALK_01"]
TEXTS = ["Start", "Quit", "Talk to the miner"]


def _locatext() -> bytes:
    from gamepak.formats.rfg.locatext import SIGNATURE, identifier_hash

    position, table, blob = 12 + 12 * len(NAMES), b"", b""
    for name, text in zip(NAMES, TEXTS):
        raw = text.encode("utf-16-le") + b"\0\0"
        table += struct.pack("<III", identifier_hash(name), position, len(raw))
        blob += raw
        position += len(raw)
    return struct.pack("<III", SIGNATURE, 3, len(NAMES)) + table + blob


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("content-root")
    (root / "maps").mkdir()
    (root / "maps" / "e1m1.bsp").write_bytes(bsp_bytes())
    with create(root / "pak0.pak") as pak:
        pak.add("maps/e1m1.bsp", bsp_bytes())
    (root / "rfg").mkdir()
    (root / "rfg" / "locatexts_us_en.rfglocatext").write_bytes(_locatext())
    # The game's tables beside it name two of the three strings, as `text export` finds them.
    with create(root / "rfg" / "misc.vpp_pc") as vpp:
        vpp.add(
            "menus.xtbl",
            b"<root><Table><Menu><Name>UI_MENU_START</Name><Quit>UI_MENU_QUIT</Quit></Menu></Table></root>",
        )
    yield from serving(root)


def _canvas(page: object, url: str) -> np.ndarray:
    page.goto(url)  # type: ignore[attr-defined]
    page.wait_for_selector("[data-state=shown]", timeout=30_000)  # type: ignore[attr-defined]
    page.wait_for_timeout(300)  # type: ignore[attr-defined]
    shot = page.locator(".model canvas").screenshot()  # type: ignore[attr-defined]
    return np.asarray(Image.open(io.BytesIO(shot)).convert("RGB")).astype(int)


def test_a_loose_map_shows_as_the_packed_one(server: str, watched: Watched) -> None:
    page = watched.page
    loose = _canvas(page, f"{server}/browse/maps/e1m1.bsp")
    background = loose[2, 2]
    covered = np.abs(loose - background).sum(axis=2) > 24
    assert covered.mean() > 0.05, "the map covers almost nothing"
    # The texture gallery under the 3D view: the map's one texture, decoded by the browser.
    assert page.locator("main figure img").count() == 1
    wait_until(page, "[...document.querySelectorAll('main figure img')].every(i => i.complete && i.naturalWidth == 16)")
    assert "0 members" not in page.inner_text("main")
    packed = _canvas(page, f"{server}/browse/pak0.pak/maps/e1m1.bsp")
    assert page.locator("main figure img").count() == 1
    assert np.abs(packed - loose).mean() < 2, "the loose map is drawn unlike the same map in a pack"
    assert watched.errors == []


def test_the_strings_page_names_strings_from_the_tables_beside_it(server: str, watched: Watched) -> None:
    page = watched.page
    page.goto(f"{server}/browse/rfg/locatexts_us_en.rfglocatext")
    page.click("a:text-is('Strings')")
    page.wait_for_url("**/strings/rfg/locatexts_us_en.rfglocatext")
    rows = page.locator("table.strings tbody tr")
    assert rows.count() == 3
    keys = [rows.nth(index).locator("code").inner_text() for index in range(3)]
    assert keys[:2] == NAMES[:2] and keys[2].startswith("#")
    page.fill("form.filter input[name=q]", "menu_quit")
    with page.expect_navigation():
        page.click("form.filter button")
    assert "q=menu_quit" in page.url, page.url
    assert rows.count() == 1 and rows.first.inner_text().split("\t")[1:] == ["UI_MENU_QUIT", "Quit"]
    assert watched.errors == []
