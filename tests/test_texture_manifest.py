"""`texture export WAD -o DIR` then `texture build DIR` gives the WAD back byte for byte (issue 47
item 2): LibreQuake's gfx.wad, WADs gamepak builds, and hand-made ones with what other tools
leave (bytes after a name's NUL, repeated palette colours, filtered mips, WAD3 filler, a palette
lump); an edited picture changes only its own lump; a broken manifest is one line."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from gamepak.cli import main
from gamepak.formats.quake.palette import built_in_palette

from conftest import sample

PALETTE = np.frombuffer(built_in_palette(), dtype=np.uint8).reshape(256, 3)
MANIFEST = ".gamepak-textures.json"


def _wad(magic: bytes, lumps: list[tuple[bytes, int, bytes]]) -> bytes:
    """A WAD by the spec (quake-assets.md 1.1-1.5): header, lumps from 12, the directory last;
    each lump (16-byte name field, type, data)."""
    body = b""
    directory = b""
    for name_field, lump_type, data in lumps:
        directory += struct.pack("<iiiBBH16s", 12 + len(body), len(data), len(data), lump_type, 0, 0, name_field)
        body += data
    return struct.pack("<4sii", magic, len(lumps), 12 + len(body)) + body + directory


def _miptex(name_field: bytes, width: int, height: int, mips: list[bytes], tail: bytes = b"") -> bytes:
    offsets, position = [], 40
    for mip in mips:
        offsets.append(position)
        position += len(mip)
    return struct.pack("<16sII4I", name_field, width, height, *offsets) + b"".join(mips) + tail


def _round_trip(tmp_path: Path, wad: Path, tag: str = "x") -> tuple[Path, Path]:
    folder = tmp_path / f"export-{tag}"
    again = tmp_path / f"again-{tag}.wad"
    assert main(["texture", "export", str(wad), "-o", str(folder)]) == 0
    assert main(["texture", "build", str(folder), "-o", str(again)]) == 0
    return folder, again


def test_libre_quake_gfx_wad_rebuilds_byte_for_byte(tmp_path: Path) -> None:
    source = sample("quake/gfx.wad")
    folder, again = _round_trip(tmp_path, source)
    assert again.read_bytes() == source.read_bytes()
    manifest = json.loads((folder / MANIFEST).read_text())
    assert [member["name"] for member in manifest["members"]][:2] == ["CONCHARS", "ANUM_0"] or manifest["members"]
    assert len(manifest["members"]) == 149


def test_an_edited_picture_changes_only_its_lump(tmp_path: Path) -> None:
    from gamepak.formats.quake import wad

    source = sample("quake/gfx.wad")
    folder = tmp_path / "out"
    assert main(["texture", "export", str(source), "-o", str(folder)]) == 0
    picture = folder / "FACE1.png"
    pixels = np.asarray(Image.open(picture)).copy()
    pixels[2:6, 2:6, :3] = PALETTE[100]
    Image.fromarray(pixels, "RGBA").save(picture)
    again = tmp_path / "again.wad"
    assert main(["texture", "build", str(folder), "-o", str(again)]) == 0
    before, after = source.read_bytes(), again.read_bytes()
    assert len(before) == len(after)
    with wad.Reader(source) as reader:
        entry = reader.lump("FACE1")
    changed = np.flatnonzero(np.frombuffer(before, np.uint8) != np.frombuffer(after, np.uint8))
    assert len(changed) and changed.min() >= entry.offset and changed.max() < entry.offset + entry.size
    with wad.Reader(again) as reader:
        face = reader.read("FACE1")
    width = int.from_bytes(face[:4], "little")
    assert face[8 + 2 * width + 2] == 100


def test_wads_gamepak_builds_rebuild_with_a_small_manifest(tmp_path: Path) -> None:
    folder = tmp_path / "pics"
    folder.mkdir()
    rng = np.random.default_rng(11)
    Image.fromarray(rng.integers(0, 256, (32, 64, 3), dtype=np.uint8), "RGB").save(folder / "noise.png")
    fence = rng.integers(0, 256, (16, 16, 4), dtype=np.uint8)
    Image.fromarray(fence, "RGBA").save(folder / "{fence.png")
    Image.fromarray(rng.integers(0, 256, (16, 16, 3), dtype=np.uint8), "RGB").save(folder / "lamp_fbr.png")
    Image.fromarray(rng.integers(0, 256, (128, 256, 4), dtype=np.uint8), "RGBA").save(folder / "sky4.png")
    for flags, tag in (([], "wad2"), (["--dither"], "dither"), (["--wad3"], "wad3")):
        built = tmp_path / f"{tag}.wad"
        assert main(["texture", "build", str(folder), "-o", str(built), *flags]) == 0
        exported, again = _round_trip(tmp_path, built, tag)
        assert again.read_bytes() == built.read_bytes(), tag
        manifest = json.loads((exported / MANIFEST).read_text())
        extra = [m["name"] for m in manifest["members"] if {"data", "mips_xor"} & set(m["texture"])]
        # Only the sky's front-half index 0 (drawn clear, exported clear, read back as 0 only
        # in the front half) and nothing else needs stored indices.
        assert set(extra) <= {"sky4"}, (tag, extra)


def test_what_other_tools_leave_rebuilds_byte_for_byte(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    pixels = rng.integers(0, 224, 16 * 16, dtype=np.uint8)
    pixels[:10] = 48  # entry 48 repeats entry 0's colour: a picture gives 0 back
    filtered = [pixels.tobytes(), bytes(rng.integers(0, 256, 64, dtype=np.uint8)), bytes(16), bytes(4)]
    hand = _wad(
        b"WAD2",
        [
            (b"dirty\0y\\Palett\0", 0x44, _miptex(b"dirty\0junk\0\0\0\0\0\0", 16, 16, filtered)),
            (b"PALETTE".ljust(16, b"\0"), 0x40, built_in_palette()),
            (b"pic".ljust(16, b"\0"), 0x42, struct.pack("<ii", 8, 2) + bytes(range(100, 116))),
            (b"odd".ljust(16, b"\0"), 0x44, _miptex(b"odd".ljust(16, b"\0"), 16, 16, filtered, b"\x01\x02")),
        ],
    )
    source = tmp_path / "hand.wad"
    source.write_bytes(hand)
    folder, again = _round_trip(tmp_path, source)
    assert again.read_bytes() == hand
    assert (folder / "PALETTE.lump").read_bytes() == built_in_palette()  # no picture: kept as it is
    fields = {m["name"]: m.get("texture", {}) for m in json.loads((folder / MANIFEST).read_text())["members"]}
    # Small: the name field, the tail and an XOR of the indices, never the whole lump.
    assert "data" not in fields["dirty"] and {"name_field", "mips_xor"} <= set(fields["dirty"])
    assert "tail" in fields["odd"] and "data" not in fields["odd"]
    assert set(fields["pic"]) == {"kind", "width", "height", "digest"}
    # Edited, the picture wins over the stored indices: mip 0 is what the picture now says.
    edited = np.asarray(Image.open(folder / "dirty.png")).copy()
    edited[:, :, :3] = PALETTE[7]
    Image.fromarray(edited, "RGBA").save(folder / "dirty.png")
    assert main(["texture", "build", str(folder), "-o", str(tmp_path / "edited.wad")]) == 0
    from gamepak.formats.quake import wad

    with wad.Reader(tmp_path / "edited.wad") as reader:
        record = reader.read("dirty")
        assert reader.read("odd") == _miptex(b"odd".ljust(16, b"\0"), 16, 16, filtered, b"\x01\x02")
    assert record[:16] == b"dirty\0junk\0\0\0\0\0\0" and set(record[40 : 40 + 256]) == {7}
    # WAD3: a texture with its own palette and filler after it that is not zeros.
    own = bytes(rng.integers(0, 256, 768, dtype=np.uint8))
    hl_mips = [bytes(rng.integers(0, 256, n, dtype=np.uint8)) for n in (256, 64, 16, 4)]
    hl = _wad(
        b"WAD3",
        [(b"hltest\0y\\Palett\0", 0x43, _miptex(b"hltest\0y\\Palett\0", 16, 16, hl_mips, b"\0\1" + own + b"\xaa\xbb"))],
    )
    source3 = tmp_path / "hl.wad"
    source3.write_bytes(hl)
    _folder3, again3 = _round_trip(tmp_path, source3, "hl")
    assert again3.read_bytes() == hl


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(st.sampled_from([16, 32]), st.sampled_from([16, 48]), st.integers(0, 2**32 - 1)),
        min_size=1,
        max_size=4,
    )
)
def test_any_wad2_of_miptex_rebuilds(
    tmp_path_factory: pytest.TempPathFactory, shapes: list[tuple[int, int, int]]
) -> None:
    tmp_path = tmp_path_factory.mktemp("prop")
    lumps = []
    for number, (width, height, seed) in enumerate(shapes):
        rng = np.random.default_rng(seed)
        mips = [bytes(rng.integers(0, 256, (width >> k) * (height >> k), dtype=np.uint8)) for k in range(4)]
        name = f"t{number}".encode().ljust(16, b"\0")
        lumps.append((name, 0x44, _miptex(name, width, height, mips)))
    data = _wad(b"WAD2", lumps)
    source = tmp_path / "p.wad"
    source.write_bytes(data)
    _folder, again = _round_trip(tmp_path, source)
    assert again.read_bytes() == data


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda text: "{not json", "not a texture manifest (JSON"),
        (lambda text: text.replace('"kind":"miptex"', '"kind":"sound"'), "texture.kind: one of qpic, miptex"),
        (lambda text: text.replace('"width":16', '"width":99999'), "texture.width: a size from 1 to 16384"),
        (lambda text: text.replace('"path":"t0.png"', '"path":"../t0.png"'), ".."),
    ],
)
def test_a_broken_manifest_is_one_line_and_writes_nothing(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    damage,
    message: str,  # type: ignore[no-untyped-def]
) -> None:
    rng = np.random.default_rng(2)
    mips = [bytes(rng.integers(0, 224, (16 >> k) ** 2, dtype=np.uint8)) for k in range(4)]
    name = b"t0".ljust(16, b"\0")
    source = tmp_path / "p.wad"
    source.write_bytes(_wad(b"WAD2", [(name, 0x44, _miptex(name, 16, 16, mips))]))
    folder = tmp_path / "out"
    assert main(["texture", "export", str(source), "-o", str(folder)]) == 0
    manifest = folder / MANIFEST
    manifest.write_text(damage(manifest.read_text()))
    capsys.readouterr()
    assert main(["texture", "build", str(folder), "-o", str(tmp_path / "again.wad")]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err
    assert not (tmp_path / "again.wad").exists()


def test_a_forged_xor_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import base64
    import zlib

    mips = [bytes([48]) * ((16 >> k) ** 2) for k in range(4)]  # a repeated colour: a stored XOR
    name = b"t0".ljust(16, b"\0")
    source = tmp_path / "p.wad"
    source.write_bytes(_wad(b"WAD2", [(name, 0x44, _miptex(name, 16, 16, mips))]))
    folder = tmp_path / "out"
    assert main(["texture", "export", str(source), "-o", str(folder)]) == 0
    document = json.loads((folder / MANIFEST).read_text())
    assert "mips_xor" in document["members"][0]["texture"]
    document["members"][0]["texture"]["mips_xor"] = base64.b64encode(zlib.compress(bytes(1 << 20))).decode()
    (folder / MANIFEST).write_text(json.dumps(document))
    capsys.readouterr()
    assert main(["texture", "build", str(folder), "-o", str(tmp_path / "again.wad")]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "mips_xor" in err and "more than the" in err
    assert not (tmp_path / "again.wad").exists()


def test_a_picture_added_to_an_export_becomes_a_new_lump(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from gamepak.formats.quake import wad

    rng = np.random.default_rng(8)
    mips = [bytes(rng.integers(0, 224, (16 >> k) ** 2, dtype=np.uint8)) for k in range(4)]
    name = b"+0lava".ljust(16, b"\0")
    source = tmp_path / "p.wad"
    source.write_bytes(_wad(b"WAD2", [(name, 0x44, _miptex(name, 16, 16, mips))]))
    folder = tmp_path / "out"
    assert main(["texture", "export", str(source), "-o", str(folder)]) == 0
    Image.new("RGB", (32, 16), tuple(int(v) for v in PALETTE[9])).save(folder / "+1lava.png")
    again = tmp_path / "again.wad"
    assert main(["texture", "build", str(folder), "-o", str(again)]) == 0
    with wad.Reader(again) as reader:
        assert reader.namelist() == ["+0lava", "+1lava"]
        assert reader.read("+0lava") == _miptex(name, 16, 16, mips)  # the exported lump as it was
        assert set(reader.read("+1lava")[40 : 40 + 512]) == {9}
    # A new picture naming a lump the WAD has, or leaving a gap in its animation: one line.
    (folder / "+1lava.png").rename(folder / "+3lava.png")
    capsys.readouterr()
    assert main(["texture", "build", str(folder), "-o", str(tmp_path / "gap.wad")]) == 1
    assert "has no frame +1lava" in capsys.readouterr().err
    (folder / "+3lava.png").rename(folder / "+0LAVA.tga")
    assert main(["texture", "build", str(folder), "-o", str(tmp_path / "twice.wad")]) == 1
    assert "names the same lump as +0lava.png" in capsys.readouterr().err
    assert not (tmp_path / "gap.wad").exists() and not (tmp_path / "twice.wad").exists()
