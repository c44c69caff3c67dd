"""`gamepak sprite ls|export|import` (ops/sprites.py, formats/j2me/sprite/files.py): a hand-made
pack of sprites, edits of module pixels (indexed and RGBA), palettes, timings and sizes in the
exported folder, what is refused (a colour not in the palette, a size the JSON does not say),
and every sample pack exported and imported back to the identical file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from sprite_bytes import GREEN, simple_sprite, sprite_bytes

import gamepak
from gamepak.errors import GamepakError
from gamepak.formats.j2me.sprite import read_sprite
from gamepak.ops.sprites import export_sprites, import_sprites, list_sprites

from conftest import in_process_cli, sample


def other_sprite() -> bytes:
    """A 2x2 I127RLE module in two palettes (the second green where the first is red)."""
    return sprite_bytes(
        [(2, 2)],
        [(0, 0, 0, 0)],
        [(1, 0)],
        [(0, 0, 2, 2)],
        [(0, 4, 0, 0, 0)],
        [(1, 0)],
        [bytes([0x82, 1, 0, 2])],
        palettes=[[0x7C1F, 0xFC00, 0x83E0], [0x7C1F, 0x83E0, 0xFC00]],
        encoding=0x27F1,
    )


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    path = tmp_path / "sprites.f"
    with gamepak.create(path, "j2me-table") as writer:
        writer.add("0", simple_sprite())
        writer.add("1", b"MThd not a sprite")
        writer.add("2", other_sprite())
    return path


def members(path: Path) -> list[bytes]:
    with gamepak.open(path, "j2me-table") as archive:
        return [archive.read(name) for name in archive.namelist()]


def test_ls(pack: Path) -> None:
    rows = list_sprites(pack)
    assert [(r["name"], r["modules"], r["frames"], r["anims"], r["palettes"], r["encoding"]) for r in rows] == [
        ("0", 2, 2, 1, 1, "I256"),
        ("2", 1, 1, 1, 2, "I127RLE"),
    ]
    code, out, err = in_process_cli("sprite", "ls", str(pack), "2", "--json")
    assert code == 0, err
    assert json.loads(out)[0]["colours"] == 3
    code, _, err = in_process_cli("sprite", "ls", str(pack), "1")
    assert code == 1 and "member '1' is not a sprite" in err and "Traceback" not in err


def test_export_writes_every_picture_and_an_unchanged_import_is_a_no_op(pack: Path, tmp_path: Path) -> None:
    before = pack.read_bytes()
    code, _, err = in_process_cli("sprite", "export", str(pack), "-o", str(tmp_path / "out"))
    assert code == 0, err
    folder = tmp_path / "out" / "0"
    names = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert names == [
        "anims/000.png",
        "frames/000.png",
        "modules/000.png",
        "modules/001.png",
        "sheet.png",
        "sprite.json",
    ]
    module = Image.open(folder / "modules/000.png")
    assert module.mode == "P" and np.asarray(module).tolist() == [[1, 2]]
    # Palette entry 0 (transparent magenta) comes out clear through the PNG's tRNS.
    assert np.asarray(Image.open(folder / "modules/001.png").convert("RGBA"))[:, 0, 3].tolist() == [255, 0]
    document = json.loads((folder / "sprite.json").read_text())
    assert document["frames"][1] == {"count": 0, "first": 2, "rect": [0, 0, 0, 0], "empty": True}
    assert document["aframes"][2] == [255, 3, 0, 0, 0]
    assert document["frames"][0]["origin"] == [0, 1]
    anim = Image.open(folder / "anims/000.png")
    durations = []
    for number in range(getattr(anim, "n_frames", 1)):  # PIL's multi-frame images have it
        anim.seek(number)
        durations.append(anim.info["duration"])
    assert durations == [100, 50, 150]  # ticks x 50 ms, the blink (frame 255) kept
    code, _, err = in_process_cli("sprite", "import", str(pack), str(tmp_path / "out"))
    assert code == 0 and "0 sprite(s) changed; 2 unchanged" in err
    assert pack.read_bytes() == before


def test_an_edited_pixel_lands_in_that_module_only(pack: Path, tmp_path: Path) -> None:
    export_sprites(pack, tmp_path / "out")
    png = tmp_path / "out" / "0" / "modules" / "001.png"
    image = Image.open(png)
    pixels = np.asarray(image).copy()
    pixels[1, 0] = 2  # the transparent pixel becomes green
    edited = Image.frombytes("P", image.size, pixels.tobytes())
    edited.putpalette(_palette(image))
    edited.save(png, transparency=image.info["transparency"])
    before = members(pack)
    result = import_sprites(pack, tmp_path / "out")
    assert result.changed == ["0"] and result.unchanged == 1
    after = members(pack)
    assert after[1:] == before[1:]
    old, new = read_sprite(before[0]), read_sprite(after[0])
    assert new.module_data == [old.module_data[0], bytes([3, 2])]
    assert after[0] == before[0][:-2] + bytes([3, 2])


def _palette(image: Image.Image) -> list[int]:
    """The palette of a "P" image (which has one)."""
    palette = image.getpalette()
    assert palette is not None, image.mode
    return palette


def test_rgba_edits_map_to_the_palette_or_are_refused(pack: Path, tmp_path: Path) -> None:
    export_sprites(pack, tmp_path / "out")
    png = tmp_path / "out" / "2" / "modules" / "000.png"
    rgba = np.asarray(Image.open(png).convert("RGBA")).copy()
    rgba[1, 1] = [250, 2, 1, 255]  # near red, not in the palette
    Image.frombytes("RGBA", (2, 2), rgba.tobytes()).save(png)
    before = pack.read_bytes()
    code, _, err = in_process_cli("sprite", "import", str(pack), str(tmp_path / "out"))
    assert code == 1 and "pixel (1, 1) is #fa0201ff, which is not in the palette" in err
    assert pack.read_bytes() == before  # nothing written
    code, _, err = in_process_cli("sprite", "import", str(pack), str(tmp_path / "out"), "--nearest")
    assert code == 0, err
    sprite = read_sprite(members(pack)[2])
    assert sprite.module_indices(0).tolist() == [[1, 1], [0, 1]]


def test_rgba_module_drawn_with_a_second_palette_maps_through_it(pack: Path, tmp_path: Path) -> None:
    """Exported with --palette 1, the PNG's colours are palette 1's: mapped back through it."""
    export_sprites(pack, tmp_path / "out", ["2"], palette=1)
    png = tmp_path / "out" / "2" / "modules" / "000.png"
    rgba = np.asarray(Image.open(png).convert("RGBA")).copy()
    assert rgba[0, 0].tolist() == [0, 248, 0, 255]  # index 1 is green in palette 1
    rgba[1, 0] = rgba[0, 0]
    Image.frombytes("RGBA", (2, 2), rgba.tobytes()).save(png)
    import_sprites(pack, tmp_path / "out")
    assert read_sprite(members(pack)[2]).module_indices(0).tolist() == [[1, 1], [1, 2]]


def test_json_edits_palettes_timings_and_a_consistent_resize(pack: Path, tmp_path: Path) -> None:
    export_sprites(pack, tmp_path / "out")
    path = tmp_path / "out" / "0" / "sprite.json"
    document = json.loads(path.read_text())
    document["aframes"][0][1] = 9  # a timing
    document["palettes"][0]["rgba"][1] = "#00f800ff"  # a colour, as RGBA: stored as 1555
    path.write_text(json.dumps(document))
    import_sprites(pack, tmp_path / "out")
    sprite = read_sprite(members(pack)[0])
    assert sprite.aframes[0].time == 9 and sprite.palettes[0][1] == GREEN
    # A module PNG of another size is refused unless the JSON says that size too.
    png = tmp_path / "out" / "0" / "modules" / "000.png"
    plte = _palette(Image.open(png))
    wider = Image.frombytes("P", (3, 1), bytes([1, 2, 3]))
    wider.putpalette(plte)
    wider.save(png)
    with pytest.raises(GamepakError, match=r"000.png: 3x1 pixels, but sprite.json says module 0 is 2x1"):
        import_sprites(pack, tmp_path / "out")
    document = json.loads(path.read_text())
    document["modules"][0]["w"] = 3
    path.write_text(json.dumps(document))
    import_sprites(pack, tmp_path / "out")
    sprite = read_sprite(members(pack)[0])
    assert sprite.modules[0] == (3, 1) and sprite.module_indices(0).tolist() == [[1, 2, 3]]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["fmodules"][0].__setitem__(0, 7), "FModule 0 names module 7"),
        (lambda d: d["aframes"][0].__setitem__(2, 300), r"aframes\[0\]\[2\]: 300 is not a whole number in -128..127"),
        (lambda d: d.__setitem__("encoding", "I999"), "encoding: 'I999' is none of"),
        (lambda d: d["palettes"][0]["raw"].append(1), r"palettes of \[4, 5\] colours|not in the palette|palettes"),
        (lambda d: d.__setitem__("format", "other"), "not a gamepak sprite description"),
        (lambda d: d.__setitem__("flags", 3), "would not read back: sprite: flags 0x00000003"),
    ],
)
def test_bad_json_is_refused_and_nothing_written(pack: Path, tmp_path: Path, edit: object, message: str) -> None:
    export_sprites(pack, tmp_path / "out")
    path = tmp_path / "out" / "0" / "sprite.json"
    document = json.loads(path.read_text())
    edit(document)  # type: ignore[operator]
    path.write_text(json.dumps(document))
    before = pack.read_bytes()
    with pytest.raises(GamepakError, match=message):
        import_sprites(pack, tmp_path / "out")
    assert pack.read_bytes() == before


def test_a_lone_sprite_file(tmp_path: Path) -> None:
    path = tmp_path / "hero.bin"
    path.write_bytes(other_sprite())
    export_sprites(path, tmp_path / "out")
    assert (tmp_path / "out" / "hero" / "sprite.json").is_file()
    assert import_sprites(path, tmp_path / "out").unchanged == 1
    assert path.read_bytes() == other_sprite()


def test_nothing_to_import_is_an_error(pack: Path, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    code, _, err = in_process_cli("sprite", "import", str(pack), str(tmp_path / "empty"))
    assert code == 1 and "no folder holds a sprite.json" in err


@pytest.mark.parametrize("name", ["gen1.f", "iga.f", "mm1.f", "mmv.f", "tips.f", "ui.f", "demoSpr.bin"])
def test_every_sample_pack_exports_and_imports_back_identically(tmp_path: Path, name: str) -> None:
    original = sample(f"gameloft/{name}")
    copy = tmp_path / name
    shutil.copyfile(original, copy)
    export_sprites(copy, tmp_path / "out")
    done = import_sprites(copy, tmp_path / "out")
    assert done.changed == [] and done.unchanged == len(list_sprites(copy))
    assert copy.read_bytes() == original.read_bytes()
    if name == "demoSpr.bin":  # the records' ids are in the JSON (import leaves them to the pack)
        assert json.loads((tmp_path / "out" / "2" / "sprite.json").read_text())["record_id"] == 2


def test_a_sample_module_edit_changes_only_that_sprite(tmp_path: Path) -> None:
    """gen1.f member 5 (three palettes): one pixel of module 3 edited, indexed."""
    copy = tmp_path / "gen1.f"
    shutil.copyfile(sample("gameloft/gen1.f"), copy)
    before = members(copy)
    export_sprites(copy, tmp_path / "out", ["5"])
    png = tmp_path / "out" / "5" / "modules" / "003.png"
    image = Image.open(png)
    pixels = np.asarray(image).copy()
    pixels[0, 0] = (int(pixels[0, 0]) + 1) % len(read_sprite(before[5]).palettes[0])
    edited = Image.frombytes("P", image.size, pixels.tobytes())
    edited.putpalette(_palette(image))
    edited.save(png, transparency=image.info.get("transparency"))
    assert import_sprites(copy, tmp_path / "out").changed == ["5"]
    after = members(copy)
    assert [i for i, (a, b) in enumerate(zip(before, after)) if a != b] == [5]
    old, new = read_sprite(before[5]), read_sprite(after[5])
    assert [i for i, (a, b) in enumerate(zip(old.module_data, new.module_data)) if a != b] == [3]
    assert np.array_equal(new.module_indices(3), pixels)


def test_texture_verbs_on_a_pack_of_sprites(pack: Path, tmp_path: Path) -> None:
    """`texture ls|export|import` of a J2ME pack reach its sprites (the content registry's
    `sprite` texture source): a row per module, the same folder as `sprite export`."""
    code, out, err = in_process_cli("texture", "ls", str(pack))
    assert code == 0, err
    assert out.splitlines() == [
        "    2x1     I256 1555    0/module 000",
        "    1x2     I256 1555    0/module 001",
        "    2x2     I127RLE 1555 2/module 000",
    ]
    code, _, err = in_process_cli("texture", "export", str(pack), "-o", str(tmp_path / "tex"))
    assert code == 0, err
    assert Image.open(tmp_path / "tex" / "2" / "modules" / "000.png").mode == "P"
    before = pack.read_bytes()
    code, _, err = in_process_cli("texture", "import", str(pack), str(tmp_path / "tex"))
    assert code == 0 and "unchanged" in err
    assert pack.read_bytes() == before


def test_palette_option_applies_where_a_sprite_has_it(pack: Path, tmp_path: Path) -> None:
    export_sprites(pack, tmp_path / "out", palette=1)
    shown = {name: json.loads((tmp_path / "out" / name / "sprite.json").read_text())["module_palette"] for name in "02"}
    assert shown == {"0": 0, "2": 1}  # sprite 0 has one palette
    assert import_sprites(pack, tmp_path / "out").unchanged == 2
    code, _, err = in_process_cli("sprite", "export", str(pack), "-o", str(tmp_path / "x"), "--palette", "5")
    assert code == 1 and "palette 5: no sprite has it (they have at most 2)" in err


def test_kill_during_sprite_import_leaves_the_old_pack_or_the_new(tmp_path: Path) -> None:
    """kill -9 at any moment of `sprite import` (one edit of the pack): the old pack or the new
    one, and the next command runs."""
    from test_edit_crash import TRIALS, snapshot, trial_kills

    folder = tmp_path / "game"
    folder.mkdir()
    path = folder / "sprites.f"
    with gamepak.create(path, "j2me-table") as writer:
        writer.add("0", simple_sprite())
        writer.add("1", other_sprite())
    export_sprites(path, tmp_path / "out")
    png = tmp_path / "out" / "0" / "modules" / "000.png"
    image = Image.open(png)
    edited = Image.frombytes("P", image.size, bytes([3, 3]))
    edited.putpalette(_palette(image))
    edited.save(png)
    old = snapshot(path, "j2me-table")

    def run() -> None:
        assert import_sprites(path, tmp_path / "out").changed == ["0"]

    old_count, new_count = trial_kills(folder, "j2me-table", path, run, old, in_place=False)
    assert old_count + new_count == TRIALS


def test_dry_run_says_what_would_change_and_writes_nothing(pack: Path, tmp_path: Path) -> None:
    export_sprites(pack, tmp_path / "out")
    path = tmp_path / "out" / "2" / "sprite.json"
    document = json.loads(path.read_text())
    document["aframes"][0][1] = 7
    path.write_text(json.dumps(document))
    before = pack.read_bytes()
    code, _, err = in_process_cli("sprite", "import", str(pack), str(tmp_path / "out"), "--dry-run")
    assert code == 0 and "1 sprite(s) would change: 2; 1 unchanged" in err
    assert pack.read_bytes() == before
