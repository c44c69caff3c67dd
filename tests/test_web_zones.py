"""The viewer's zone page: an RFG layer inside nested packs drawn as a map from above, its legend,
its objects and their properties; the filter and the zoom checked in Chromium."""

from __future__ import annotations

import html
import os
import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from test_rfg_zones import a_layer, nested_pack

from gamepak.web.app import create_app

PAGE = "/browse/activities.vpp_pc/dlc01_dm_01.str2_pc/dlc01_09_08_130.layer_pc"


def test_the_zone_page_draws_every_object_with_its_properties(tmp_path: Path) -> None:
    nested_pack(tmp_path)
    client = TestClient(create_app(tmp_path), base_url="http://127.0.0.1:8000")
    page = html.unescape(client.get(PAGE).text)
    assert len(re.findall(r'<circle class="zone-object"', page)) == 2
    assert 'cx="1.0" cy="-3.0"' in page and 'cx="4.0" cy="-6.0"' in page
    assert "object_dummy (2)" in page  # the legend
    assert "<td>0x78800001</td><td>crate</td>" in page
    assert "<td>dummy_type</td><td>string</td><td>crate</td>" in page
    # A damaged zone is the hex view with the reason, not an error page.
    broken = bytearray(a_layer())
    broken[8] = 99
    (tmp_path / "bad.layer_pc").write_bytes(bytes(broken))
    page = html.unescape(client.get("/browse/bad.layer_pc").text)
    assert "no preview:" in page and "object_count 99 cannot fit" in page


CHROMIUM = os.environ.get("GAMEPAK_CHROMIUM", "/usr/bin/chromium")


@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"needs Chromium at {CHROMIUM} (Debian's chromium package)")
def test_the_zone_map_filters_and_zooms_in_chromium(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright
    from test_web_browser import serving, wait_until

    nested_pack(tmp_path)
    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
        )
        try:
            for base in serving(tmp_path):
                page = browser.new_page(viewport={"width": 1100, "height": 820})
                page.on("pageerror", lambda error: errors.append(str(error)))
                page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
                page.goto(base + PAGE)
                marks = page.locator("circle.zone-object")
                assert marks.count() == 2
                assert page.locator("tr.zone-row:visible").count() == 2
                page.fill("#zone-filter", "crate")
                assert page.locator("tr.zone-row:visible").count() == 1
                assert [marks.nth(i).get_attribute("visibility") for i in range(2)] == ["visible", "hidden"]
                before = page.get_attribute("#zone-map", "viewBox")
                box = page.locator("#zone-map").bounding_box()
                assert box is not None
                page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
                page.mouse.wheel(0, -300)
                wait_until(page, f"document.getElementById('zone-map').getAttribute('viewBox') !== {before!r}")
                after = [float(value) for value in (page.get_attribute("#zone-map", "viewBox") or "").split()]
                assert after[2] < [float(value) for value in (before or "").split()][2]  # zoomed in
                page.close()
        finally:
            browser.close()
    assert errors == []


def test_the_zone_preview_keeps_the_one_zone_limit(tmp_path: Path) -> None:
    """The viewer reads a zone up to `content_limits`' `zone_bytes`, as every zone reader does."""
    from gamepak.core.content_limits import limits
    from gamepak.web.previews import preview
    from gamepak.web.site import Site

    nested_pack(tmp_path)
    site = Site(str(tmp_path))
    place = site.resolve(PAGE.removeprefix("/browse/").split("/"), as_file=True)
    assert preview(place).kind == "zone"
    with limits(zone_bytes=place.size - 1):
        shown = preview(place)
    assert shown.kind == "hex" and any(f"{place.size} bytes, more than the" in note for note in shown.notes)
