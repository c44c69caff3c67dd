"""Zone property values as JSON-friendly data, and back to the same bytes.

A value is decoded only when encoding the decoded form gives exactly the stored bytes (a
string with one final NUL, a bool byte of 0 or 1, finite floats); anything else stays hex.
Floats are f32 widened to Python floats: `repr` and parsing narrow back to the same f32.

| kind      | type / size | JSON value                                   |
|-----------|-------------|----------------------------------------------|
| string    | 4 / n       | the text (latin-1), without its final NUL    |
| bool      | 5 / 1       | true / false                                 |
| u8 u16 u32| 5 / 1 2 4   | a number                                     |
| f32       | 5 / 4       | a number                                     |
| vec3      | 5 / 12      | [x, y, z]                                    |
| mat33     | 5 / 36      | [[3], [3], [3]] rows                         |
| bbox      | 5 / 24      | {"min": [3], "max": [3]}                     |
| op        | 5 / 48      | {"position": [3], "orient": [[3], [3], [3]]} |
| u16_list  | 6 / 2n      | [numbers]                                    |
| u32_list  | 6 / 4n      | [numbers]                                    |
| vec2_list | 6 / 8n      | [[x, z], ...]                                |
| hex       | any         | the bytes as hex                             |
"""

from __future__ import annotations

import math
import struct

from ....errors import GamepakError

TYPE_STRING = 4
TYPE_FIXED = 5
TYPE_BUFFER = 6

# kind -> (the type code it is stored with, the fixed size or None for lists, the list item size)
KINDS: dict[str, tuple[int, int | None, int]] = {
    "string": (TYPE_STRING, None, 1),
    "bool": (TYPE_FIXED, 1, 1),
    "u8": (TYPE_FIXED, 1, 1),
    "u16": (TYPE_FIXED, 2, 2),
    "u32": (TYPE_FIXED, 4, 4),
    "f32": (TYPE_FIXED, 4, 4),
    "vec3": (TYPE_FIXED, 12, 4),
    "mat33": (TYPE_FIXED, 36, 4),
    "bbox": (TYPE_FIXED, 24, 4),
    "op": (TYPE_FIXED, 48, 4),
    "u16_list": (TYPE_BUFFER, None, 2),
    "u32_list": (TYPE_BUFFER, None, 4),
    "vec2_list": (TYPE_BUFFER, None, 8),
}


class ZoneValueError(GamepakError):
    """A JSON value that does not fit its kind (the caller names the object and property)."""


def _floats(raw: bytes) -> list[float] | None:
    values = list(struct.unpack(f"<{len(raw) // 4}f", raw))
    return values if all(math.isfinite(value) for value in values) else None


def _rows(values: list[float]) -> list[list[float]]:
    return [values[0:3], values[3:6], values[6:9]]


def decode(kind: str | None, type_code: int, raw: bytes) -> tuple[str, object]:
    """(kind, value) for `raw` stored with `type_code`, the kind its name says; ("hex", text)
    when the bytes are not exactly what the kind would write."""
    if kind is not None and kind in KINDS:
        stored_type, size, item = KINDS[kind]
        if stored_type == type_code and (len(raw) == size if size is not None else len(raw) % item == 0):
            # Exact by construction: whole numbers always, strings with one final NUL, bools of
            # 0/1, finite f32s (which narrow back to their bits); anything else gives None.
            # (tests/test_rfg_zones.py holds encode(decode(raw)) == raw for every kind.)
            value = _decode(kind, raw)
            if value is not None:
                return kind, value
    return "hex", raw.hex()


def _decode(kind: str, raw: bytes) -> object | None:
    if kind == "string":
        if not raw.endswith(b"\0") or b"\0" in raw[:-1]:
            return None
        return raw[:-1].decode("latin-1")
    if kind == "bool":
        return None if raw[0] > 1 else bool(raw[0])
    if kind in ("u8", "u16", "u32"):
        return int.from_bytes(raw, "little")
    if kind == "u16_list":
        return list(struct.unpack(f"<{len(raw) // 2}H", raw))
    if kind == "u32_list":
        return list(struct.unpack(f"<{len(raw) // 4}I", raw))
    values = _floats(raw)
    if values is None:
        return None
    if kind == "f32":
        return values[0]
    if kind == "vec3":
        return values
    if kind == "mat33":
        return _rows(values)
    if kind == "bbox":
        return {"min": values[0:3], "max": values[3:6]}
    if kind == "op":
        return {"position": values[0:3], "orient": _rows(values[3:12])}
    if kind == "vec2_list":
        return [values[index : index + 2] for index in range(0, len(values), 2)]
    return None


