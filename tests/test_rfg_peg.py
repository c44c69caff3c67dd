"""RFG peg v10 textures: pegs of every pixel format built and round-tripped, hand-made bytes
from the spec, hostile fields, fuzzing, and the real xray_effect pair."""

from __future__ import annotations

import io
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

import gamepak
from gamepak.errors import CorruptArchiveError, GamepakError
from gamepak.formats.rfg.peg import Peg, PixelFormat, pixels
from gamepak.formats.rfg.peg.layout import ENTRY, HEADER, chain_size, format_by_label, level_size
from gamepak.formats.rfg.peg.pixels import _noise_like, decode, encode, encode_chain, mip_chain

from conftest import sample

CODED = [f for f in PixelFormat if f not in (PixelFormat.DUDV16, PixelFormat.DOT3_16)]


@pytest.fixture(params=["rgbcx", "quicktex"])
def block_encoder(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """DXT1/DXT5 through rgbcx (bc7enc-py) and through quicktex, used where rgbcx has no wheel."""
    if request.param == "quicktex":
        monkeypatch.setattr(pixels, "_rgbcx", lambda: None)
    elif pixels._rgbcx() is None:
        pytest.skip("bc7enc-py has no wheel for this platform: quicktex encodes here")
    return str(request.param)


def _image(width: int = 16, height: int = 8, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (height, width, 4), dtype=np.uint8)


def _gradient(size: int = 64) -> np.ndarray:
    ramp = np.linspace(0, 255, size)
    out = np.empty((size, size, 4), np.uint8)
    out[..., 0], out[..., 1] = ramp[None, :], ramp[:, None]
    out[..., 2], out[..., 3] = 96, 255 - ramp[None, :]
    return out


def _psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = np.mean((a.astype(float) - b.astype(float)) ** 2)
    return float("inf") if mse == 0 else 10 * np.log10(255**2 / mse)


def _hand_made(frame_size: int = 688, name_offset: int = 0) -> tuple[bytes, bytes]:
    """One 32x32 DXT1 texture with 4 mips, laid out as the spec's tables say."""
    names = b"heat_map_enemy.tga\0"
    cpu_size = HEADER.size + ENTRY.size + len(names)
    gpu = bytes(range(256)) * 2 + bytes(range(168)) + bytes(-680 % 16)
    header = HEADER.pack(b"GEKV", 10, 0, cpu_size, len(gpu), 1, 0, 1, 16)
    entry = ENTRY.pack(0, 32, 32, 400, 32, 0, 0, 1, 0, name_offset, 32, 1, 4, frame_size, bytes(16))
    return header + entry + names, gpu


# -- hand-made bytes and both conventions -------------------------------------------------------
@pytest.mark.parametrize(("frame_size", "name_offset"), [(688, 0), (680, 0), (688, 24 + 48)])
def test_hand_made_pair_reads_and_writes_back_byte_for_byte(frame_size: int, name_offset: int) -> None:
    cpu, gpu = _hand_made(frame_size, name_offset)
    peg = Peg.parse(cpu, gpu, "hand.cpeg_pc")
    (texture,) = peg.textures
    summary = (texture.name, texture.width, texture.format, texture.mips)
    assert summary == ("heat_map_enemy.tga", 32, PixelFormat.DXT1, 4)
    assert texture.frame_size == frame_size and texture.chain_size == 680
    assert peg.mip_data("heat_map_enemy") == gpu[:680]
    assert peg.to_bytes() == (cpu, gpu)


# -- every pixel format -------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", CODED, ids=lambda f: f.label)
def test_every_format_round_trips_through_a_built_peg(fmt: PixelFormat) -> None:
    peg = Peg.new("built.cpeg_pc")
    peg.add_texture("first", _image(), fmt)
    peg.add_texture("second", _image(8, 8, seed=1), fmt, mips=2)
    cpu, gpu = peg.to_bytes()
    again = Peg.parse(cpu, gpu, "built.cpeg_pc")
    assert again.to_bytes() == (cpu, gpu)
    assert [t.summary()["format"] for t in again.textures] == [fmt.label, fmt.label]
    assert again.textures[0].mips == 5 and again.textures[1].mips == 2
    assert len(gpu) % 16 == 0 and again.textures[1].data_offset == -(-again.textures[0].frame_size // 16) * 16


TOLERANCES = [
    (PixelFormat.A8R8G8B8, 0),
    (PixelFormat.R8G8B8, 0),
    (PixelFormat.A4R4G4B4, 8),
    (PixelFormat.R5G6B5, 4),
    (PixelFormat.A1R5G5B5, 4),
    (PixelFormat.A8, 0),
]
RGB = [0, 1, 2]


@pytest.mark.parametrize(("fmt", "tolerance"), TOLERANCES, ids=lambda v: getattr(v, "label", str(v)))
def test_uncompressed_codecs_keep_what_their_bits_hold(fmt: PixelFormat, tolerance: int) -> None:
    image = _image(8, 4)
    back = decode(fmt, encode(fmt, image), 8, 4).astype(int)
    channels = {PixelFormat.A8: [3], PixelFormat.R8G8B8: RGB, PixelFormat.R5G6B5: RGB, PixelFormat.A1R5G5B5: RGB}
    picked = channels.get(fmt, [0, 1, 2, 3])
    assert np.abs(back[..., picked] - image[..., picked].astype(int)).max() <= tolerance


def test_8888_channel_order_is_bgra_by_default_and_selectable() -> None:
    stored = bytes([10, 20, 30, 40])  # one pixel
    assert decode(PixelFormat.A8R8G8B8, stored, 1, 1)[0, 0].tolist() == [30, 20, 10, 40]
    assert decode(PixelFormat.A8R8G8B8, stored, 1, 1, "RGBA")[0, 0].tolist() == [10, 20, 30, 40]


@pytest.mark.parametrize("fmt", [PixelFormat.DXT1, PixelFormat.DXT3, PixelFormat.DXT5], ids=lambda f: f.label)
def test_block_formats_compress_a_gradient_well(fmt: PixelFormat) -> None:
    image = _gradient()
    if fmt == PixelFormat.DXT1:  # 1-bit alpha: pixels under half alpha become transparent black
        image[..., 3] = 255
    back = decode(fmt, encode(fmt, image), 64, 64)
    assert _psnr(back[..., :3], image[..., :3]) > 35


@pytest.mark.parametrize("fmt", [PixelFormat.DXT1, PixelFormat.DXT5], ids=lambda f: f.label)
def test_block_chain_decodes_level_by_level_as_its_mips(fmt: PixelFormat, block_encoder: str) -> None:
    """encode_chain gathers the small levels into one strip for the encoder: every level must
    still land at its own offset, alpha half and colour half of each DXT5 block in place."""
    image = _gradient(128)
    if fmt == PixelFormat.DXT1:
        image[..., 3] = 255
    chain = encode_chain(fmt, image, 8)
    assert len(chain) == chain_size(fmt, 128, 128, 8)
    assert chain == b"".join(encode(fmt, level) for level in mip_chain(image, 8))
    offset = 0
    for level in mip_chain(image, 8):
        height, width = level.shape[:2]
        size = level_size(fmt, width, height)
        back = decode(fmt, chain[offset : offset + size], width, height)
        offset += size
        if width >= 16:  # a level read from another one's offset scores 8-10 dB
            assert _psnr(back[..., :3], level[..., :3]) > 25, (width, height)
            assert _psnr(back[..., 3], level[..., 3]) > 35, (width, height)


def test_dxt5_of_a_gradient_keeps_quality_and_noise_takes_the_fast_path(block_encoder: str) -> None:
    gradient = _gradient(256)
    back = decode(PixelFormat.DXT5, encode(PixelFormat.DXT5, gradient), 256, 256)
    # 1024 wide (the benchmark's): 50.4 dB through rgbcx, 45.7 through quicktex
    assert _psnr(back[..., :3], gradient[..., :3]) > (44 if block_encoder == "rgbcx" else 40)
    assert _psnr(back[..., 3], gradient[..., 3]) > 50
    noise = _image(256, 256)
    assert not _noise_like(gradient) and _noise_like(noise)
    back = decode(PixelFormat.DXT5, encode(PixelFormat.DXT5, noise), 256, 256)
    assert _psnr(back[..., :3], noise[..., :3]) > 12  # what any 4-colour block can hold of noise


def test_rgbcx_bands_give_the_bytes_of_one_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """A large image is cut into bands of block rows encoded on threads at once: the bytes
    must be those of encoding it whole, every band in its place."""
    if pixels._rgbcx() is None:
        pytest.skip("bc7enc-py has no wheel for this platform: quicktex encodes here")
    image = np.concatenate([_gradient(256), _image(256, 256)[::-1]], axis=0)  # 512 rows, 2 halves unlike
    for fmt in (PixelFormat.DXT1, PixelFormat.DXT5):
        monkeypatch.setattr(pixels, "BAND_BLOCKS", 1 << 30)
        assert len(pixels._bands(image)) == 1
        whole = encode_chain(fmt, image, 6)
        monkeypatch.setattr(pixels, "BAND_BLOCKS", 256)
        assert len(pixels._bands(image)) > 1
        assert encode_chain(fmt, image, 6) == whole


def test_a_forked_child_encodes_with_threads_of_its_own() -> None:
    """The encoding threads are made per process: a child forked after the parent encoded
    (the extraction copier and the catalog's workers fork) must not wait on its parent's."""
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this platform")
    image = _image(512, 512)
    expected = encode(PixelFormat.DXT5, image)  # the parent's pool exists from here on
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=lambda: queue.put(encode(PixelFormat.DXT5, image) == expected))
    child.start()
    child.join(60)
    if child.is_alive():
        child.kill()
        pytest.fail("the forked child hung encoding")
    assert child.exitcode == 0 and queue.get(timeout=5)


def test_mip_chain_halves_each_level_with_a_box_filter() -> None:
    image = np.zeros((4, 8, 4), np.uint8)
    image[..., 0] = np.arange(8)[None, :] * 30
    image[..., 3] = 255
    levels = mip_chain(image, 4)
    assert [level.shape[:2] for level in levels] == [(4, 8), (2, 4), (1, 2), (1, 1)]
    assert levels[1][0, :, 0].tolist() == [15, 75, 135, 195]
    assert levels[3][0, 0].tolist() == [105, 0, 0, 255]
    odd = mip_chain(_image(12, 20), 3)
    assert [level.shape[:2] for level in odd] == [(20, 12), (10, 6), (5, 3)]


def test_block_formats_refuse_sizes_that_are_not_multiples_of_4() -> None:
    peg = Peg.new("x.cpeg_pc")
    with pytest.raises(GamepakError, match="multiples of 4"):
        peg.add_texture("odd", _image(6, 4), PixelFormat.DXT5)
    assert peg.textures == []


def test_replace_image_with_a_new_size_moves_later_textures() -> None:
    peg = Peg.new("x.cpeg_pc")
    peg.add_texture("a", _image(8, 8), PixelFormat.DXT1)
    peg.add_texture("b", _image(8, 8), PixelFormat.DXT5)
    peg.replace_image("a", _gradient(64))
    cpu, gpu = peg.to_bytes()
    again = Peg.parse(cpu, gpu, "x.cpeg_pc")
    first, second = again.textures
    assert (first.width, first.mips) == (64, 4)
    assert second.data_offset == chain_size(PixelFormat.DXT1, 64, 64, 4)
    assert np.array_equal(again.read_image("b"), peg.read_image("b"))
    again.remove_texture("a")
    assert [t.name for t in Peg.parse(*again.to_bytes()).textures] == ["b.tga"]


@pytest.mark.parametrize("fmt", [f for f in CODED if f != PixelFormat.A8], ids=lambda f: f.label)
def test_dds_export_is_read_by_pillow_as_the_same_image(fmt: PixelFormat) -> None:
    peg = Peg.new("x.cpeg_pc")
    peg.add_texture("t", _image(8, 8), fmt)
    dds = peg.to_dds("t")
    assert dds.endswith(peg.mip_data("t"))
    with Image.open(io.BytesIO(dds)) as image:
        pillow = np.asarray(image.convert("RGBA")).astype(int)
    assert np.abs(pillow - peg.read_image("t").astype(int)).max() <= 1


def _dds_header(
    pf_flags: int,
    fourcc: bytes = b"\0\0\0\0",
    bits: int = 0,
    masks: tuple[int, int, int, int] = (0, 0, 0, 0),
    dxgi: int | None = None,
    array_size: int = 1,
    size: int = 124,
) -> bytes:
    """A DDS header by Microsoft's layout (DDS_HEADER, DDS_PIXELFORMAT, DDS_HEADER_DXT10),
    8x8 with one mip; written here field by field, not by gamepak."""
    header = b"DDS " + struct.pack("<7I", size, 0x1007, 8, 8, 0, 0, 1) + bytes(44)
    header += struct.pack("<2I4s5I", 32, pf_flags, fourcc, bits, *masks) + struct.pack("<5I", 0x1000, 0, 0, 0, 0)
    if dxgi is not None:
        header += struct.pack("<5I", dxgi, 3, 0, array_size, 0)  # dimension 3: TEXTURE2D
    return header


DDPF_FOURCC, DDPF_RGB, DDPF_ALPHAPIXELS = 0x4, 0x40, 0x1
DDS_HEADERS = [
    ("DXT1", _dds_header(DDPF_FOURCC, b"DXT1"), "BGRA", PixelFormat.DXT1),
    ("DXT5", _dds_header(DDPF_FOURCC, b"DXT5"), "BGRA", PixelFormat.DXT5),
    ("DX10 BC1_UNORM_SRGB", _dds_header(DDPF_FOURCC, b"DX10", dxgi=72), "BGRA", PixelFormat.DXT1),
    ("DX10 BC2_UNORM", _dds_header(DDPF_FOURCC, b"DX10", dxgi=74), "BGRA", PixelFormat.DXT3),
    ("DX10 BC3_UNORM", _dds_header(DDPF_FOURCC, b"DX10", dxgi=77), "BGRA", PixelFormat.DXT5),
    ("DX10 BC7_UNORM", _dds_header(DDPF_FOURCC, b"DX10", dxgi=98), "BGRA", None),
    ("DX10 B8G8R8A8_UNORM_SRGB", _dds_header(DDPF_FOURCC, b"DX10", dxgi=91), "BGRA", PixelFormat.A8R8G8B8),
    ("DX10 R8G8B8A8_UNORM, BGRA peg", _dds_header(DDPF_FOURCC, b"DX10", dxgi=28), "BGRA", None),
    ("DX10 R8G8B8A8_UNORM, RGBA peg", _dds_header(DDPF_FOURCC, b"DX10", dxgi=28), "RGBA", PixelFormat.A8R8G8B8),
    ("DX10 array of 2", _dds_header(DDPF_FOURCC, b"DX10", dxgi=77, array_size=2), "BGRA", None),
    (
        "BGRA masks",
        _dds_header(DDPF_RGB | DDPF_ALPHAPIXELS, bits=32, masks=(0xFF0000, 0xFF00, 0xFF, 0xFF000000)),
        "BGRA",
        PixelFormat.A8R8G8B8,
    ),
    (
        "RGBA masks, BGRA peg",
        _dds_header(DDPF_RGB | DDPF_ALPHAPIXELS, bits=32, masks=(0xFF, 0xFF00, 0xFF0000, 0xFF000000)),
        "BGRA",
        None,
    ),
    ("565 masks", _dds_header(DDPF_RGB, bits=16, masks=(0xF800, 0x07E0, 0x001F, 0)), "BGRA", PixelFormat.R5G6B5),
    (
        "4444 masks",
        _dds_header(DDPF_RGB | DDPF_ALPHAPIXELS, bits=16, masks=(0xF00, 0xF0, 0xF, 0xF000)),
        "BGRA",
        PixelFormat.A4R4G4B4,
    ),
    ("X8R8G8B8 (no alpha)", _dds_header(DDPF_RGB, bits=32, masks=(0xFF0000, 0xFF00, 0xFF, 0)), "BGRA", None),
]


@pytest.mark.parametrize(("header", "order", "expected"), [c[1:] for c in DDS_HEADERS], ids=[c[0] for c in DDS_HEADERS])
def test_dds_headers_editors_write_map_to_the_peg_format_of_their_bytes(
    header: bytes, order: str, expected: PixelFormat | None
) -> None:
    from gamepak.formats.rfg.peg.dds import read_dds

    dds = read_dds(header + b"data", "x.dds", order)
    assert (dds.width, dds.height, dds.mips, dds.format, dds.data) == (8, 8, 1, expected, b"data")


@pytest.mark.parametrize(
    ("blob", "problem"),
    [
        (b"DDS " + bytes(50), "not a DDS file"),
        (_dds_header(DDPF_FOURCC, b"DXT5", size=100), "offset 4: a DDS header is 124 bytes"),
        (_dds_header(DDPF_FOURCC, b"DX10", dxgi=77)[:130], "offset 128: the DX10 header is cut short"),
        # Formats no peg format stores and Pillow does not decode: named, never NotImplementedError.
        (_dds_header(DDPF_FOURCC, b"DX10", dxgi=2), r"offset 128: DXGI format 2 \(R32G32B32A32_FLOAT\) is not one"),
        (_dds_header(DDPF_FOURCC, b"DX10", dxgi=999), "offset 128: DXGI format 999 is not one gamepak reads"),
        (_dds_header(DDPF_FOURCC, b"DXT2"), "offset 84: FourCC 'DXT2' is not one gamepak reads"),
    ],
)
def test_broken_dds_headers_are_named(blob: bytes, problem: str) -> None:
    from gamepak.formats.rfg.peg.dds import read_dds

    with pytest.raises(GamepakError, match=f"x.dds: {problem}"):
        read_dds(blob, "x.dds")


def test_format_labels() -> None:
    assert format_by_label("dxt5") is PixelFormat.DXT5 and format_by_label("8888") is PixelFormat.A8R8G8B8
    with pytest.raises(ValueError):
        format_by_label("BC7")


# -- hostile pegs ---------------------------------------------------------------------------------
def _patched(cpu: bytes, offset: int, fmt: str, value: int) -> bytes:
    out = bytearray(cpu)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


@pytest.mark.parametrize(
    ("offset", "fmt", "value", "field"),
    [
        (0x10, "<H", 60000, "entry count"),
        (0x14, "<H", 60000, "entry count"),
        (0x08, "<I", 1, "CPU file size"),
        (0x0C, "<I", 10**9, "GPU file size"),
        (24 + 0x00, "<I", 4000, "data offset"),
        (24 + 0x1C, "<I", 10**9, "data offset"),
        (24 + 0x1C, "<I", 100, "frame size"),
        (24 + 0x1B, "<B", 9, "mip levels"),
        (24 + 0x08, "<H", 999, "pixel format"),
        (24 + 0x04, "<H", 0, "size"),
    ],
)
def test_hostile_fields_raise_one_error_naming_file_and_field(offset: int, fmt: str, value: int, field: str) -> None:
    cpu, gpu = _hand_made()
    with pytest.raises(CorruptArchiveError, match=field) as caught:
        Peg.parse(_patched(cpu, offset, fmt, value), gpu, "evil.cpeg_pc")
    assert "evil.cpeg_pc" in str(caught.value)


def test_a_big_endian_console_peg_is_named_as_such() -> None:
    cpu, gpu = _hand_made()
    with pytest.raises(CorruptArchiveError, match="console"):
        Peg.parse(b"VKEG" + cpu[4:], gpu, "ps3.cpeg_pc")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fuzzed_pegs_raise_only_gamepak_errors(data: st.DataObject) -> None:
    peg = Peg.new("f.cpeg_pc")
    peg.add_texture("a", _image(8, 8), PixelFormat.DXT1)
    peg.add_texture("b", _image(4, 4), PixelFormat.A8R8G8B8)
    cpu, gpu = (bytearray(b) for b in peg.to_bytes())
    for _ in range(data.draw(st.integers(1, 6))):
        target = data.draw(st.sampled_from([cpu, gpu]))
        if target:
            target[data.draw(st.integers(0, len(target) - 1))] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(cpu)))
    try:
        parsed = Peg.parse(bytes(cpu[:cut] if data.draw(st.booleans()) else cpu), bytes(gpu), "f.cpeg_pc")
        for texture in parsed.textures:
            parsed.read_image(texture.name)
    except GamepakError:
        pass


