"""`gamepak serve` in a real browser: Debian's Chromium driven by Playwright, against the real
command (`python -m gamepak serve`), WebGL through SwiftShader.

Skips, saying why, only where Chromium is not installed (`.ci/run` installs it as root).
GAMEPAK_UPDATE_SCREENSHOT=1 also saves the README's screenshots (docs/serve.png, docs/serve-model.png).
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from web_fixtures import HOSTILE_NAME, build_root

CHROMIUM = os.environ.get("GAMEPAK_CHROMIUM", "/usr/bin/chromium")
SCREENSHOT = Path(__file__).resolve().parent.parent / "docs" / "serve.png"

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"needs Chromium at {CHROMIUM} (Debian's chromium package; .ci/run installs it when run as root)",
)


def serving(root: Path) -> Iterator[str]:
    """`gamepak serve ROOT` in a subprocess while the caller runs: its base URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "gamepak", "serve", str(root), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    match = re.search(r"(http://127\.0\.0\.1:\d+)/browse/", line)
    assert match, f"no URL in {line!r}: {process.stderr.read() if process.stderr else ''}"
    yield match.group(1)
    process.terminate()
    assert process.wait(timeout=15) == 0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, np.ndarray], Path]]:
    root = tmp_path_factory.mktemp("browser-root")
    pixels = build_root(root)
    shutil.copytree(root, root / "copy", ignore=shutil.ignore_patterns("copy"))
    for base in serving(root):
        yield base, pixels, root


@pytest.fixture(scope="module")
def samples_server() -> Iterator[str]:
    from conftest import sample

    yield from serving(sample("vdrift"))


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--enable-unsafe-swiftshader",
                "--use-angle=swiftshader",
                "--disable-background-networking",
                "--disable-component-update",
                "--no-first-run",
            ],
        )
        yield launched
        launched.close()


class Watched:
    """A page whose JavaScript errors, failed requests and dialogs are recorded."""

    def __init__(self, browser: Any) -> None:
        self.page = browser.new_page(viewport={"width": 1100, "height": 820})
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("pageerror", lambda error: self.errors.append(f"page error: {error}"))
        self.page.on("console", lambda message: self.errors.append(message.text) if message.type == "error" else None)
        self.page.on("dialog", self._dialog)

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()


@pytest.fixture
def watched(browser: Any) -> Iterator[Watched]:
    page = Watched(browser)
    yield page
    page.page.close()


def test_listings_and_navigation_into_nested_packs(server, watched: Watched) -> None:
    base, _, _ = server
    page = watched.page
    page.goto(f"{base}/browse/")
    page.click("text=game.vpp_pc")
    assert page.url.endswith("/browse/game.vpp_pc")
    assert "vpp" in page.inner_text("table.fields")
    page.click("text=zone.str2_pc/")
    page.click("text=crate.cpeg_pc")
    assert page.url.endswith("/browse/game.vpp_pc/zone.str2_pc/crate.cpeg_pc")
    assert page.locator("figure img").count() == 2
    page.go_back()
    assert page.url.endswith("/browse/game.vpp_pc/zone.str2_pc/")
    assert "crate.gpeg_pc" in page.inner_text("table.listing")
    # A shared link opens the same page.
    page.goto(f"{base}/browse/game.vpp_pc/zone.str2_pc/")
    assert "crate.gpeg_pc" in page.inner_text("table.listing")
    page.click("th a:text-is('size')")
    page.wait_for_url("**sort=size**")
    assert page.locator("table.listing td a").first.inner_text() == "crate.cpeg_pc"
    assert watched.errors == []


def wait_until(page: Any, expression: str, **options: Any) -> None:
    """Wait until a JavaScript expression is true on the page.

    The expression goes to Playwright as an arrow function: our pages forbid `eval` (CSP
    script-src 'self'), and Playwright evaluates a bare expression string again on every poll,
    which the page refuses once the first synchronous check has passed; a function is evaluated
    once and then called. A slow machine polls, so the bare form failed only there."""
    page.wait_for_function(f"() => ({expression})", **options)


