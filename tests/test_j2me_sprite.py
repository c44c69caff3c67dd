"""Gameloft BSPRITE v3 sprites (formats/j2me/sprite): sprites built by hand from
gameloft-sprites.md for every encoding, colour format and flip, composed as the game draws them,
written back byte for byte, hostile input refused in one line, a property test of the encoders,
and every sprite of the samples (28 in six .f packs, 3 in demoSpr.bin) read and re-encoded to
its own bytes."""

from __future__ import annotations

import struct
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sprite_bytes import BLUE, GREEN, MAGENTA_CLEAR, RED, simple_sprite, sprite_bytes

import gamepak
from gamepak.errors import CorruptArchiveError, FormatLimitError
from gamepak.formats.j2me.sprite import codec, compose, read_sprite
from gamepak.formats.j2me.sprite.compose import compose_anim, compose_frame, contact_sheet, frame_box
from gamepak.formats.j2me.sprite.files import export_files
from gamepak.formats.j2me.sprite.summary import preview_images

from conftest import sample

CLEAR = [0, 0, 0, 0]
R, G, B = [248, 0, 0, 255], [0, 248, 0, 255], [0, 0, 248, 255]


# -- encodings, by hand from §4 -----------------------------------------------------------------

# (encoding, width, height, colours, data, indices row-major)
ENCODED = [
    # I2: 8 pixels a byte, first in the top bit; 3x3 = 9 pixels, the last byte's low 7 bits 0.
    (0x0200, 3, 3, 2, bytes([0b10110010, 0b10000000]), [1, 0, 1, 1, 0, 0, 1, 0, 1]),
    # I4: 4 pixels a byte (2 bits); 5 pixels, padded.
    (0x0400, 5, 1, 4, bytes([0b11100100, 0b01000000]), [3, 2, 1, 0, 1]),
    # I16: 2 pixels a byte; 3 pixels, the last low nibble 0.
    (0x1600, 3, 1, 16, bytes([0xF1, 0x70]), [15, 1, 7]),
    (0x5602, 2, 2, 255, bytes([0, 200, 254, 7]), [0, 200, 254, 7]),
    # I127RLE: a run of 3 (0x83, colour), a literal, a run crossing the row end.
    (0x27F1, 3, 2, 128, bytes([0x83, 5, 2, 0x82, 127]), [5, 5, 5, 2, 127, 127]),
    # I256RLE: b < 128 = a run of b; b >= 128 = b - 128 literals.
    (0x56F2, 4, 2, 255, bytes([3, 200, 0x82, 1, 2, 3, 9]), [200, 200, 200, 1, 2, 9, 9, 9]),
    # I64RLE with 4 colours: colour in the low 2 bits, count - 1 above.
    (0x64F0, 5, 1, 4, bytes([(2 << 2) | 3, (1 << 2) | 1]), [3, 3, 3, 1, 1]),
]


@pytest.mark.parametrize(("encoding", "width", "height", "colours", "data", "indices"), ENCODED)
def test_each_encoding_by_hand(
    encoding: int, width: int, height: int, colours: int, data: bytes, indices: list[int]
) -> None:
    decoded = codec.decode(encoding, data, width, height, colours)
    assert decoded.shape == (height, width)
    assert decoded.reshape(-1).tolist() == indices
    assert codec.encode(encoding, decoded, colours) == data


def test_i127rle_encoder_follows_the_exporters_rule() -> None:
    """Two or more equal pixels: one run of as many as possible (at most 127); else literals."""
    pixels = np.array([1, 2, 2, 3] + [4] * 130, dtype=np.uint8)
    assert codec.encode(0x27F1, pixels, 128) == bytes([1, 0x82, 2, 3, 0x80 + 127, 4, 0x83, 4])
    # A run of 1 left over after 127 is a literal.
    assert codec.encode(0x27F1, np.array([4] * 128, dtype=np.uint8), 128) == bytes([0x80 + 127, 4, 4])


# -- colour formats, by hand from §3 --------------------------------------------------------------