# -- the real pair --------------------------------------------------------------------------------
def _rfgm_dds(texture_width: int, texture_height: int, mips: int, frame: bytes) -> bytes:
    """A DDS of a DXT1 entry as RFGM.Archiver's ImageConverter.BuildHeader writes one, field by
    field (flags CAPS|HEIGHT|WIDTH|PIXELFORMAT|MIPMAPCOUNT|LINEARSIZE, pitch width*height/2,
    depth 1, caps COMPLEX|TEXTURE|MIPMAP), then the entry's whole frame: chain and padding."""
    header = b"DDS " + struct.pack(
        "<7I",
        124,
        0x1007 | 0x20000 | 0x80000,
        texture_height,
        texture_width,
        texture_width * texture_height // 2,
        1,
        mips,
    )
    header += bytes(44) + struct.pack("<2I4s5I", 32, 0x4, b"DXT1", 0, 0, 0, 0, 0)
    return header + struct.pack("<5I", 0x8 | 0x1000 | 0x400000, 0, 0, 0, 0) + frame


@pytest.mark.parametrize("writer", ["gamepak", "RFGM.Archiver"])
def test_real_xray_pair_round_trips_and_reimports_byte_identically(tmp_path: Path, writer: str) -> None:
    """The game's pair written back byte for byte; its textures exported as DDS (gamepak's export,
    or RFGM.Archiver's: `00000 NAME PcDxt1 4.dds` holding the 688-byte frame) and imported
    through the DDS reader into the pair with its pixels wiped give the game's bytes again."""
    from gamepak.ops.textures import export_textures, import_textures

    with gamepak.open(sample("vpp/xray_effect.str2_pc")) as pack:
        cpu, gpu = pack.read("xray_effect.cpeg_pc"), pack.read("xray_effect.gpeg_pc")
    peg = Peg.parse(cpu, gpu, "xray_effect.cpeg_pc")
    assert [t.summary()["format"] for t in peg.textures] == ["DXT1"] * 4
    assert peg.to_bytes() == (cpu, gpu)
    (tmp_path / "game").mkdir()
    (tmp_path / "game" / "xray_effect.cpeg_pc").write_bytes(cpu)
    (tmp_path / "game" / "xray_effect.gpeg_pc").write_bytes(gpu)
    if writer == "gamepak":
        written = export_textures(tmp_path / "game" / "xray_effect.cpeg_pc", tmp_path / "dds", kind="dds")
        assert len(written) == 4
    else:
        (tmp_path / "dds").mkdir()
        for order, texture in enumerate(peg.textures):
            frame = gpu[texture.data_offset : texture.data_offset + texture.frame_size]
            assert (len(frame), texture.chain_size) == (688, 680)
            dds = _rfgm_dds(texture.width, texture.height, texture.mips, frame)
            (tmp_path / "dds" / f"{order:05} {texture.name} PcDxt1 {texture.mips}.dds").write_bytes(dds)
    wiped = tmp_path / "wiped"
    wiped.mkdir()
    (wiped / "xray_effect.cpeg_pc").write_bytes(cpu)
    (wiped / "xray_effect.gpeg_pc").write_bytes(bytes(len(gpu)))
    changed = import_textures(wiped / "xray_effect.cpeg_pc", tmp_path / "dds")
    assert changed == [t.name for t in peg.textures]
    assert (wiped / "xray_effect.cpeg_pc").read_bytes() == cpu
    assert (wiped / "xray_effect.gpeg_pc").read_bytes() == gpu