def _img_pixels(page: Any, selector: str) -> list[np.ndarray]:
    """Each matching <img>'s pixels as the browser decoded them (drawn on a canvas)."""
    wait_until(page, f"[...document.querySelectorAll({selector!r})].every(i => i.complete && i.naturalWidth > 0)")
    shots = page.evaluate(
        f"""[...document.querySelectorAll({selector!r})].map(image => {{
            const canvas = document.createElement('canvas');
            canvas.width = image.naturalWidth; canvas.height = image.naturalHeight;
            const context = canvas.getContext('2d');
            context.drawImage(image, 0, 0);
            return [image.naturalWidth, image.naturalHeight,
                    Array.from(context.getImageData(0, 0, canvas.width, canvas.height).data)];
        }})"""
    )
    return [np.array(data, dtype=np.uint8).reshape(height, width, 4) for width, height, data in shots]


def test_texture_images_are_the_decoders_pixels(server, watched: Watched) -> None:
    base, decoded, _ = server
    page = watched.page
    page.goto(f"{base}/browse/game.vpp_pc/zone.str2_pc/crate.cpeg_pc")
    shown = _img_pixels(page, "figure img")
    assert [image.shape for image in shown] == [pixels.shape for pixels in decoded.values()]
    for image, pixels in zip(shown, decoded.values()):
        assert np.array_equal(image, pixels)
    page.goto(f"{base}/browse/mod.pak/pics/b.tga")
    (tga,) = _img_pixels(page, ".preview img")
    from web_fixtures import picture

    assert np.array_equal(tga, picture())
    assert watched.errors == []


def test_the_model_viewer_draws_a_shaded_object(server, watched: Watched) -> None:
    base, _, _ = server
    page = watched.page
    page.goto(f"{base}/browse/mod.pak/model.joe")
    page.wait_for_selector("[data-state=shown]", timeout=30_000)
    page.wait_for_timeout(300)
    canvas = page.locator(".model canvas")
    image = np.asarray(Image.open(io.BytesIO(canvas.screenshot())).convert("RGB")).astype(int)
    background = image[2, 2]
    object_pixels = image[np.abs(image - background).sum(axis=2) > 30]
    assert len(object_pixels) > image.shape[0] * image.shape[1] // 20, "the object covers almost nothing"
    shades = {int(value) // 8 for value in object_pixels.mean(axis=1)}
    assert len(shades) >= 4, f"one flat colour, not shading: {sorted(shades)}"
    # Orbiting changes the picture.
    box = canvas.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] / 2 + 150, box["y"] + box["height"] / 2 + 40, steps=8)
    page.mouse.up()
    page.wait_for_timeout(400)
    turned = np.asarray(Image.open(io.BytesIO(canvas.screenshot())).convert("RGB")).astype(int)
    assert np.abs(turned - image).sum() > 0
    assert watched.errors == []


BACKGROUND = np.array([0x20, 0x24, 0x2C])


def first_frame_share(page: Any, url: str) -> float:
    """The share of the model canvas the model covers in its first frame (no orbiting); and
    checks that what covers it is lit (faces seen from either side are not left dark)."""
    page.goto(url)
    page.wait_for_selector("[data-state=shown]", timeout=30_000)
    page.wait_for_timeout(200)
    shot = np.asarray(Image.open(io.BytesIO(page.locator(".model canvas").screenshot())).convert("RGB")).astype(int)
    covered = np.abs(shot - BACKGROUND).sum(axis=2) > 24
    if covered.any():
        brightness = float(np.median(shot[covered].mean(axis=1)))
        assert brightness > 100, f"{url}: the model is drawn dark (median {brightness:.0f} of 255)"
    return float(covered.mean())


