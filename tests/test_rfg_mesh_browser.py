"""RFG meshes in the viewer, in Chromium (as tests/test_web_browser.py drives it): the real
battery sample and a hand-made mesh whose pink diffuse texture is found in its pack."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator

import numpy as np
import pytest
from PIL import Image
from rfg_mesh_bytes import MaterialSpec, Vertex, build, quad_spec
from test_rfg_mesh_export import peg_pair

# The browser and page fixtures are test_web_browser's own (imported: pytest finds them here).
from test_web_browser import CHROMIUM, Watched, browser, first_frame_share, serving, watched  # noqa: F401

from conftest import SAMPLES, write_pack

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"needs Chromium at {CHROMIUM}")


@pytest.fixture(scope="module")
def mesh_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("mesh-root")
    # A square facing +Z (where the viewer puts its camera for a flat model), one-sided: it shows
    # only if the winding survives the export.
    vertices = [
        Vertex((x, y, 0.0), normal=(127, 127, 255, 127), uvs=[(int(x * 1024), int(y * 1024))])
        for x, y in ((0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (1.0, 1.0))
    ]
    spec = quad_spec(vertices=vertices, materials=[MaterialSpec(textures=[("wall_d.tga", "Diffuse_Map")])])
    spec.submeshes = [[(0, [0, 2, 1, 3])]]  # both triangles wound to face +Z
    cpu, gpu = build(spec)
    peg_cpu, peg_gpu = peg_pair({"wall_d.tga": (255, 150, 150, 255)})
    write_pack(
        root / "wall.str2_pc",
        {"wall.csmesh_pc": cpu, "wall.gsmesh_pc": gpu, "wall.cpeg_pc": peg_cpu, "wall.gpeg_pc": peg_gpu},
    )
    battery = SAMPLES / "vpp" / "repair_battery.str2_pc"
    if battery.exists():
        (root / "repair_battery.str2_pc").write_bytes(battery.read_bytes())
    yield from serving(root)


def test_a_textured_mesh_is_drawn_with_its_texture(mesh_server: str, watched: Watched) -> None:  # noqa: F811
    page = watched.page
    share = first_frame_share(page, f"{mesh_server}/browse/wall.str2_pc/wall.csmesh_pc")
    assert share > 0.1, f"the mesh covers {share:.1%} of the canvas"
    shot = np.asarray(Image.open(io.BytesIO(page.locator(".model canvas").screenshot())).convert("RGB")).astype(int)
    reddish = (shot[:, :, 0] > shot[:, :, 1] + 40) & (shot[:, :, 0] > shot[:, :, 2] + 40)
    assert reddish.mean() > 0.05, "the pink diffuse texture is not drawn"
    assert watched.errors == []


def test_the_battery_sample_is_shown(mesh_server: str, watched: Watched) -> None:  # noqa: F811
    if not (SAMPLES / "vpp" / "repair_battery.str2_pc").exists():
        pytest.skip("sample vpp/repair_battery.str2_pc not available (../shared/samples is absent)")
    share = first_frame_share(watched.page, f"{mesh_server}/browse/repair_battery.str2_pc/repair_battery.csmesh_pc")
    assert 0.1 <= share < 0.9, f"the battery covers {share:.1%} of the canvas"
    caption = watched.page.inner_text(".model figcaption")
    assert "197 vertices, 172 faces" in caption
    assert watched.errors == []
