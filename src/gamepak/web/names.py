"""How the viewer writes names that are not UTF-8, on its pages and in its URLs.

Names come from disk (`os.fsdecode`) and from packs (`core.archive.decode_name`) with each byte
that is not UTF-8 kept as a surrogate escape (U+DC80-U+DCFF), which neither a page nor a URL can
carry. The viewer writes such a byte `\\xNN` and a backslash `\\\\`, so the written form reads back
to exactly the name: `caf\\xe9.txt` on the page, `/browse/caf%5Cxe9.txt` in the URL.
"""

from __future__ import annotations

import re

_SURROGATES = re.compile("[\ud800-\udfff]")
_ESCAPED = re.compile(r"\\(?:\\|x([89a-f][0-9a-f])|u(d[89a-f][0-9a-f]{2}))", re.IGNORECASE)


def shown_name(name: str) -> str:
    """A name as pages show it and URLs carry it: each byte that is not UTF-8 (kept by
    `decode_name` as a surrogate escape) as `\\xNN`, a backslash as `\\\\`, so that
    `name_of_shown` gives the name back exactly."""
    if "\\" not in name and not _SURROGATES.search(name):
        return name
    return "".join(_shown_character(character) for character in name)


def _shown_character(character: str) -> str:
    code = ord(character)
    if character == "\\":
        return "\\\\"
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    if 0xD800 <= code <= 0xDFFF:
        return f"\\u{code:04x}"
    return character


def visible(text: str) -> str:
    """`text` with its surrogate escapes shown as `\\xNN` (messages that quote names)."""
    return _SURROGATES.sub(_shown_surrogate, text) if _SURROGATES.search(text) else text


def _shown_surrogate(match: re.Match[str]) -> str:
    return _shown_character(match.group(0))


def name_of_shown(text: str) -> str:
    """The name `shown_name` shows as `text`; ValueError for a backslash that escapes nothing."""
    if "\\" not in text:
        return text
    parts = []
    position = 0
    for match in _ESCAPED.finditer(text):
        if "\\" in text[position : match.start()]:
            break
        parts.append(text[position : match.start()])
        byte, surrogate = match.groups()
        parts.append(chr(0xDC00 + int(byte, 16)) if byte else chr(int(surrogate, 16)) if surrogate else "\\")
        position = match.end()
    rest = text[position:]
    if "\\" in rest:
        raise ValueError(f"{visible(text)}: a backslash that is not \\\\, \\xNN (80-ff) or \\udcNN")
    return "".join(parts) + rest


def shown_path(segments: list[str]) -> str:
    """A path as pages show it: its names by `shown_name`, joined by `/`."""
    return "/".join(shown_name(segment) for segment in segments)
