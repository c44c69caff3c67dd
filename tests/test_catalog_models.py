"""The catalog's `models` table (issues 34 and 35): every JOE, MDL and BSP model of a collection,
loose or in a pack, with its counts, and for VDrift models the track or car it belongs to and
its texture. Collections are built here (JOE from the writer, Quake files from the spec's
layouts)."""

from __future__ import annotations

from pathlib import Path

import pytest
from quake_bytes import mdl_bytes
from test_scenes import CAR, list_line, make_car, make_track, png, quad

from gamepak import create, models

from conftest import SAMPLES

pytest.importorskip("pyarrow")
pytest.importorskip("dask")

from gamepak.catalog import build_catalog
from gamepak.catalog.schema import read_table


def rows(out: Path, table: str) -> list[dict]:
    return read_table(str(out), table).to_pylist()


@pytest.fixture(scope="module")
def cataloged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("models-collection")
    make_track(
        root / "tracks" / "t",
        [list_line("road.joe", "asphalt.png"), list_line("wall.joe", "wall.png"), list_line("road.joe", "other.png")],
        {"road.joe": quad(0, 0), "wall.joe": quad(1, 1), "spare.joe": quad(2, 2)},
        {"asphalt.png": png((1, 2, 3))},
    )
    make_car(root / "cars" / "TC", CAR)
    loose = root / "loose"
    loose.mkdir()
    (loose / "rock.mdl").write_bytes(
        mdl_bytes(
            st=[(0, 0, 0), (4, 0, 0), (0, 4, 0)],
            triangles=[(1, 0, 1, 2)],
            poses=[[(0, 0, 0), (10, 0, 0), (0, 10, 0)], [(0, 0, 1), (10, 0, 1), (0, 10, 1)]],
        )
    )
    with create(loose / "mod.pak") as pack:
        pack.add("progs/rock.mdl", (loose / "rock.mdl").read_bytes())
        pack.add("models/box.joe", models.dumps(quad(0, 0), "joe"))
        pack.add("models/broken.joe", b"IDP2\x03\x00\x00\x00\x05\x00\x00\x00\x01\x00\x00\x00")
    out = root.parent / (root.name + "-catalog")
    build_catalog([str(root)], str(out), scheduler="synchronous")
    return out


def test_every_model_is_a_row_with_its_counts(cataloged: Path) -> None:
    found = {(Path(row["archive_path"]).name, row["model"]): row for row in rows(cataloged, "models")}
    box = found[("mod.pak", "models/box.joe")]
    assert (box["format"], box["vertices"], box["triangles"], box["frames"]) == ("joe", 4, 2, 1)
    rock = found[("mod.pak", "progs/rock.mdl")]
    assert (rock["format"], rock["triangles"], rock["frames"]) == ("mdl", 1, 2)
    loose = found[("rock.mdl", "loose/rock.mdl")]
    assert loose["format"] == "mdl" and loose["nested_path"] == "."
    # A model that does not parse is an errors row, not a models row.
    assert ("mod.pak", "models/broken.joe") not in found
    errors = [row for row in rows(cataloged, "errors") if row["stage"] == "models"]
    assert [row["member"] for row in errors] == ["models/broken.joe"]


def test_vdrift_models_carry_their_scene_and_texture(cataloged: Path) -> None:
    found = {row["model"]: row for row in rows(cataloged, "models")}
    road = found["road.joe"]
    assert (road["scene"], road["scene_kind"], road["texture"]) == ("t", "track", "asphalt.png")
    assert found["wall.joe"]["texture"] == "wall.png"
    # In the pack but named by no object: no scene.
    assert found["spare.joe"]["scene"] is None
    body = found["cars/TC/body.joe"]
    assert (body["scene"], body["scene_kind"], body["texture"]) == ("TC", "car", "body00.png")
    assert found["cars/TC/wheel.joe"]["texture"] == "wheel.png"


def test_the_real_garage_and_mcs(tmp_path: Path) -> None:
    vdrift = SAMPLES / "vdrift"
    if not vdrift.is_dir():
        pytest.skip("../shared/samples is absent")
    build_catalog([str(vdrift)], str(tmp_path / "out"), scheduler="synchronous")
    found = rows(tmp_path / "out", "models")
    garage = [row for row in found if row["scene"] == "garage"]
    assert len(garage) == 35 and {row["texture"] for row in garage} >= {"sky.png", "asphalt.png"}
    assert sum(1 for row in found if row["scene_kind"] == "car") == 3
