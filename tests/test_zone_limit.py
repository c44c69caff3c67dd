"""One size limit for an RFG zone, whoever reads it (`core.content_limits`'s `zone_bytes`):
`gamepak zone` (`ops.zones`), the catalog's `zone_objects` rows (members and loose files) and a
patch's zone changes (tests/test_patch_zones.py) all refuse a zone over it."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_rfg_zones import a_layer

from gamepak.core.content_limits import ContentLimits, current, limits
from gamepak.errors import GamepakError
from gamepak.ops import zones

from conftest import in_process_cli, write_pack


def test_the_zone_limit_is_64_mib_by_default() -> None:
    assert ContentLimits().zone_bytes == current().zone_bytes == 64 << 20


def test_gamepak_zone_keeps_the_limit(tmp_path: Path) -> None:
    loose = tmp_path / "x.layer_pc"
    loose.write_bytes(a_layer())
    pack = write_pack(tmp_path / "p.str2_pc", {"x.layer_pc": a_layer()})
    assert len(zones.list_objects(loose)) == 2 and len(zones.list_objects(pack)) == 2
    smaller = len(a_layer()) - 1
    with limits(zone_bytes=smaller):
        with pytest.raises(GamepakError, match=str(loose)):
            zones.list_objects(loose)
        with pytest.raises(GamepakError, match="x.layer_pc: larger than any zone file"):
            zones.list_objects(pack)
        code, _, err = in_process_cli("zone", "ls", str(pack))
        assert code == 1 and "larger than any zone file" in err


def test_the_catalog_keeps_the_limit(tmp_path: Path) -> None:
    import duckdb

    from gamepak.catalog import build_catalog

    root = tmp_path / "in"
    root.mkdir()
    write_pack(root / "p.str2_pc", {"packed.layer_pc": a_layer()})
    (root / "loose.layer_pc").write_bytes(a_layer())
    with limits(zone_bytes=len(a_layer()) - 1):
        build_catalog([str(root)], str(tmp_path / "out"), scheduler="synchronous")
    assert (
        not list((tmp_path / "out" / "zone_objects").glob("*.parquet"))
        or not duckdb.execute(f"SELECT * FROM '{tmp_path}/out/zone_objects/*.parquet'").fetchall()
    )
    errors = duckdb.execute(f"SELECT member, message FROM '{tmp_path}/out/errors/*.parquet' ORDER BY member").fetchall()
    limit = str(len(a_layer()) - 1)
    assert len(errors) == 2 and all(limit in message for _, message in errors), errors
