"""The viewer's table page (/table/...): columns from the schema, rows paged and filtered, a
Reference cell a link to the row it names."""

from __future__ import annotations

import html
from pathlib import Path

from starlette.testclient import TestClient
from test_rfg_xtbl import ITEMS, weapons

from gamepak.web.app import create_app

from conftest import write_pack


def client_for(root: Path) -> TestClient:
    return TestClient(create_app(root), base_url="http://127.0.0.1:8000")


def test_table_page_columns_rows_filter_and_references(tmp_path: Path) -> None:
    write_pack(tmp_path / "table.vpp_pc", {"weapons.xtbl": weapons(), "items.xtbl": ITEMS, "bad.xtbl": b"<root>"})
    client = client_for(tmp_path)
    file_page = client.get("/browse/table.vpp_pc/weapons.xtbl")
    assert file_page.status_code == 200 and 'href="/table/table.vpp_pc/weapons.xtbl">Table</a>' in file_page.text
    page = client.get("/table/table.vpp_pc/weapons.xtbl")
    text = html.unescape(page.text)
    assert page.status_code == 200
    assert '<th title="Unique name.">Name<br><small>String</small></th>' in text
    assert "Item<br><small>Reference → items.xtbl</small>" in text
    assert '<a href="/table/table.vpp_pc/items.xtbl?key=pistol_item">pistol_item</a>' in text
    assert 'id="row-pistol"' in text and 'id="row-grenade"' in text and "2 row(s) match" in text
    filtered = html.unescape(client.get("/table/table.vpp_pc/weapons.xtbl", params={"q": "THROWN"}).text)
    assert 'id="row-grenade"' in filtered and 'id="row-pistol"' not in filtered
    named = client.get("/table/table.vpp_pc/items.xtbl", params={"key": "pistol_item"}).text
    assert 'id="row-pistol_item"' in named and "1 row(s) match" in named
    broken = client.get("/table/table.vpp_pc/bad.xtbl")
    assert broken.status_code >= 400 and "not well-formed" in html.unescape(broken.text)


def test_table_page_is_paged(tmp_path: Path) -> None:
    rows = "".join(f"<Item><Name>item{number}</Name></Item>" for number in range(150))
    (tmp_path / "items.xtbl").write_text(f"<root><Table>{rows}</Table></root>")
    client = client_for(tmp_path)
    first = client.get("/table/items.xtbl").text
    assert 'id="row-item99"' in first and 'id="row-item100"' not in first
    assert 'href="/table/items.xtbl?offset=100" rel="next"' in first
    second = client.get("/table/items.xtbl", params={"offset": "100"}).text
    assert 'id="row-item100"' in second and 'id="row-item149"' in second and 'rel="prev"' in second