# -- verify of packs holding pegs --------------------------------------------------------------
@pytest.mark.parametrize("broken", [False, True])
def test_verify_reports_a_broken_peg_inside_a_pack(tmp_path, broken: bool) -> None:  # type: ignore[no-untyped-def]
    cpu, gpu = _hand_made()
    if broken:
        cpu = _patched(cpu, 24 + 0x1B, "<B", 9)
    path = tmp_path / "zone.str2_pc"
    with gamepak.create(path, "vpp") as writer:
        writer.add("xray.cpeg_pc", cpu)
        writer.add("xray.gpeg_pc", gpu)
    with gamepak.open(path) as pack:
        problems = [p.message for p in pack.check() if p.severity == "error"]
    if broken:
        assert len(problems) == 1 and "mip levels" in problems[0] and "xray.cpeg_pc" in problems[0]
    else:
        assert problems == []


# -- finding pegs in packs ---------------------------------------------------------------------
@pytest.mark.parametrize("batch_bytes", [64 << 20, 1])
def test_pegs_of_a_pack_come_in_archive_order_nested_ones_where_their_pack_stands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch_bytes: int
) -> None:
    from gamepak.formats.rfg.peg import sources
    from gamepak.formats.rfg.peg.sources import iter_pegs

    monkeypatch.setattr(sources, "BATCH_BYTES", batch_bytes)  # 1: every pair read on its own

    cpu, gpu = _hand_made()
    inner = tmp_path / "inner.str2_pc"
    with gamepak.create(inner, "vpp") as writer:
        writer.add("b.cpeg_pc", cpu)
        writer.add("b.gpeg_pc", gpu)
    outer = tmp_path / "outer.vpp_pc"
    with gamepak.create(outer, "vpp", flags=3) as writer:  # compressed + condensed: one stream
        writer.add("a.cpeg_pc", cpu)
        writer.add("inner.str2_pc", inner.read_bytes())
        writer.add("alone.cpeg_pc", cpu)  # no GPU partner: not a peg to show
        writer.add("a.gpeg_pc", gpu)
        writer.add("c.cvbm_pc", cpu)
        writer.add("c.gvbm_pc", gpu)
    found = [(path, peg.name, [t.name for t in peg.textures]) for path, peg in iter_pegs(outer)]
    assert found == [
        ("a.cpeg_pc", f"{outer}/a.cpeg_pc", ["heat_map_enemy.tga"]),
        ("inner.str2_pc/b.cpeg_pc", f"{outer}/inner.str2_pc/b.cpeg_pc", ["heat_map_enemy.tga"]),
        ("c.cvbm_pc", f"{outer}/c.cvbm_pc", ["heat_map_enemy.tga"]),
    ]


