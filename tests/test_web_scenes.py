"""VDrift tracks and cars in `gamepak serve`: a track or car folder's page shows the whole scene
(issue 35), read only inside the served folder; in Chromium, the scene draws, its skybox and
transparent objects toggle, objects are named under the pointer, and a 1,659-object track shows
within 3 seconds."""

from __future__ import annotations

import io
import json
import os
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image
from starlette.testclient import TestClient
from test_scenes import CAR, list_line, make_car, make_track, png, quad
from test_web_browser import CHROMIUM, Watched, browser, serving, wait_until, watched  # noqa: F401  (fixtures)

from gamepak.web.app import create_app


def small_track(folder: Path) -> Path:
    return make_track(
        folder,
        [
            list_line("road.joe", "asphalt.png", mipmap=1),
            list_line("glass.joe", "glass.png", transparent_blend=1),
            list_line("sky.joe", "sky.png", skybox=1),
        ],
        {"road.joe": quad(0, 0, 0, 10), "glass.joe": quad(2, 2, 1, 4), "sky.joe": quad(-100, -100, 60, 200)},
        {
            "asphalt.png": png((200, 60, 40)),
            "glass.png": png((40, 80, 220, 120), "RGBA"),
            "sky.png": png((30, 200, 60)),
        },
    )


def glb_nodes(data: bytes) -> list[str]:
    length, _ = struct.unpack_from("<I4s", data, 12)
    return [node["name"] for node in json.loads(data[20 : 20 + length])["nodes"]]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, TestClient]:
    root = tmp_path_factory.mktemp("scenes-root")
    small_track(root / "tracks" / "small")
    make_car(root / "cars" / "TC", CAR)
    outside = tmp_path_factory.mktemp("outside")
    (outside / "secret.png").write_bytes(png((1, 2, 3)))
    leaky = make_track(
        root / "tracks" / "leaky", [list_line("a.joe", "leak.png")], {"a.joe": quad(0, 0)}, {"b.png": png((9, 9, 9))}
    )
    os.symlink(outside / "secret.png", leaky / "objects" / "leak.png")
    return root, TestClient(create_app(root), base_url="http://127.0.0.1:8000")


def test_a_track_folder_shows_its_scene_above_its_files(served) -> None:
    _, client = served
    page = client.get("/browse/tracks/small/")
    assert page.status_code == 200
    assert "a VDrift track" in page.text and "3 objects" in page.text and "objects/" in page.text
    assert 'data-model="/scene/tracks/small"' in page.text and 'data-toggle="skybox"' in page.text
    scene = client.get("/scene/tracks/small")
    assert scene.status_code == 200 and scene.headers["content-type"] == "model/gltf-binary"
    assert {"road.joe", "glass.joe", "skybox", "sky.joe"} <= set(glb_nodes(scene.content))
    car = client.get("/scene/cars/TC")
    assert car.status_code == 200 and "wheel fl" in glb_nodes(car.content)
    assert "a VDrift car" in client.get("/browse/cars/TC/").text
    # A folder that is neither: no scene section, and /scene/ of it is a 404 with the headers.
    assert "data-scene" not in client.get("/browse/tracks/").text
    missing = client.get("/scene/tracks")
    assert missing.status_code == 404 and "content-security-policy" in missing.headers


def test_a_scene_reads_nothing_outside_the_served_folder(served) -> None:
    _, client = served
    page = client.get("/browse/tracks/leaky/")
    assert "outside the served folder" in page.text
    data = client.get("/scene/tracks/leaky").content
    assert b"IDAT" not in data  # no image embedded: the only texture leads outside
    # The texture name's own traversal is refused too, whatever lies there.
    warnings: list[str] = []
    from gamepak.models.scene.common import FileFinder

    finder = FileFinder([str(served[0] / "tracks" / "small" / "objects")], warnings)
    assert finder.find("../../small/objects/sky.png", "texture") is None and "refused" in warnings[0]


# -- in Chromium -------------------------------------------------------------------------------------
browser_only = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"needs Chromium at {CHROMIUM}")
BACKGROUND = np.array([0x20, 0x24, 0x2C])


@pytest.fixture(scope="module")
def scene_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("scene-browser")
    small_track(root / "small")
    big_track(root / "big")
    yield from serving(root)


def big_track(folder: Path, objects: int = 1659) -> Path:
    """A track the size of pau: 1,659 objects of 12 faces over 30 textures."""
    rng = np.random.default_rng(5)
    meshes, lines = {}, []
    for number in range(objects):
        x, y = rng.uniform(-300, 300, 2)
        meshes[f"o{number}.joe"] = quad(x, y, rng.uniform(0, 5), 3)
        lines.append(list_line(f"o{number}.joe", f"t{number % 30}.png", mipmap=1))
    textures = {f"t{number}.png": png(tuple(int(v) for v in rng.integers(0, 255, 3))) for number in range(30)}
    return make_track(folder, lines, meshes, textures)


def shot(page: Any) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(page.locator(".scene canvas").screenshot())).convert("RGB")).astype(int)


@browser_only
def test_a_track_draws_textured_with_toggles_and_names(scene_server: str, watched: Watched) -> None:  # noqa: F811
    page = watched.page
    page.goto(f"{scene_server}/browse/small/")
    page.wait_for_selector(".scene [data-state=shown]", timeout=30_000)
    page.wait_for_timeout(300)
    first = shot(page)
    covered = np.abs(first - BACKGROUND).sum(axis=2) > 24
    assert covered.mean() > 0.2, f"the scene covers {covered.mean():.1%} of the canvas"
    # The asphalt's red shows: textures are drawn, not a grey stand-in.
    reddish = (first[:, :, 0] > first[:, :, 1] + 40) & (first[:, :, 0] > first[:, :, 2] + 40)
    assert reddish.mean() > 0.05
    page.uncheck("input[data-toggle=transparent]")
    page.wait_for_timeout(300)
    assert np.abs(shot(page) - first).sum() > 0, "hiding the transparent objects changed nothing"
    # Pointing at the road names it.
    ys, xs = np.nonzero(reddish)
    box = page.locator(".scene canvas").bounding_box()
    scale = box["width"] / first.shape[1]
    page.mouse.move(box["x"] + xs[len(xs) // 2] * scale, box["y"] + ys[len(ys) // 2] * scale)
    wait_until(page, "document.querySelector('.scene-hover').textContent.length > 0", timeout=5000)
    assert page.inner_text(".scene-hover") == "road.joe"
    assert watched.errors == []


@browser_only
def test_a_1659_object_track_shows_within_3_seconds(scene_server: str, watched: Watched) -> None:  # noqa: F811
    page = watched.page
    page.goto(f"{scene_server}/browse/small/")  # the browser warmed up (and the viewer's script cached)
    page.wait_for_selector(".scene [data-state=shown]", timeout=30_000)
    start = time.perf_counter()
    page.goto(f"{scene_server}/browse/big/")
    page.wait_for_selector(".scene [data-state=shown]", timeout=60_000)
    elapsed = time.perf_counter() - start
    assert "1659 objects" in page.inner_text(".scene figcaption")
    # 3 s on an idle machine; the test allows for a loaded one (the figure is in bench_scenes.py).
    assert elapsed < 3 * float(os.environ.get("GAMEPAK_SLOWDOWN", "3")), f"{elapsed:.1f} s"
    assert watched.errors == []
