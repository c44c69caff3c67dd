"""VCDIFF deltas (RFC 3284) as xdelta3 writes them, decoded window by window within a budget.

| offset        | size     | field                                                                |
|---------------|----------|----------------------------------------------------------------------|
| 0             | 4        | magic `D6 C3 C4 00`                                                  |
| 4             | 1        | Hdr_Indicator: 1 secondary compressor, 2 code table, 4 app header    |
|               | 1        | secondary compressor id (bit 1): 1 DJW, 2 LZMA, 16 FGK (xdelta3's)   |
|               | varint+n | code table (bit 2): refused (xdelta3 never writes one)               |
|               | varint+n | application header (bit 4): xdelta3 writes the file names            |
| per window    | 1        | Win_Indicator: 1 VCD_SOURCE, 2 VCD_TARGET, 4 VCD_ADLER32 (xdelta3)   |
|               | varint×2 | source segment length and position (bit 1 or 2)                      |
|               | varint   | length of the rest of the window (delta encoding)                    |
|               | varint   | target window length                                                 |
|               | 1        | Delta_Indicator: 1 data, 2 instructions, 4 addresses secondary-coded |
|               | varint×3 | data, instructions, addresses section lengths                       |
|               | 4        | Adler-32 of the target window, big-endian (bit 4)                    |
|               | n×3      | the data, instruction and address sections                           |

A section marked in Delta_Indicator is a varint of its decoded size and the compressed bytes;
xdelta3's LZMA secondary (the default of `xdelta3 -e` where built with liblzma) is an .xz stream,
decoded here with the standard library; DJW and FGK (xdelta3's own Huffman coders) are refused
with what to do instead. Instructions use RFC 3284's default code table and address cache
(4 near, 3×256 same).

Bounded by construction: every window header is read before any byte is produced, so the total
output is known and checked against the caller's budget first; each target window is at most
`MAX_TARGET_WINDOW` bytes, held alone in memory; the source is read by seeking, never whole.
"""

from __future__ import annotations

import struct
import zlib

from ..errors import CorruptArchiveError, FormatLimitError, UnsupportedFeatureError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, BinaryIO

MAGIC = b"\xd6\xc3\xc4"
HEADER = struct.Struct(">3sBB")  # magic, version (0), Hdr_Indicator
ADLER32 = struct.Struct(">I")

VCD_DECOMPRESS = 1
VCD_CODETABLE = 2
VCD_APPHEADER = 4
VCD_SOURCE = 1
VCD_TARGET = 2
VCD_ADLER32 = 4
SECTION_FLAGS = (1, 2, 4)  # data, instructions, addresses
SECONDARY_NAMES = {1: "djw", 2: "lzma", 16: "fgk"}
SECONDARY_LZMA = 2

# xdelta3 never writes a target window over 16 MiB (XD3_HARDMAXWINSIZE); a little room above.
MAX_TARGET_WINDOW = 64 << 20
MAX_APP_HEADER = 1 << 16
MAX_WINDOWS = 1 << 20
_NOOP, _ADD, _RUN, _COPY = 0, 1, 2, 3
_NEAR, _SAME = 4, 3


def _default_code_table() -> list[tuple[int, int, int, int, int, int]]:
    """RFC 3284 section 5.6: (inst1, size1, mode1, inst2, size2, mode2) per code."""
    table = [(_RUN, 0, 0, _NOOP, 0, 0)]
    table += [(_ADD, size, 0, _NOOP, 0, 0) for size in range(18)]
    for mode in range(9):
        table.append((_COPY, 0, mode, _NOOP, 0, 0))
        table += [(_COPY, size, mode, _NOOP, 0, 0) for size in range(4, 19)]
    for mode in range(6):
        table += [(_ADD, add, 0, _COPY, copy, mode) for add in range(1, 5) for copy in range(4, 7)]
    for mode in range(6, 9):
        table += [(_ADD, add, 0, _COPY, 4, mode) for add in range(1, 5)]
    table += [(_COPY, 4, mode, _ADD, 1, 0) for mode in range(9)]
    assert len(table) == 256
    return table


CODE_TABLE = _default_code_table()
# Each code's instructions without the NOOPs, as the decoder walks them.
_CODE_STEPS = [
    tuple((kind, size, mode) for kind, size, mode in (entry[:3], entry[3:]) if kind != _NOOP) for entry in CODE_TABLE
]
# A source segment up to this size is read once per window (copies are then slices); a larger
# one is read piece by piece, by seeking.
SEGMENT_IN_MEMORY = 64 << 20


