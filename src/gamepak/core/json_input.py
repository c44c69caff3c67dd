"""JSON from a stranger's file, read within one nesting limit for every JSON input gamepak takes
(patch manifests, mod lists, table sheets and JSON cells, translation files).

Python's `json` recurses once per level: a file of 100,000 `[` ends in RecursionError (or, in
a thread with a small stack, worse). The depth is measured first, without parsing: strings are
dropped by a regular expression, then brackets are counted, so a deep document is refused
before the parser sees it.
"""

from __future__ import annotations

import re

from ..errors import GamepakError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Deeper than anything gamepak writes (a table's elements, and so its JSON export, nest at
# most 256 deep) and far below Python's recursion limit.
MAX_JSON_DEPTH = 256

_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_JSON_BRACKET = re.compile(rb"[\[\]{}]")


def json_depth(text: bytes | str, limit: int = MAX_JSON_DEPTH) -> int:
    """How deep brackets nest outside strings in `text` (an upper bound on the document's
    depth); the count stops once it passes `limit`; 0 when there are no more brackets than
    `limit` in all."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    stripped = _JSON_STRING.sub(b"", data)
    if stripped.count(b"[") + stripped.count(b"{") <= limit:
        return 0
    depth = deepest = 0
    for match in _JSON_BRACKET.finditer(stripped):
        if match.group() in (b"[", b"{"):
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        else:
            depth -= 1
    return deepest


def load_json(text: bytes | str, where: str, error: type[GamepakError] = GamepakError) -> Any:
    """The JSON document `text`, or `error` naming `where`: not JSON (nor UTF-8), or nested
    deeper than MAX_JSON_DEPTH."""
    import json

    depth = json_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise error(f"{where}: JSON nested more than {MAX_JSON_DEPTH} deep")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise error(f"{where}: not JSON ({exc})") from None
