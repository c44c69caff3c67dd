"""BSPRITE module images and palettes: every encoding and colour format of
`gameloft-sprites.md` §3-4, decoded to palette indices / 8-bit RGBA and encoded back.

Encodings (u16 code in the sprite, pixels row by row from the top-left, no row padding):

| name    | code   | data                                                                         |
|---------|--------|------------------------------------------------------------------------------|
| I2      | 0x0200 | 8 pixels a byte, first pixel in the top bit; unused low bits of the last byte 0 |
| I4      | 0x0400 | 4 pixels a byte (2 bits each), likewise                                      |
| I16     | 0x1600 | 2 pixels a byte (4 bits each), likewise                                      |
| I256    | 0x5602 | one byte a pixel                                                             |
| I127RLE | 0x27F1 | b < 128: one pixel b; else the next byte repeated b - 128 times              |
| I256RLE | 0x56F2 | b < 128: the next byte repeated b times; else b - 128 literal bytes follow   |
| I64RLE  | 0x64F0 | each byte: colour in its low B bits (B = bits of nColours - 1), count - 1 above |

Runs may cross row ends. I64RLE's B is the bits `nColours - 1` needs, as the Gameloft class
computes it in its fixed copies (some copies start the count at 1, one bit more: a bug those
copies' own comments fix); no sample has I64RLE. I127RLE's encoder (the exporter's, reproducing every sample module):
wherever at least two equal pixels follow, one run of as many as possible (at most 127), else a
literal. I256RLE and I64RLE are in no sample: their encoders here are greedy (runs of 2 or more
pixels), so an unchanged module keeps its stored bytes instead (the model does that).

Colour formats (palette entries, converted as the game does):

| name | code   | entry | to ARGB                                                                  |
|------|--------|-------|--------------------------------------------------------------------------|
| 8888 | 0x8888 | u32   | A 24-31, R 16-23, G 8-15, B 0-7                                          |
| 4444 | 0x4444 | u16   | A, R, G, B nibbles from the top, each n -> n * 17                        |
| 1555 | 0x5515 | u16   | bit 15 opaque (else alpha 0); R 10-14, G 5-9, B 0-4, each << 3           |
| 0565 | 0x6505 | u16   | R 11-15 << 3, G 5-10 << 2, B 0-4 << 3; 0xF81F is transparent             |
"""

from __future__ import annotations

from collections.abc import Callable

TYPE_CHECKING = False
if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

ENCODINGS = {
    0x0200: "I2",
    0x0400: "I4",
    0x1600: "I16",
    0x5602: "I256",
    0x27F1: "I127RLE",
    0x56F2: "I256RLE",
    0x64F0: "I64RLE",
}
ENCODING_CODES = {name: code for code, name in ENCODINGS.items()}
# Bits a pixel of the packed encodings.
PACKED_BITS = {0x0200: 1, 0x0400: 2, 0x1600: 4, 0x5602: 8}
# Colours the encoding can name (the largest index + 1).
ENCODING_COLOURS = {0x0200: 2, 0x0400: 4, 0x1600: 16, 0x5602: 256, 0x27F1: 128, 0x56F2: 256, 0x64F0: 256}

PIXEL_FORMATS = {0x8888: "8888", 0x4444: "4444", 0x5515: "1555", 0x6505: "0565"}
PIXEL_FORMAT_CODES = {name: code for code, name in PIXEL_FORMATS.items()}
TRANSPARENT_0565 = 0xF81F
RUN_MAX = 127