class Window:
    """One window's header: where its sections are and what it produces."""

    __slots__ = ("adler32", "delta_indicator", "indicator", "lengths", "offset", "source", "target_size")

    def __init__(
        self,
        offset: int,
        indicator: int,
        source: tuple[int, int] | None,
        target_size: int,
        delta_indicator: int,
        lengths: tuple[int, int, int],
        adler32: int | None,
    ) -> None:
        self.offset = offset  # of its first section in the delta
        self.indicator = indicator
        self.source = source  # (length, position) of the segment copied from
        self.target_size = target_size
        self.delta_indicator = delta_indicator
        self.lengths = lengths
        self.adler32 = adler32


class Delta:
    """A VCDIFF delta's headers, read (not decoded) from a seekable stream."""

    def __init__(self, stream: BinaryIO, name: str = "delta") -> None:
        self.stream = stream
        self.name = name
        stream.seek(0, 2)
        self.size = stream.tell()
        stream.seek(0)
        head = stream.read(HEADER.size)
        if len(head) < HEADER.size or head[:3] != MAGIC:
            raise CorruptArchiveError("not a VCDIFF delta (no D6 C3 C4 magic)", path=name, offset=0)
        _, version, indicator = HEADER.unpack(head)
        if version != 0:
            raise UnsupportedFeatureError(f"{name}: VCDIFF version {version}; only version 0 is read")
        self.secondary: int | None = None
        self.app_header = b""
        if indicator & ~(VCD_DECOMPRESS | VCD_CODETABLE | VCD_APPHEADER):
            raise CorruptArchiveError(f"unknown header indicator bits 0x{indicator:02x}", path=name, offset=4)
        if indicator & VCD_DECOMPRESS:
            self.secondary = self._byte()
        if indicator & VCD_CODETABLE:
            raise UnsupportedFeatureError(f"{name}: the delta carries its own code table, which is not read")
        if indicator & VCD_APPHEADER:
            length = self._varint()
            if length > MAX_APP_HEADER:
                raise CorruptArchiveError(f"application header of {length} bytes", path=name, offset=self._at())
            self.app_header = self._exactly(length)
        self.windows: list[Window] = []
        while self._at() < self.size:
            self.windows.append(self._window())
            if len(self.windows) > MAX_WINDOWS:
                raise FormatLimitError(f"{name}: more than {MAX_WINDOWS} windows")

    @property
    def target_size(self) -> int:
        """The bytes the delta produces, as its windows declare them."""
        return sum(window.target_size for window in self.windows)

    @property
    def has_checksum(self) -> bool:
        """Whether every window carries xdelta3's Adler-32 of what it produces."""
        return bool(self.windows) and all(window.adler32 is not None for window in self.windows)

    def _at(self) -> int:
        return self.stream.tell()

    def _byte(self) -> int:
        data = self.stream.read(1)
        if not data:
            raise CorruptArchiveError("cut short", path=self.name, offset=self._at())
        return data[0]

    def _exactly(self, length: int) -> bytes:
        at = self._at()
        if length > self.size - at:
            raise CorruptArchiveError(f"{length} bytes declared, {self.size - at} left", path=self.name, offset=at)
        return self.stream.read(length)

    def _varint(self) -> int:
        value = 0
        for _ in range(10):
            byte = self._byte()
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                return value
        raise CorruptArchiveError("an integer longer than 64 bits", path=self.name, offset=self._at())

    def _window(self) -> Window:
        start = self._at()
        indicator = self._byte()
        if indicator & ~(VCD_SOURCE | VCD_TARGET | VCD_ADLER32) or indicator & 3 == 3:
            raise CorruptArchiveError(f"window indicator 0x{indicator:02x}", path=self.name, offset=start)
        source = None
        if indicator & (VCD_SOURCE | VCD_TARGET):
            length = self._varint()
            source = (length, self._varint())
        encoding_length = self._varint()
        body = self._at()
        target_size = self._varint()
        if target_size > MAX_TARGET_WINDOW:
            raise FormatLimitError(
                f"{self.name}: offset {start}: a window of {target_size} bytes (limit {MAX_TARGET_WINDOW})"
            )
        delta_indicator = self._byte()
        if delta_indicator & ~7:
            raise CorruptArchiveError(f"delta indicator 0x{delta_indicator:02x}", path=self.name, offset=body)
        if delta_indicator and self.secondary is None:
            raise CorruptArchiveError("sections marked compressed, no compressor named", path=self.name, offset=body)
        lengths = (self._varint(), self._varint(), self._varint())
        adler = ADLER32.unpack(self._exactly(4))[0] if indicator & VCD_ADLER32 else None
        offset = self._at()
        if offset - body + sum(lengths) != encoding_length:
            raise CorruptArchiveError(
                f"window's sections ({sum(lengths)} bytes) disagree with its length {encoding_length}",
                path=self.name,
                offset=start,
            )
        if sum(lengths) > self.size - offset:
            raise CorruptArchiveError("a window runs past the end of the delta", path=self.name, offset=start)
        self.stream.seek(offset + sum(lengths))
        return Window(offset, indicator, source, target_size, delta_indicator, lengths, adler)

    def refuse_secondary(self) -> None:
        """UnsupportedFeatureError when a window is compressed with a coder this module lacks."""
        if self.secondary is None or self.secondary == SECONDARY_LZMA:
            return
        if not any(window.delta_indicator for window in self.windows):
            return  # named but never used: nothing to decode
        name = SECONDARY_NAMES.get(self.secondary, f"id {self.secondary}")
        raise UnsupportedFeatureError(
            f"{self.name}: compressed with xdelta3's {name} secondary compressor, which gamepak does not decode; "
            "`xdelta3 -e -S none -s OLD NEW OUT.xdelta` (or -S lzma) makes one that applies"
        )

    def decode(self, source: BinaryIO | None, output: BinaryIO, max_output: int) -> int:
        """Write the target to `output`, copying from `source` (seekable); refused before any
        byte is written when the windows declare more than `max_output` bytes. Returns the size
        written. A window whose Adler-32 does not match is refused (a delta made for other bytes)."""
        self.refuse_secondary()
        total = self.target_size
        if total > max_output:
            raise FormatLimitError(f"{self.name}: decodes to {total} bytes, more than the {max_output} allowed")
        source_size = 0
        if source is not None:
            source.seek(0, 2)
            source_size = source.tell()
        written = 0
        coders: dict[int, Any] = {}  # the secondary decoders, one per kind of section
        for number, window in enumerate(self.windows):
            data = self._decode_window(number, window, source, source_size, output, written, coders)
            output.write(data)
            written += len(data)
        return written

    def _sections(self, window: Window, coders: dict[int, Any]) -> list[bytes]:
        self.stream.seek(window.offset)
        sections = []
        for flag, length in zip(SECTION_FLAGS, window.lengths, strict=True):
            raw = self.stream.read(length)
            if window.delta_indicator & flag:
                raw = self._secondary_decode(raw, window, coders, flag)
            sections.append(raw)
        return sections

    def _secondary_decode(self, raw: bytes, window: Window, coders: dict[int, Any], flag: int) -> bytes:
        """A compressed section: xdelta3 keeps one LZMA stream per kind of section for the whole
        delta, flushed (not ended) after each section, so each section continues the last."""
        import lzma

        size, position = _varint(raw, 0, self.name, window.offset)
        # No section decodes to more than a window's worth (instructions and addresses take
        # at most a few bytes per byte they make; data at most the bytes).
        limit = 2 * MAX_TARGET_WINDOW
        if size > limit or size == 0:
            raise CorruptArchiveError(f"a section declares {size} bytes", path=self.name, offset=window.offset)
        if self.secondary != SECONDARY_LZMA:
            self.refuse_secondary()
        coder = coders.get(flag)
        if coder is None:
            coder = coders[flag] = lzma.LZMADecompressor(lzma.FORMAT_XZ, memlimit=256 << 20)
        try:
            data = coder.decompress(raw[position:], max_length=size + 1) if not coder.eof else b""
        except lzma.LZMAError as exc:
            raise CorruptArchiveError(f"lzma section: {exc}", path=self.name, offset=window.offset) from None
        if len(data) != size or not coder.needs_input:
            raise CorruptArchiveError(
                f"an lzma section does not give the {size} bytes it declares", path=self.name, offset=window.offset
            )
        return data

    def _decode_window(
        self,
        number: int,
        window: Window,
        source: BinaryIO | None,
        source_size: int,
        output: BinaryIO,
        written: int,
        coders: dict[int, Any],
    ) -> bytes:
        where = f"window {number}"
        data, instructions, addresses = self._sections(window, coders)
        segment_length, segment_position = window.source or (0, 0)
        if window.indicator & VCD_SOURCE:
            if source is None or segment_position + segment_length > source_size:
                raise CorruptArchiveError(
                    f"{where} copies from bytes {segment_position}..{segment_position + segment_length} of a "
                    f"source of {source_size}",
                    path=self.name,
                    offset=window.offset,
                )
            segment_from: BinaryIO | None = source
        elif window.indicator & VCD_TARGET:
            if segment_position + segment_length > written:
                raise CorruptArchiveError(f"{where} copies from target bytes not yet written", path=self.name)
            segment_from = output
        else:
            segment_from = None
        segment = None
        if segment_from is not None and segment_length <= SEGMENT_IN_MEMORY:
            segment = _read_at(segment_from, segment_position, segment_length, output, written)
        out = bytearray()
        size = window.target_size
        near = [0] * _NEAR
        same = [0] * (_SAME * 256)
        next_slot = 0
        data_at = inst_at = addr_at = 0

        def bad(reason: str) -> CorruptArchiveError:
            return CorruptArchiveError(f"{where}: {reason}", path=self.name, offset=window.offset)

        name, offset = self.name, window.offset
        steps = _CODE_STEPS
        instructions_end, data_end, addresses_end = len(instructions), len(data), len(addresses)
        produced = 0  # len(out), kept in a local: the loop runs once per instruction
        while inst_at < instructions_end:
            code = instructions[inst_at]
            inst_at += 1
            for kind, length, mode in steps[code]:
                if length == 0:
                    if inst_at < instructions_end and instructions[inst_at] < 0x80:
                        length = instructions[inst_at]
                        inst_at += 1
                    else:
                        length, inst_at = _varint(instructions, inst_at, name, offset)
                if produced + length > size:
                    raise bad(f"instructions make more than the window's {size} bytes")
                if kind == _ADD:
                    if data_at + length > data_end:
                        raise bad("an ADD runs past the data section")
                    out += data[data_at : data_at + length]
                    data_at += length
                    produced += length
                    continue
                if kind == _RUN:
                    if data_at >= data_end:
                        raise bad("a RUN past the data section")
                    out += data[data_at : data_at + 1] * length
                    data_at += 1
                    produced += length
                    continue
                here = segment_length + produced
                if mode < 2 + _NEAR:
                    if addr_at < addresses_end and addresses[addr_at] < 0x80:
                        value = addresses[addr_at]
                        addr_at += 1
                    else:
                        value, addr_at = _varint(addresses, addr_at, name, offset)
                    address = value if mode == 0 else here - value if mode == 1 else near[mode - 2] + value
                else:
                    if addr_at >= addresses_end:
                        raise bad("the address section is cut short")
                    address = same[(mode - 2 - _NEAR) * 256 + addresses[addr_at]]
                    addr_at += 1
                near[next_slot] = address
                next_slot = (next_slot + 1) % _NEAR
                same[address % (_SAME * 256)] = address
                if not 0 <= address < here:
                    raise bad(f"a COPY from address {address}, outside 0..{here}")
                produced += length
                remaining = length
                if address < segment_length:
                    from_segment = min(remaining, segment_length - address)
                    if segment is not None:
                        out += segment[address : address + from_segment]
                    else:
                        assert segment_from is not None
                        out += _read_at(segment_from, segment_position + address, from_segment, output, written)
                    remaining -= from_segment
                    address = segment_length
                start = address - segment_length
                while remaining:  # from this window's own output: may overlap what it makes
                    piece = out[start : start + remaining]
                    out += piece
                    remaining -= len(piece)
                    start += len(piece)
        if len(out) != size or data_at != len(data) or addr_at != len(addresses):
            raise bad(f"makes {len(out)} bytes, not the {size} it declares (or leaves section bytes unused)")
        if window.adler32 is not None and zlib.adler32(out) != window.adler32:
            raise CorruptArchiveError(
                f"{where}: the result's Adler-32 does not match: the delta was made for other bytes",
                path=self.name,
                offset=window.offset,
            )
        return bytes(out)


