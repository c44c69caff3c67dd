"""The packfile writer's option checkers (`Writer.option_validators`).

Each returns the normalised value or raises ValueError("why"), as `core.options`' builders do;
these take more spellings than those: numbers as text too (`0x10`), `finish` as yes/no/on/off
or 1/0, `runtime` as an int or hex, and an empty value as the extension's default.
"""

from __future__ import annotations

import os

from ...core.archive import encode_name

# `typing` costs milliseconds at import.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def optional_int(low: int, high: int) -> Any:
    def check(value: Any) -> int | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise ValueError(f"must be a whole number from {low} to {high}")
        try:
            number = int(value, 0) if isinstance(value, str) else value
        except ValueError:
            raise ValueError(f"must be a whole number from {low} to {high}") from None
        if not low <= number <= high:
            raise ValueError(f"must be from {low} to {high}")
        return number

    return check


def true_or_false(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError("must be true or false")


def header_text(size: int) -> Any:
    """Text for a header field of `size` bytes, which ends with at least one NUL."""

    def check(value: Any) -> str:
        text = "" if value is None else str(value)
        if len(encode_name(text)) >= size:
            raise ValueError(f"holds at most {size - 1} bytes")
        return text

    return check


def runtime_hex(value: Any) -> str | None:
    """The 12 runtime bytes of the header as hex (None: zeros)."""
    if value is None or value == "" or value == 0:
        return None
    try:
        raw = value.to_bytes(12, "big") if isinstance(value, int) else bytes.fromhex(str(value).removeprefix("0x"))
    except (ValueError, OverflowError):
        raise ValueError("must be 24 hex digits (12 bytes)") from None
    if len(raw) != 12:
        raise ValueError(f"must be 24 hex digits (12 bytes), not {2 * len(raw)}")
    return raw.hex()


def asm_file(value: Any) -> str | None:
    if value is None or value == "":
        return None
    path = os.fspath(value)
    if not os.path.isfile(path):
        raise ValueError(f"{path} is not an existing .asm_pc file")
    return path
