"""The viewer's URLs: a path's segments written into one (`segment_url`), read back out of a
request's raw path (`request_segments`), and the numbers a query carries (`check_number`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote, unquote_to_bytes

from starlette.exceptions import HTTPException

from .names import name_of_shown, shown_name

if TYPE_CHECKING:
    from starlette.requests import Request


def segment_url(kind: str, segments: list[str]) -> str:
    """`/<kind>/` followed by each segment as `shown_name` writes it, percent-encoded: URLs are
    UTF-8, and a name that is not is carried by its visible escapes."""
    return f"/{kind}/" + "/".join(quote(shown_name(segment), safe="") for segment in segments)


def request_segments(request: Request, prefix: str) -> list[str]:
    """The names of the segments after `/<prefix>` in the raw request path (one trailing `/`
    allowed); a percent-escape that is not UTF-8, or a backslash that escapes nothing, is 400."""
    raw = request.scope.get("raw_path") or request.url.path.encode()
    raw = raw.split(b"?", 1)[0]
    rest = raw[len(prefix) + 1 :]
    if rest.startswith(b"/"):
        rest = rest[1:]
    if rest.endswith(b"/"):
        rest = rest[:-1]
    if not rest:
        return []
    segments = []
    for part in rest.split(b"/"):
        try:
            segments.append(name_of_shown(unquote_to_bytes(part).decode("utf-8")))
        except UnicodeDecodeError:
            shown = part.decode("ascii", "backslashreplace")
            raise HTTPException(
                400, f"{shown}: a percent-escape that is not UTF-8 (a name that is not UTF-8 is written \\xNN)"
            ) from None
        except ValueError as exc:
            raise HTTPException(400, str(exc)) from None
    return segments


def check_offset(value: str | None) -> int:
    return check_number(value, "offset")


def check_number(value: str | None, what: str) -> int:
    try:
        return max(0, int(value or 0))
    except ValueError:
        raise HTTPException(400, f"{what} must be a number") from None


def attachment(name: str) -> str:
    """The Content-Disposition that downloads a file as `name` (RFC 6266): `filename*` in UTF-8,
    where bytes of the name that are not UTF-8 become U+FFFD (percent-encoding them raw would not
    be UTF-8, and browsers then drop the name), and an ASCII `filename` for clients without it."""
    from urllib.parse import quote

    try:
        text = name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # a lone surrogate that stands for no byte
        text = "".join("\ufffd" if "\ud800" <= char <= "\udfff" else char for char in name)
    fallback = "".join(char if " " <= char <= "~" and char not in '"\\' else "_" for char in text) or "download"
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(text, safe='')}"