@pytest.mark.parametrize(
    ("pixel_format", "entries", "rgba"),
    [
        (0x8888, [0x00FF00FF, 0xFF102030], [[255, 0, 255, 0], [0x10, 0x20, 0x30, 255]]),
        (0x4444, [0xF13F, 0x0000], [[17, 51, 255, 255], [0, 0, 0, 0]]),
        (0x5515, [MAGENTA_CLEAR, 0x8000 | (31 << 10) | (1 << 5) | 2], [[248, 0, 248, 0], [248, 8, 16, 255]]),
        (0x6505, [0xF81F, 0xFFFF, 0x07E0], [[248, 0, 248, 0], [248, 252, 248, 255], [0, 252, 0, 255]]),
    ],
)
def test_each_colour_format(pixel_format: int, entries: list[int], rgba: list[list[int]]) -> None:
    assert codec.palette_rgba(pixel_format, entries).tolist() == rgba
    data = sprite_bytes(
        [(1, 1)], [], [], [], [], [], [bytes([0])], pixel_format=pixel_format, palettes=[entries], encoding=0x5602
    )
    sprite = read_sprite(data)
    assert sprite.palettes == [entries] and sprite.to_bytes() == data


@pytest.mark.parametrize(("encoding", "width", "height", "colours", "data", "indices"), ENCODED)
def test_each_encoding_in_a_sprite_round_trips(
    encoding: int, width: int, height: int, colours: int, data: bytes, indices: list[int]
) -> None:
    palette = [0x8000 | i for i in range(colours)]
    raw = sprite_bytes(
        [(width, height)],
        [(0, 0, 0, 0)],
        [(1, 0)],
        [(0, 0, width, height)],
        [],
        [],
        [data],
        palettes=[palette],
        encoding=encoding,
    )
    sprite = read_sprite(raw)
    assert sprite.module_indices(0).reshape(-1).tolist() == indices
    assert sprite.to_bytes() == raw


# -- the model ------------------------------------------------------------------------------------


def test_hand_made_sprite_reads_and_writes_back() -> None:
    data = simple_sprite()
    sprite = read_sprite(data)
    assert sprite.modules == [(2, 1), (1, 2)]
    assert [(fm.module, fm.x, fm.y, fm.flags) for fm in sprite.fmodules] == [(0, 0, 0, 0), (1, 2, -1, 2)]
    assert [(f.count, f.first, f.rect) for f in sprite.frames] == [(2, 0, (0, -1, 3, 2)), (0, 2, (0, 0, 0, 0))]
    assert [a.frame for a in sprite.aframes] == [0, 0, 255]
    assert sprite.encoding_name == "I256" and sprite.pixel_format_name == "1555"
    assert sprite.palettes == [[MAGENTA_CLEAR, RED, GREEN, BLUE]]
    assert sprite.to_bytes() == data


def test_rect_is_kept_as_stored_even_when_wrong() -> None:
    """The game's own sprites have rects computed from offsets that wrapped mod 256: kept."""
    data = sprite_bytes([(1, 1)], [(0, 126, 0, 0)], [(1, 0)], [(-126, 0, 1, 1)], [], [], [bytes([1])])
    sprite = read_sprite(data)
    assert sprite.frames[0].rect == (-126, 0, 1, 1)
    assert frame_box(sprite, 0) == (126, 0, 127, 1)  # drawn at the wrapped (stored) offset
    assert sprite.to_bytes() == data


def test_a_sprite_without_modules_has_no_image_part() -> None:
    data = sprite_bytes([], [], [(0, 0)], [(0, 0, 0, 0)], [], [], [])
    sprite = read_sprite(data)
    assert sprite.pixel_format is None and sprite.encoding is None and sprite.to_bytes() == data


def test_count_high_byte_is_kept_and_the_low_byte_used() -> None:
    """[DR] reads the frame count's low byte only."""
    data = sprite_bytes([(1, 1)], [(0, 0, 0, 0)], [(0x0101, 0)], [(0, 0, 1, 1)], [], [], [bytes([1])])
    sprite = read_sprite(data)
    assert sprite.frames[0].count == 0x0101 and list(sprite.frames[0].used) == [0]
    assert sprite.to_bytes() == data