def _read_at(stream: BinaryIO, position: int, length: int, output: BinaryIO, written: int) -> bytes:
    """Bytes of the source (or, for a VCD_TARGET window, of what is already written)."""
    if stream is output:
        here = stream.tell()
        stream.seek(position)
        data = stream.read(length)
        stream.seek(here)
        return data
    stream.seek(position)
    return stream.read(length)


def encode_varint(value: int) -> bytes:
    """`value` as VCDIFF writes integers (RFC 3284 section 2: base-128 digits, most
    significant first, the high bit set on all but the last): what `_varint` reads."""
    groups = [value & 0x7F]
    while value := value >> 7:
        groups.append(0x80 | (value & 0x7F))
    return bytes(reversed(groups))


def _varint(data: bytes | bytearray, position: int, name: str, offset: int) -> tuple[int, int]:
    value = 0
    for _ in range(10):
        if position >= len(data):
            raise CorruptArchiveError("a section is cut short", path=name, offset=offset)
        byte = data[position]
        position += 1
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, position
    raise CorruptArchiveError("an integer longer than 64 bits", path=name, offset=offset)


def secondary_name(identifier: int | None) -> str | None:
    """The secondary compressor's name as `xdelta3 printhdr` says it."""
    return None if identifier is None else SECONDARY_NAMES.get(identifier, f"id {identifier}")