def _numbers(value: object, count: int, what: str) -> list[float]:
    if not isinstance(value, list) or len(value) != count:
        raise ZoneValueError(f"{what} must be a list of {count} numbers")
    for number in value:
        if isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(number):
            raise ZoneValueError(f"{what} must be a list of {count} finite numbers")
    return [float(number) for number in value]


def _matrix(value: object, what: str) -> list[float]:
    if not isinstance(value, list) or len(value) != 3:
        raise ZoneValueError(f"{what} must be three rows of three numbers")
    return [number for row in value for number in _numbers(row, 3, what)]


def _f32(values: list[float], what: str) -> bytes:
    try:
        return struct.pack(f"<{len(values)}f", *values)
    except OverflowError:
        raise ZoneValueError(f"{what}: a number is too large for a 32-bit float") from None


def _unsigned(value: object, bits: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << bits:
        raise ZoneValueError(f"{what} must be a whole number from 0 to {(1 << bits) - 1}")
    return value


def encode(kind: str, value: object) -> bytes:
    """The stored bytes of `value` as `kind` (hex: its bytes). Raises ZoneValueError when the
    value does not fit the kind."""
    if kind == "hex":
        if not isinstance(value, str):
            raise ZoneValueError("a hex value must be a string of hex digits")
        try:
            return bytes.fromhex(value)
        except ValueError:
            raise ZoneValueError("a hex value must be a string of hex digits") from None
    if kind == "string":
        if not isinstance(value, str):
            raise ZoneValueError("a string value must be text")
        try:
            data = value.encode("latin-1")
        except UnicodeEncodeError:
            raise ZoneValueError("a string value must be Latin-1 text (the game stores 8-bit text)") from None
        if b"\0" in data:
            raise ZoneValueError("a string value cannot hold a NUL character")
        return data + b"\0"
    if kind == "bool":
        if not isinstance(value, bool):
            raise ZoneValueError("a bool value must be true or false")
        return bytes([value])
    if kind in ("u8", "u16", "u32"):
        bits = {"u8": 8, "u16": 16, "u32": 32}[kind]
        return _unsigned(value, bits, f"a {kind} value").to_bytes(bits // 8, "little")
    if kind == "f32":
        return _f32(_numbers([value], 1, "an f32 value"), "an f32 value")
    if kind == "vec3":
        return _f32(_numbers(value, 3, "a vec3 value"), "a vec3 value")
    if kind == "mat33":
        return _f32(_matrix(value, "a mat33 value"), "a mat33 value")
    if kind == "bbox":
        if not isinstance(value, dict) or set(value) != {"min", "max"}:
            raise ZoneValueError('a bbox value must be {"min": [x, y, z], "max": [x, y, z]}')
        return _f32(_numbers(value["min"], 3, "bbox min") + _numbers(value["max"], 3, "bbox max"), "a bbox")
    if kind == "op":
        if not isinstance(value, dict) or set(value) != {"position", "orient"}:
            raise ZoneValueError('an op value must be {"position": [x, y, z], "orient": [[3], [3], [3]]}')
        floats = _numbers(value["position"], 3, "op position") + _matrix(value["orient"], "op orient")
        return _f32(floats, "an op value")
    if kind in ("u16_list", "u32_list"):
        bits = 16 if kind == "u16_list" else 32
        if not isinstance(value, list):
            raise ZoneValueError(f"a {kind} value must be a list of numbers")
        numbers = [_unsigned(number, bits, f"each item of a {kind}") for number in value]
        return struct.pack(f"<{len(numbers)}{'H' if bits == 16 else 'I'}", *numbers)
    if kind == "vec2_list":
        if not isinstance(value, list):
            raise ZoneValueError("a vec2_list value must be a list of [x, z] pairs")
        return _f32([number for pair in value for number in _numbers(pair, 2, "each vec2_list item")], "a vec2_list")
    raise ZoneValueError(f"unknown value kind {kind!r} (one of: hex, {', '.join(KINDS)})")