@pytest.mark.parametrize(
    ("model", "least"),
    # wheel: a disc seen face on; glass: a thin shell; road: a flat strip seen from above.
    [("wheel", 0.25), ("glass", 0.2), ("road", 0.15)],
)
def test_models_fill_the_first_frame(server, watched: Watched, model: str, least: float) -> None:
    base, _, _ = server
    page = watched.page
    share = first_frame_share(page, f"{base}/browse/models/{model}.joe")
    assert share >= least, f"{model}: the first frame shows it on {share:.1%} of the canvas"
    assert share < 0.9, f"{model}: {share:.1%}: not framed, filled"
    # No error box on a page whose preview works; a caption with counts and size.
    assert page.locator(".warning, .error").count() == 0, page.inner_text("main")
    caption = page.inner_text(".model figcaption")
    assert re.search(r"\d+ vertices, \d+ faces, size [\d.]+ \u00d7 [\d.]+ \u00d7 [\d.]+", caption), caption
    assert watched.errors == []


@pytest.mark.parametrize(
    ("model", "least"),
    [
        ("MCS/oem_wheel.joe", 0.15),
        ("MCS/glass.joe", 0.15),
        ("MCS/body.joe", 0.2),
        ("garage/objects/objects.jpk/Floor.001.joe", 0.2),  # a floor, 44 x 64 x 0.18: from above
        ("garage/objects/objects.jpk/Wall.joe", 0.2),  # one quad standing: face on
    ],
)
def test_real_models_fill_the_first_frame(samples_server: str, watched: Watched, model: str, least: float) -> None:
    share = first_frame_share(watched.page, f"{samples_server}/browse/{model}")
    assert least <= share < 0.9, f"{model}: the first frame shows it on {share:.1%} of the canvas"
    assert watched.page.locator(".warning, .error").count() == 0
    assert watched.errors == []


def _drawn_sizes(page: Any, selector: str) -> list[tuple[float, float, int, int]]:
    """(drawn width, drawn height, natural width, natural height) of each matching image."""
    wait_until(page, f"[...document.querySelectorAll({selector!r})].every(i => i.complete && i.naturalWidth > 0)")
    return [
        tuple(size)
        for size in page.evaluate(
            f"""[...document.querySelectorAll({selector!r})].map(image => {{
                const box = image.getBoundingClientRect();
                return [box.width, box.height, image.naturalWidth, image.naturalHeight];
            }})"""
        )
    ]


def test_images_keep_their_aspect_ratio_zoom_and_mips(server, watched: Watched) -> None:
    base, _, _ = server
    page = watched.page
    page.goto(f"{base}/browse/big.cpeg_pc")
    square, wide = _drawn_sizes(page, "figure img")
    assert square[2:] == (1024, 1024) and wide[2:] == (256, 64)
    for width, height, natural_width, natural_height in (square, wide):
        assert abs(width / height - natural_width / natural_height) < 0.01, (width, height)
    assert square[:2] == (512, 512)
    # A narrow window shrinks the picture, keeping its ratio.
    page.set_viewport_size({"width": 400, "height": 800})
    narrow = _drawn_sizes(page, "figure img")[0]
    assert narrow[0] < 400 and abs(narrow[0] - narrow[1]) < 1
    page.set_viewport_size({"width": 1100, "height": 820})
    # 1:1.
    page.click("text=1:1")
    page.wait_for_url("**zoom=1**")
    square, wide = _drawn_sizes(page, "figure img")
    assert square[:2] == (1024, 1024) and wide[:2] == (256, 64)
    # The mip selector: level 2 of the texture with mips, the top of the one without.
    page.click("a.mip:text-is('2')")
    page.wait_for_url("**mip=2**")
    square, wide = _drawn_sizes(page, "figure img")
    assert wide[2:] == (64, 16) and wide[:2] == (64, 16)
    assert square[2:] == (1024, 1024)
    assert "mip 2: 64\u00d716" in page.inner_text("main")
    # Transparent pixels show on a checkerboard.
    background = page.evaluate("getComputedStyle(document.querySelector('figure img')).backgroundImage")
    assert "conic-gradient" in background
    # A loose image, enlarged by whole pixels at its own ratio.
    page.goto(f"{base}/browse/mod.pak/pics/a.png")
    ((width, height, natural_width, natural_height),) = _drawn_sizes(page, ".preview img")
    assert (natural_width, natural_height) == (64, 48) and (width, height) == (256, 192)
    assert watched.errors == []