def test_edited_module_is_re_encoded_and_unchanged_keeps_its_bytes() -> None:
    sprite = read_sprite(simple_sprite())
    assert not sprite.set_module_indices(0, np.array([[1, 2]], dtype=np.uint8))
    assert sprite.set_module_indices(0, np.array([[3, 3]], dtype=np.uint8))
    assert sprite.module_data[0] == bytes([3, 3])
    with pytest.raises(FormatLimitError, match="module 1: pixel 0 has colour index 4"):
        sprite.set_module_indices(1, np.array([[4], [0]], dtype=np.uint8))


# -- composition, from §5-6 ----------------------------------------------------------------------


def test_frame_composed_with_flips() -> None:
    sprite = read_sprite(simple_sprite())
    picture = compose_frame(sprite, 0)
    assert picture is not None and picture.origin == (0, 1)
    # Module 1 (blue over clear) flipped top-bottom by its FModule: blue lands at y = 0.
    assert picture.rgba.tolist() == [[CLEAR, CLEAR, CLEAR], [R, G, B]]
    # The frame flipped left-right: each box mirrored about the origin, the modules too.
    flipped = compose_frame(sprite, 0, flags=1)
    assert flipped is not None and flipped.origin == (3, 1)
    assert flipped.rgba.tolist() == [[CLEAR, CLEAR, CLEAR], [B, G, R]]
    # Top-bottom: every box mirrored about the origin's horizontal line (row 0 goes to row -1);
    # module 1's own flag (2) XOR the frame's (2) leaves it unflipped, its clear half below.
    upside = compose_frame(sprite, 0, flags=2)
    assert upside is not None and upside.origin == (0, 1)
    assert upside.rgba.tolist() == [[R, G, B], [CLEAR, CLEAR, CLEAR]]
    assert compose_frame(sprite, 1) is None  # empty frame


def test_later_fmodules_draw_over_earlier_ones_and_clear_pixels_do_not() -> None:
    data = sprite_bytes(
        [(2, 1), (2, 1)], [(0, 0, 0, 0), (1, 0, 0, 0)], [(2, 0)], [(0, 0, 2, 1)], [], [], [bytes([1, 1]), bytes([0, 3])]
    )
    picture = compose_frame(read_sprite(data), 0)
    assert picture is not None and picture.rgba.tolist() == [[R, B]]


def test_anim_on_one_canvas_with_offsets_flips_and_a_blink() -> None:
    animation = compose_anim(read_sprite(simple_sprite()), 0)
    assert animation.times == [2, 1, 3] and animation.origin == (0, 1)
    assert [cell[1].tolist() for cell in animation.cells] == [
        [R, G, B, CLEAR, CLEAR],
        [CLEAR, CLEAR, B, G, R],  # flag 1 with offset (5, 0): mirrored, then moved
        [CLEAR] * 5,  # frame 255: nothing
    ]


def test_contact_sheet_holds_every_module() -> None:
    sheet, rects = contact_sheet(read_sprite(simple_sprite()))
    assert len(rects) == 2
    left, top, right, bottom = rects[0]
    assert sheet[top:bottom, left:right].tolist() == [[R, G]]


# -- hostile input -------------------------------------------------------------------------------


def _frames_end(data: bytes) -> int:
    return data.index(struct.pack("<BBbbB", 0, 2, 0, 0, 0))


