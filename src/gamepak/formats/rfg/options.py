"""The packfile writer's own option checkers (`Writer.option_validators`): the header's text
fields, the runtime bytes and the external `.asm_pc`. Numbers and booleans use `core.writer`'
builders, as every format's writer does.

Each returns the normalised value or raises ValueError("why"), as `core.writer`'s builders do;
`runtime` takes an int or hex, and an empty value means the default.
"""

from __future__ import annotations

import os

from ...core.archive import encode_name

# `typing` costs milliseconds at import.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


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