def test_the_cpu_file_alone_lists_the_textures_the_pair_holds() -> None:
    """`read_entries` (what the catalog uses) checks what it can without the GPU file: the
    entries against the GPU size the header gives."""
    from gamepak.formats.rfg.peg.reader import read_entries

    peg = Peg.new("x.cpeg_pc")
    peg.add_texture("a", _image(16, 8), PixelFormat.DXT5)
    peg.add_texture("b", _image(4, 4), PixelFormat.A8R8G8B8)
    cpu, gpu = peg.to_bytes()
    header, textures = read_entries(cpu, "x.cpeg_pc")
    assert textures == Peg.parse(cpu, gpu).textures and header["alignment"] == 16
    short = bytearray(cpu)
    short[12:16] = (len(gpu) - 16).to_bytes(4, "little")  # the header's GPU size: one frame too small
    with pytest.raises(CorruptArchiveError, match="entry 1 data offset: .* runs past the GPU file"):
        read_entries(bytes(short), "x.cpeg_pc")


def test_a_texture_with_data_after_its_chain_is_not_replaced() -> None:
    """A frame larger than its mip chain (cube map faces, animation frames) would lose that data
    to a new chain: refused, naming the texture; zero padding is not data and is replaced."""
    peg = Peg.new("x.cpeg_pc")
    peg.add_texture("sky", _image(8, 8), PixelFormat.DXT1)
    texture = peg.textures[0]
    chain = peg.mip_data("sky")
    texture.frame_size = 6 * len(chain)  # six faces
    peg._frames[0] = chain * 6
    again = Peg.parse(*peg.to_bytes())
    with pytest.raises(GamepakError, match="sky.tga: its frame holds 272 bytes after the mip chain"):
        again.replace_image("sky", _image(8, 8, seed=5))
    assert again.to_bytes() == peg.to_bytes()
    padded = Peg.new("y.cpeg_pc")
    padded.add_texture("t", _image(8, 8), PixelFormat.DXT1)
    padded.textures[0].frame_size += 32
    padded._frames[0] += bytes(32)
    padded = Peg.parse(*padded.to_bytes())
    padded.replace_image("t", _image(8, 8, seed=5))