BAD = [
    (simple_sprite()[:3], "the header needs 6 bytes", 0),
    (b"\xdf\x04" + simple_sprite()[2:], "version 0x04df", 0),
    (simple_sprite()[:2] + struct.pack("<I", 0x01010103) + simple_sprite()[6:], "flags 0x01010103", 2),
    # A module count past the end of the sprite: refused before anything is allocated.
    (simple_sprite()[:6] + b"\xff\xff", "65535 module sizes needs 131070 bytes", 8),
    (simple_sprite() + b"\0", "1 bytes after the sprite's end", len(simple_sprite())),
    (
        sprite_bytes([(1, 1)], [(3, 0, 0, 0)], [(1, 0)], [(0, 0, 1, 1)], [], [], [b"\1"]),
        "FModule 0 names module 3",
        None,
    ),
    (
        sprite_bytes([(1, 1)], [(0, 0, 0, 0)], [(2, 0)], [(0, 0, 1, 1)], [], [], [b"\1"]),
        "frame 0 uses FModules 0..1",
        None,
    ),
    (sprite_bytes([(1, 1)], [], [], [], [(4, 1, 0, 0, 0)], [], [b"\1"]), "AFrame 0 names frame 4", None),
    (sprite_bytes([(1, 1)], [], [], [], [], [(1, 0)], [b"\1"]), "anim 0 uses AFrames 0..0", None),
    (sprite_bytes([(1, 1)], [], [], [], [], [], [b"\1"], pixel_format=0x1234), "unknown pixel format 0x1234", None),
    (sprite_bytes([(1, 1)], [], [], [], [], [], [b"\1"], encoding=0x9999), "unknown module encoding 0x9999", None),
    (
        sprite_bytes([(2, 2)], [], [], [], [], [], [bytes([0x85, 1])], encoding=0x27F1),
        "a run of 5 pixels goes past the module's 4 pixels",
        None,
    ),
    (
        sprite_bytes([(2, 2)], [], [], [], [], [], [bytes([1, 1, 1])]),
        "3 bytes of data where 2x2 I256 pixels take 4",
        None,
    ),
    (
        sprite_bytes([(2, 1)], [], [], [], [], [], [bytes([1, 9])]),
        "pixel (1, 0) has colour index 9, the palettes have 4",
        None,
    ),
    (sprite_bytes([(1, 1)], [], [], [], [], [], [b"\1"], palettes=[]), "no palette", None),
    (
        sprite_bytes([(1, 1)], [], [], [], [], [], [b"\1"], colours=200),
        "1 palettes of 200 colours needs 400 bytes",
        None,
    ),
    (
        sprite_bytes([(1, 1)], [], [], [], [], [], [b"\x81\x00\x01"], encoding=0x56F2),
        "1 bytes of data left after the module's 1 pixels",
        None,
    ),
]


@pytest.mark.parametrize(("data", "message", "offset"), BAD)
def test_hostile_sprites_are_refused_in_one_line(data: bytes, message: str, offset: int | None) -> None:
    with pytest.raises(CorruptArchiveError) as caught:
        read_sprite(data, "pack.f", "3")
    text = str(caught.value)
    assert message in text and "\n" not in text
    assert text.startswith("pack.f: offset ") and "member '3'" in text
    if offset is not None:
        assert caught.value.offset == offset


@settings(max_examples=40, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_after_a_valid_header_never_crash(tail: bytes) -> None:
    try:
        sprite = read_sprite(simple_sprite()[:6] + tail)
    except CorruptArchiveError:
        return
    assert sprite.to_bytes() == simple_sprite()[:6] + tail


# -- property: encode -> decode -> encode -------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(sorted(codec.ENCODINGS)),
    st.integers(1, 12),
    st.integers(1, 12),
    st.integers(1, 64),
    st.data(),
)
def test_encode_decode_encode(encoding: int, width: int, height: int, colours: int, data: st.DataObject) -> None:
    colours = min(colours, codec.ENCODING_COLOURS[encoding])
    values = data.draw(
        st.lists(st.integers(0, colours - 1), min_size=width * height, max_size=width * height)
        | st.lists(st.sampled_from([0, colours - 1]), min_size=width * height, max_size=width * height)
    )
    indices = np.array(values, dtype=np.uint8).reshape(height, width)
    encoded = codec.encode(encoding, indices, colours)
    decoded = codec.decode(encoding, encoded, width, height, colours)
    assert np.array_equal(decoded, indices)
    assert codec.encode(encoding, decoded, colours) == encoded


# -- the samples -----------------------------------------------------------------------------------

PACKS = ["gen1.f", "iga.f", "mm1.f", "mmv.f", "tips.f", "ui.f", "demoSpr.bin"]


def _sample_sprites() -> list[tuple[str, str, bytes]]:
    found = []
    for name in PACKS:
        with gamepak.open(sample(f"gameloft/{name}")) as pack:
            found += [(name, entry.name, pack.read(entry)) for entry in pack.infolist()]
    return found