def test_j2me_strings_one_per_line_with_their_index(server, watched: Watched) -> None:
    from web_fixtures import LANG_STRINGS

    base, _, _ = server
    page = watched.page
    page.goto(f"{base}/browse/lang.f/0.txt")
    rows = page.locator("table.strings tbody tr")
    assert rows.count() == len(LANG_STRINGS)
    for index, text in enumerate(LANG_STRINGS):
        assert rows.nth(index).inner_text().split("\t") == [str(index), text]
    assert watched.errors == []


def test_no_javascript_errors_on_any_page(server, watched: Watched) -> None:
    base, _, _ = server
    page = watched.page
    paths = [
        "/browse/",
        "/browse/plain/",
        "/browse/mod.pak",
        "/browse/mod.pak/pics/",
        "/browse/mod.pak/pics/a.png",
        "/browse/mod.pak/pics/d.dds",
        "/browse/mod.pak/sound.wav",
        "/browse/mod.pak/data.bin",
        "/browse/mod.pak/big.txt",
        "/browse/game.vpp_pc?check=1",
        "/browse/game.vpp_pc/notes.xtbl",
        "/browse/strings.bin",
        "/browse/lang.f/0.txt",
        "/browse/models/road.joe",
        "/browse/big.cpeg_pc?zoom=1&mip=1",
        "/search?q=*.tga",
    ]
    for path in paths:
        response = page.goto(base + path)
        assert response is not None and response.status == 200, path
        page.wait_for_load_state("networkidle")
    assert watched.errors == []


def test_hostile_names_run_no_script(server, watched: Watched) -> None:
    base, _, _ = server
    page = watched.page
    page.goto(f"{base}/browse/mod.pak")
    assert HOSTILE_NAME in page.inner_text("table.listing")
    assert page.locator("img[src=x]").count() == 0
    page.click(f"text={HOSTILE_NAME}")
    page.wait_for_load_state("networkidle")
    assert HOSTILE_NAME in page.inner_text("h1")
    assert "<script>alert(1)</script>" in page.inner_text("pre.text")
    assert page.locator("main script").count() == 0
    # A script smuggled in through the URL is refused by the policy too.
    page.goto(f"{base}/browse/{'%3Cscript%3Ealert(2)%3C%2Fscript%3E'}")
    assert watched.dialogs == []


@pytest.mark.parametrize(
    ("picture_file", "path", "height"),
    [
        ("serve.png", "/browse/game.vpp_pc/zone.str2_pc/crate.cpeg_pc", 560),
        ("serve-model.png", "/browse/mod.pak/model.joe", 960),
    ],
)
def test_screenshots_for_the_readme(
    server, watched: Watched, tmp_path: Path, picture_file: str, path: str, height: int
) -> None:
    base, _, _ = server
    page = watched.page
    page.set_viewport_size({"width": 900, "height": height})
    page.goto(base + path)
    page.wait_for_load_state("networkidle")
    if "model" in picture_file:
        page.wait_for_selector("[data-state=shown]", timeout=30_000)
        page.wait_for_timeout(300)
    shot = tmp_path / picture_file
    page.screenshot(path=str(shot))
    picture = Image.open(shot)
    assert picture.size == (900, height)
    target = SCREENSHOT.parent / picture_file
    if os.environ.get("GAMEPAK_UPDATE_SCREENSHOT"):
        target.parent.mkdir(exist_ok=True)
        picture.convert("P", palette=Image.Palette.ADAPTIVE, colors=128).save(target, optimize=True)
    assert target.exists(), f"run with GAMEPAK_UPDATE_SCREENSHOT=1 to make docs/{picture_file}"
    assert target.stat().st_size < 150_000


def test_every_browser_wait_goes_through_wait_until() -> None:
    """A bare expression given to wait_for_function fails under our pages' CSP whenever the first
    check is false (see wait_until); only wait_until itself may call it."""
    needle = "." + "wait_for_function("  # split, so this line is not counted
    calls = {
        path.name: path.read_text(encoding="utf-8").count(needle) for path in Path(__file__).parent.glob("test_*.py")
    }
    assert {name: count for name, count in calls.items() if count} == {"test_web_browser.py": 1}