# -- one partner rule ------------------------------------------------------------------------------
def test_names_that_differ_in_case_are_one_pair_everywhere(tmp_path: Path) -> None:
    """The game compares names ignoring case: `Crate.cpeg_pc` and `crate.gpeg_pc` are a pair for
    `verify`, `texture` (found, and written back to `crate.gpeg_pc`), `Peg.open` and the catalog."""
    from gamepak.catalog.textures import cpu_positions
    from gamepak.formats.rfg.peg.sources import check_pegs, find_partner, iter_pegs, partner_path
    from gamepak.ops.textures import import_textures

    cpu, gpu = _hand_made()
    pack = tmp_path / "zone.str2_pc"
    with gamepak.create(pack, "vpp") as writer:
        writer.add("Crate.cpeg_pc", cpu)
        writer.add("crate.gpeg_pc", gpu)
        writer.add("Lone.cpeg_pc", cpu)  # no partner by any rule
    with gamepak.open(pack) as archive:
        assert [p.member for p in check_pegs(archive)] == ["Lone.cpeg_pc"]  # a warning: no GPU partner
        assert [archive.infolist()[i].name for i in cpu_positions(archive.infolist())] == ["Crate.cpeg_pc"]
    found = list(iter_pegs(pack))
    assert [(path, peg.gpu_name) for path, peg in found] == [("Crate.cpeg_pc", "crate.gpeg_pc")]
    assert find_partner("Crate.cpeg_pc", ["a.txt", "CRATE.GPEG_PC"]) == "CRATE.GPEG_PC"
    assert find_partner("Crate.cpeg_pc", ["crate.gvbm_pc"]) is None
    (tmp_path / "Crate.cpeg_pc").mkdir()  # the folder export lays the peg's images out in
    Image.new("RGBA", (32, 32), (10, 20, 30, 255)).save(tmp_path / "Crate.cpeg_pc" / "heat_map_enemy.png")
    assert import_textures(pack, tmp_path) == ["Crate.cpeg_pc/heat_map_enemy.tga"]
    with gamepak.open(pack) as archive:
        assert archive.namelist() == ["Crate.cpeg_pc", "crate.gpeg_pc", "Lone.cpeg_pc"]
        assert archive.read("crate.gpeg_pc") != gpu and not [p for p in archive.check() if p.severity == "error"]
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "Crate.cpeg_pc").write_bytes(cpu)
    (loose / "crate.gpeg_pc").write_bytes(gpu)
    assert partner_path(loose / "Crate.cpeg_pc") == loose / "crate.gpeg_pc"
    opened = Peg.open(loose / "Crate.cpeg_pc")
    assert opened.gpu_name == str(loose / "crate.gpeg_pc")
    import_textures(loose / "Crate.cpeg_pc", tmp_path / "Crate.cpeg_pc")
    assert sorted(p.name for p in loose.iterdir()) == ["Crate.cpeg_pc", "crate.gpeg_pc"]  # written back there
    assert (loose / "crate.gpeg_pc").read_bytes() != gpu


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fuzzed_dds_files_raise_only_gamepak_errors(data: st.DataObject) -> None:
    """Any DDS header field or data length: `read_dds` and the chain it gives an entry
    (`fit_chain`, which decodes and encodes missing mips) raise GamepakError or work."""
    from gamepak.formats.rfg.peg.dds import decode_top, fit_chain, read_dds

    peg = Peg.new("d.cpeg_pc")
    fmt = data.draw(st.sampled_from([PixelFormat.DXT1, PixelFormat.DXT5, PixelFormat.A8R8G8B8, PixelFormat.R5G6B5]))
    peg.add_texture("t", _image(8, 8), fmt)
    blob = bytearray(peg.to_dds("t"))
    for _ in range(data.draw(st.integers(0, 4))):
        at = data.draw(st.integers(0, 127))
        blob[at] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        blob[84:88] = b"DX10"
        blob[128:128] = struct.pack("<5I", data.draw(st.integers(0, 140)), 3, 0, data.draw(st.integers(0, 3)), 0)
    blob = blob[: data.draw(st.integers(0, len(blob)))]
    try:
        dds = read_dds(bytes(blob), "f.dds")
        if max(dds.width, dds.height) <= 64:
            decode_top(dds)
            if dds.format is not None:
                fit_chain(dds, dds.format, data.draw(st.integers(1, 4)), "f.dds")
    except GamepakError:
        pass