def test_every_sample_sprite_reads_and_re_encodes_to_its_own_bytes() -> None:
    sprites = _sample_sprites()
    assert len(sprites) == 31
    encodings: set[str] = set()
    for pack, member, data in sprites:
        sprite = read_sprite(data, pack, member)
        assert sprite.to_bytes() == data, (pack, member)
        assert sprite.encoding is not None
        encodings.add(str(sprite.encoding_name))
        for index in range(len(sprite.modules)):
            indices = sprite.module_indices(index)
            assert codec.encode(sprite.encoding, indices, sprite.colours) == sprite.module_data[index]
        for frame in range(len(sprite.frames)):
            compose_frame(sprite, frame)
    assert encodings == {"I16", "I127RLE", "I4"}


def test_sample_details_from_the_spec() -> None:
    """mmv.f members 1-3: anim [frame 0, frame 255]; demoSpr.bin id 0: 8888 palettes."""
    with gamepak.open(sample("gameloft/mmv.f")) as pack:
        sprite = read_sprite(pack.read("1"))
    assert [af.frame for af in sprite.aframes] == [0, 255]
    cells = compose_anim(sprite, 0).cells
    assert cells[1].max() == 0 and cells[0].max() > 0
    with gamepak.open(sample("gameloft/demoSpr.bin")) as pack:
        demo = read_sprite(pack.read("0"))
    assert demo.pixel_format_name == "8888"


@st.composite
def sprites(draw: st.DrawFn) -> bytes:
    """Random well-formed sprites: any encoding, colour format, flips, offsets and frame 255."""
    encoding = draw(st.sampled_from(sorted(codec.ENCODINGS)))
    pixel_format = draw(st.sampled_from(sorted(codec.PIXEL_FORMATS)))
    colours = draw(st.integers(1, min(codec.ENCODING_COLOURS[encoding], 255, 40)))
    entry_max = 0xFFFFFFFF if pixel_format == 0x8888 else 0xFFFF
    palettes = draw(
        st.lists(st.lists(st.integers(0, entry_max), min_size=colours, max_size=colours), min_size=1, max_size=3)
    )
    modules = draw(st.lists(st.tuples(st.integers(1, 9), st.integers(1, 9)), min_size=1, max_size=4))
    module_data = []
    for width, height in modules:
        values = draw(st.lists(st.integers(0, colours - 1), min_size=width * height, max_size=width * height))
        module_data.append(codec.encode(encoding, np.array(values, dtype=np.uint8), colours))
    fmodules = draw(
        st.lists(
            st.tuples(
                st.integers(0, len(modules) - 1), st.integers(-128, 127), st.integers(-128, 127), st.integers(0, 3)
            ),
            max_size=6,
        )
    )
    frame_count = draw(st.integers(0, 3))
    frames = [(draw(st.integers(0, len(fmodules))), 0) for _ in range(frame_count)]
    frames = [(min(count, len(fmodules)), 0) for count, _ in frames]
    rects = [
        draw(st.tuples(st.integers(-128, 127), st.integers(-128, 127), st.integers(0, 255), st.integers(0, 255)))
        for _ in frames
    ]
    frame_index = st.integers(0, frame_count - 1) | st.just(255) if frame_count else st.just(255)
    aframes = draw(
        st.lists(
            st.tuples(
                frame_index, st.integers(0, 255), st.integers(-128, 127), st.integers(-128, 127), st.integers(0, 3)
            ),
            max_size=5,
        )
    )
    anims = [(len(aframes), 0)] if aframes else []
    return sprite_bytes(
        modules,
        fmodules,
        frames,
        rects,
        aframes,
        anims,
        module_data,
        pixel_format=pixel_format,
        palettes=palettes,
        encoding=encoding,
    )


@settings(max_examples=40, deadline=None)
@given(sprites())
def test_sprite_read_write_read(data: bytes) -> None:
    """read -> write gives the same bytes; every module decodes and re-encodes to its data; every
    frame and anim composes."""
    sprite = read_sprite(data)
    assert sprite.to_bytes() == data
    assert sprite.encoding is not None
    for index in range(len(sprite.modules)):
        assert codec.encode(sprite.encoding, sprite.module_indices(index), sprite.colours) == sprite.module_data[index]
    for frame in range(len(sprite.frames)):
        compose_frame(sprite, frame, flags=3)
    for anim in range(len(sprite.anims)):
        compose_anim(sprite, anim, palette=len(sprite.palettes) - 1)