class DecodeError(ValueError):
    """Module data that does not decode to exactly w x h valid pixels; `offset` is the byte of
    the data where it went wrong (the model adds the file, member and module)."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


def entry_size(pixel_format: int) -> int:
    """Bytes a palette entry takes."""
    return 4 if pixel_format == 0x8888 else 2


def i64rle_bits(colours: int) -> int:
    """Bits of an I64RLE byte that hold the colour: enough for `colours - 1` ([GL] `Load`)."""
    return max(colours - 1, 0).bit_length()


def packed_size(encoding: int, pixels: int) -> int:
    """Bytes of a packed module of `pixels` pixels."""
    per_byte = 8 // PACKED_BITS[encoding]
    return -(-pixels // per_byte)


def decode(encoding: int, data: bytes, width: int, height: int, colours: int) -> NDArray[np.uint8]:
    """A module's palette indices (height x width), or DecodeError: data short or long, a run past
    the module, an index >= `colours`."""
    import numpy as np

    pixels = width * height
    if encoding in PACKED_BITS:
        bits = PACKED_BITS[encoding]
        expected = packed_size(encoding, pixels)
        if len(data) != expected:
            raise DecodeError(
                f"{len(data)} bytes of data where {width}x{height} {ENCODINGS[encoding]} pixels take {expected}",
                min(len(data), expected),
            )
        raw = np.frombuffer(data, dtype=np.uint8)
        if bits == 8:
            indices = raw.copy()
        else:
            shifts = np.arange(8 - bits, -1, -bits, dtype=np.uint8)
            unpacked = (raw[:, None] >> shifts[None, :]) & ((1 << bits) - 1)
            indices = unpacked.reshape(-1)[:pixels].astype(np.uint8)
    else:
        decoder = _RLE_DECODERS.get(encoding)
        if decoder is None:
            raise DecodeError(f"unknown encoding 0x{encoding:04x}", 0)
        indices = np.frombuffer(bytes(decoder(data, pixels, colours)), dtype=np.uint8)
    if pixels and int(indices.max(initial=0)) >= colours:
        at = int(np.argmax(indices >= colours))
        raise DecodeError(
            f"pixel ({at % width}, {at // width}) has colour index {int(indices[at])}, the palettes have {colours}",
            0,
        )
    return indices.reshape(height, width)


def _check_run(pixels: int, have: int, run: int, at: int) -> None:
    if have + run > pixels:
        raise DecodeError(f"a run of {run} pixels goes past the module's {pixels} pixels", at)


def _finish(data: bytes, out: bytearray, pixels: int, at: int) -> bytearray:
    if len(out) < pixels:
        raise DecodeError(f"the data ends after {len(out)} of the module's {pixels} pixels", len(data))
    if at != len(data):
        raise DecodeError(f"{len(data) - at} bytes of data left after the module's {pixels} pixels", at)
    return out


def _decode_i127rle(data: bytes, pixels: int, colours: int) -> bytearray:
    out = bytearray()
    at = 0
    while at < len(data) and len(out) < pixels:
        byte = data[at]
        if byte < 0x80:
            out.append(byte)
            at += 1
            continue
        if at + 1 >= len(data):
            raise DecodeError("a run's colour byte is cut off by the end of the data", at)
        run = byte - 0x80
        _check_run(pixels, len(out), run, at)
        out += bytes((data[at + 1],)) * run
        at += 2
    return _finish(data, out, pixels, at)


def _decode_i256rle(data: bytes, pixels: int, colours: int) -> bytearray:
    out = bytearray()
    at = 0
    while at < len(data) and len(out) < pixels:
        byte = data[at]
        if byte < 0x80:
            if at + 1 >= len(data):
                raise DecodeError("a run's colour byte is cut off by the end of the data", at)
            _check_run(pixels, len(out), byte, at)
            out += bytes((data[at + 1],)) * byte
            at += 2
            continue
        count = byte - 0x80
        _check_run(pixels, len(out), count, at)
        if at + 1 + count > len(data):
            raise DecodeError(f"{count} literal pixels run past the end of the data", at)
        out += data[at + 1 : at + 1 + count]
        at += 1 + count
    return _finish(data, out, pixels, at)


def _decode_i64rle(data: bytes, pixels: int, colours: int) -> bytearray:
    bits = i64rle_bits(colours)
    mask = (1 << bits) - 1
    out = bytearray()
    at = 0
    while at < len(data) and len(out) < pixels:
        byte = data[at]
        run = (byte >> bits) + 1
        _check_run(pixels, len(out), run, at)
        out += bytes((byte & mask,)) * run
        at += 1
    return _finish(data, out, pixels, at)


_RLE_DECODERS: dict[int, Callable[[bytes, int, int], bytearray]] = {
    0x27F1: _decode_i127rle,
    0x56F2: _decode_i256rle,
    0x64F0: _decode_i64rle,
}


def _runs(values: bytes) -> list[tuple[int, int]]:
    """(value, length) of each run of equal values."""
    runs: list[tuple[int, int]] = []
    for value in values:
        if runs and runs[-1][0] == value:
            runs[-1] = (value, runs[-1][1] + 1)
        else:
            runs.append((value, 1))
    return runs


def encode(encoding: int, indices: NDArray[np.uint8], colours: int) -> bytes:
    """A module's data from its indices (any shape, row-major), by the rules in this module's
    docstring; an index the encoding or the palettes cannot hold is a ValueError."""
    import numpy as np

    flat = np.ascontiguousarray(indices, dtype=np.uint8).reshape(-1)
    limit = min(ENCODING_COLOURS.get(encoding, 0), colours if colours else 256)
    if flat.size and int(flat.max()) >= limit:
        at = int(np.argmax(flat >= limit))
        raise ValueError(f"pixel {at} has colour index {int(flat[at])}: {ENCODINGS.get(encoding)} holds 0..{limit - 1}")
    if encoding in PACKED_BITS:
        bits = PACKED_BITS[encoding]
        if bits == 8:
            return flat.tobytes()
        per_byte = 8 // bits
        padded = np.zeros(-(-flat.size // per_byte) * per_byte, dtype=np.uint8)
        padded[: flat.size] = flat
        shifts = np.arange(8 - bits, -1, -bits, dtype=np.uint8)
        return (padded.reshape(-1, per_byte) << shifts[None, :]).sum(axis=1, dtype=np.uint16).astype(np.uint8).tobytes()
    values = flat.tobytes()
    out = bytearray()
    if encoding == 0x27F1:
        for value, length in _runs(values):
            while length >= 2:
                take = min(length, RUN_MAX)
                out += bytes((0x80 + take, value))
                length -= take
            if length:
                out.append(value)
        return bytes(out)
    if encoding == 0x56F2:
        literals = bytearray()

        def flush() -> None:
            for start in range(0, len(literals), RUN_MAX):
                chunk = literals[start : start + RUN_MAX]
                out.append(0x80 + len(chunk))
                out.extend(chunk)
            literals.clear()

        for value, length in _runs(values):
            if length == 1:
                literals.append(value)
                continue
            flush()
            while length:
                take = min(length, RUN_MAX)
                if take == 1:
                    literals.append(value)
                else:
                    out += bytes((take, value))
                length -= take
        flush()
        return bytes(out)
    if encoding == 0x64F0:
        bits = i64rle_bits(colours)
        longest = 256 >> bits
        for value, length in _runs(values):
            while length:
                take = min(length, longest)
                out.append(((take - 1) << bits) | value)
                length -= take
        return bytes(out)
    raise ValueError(f"unknown encoding 0x{encoding:04x}")


def palette_rgba(pixel_format: int, entries: list[int]) -> NDArray[np.uint8]:
    """A palette's colours as 8-bit RGBA rows (len(entries) x 4), converted as the game does."""
    import numpy as np

    raw = np.asarray(entries, dtype=np.uint32)
    if pixel_format == 0x8888:
        a, r, g, b = (raw >> 24) & 0xFF, (raw >> 16) & 0xFF, (raw >> 8) & 0xFF, raw & 0xFF
    elif pixel_format == 0x4444:
        a, r, g, b = (((raw >> shift) & 0xF) * 17 for shift in (12, 8, 4, 0))
    elif pixel_format == 0x5515:
        a = np.where(raw & 0x8000, 255, 0)
        r, g, b = ((raw >> 10) & 0x1F) << 3, ((raw >> 5) & 0x1F) << 3, (raw & 0x1F) << 3
    elif pixel_format == 0x6505:
        a = np.where(raw == TRANSPARENT_0565, 0, 255)
        r, g, b = ((raw >> 11) & 0x1F) << 3, ((raw >> 5) & 0x3F) << 2, (raw & 0x1F) << 3
    else:
        raise ValueError(f"unknown pixel format 0x{pixel_format:04x}")
    return np.stack([r, g, b, a], axis=-1).astype(np.uint8).reshape(len(entries), 4)