def test_writing_refuses_what_the_fields_cannot_hold() -> None:
    sprite = read_sprite(simple_sprite())
    sprite.aframes = sprite.aframes * 30000  # 90,000 AFrames: the count is a u16
    with pytest.raises(FormatLimitError, match="90000 AFrames: a sprite's count holds at most 65535"):
        sprite.to_bytes()
    sprite = read_sprite(simple_sprite())
    sprite.palettes.append([0, 1])
    with pytest.raises(FormatLimitError, match="every palette must hold 4 colours"):
        sprite.to_bytes()
    sprite = read_sprite(simple_sprite())
    sprite.palettes = sprite.palettes * 17
    with pytest.raises(FormatLimitError, match="17 palettes: the game holds at most 16"):
        sprite.check_limits()


def test_hostile_sizes_are_refused_before_drawing() -> None:
    """A few KiB naming many big run-length modules, or an anim of 255 cells far apart: refused
    in one line rather than decoded into gigabytes."""
    run = bytes([0x80 + 127, 1]) * 512 + bytes([0x80 + 1, 1])  # 65,025 pixels in 1,026 bytes
    data = sprite_bytes([(255, 255)] * 300, [], [], [], [], [], [run] * 300, encoding=0x27F1)
    with pytest.raises(CorruptArchiveError, match="the modules hold 19507500 pixels, more than gamepak decodes"):
        read_sprite(data)
    far = [(0, 1, x, y, 0) for x, y in [(-128, -128), (127, 127)] * 127]
    wide = sprite_bytes(
        [(255, 255)],
        [(0, -128, -128, 0), (0, 127, 127, 0)],
        [(2, 0)],
        [(0, 0, 0, 0)],
        far,
        [(len(far), 0)],
        [run],
        encoding=0x27F1,
    )
    with pytest.raises(FormatLimitError, match="anim 0: 254 cells of 765x765 pixels, more than gamepak draws"):
        compose_anim(read_sprite(wide), 0)


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(
        [
            simple_sprite(),
            sprite_bytes(
                [(3, 2)],
                [(0, 1, -1, 3)],
                [(1, 0)],
                [(1, -1, 3, 2)],
                [(0, 1, 2, 0, 1)],
                [(1, 0)],
                [bytes([0x83, 1, 0x83, 2])],
                encoding=0x27F1,
            ),
        ]
    ),
    st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=4),
    st.integers(0, 8),
)
def test_mutated_sprites_read_or_are_refused_in_one_line(data: bytes, edits: list[tuple[int, int]], cut: int) -> None:
    """Bytes changed and the end cut: the reader raises only CorruptArchiveError (one line), and
    what it reads writes back to the same bytes and draws."""
    buffer = bytearray(data)
    for position, value in edits:
        buffer[position % len(buffer)] = value
    mutated = bytes(buffer[: len(buffer) - cut])
    try:
        sprite = read_sprite(mutated, "x.f", "0")
    except CorruptArchiveError as exc:
        assert "\n" not in str(exc)
        return
    assert sprite.to_bytes() == mutated
    for frame in range(len(sprite.frames)):
        compose_frame(sprite, frame, flags=1)
    for anim in range(len(sprite.anims)):
        compose_anim(sprite, anim)


# -- the drawing budget (fuzz_read_sprite) ------------------------------------------------------------

# 255 x 255 pixels of I127RLE in 1,026 bytes.
BIG_RUN = bytes([0x80 + 127, 1]) * 512 + bytes([0x80 + 1, 1])


def test_drawing_cost_by_hand() -> None:
    """simple_sprite: the sheet 2 x 4 pixels; frame 0's box (0, -1)-(3, 1) and its modules' 4
    pixels; anim 0's canvas the union of frame 0 at (0, 0) and flipped at (5, 0), (0, -1)-(5, 1),
    3 cells of it and frame 0's 4 pixels twice (frame 255 draws nothing)."""
    sprite = read_sprite(simple_sprite())
    assert compose.drawing_cost(sprite) == 2 * 4 + (6 + 4) + (3 * 10 + 8)
    assert compose.check_drawing(sprite, palettes=2) == 56


def test_frames_too_costly_to_draw_are_refused_before_drawing() -> None:
    """Found by thinking through fuzz_read_sprite's drawing path: 2 KiB naming 10 frames of
    255 FModules of 255 x 255 pixels each took 56 s to export; now refused at once, in one
    line, by export, the viewer's preview and `sprite export`."""
    fmodules = [(0, (i * 7) % 256 - 128, (i * 13) % 256 - 128, i & 3) for i in range(255)]
    data = sprite_bytes(
        [(255, 255)], fmodules, [(255, 0)] * 10, [(0, 0, 0, 0)] * 10, [], [], [BIG_RUN], encoding=0x27F1
    )
    sprite = read_sprite(data)
    started = time.monotonic()
    with pytest.raises(
        FormatLimitError, match=r"drawing its 10 frames and 0 anims writes \d+ pixels, more than"
    ) as caught:
        export_files(sprite)
    assert "\n" not in str(caught.value)
    with pytest.raises(FormatLimitError, match=r"^pack.f: drawing its 10 frames"):
        preview_images(data, "pack.f")
    assert time.monotonic() - started < 5


def test_anims_sharing_aframes_past_the_placements_budget_are_refused() -> None:
    """300 anims of the same 255 AFrames, each drawing a frame of 255 FModules: 19.5 M
    placements from 2.6 KiB, refused from the counts before any box is computed."""
    data = sprite_bytes(
        [(1, 1)],
        [(0, 0, 0, 0)] * 255,
        [(255, 0)],
        [(0, 0, 1, 1)],
        [(0, 1, 0, 0, 0)] * 255,
        [(255, 0)] * 300,
        [b"\1"],
    )
    with pytest.raises(FormatLimitError, match="places 19584255 FModules and AFrames, more than gamepak draws"):
        compose.drawing_cost(read_sprite(data))


def test_preview_draws_only_the_palettes_the_budget_allows(monkeypatch: pytest.MonkeyPatch) -> None:
    data = sprite_bytes(
        [(1, 1)], [(0, 0, 0, 0)], [(1, 0)], [(0, 0, 1, 1)], [], [], [b"\1"], palettes=[[RED, GREEN]] * 3
    )
    assert len(preview_images(data)["palettes"]) == 3
    cost = compose.drawing_cost(read_sprite(data))
    monkeypatch.setattr(compose, "MAX_DRAWN_PIXELS", 2 * cost)
    assert len(preview_images(data)["palettes"]) == 2


@settings(max_examples=30, deadline=None)
@given(sprites(), st.integers(0, 3), st.integers(-200, 200), st.integers(-200, 200))
def test_a_frames_box_moved_is_its_box_drawn_there(data: bytes, flags: int, dx: int, dy: int) -> None:
    """The anims' boxes come from each frame's unflipped box, mirrored and moved: the same box
    its FModules give drawn with the flags at the offset."""
    sprite = read_sprite(data)
    for frame in range(len(sprite.frames)):
        box = frame_box(sprite, frame)
        moved = None if box is None else compose._moved(box, flags, dx, dy)
        assert moved == frame_box(sprite, frame, flags, dx, dy)


def test_palettes_of_no_colours_are_refused() -> None:
    """Found reviewing fuzz_read_sprite's export path (data/fuzz/fuzz_read_sprite/empty-module-
    zero-colours): a 0x3 module needs no colour, so palettes of 0 colours read, but their export
    held no palette to import back. Refused like no palette at all, at the colour count."""
    data = sprite_bytes([(0, 3)], [(0, 0, 0, 0)], [(1, 0)], [(0, 0, 0, 0)], [], [], [b""], palettes=[[]])
    with pytest.raises(
        CorruptArchiveError, match="1 palettes of 0 colours: the modules' colours are undefined"
    ) as caught:
        read_sprite(data, "pack.f", "3")
    assert caught.value.offset == 33 and "\n" not in str(caught.value)
    assert len(read_sprite(data[:33] + b"\1\0\0" + data[34:]).modules) == 1  # one colour (entry 0): reads
