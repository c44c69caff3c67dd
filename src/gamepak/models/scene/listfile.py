"""A track's `objects/list.txt` kept as bytes, for writing a scene back into it: every token with
its byte span, so an edit rewrites only the tokens that change and every other byte (comments,
blank lines, line ends, names in Latin-1 or UTF-8) stays as it was.

The tokens are those `track.parse_list` reads (blanks separate them; a token starting with `#`
hides the rest of its line). Objects are `header` tokens each after the header token, as VDrift
reads them. The file's text is UTF-8 when it decodes as such (a BOM skipped), else Latin-1 (old
tracks were made on Windows); new names are written in that encoding, and a name it cannot hold
is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .common import SceneError
from .track import FIELDS, INTEGER_FIELDS, ListEntry, list_header, parse_slots

UTF8_BOM = b"\xef\xbb\xbf"
# The blanks `track._tokens` splits at (str.split's ASCII ones), and the line ends it counts.
BLANKS = b"\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f "
LINE_ENDS = b"\n\x0b\x0c\r\x1c\x1d\x1e"


def token_problem(name: str) -> str | None:
    """Why `name` cannot be one list.txt token VDrift reads back as it is (None when it can):
    blanks and control characters split or end it, a leading `#` makes it a comment."""
    if not name:
        return "it is empty"
    if name.isprintable() and " " not in name and not name.startswith("#"):
        return None  # the common case, in one C call (any other blank is not printable)
    for character in name:
        if character.isspace():
            return f"it holds a blank ({character!r})"
        if not character.isprintable():
            return f"it holds a control character ({character!r})"
    if name.startswith("#"):
        return "it starts with '#' (list.txt reads that as a comment)"
    return None


@dataclass
class ListFile:
    """A list.txt's bytes, tokens and objects (`slots`: one per whole object, None where VDrift
    would not draw it as written)."""

    path: str
    data: bytes
    encoding: str
    spans: list[tuple[int, int]]
    words: list[str]
    lines: list[int]
    header: int
    slots: list[ListEntry | None]
    warnings: list[str] = field(default_factory=list)

    def slot_span(self, slot: int) -> tuple[int, int]:
        """(first, last + 1) token numbers of object `slot`."""
        first = 1 + slot * self.header
        return first, first + self.header

    @property
    def cut_short(self) -> bool:
        """Whether the tokens end inside an object (appending would shift every value)."""
        return (len(self.words) - 1) % self.header != 0

    def encode(self, text: str, what: str) -> bytes:
        """`text` in the file's encoding; a SceneError naming `what` when it cannot hold it."""
        try:
            return text.encode(self.encoding)
        except UnicodeEncodeError:
            raise SceneError(
                f"{self.path}: {what} {text!r} cannot be written in this list.txt's encoding ({self.encoding})"
            ) from None

    @property
    def newline(self) -> bytes:
        """The line end the file uses most (\\r\\n or \\n)."""
        return b"\r\n" if self.data.count(b"\r\n") * 2 > self.data.count(b"\n") else b"\n"


def read_list_file(data: bytes, path: str) -> ListFile:
    """Tokenise and read a list.txt's bytes (see the module's docstring)."""
    try:
        data.decode("utf-8")
        encoding = "utf-8"
    except UnicodeDecodeError:
        encoding = "latin-1"
    start = len(UTF8_BOM) if encoding == "utf-8" and data.startswith(UTF8_BOM) else 0
    spans, lines = _token_spans(data, start)
    words = [data[begin:end].decode(encoding) for begin, end in spans]
    warnings: list[str] = []
    header = list_header(words, lines, path, warnings)
    slots = parse_slots(words, lines, header, path, warnings)
    return ListFile(path, data, encoding, spans, words, lines, header, slots, warnings)


def _token_spans(data: bytes, start: int) -> tuple[list[tuple[int, int]], list[int]]:
    """(start, end) of every token of `data` from `start` and the line each is on (1-based),
    tokens hidden by a `#` token left out; in a few numpy steps (a track lists tens of
    thousands of tokens)."""
    import numpy as np

    raw = np.frombuffer(data, np.uint8)
    blank = np.zeros(256, bool)
    blank[list(BLANKS)] = True
    is_blank = blank[raw]
    is_blank[:start] = True
    word = ~is_blank
    starts = np.flatnonzero(word & np.concatenate(([True], is_blank[:-1])))
    ends = np.flatnonzero(word & np.concatenate((is_blank[1:], [True]))) + 1
    line_end = np.zeros(256, bool)
    line_end[list(LINE_ENDS)] = True
    ends_line = line_end[raw]
    ends_line[1:] &= ~((raw[1:] == 10) & (raw[:-1] == 13))  # \r\n ends one line
    line_of = np.cumsum(ends_line) - ends_line  # the line (0-based) each byte is on
    token_lines = line_of[starts]
    comments = raw[starts] == 0x23
    if comments.any():
        # A token starting with # hides itself and every later token of its line.
        first_comment = np.full(int(token_lines[-1]) + 1, len(data), np.int64)
        np.minimum.at(first_comment, token_lines[comments], starts[comments])
        kept = starts < first_comment[token_lines]
        starts, ends, token_lines = starts[kept], ends[kept], token_lines[kept]
    return list(zip(starts.tolist(), ends.tolist())), (token_lines + 1).tolist()


def format_value(name: str, value: float) -> str:
    """A list.txt value as listedit writes it: integers for the flag fields, else Python's
    shortest float text."""
    if name in INTEGER_FIELDS:
        return str(int(value))
    return repr(float(value)) if value != int(value) or abs(value) >= 1e16 else f"{float(value):.1f}"


class ListEdit:
    """Byte-level changes to a `ListFile`: tokens replaced, objects removed, objects appended."""

    def __init__(self, listing: ListFile) -> None:
        self.listing = listing
        self.replaced: dict[int, bytes] = {}  # token number -> new bytes
        self.removed: set[int] = set()  # slots
        self.appended: list[tuple[str, str, dict[str, float | int]]] = []

    def replace_token(self, token: int, text: str, what: str) -> None:
        self.replaced[token] = self.listing.encode(text, what)

    def remove_slot(self, slot: int) -> None:
        self.removed.add(slot)

    def append(self, model: str, texture: str, values: dict[str, float | int]) -> None:
        self.appended.append((model, texture, values))

    @property
    def changed(self) -> bool:
        return bool(self.replaced or self.removed or self.appended)

    def result(self) -> bytes:
        """The new bytes of the file (the old ones when nothing changed)."""
        listing = self.listing
        if not self.changed:
            return listing.data
        if self.appended and listing.cut_short:
            raise SceneError(
                f"{listing.path}:{listing.lines[-1]}: the list ends inside an object: objects cannot be added "
                "after it (complete or remove that object first)"
            )
        cuts: list[tuple[int, int, bytes]] = []
        for token, replacement in self.replaced.items():
            begin, end = listing.spans[token]
            cuts.append((begin, end, replacement))
        for slot in self.removed:
            first, last = listing.slot_span(slot)
            # From the end of the token before (so a `#entry N` line above goes with it) to the
            # end of the object's last value.
            begin = listing.spans[first - 1][1]
            cuts.append((begin, listing.spans[last - 1][1], b""))
        cuts.sort()
        parts: list[bytes] = []
        position = 0
        for begin, end, replacement in cuts:
            if begin < position:
                continue  # a replaced token inside a removed object
            parts += [listing.data[position:begin], replacement]
            position = end
        parts.append(listing.data[position:])
        if self.appended:
            newline = listing.newline
            line_end = newline.decode("ascii")
            if not parts[-1].endswith((b"\n", b"\r")) and any(parts):
                parts.append(newline)
            number = len(listing.slots) - len(self.removed)
            texts = []
            # Objects added by the thousand mostly share their values: each set formatted once.
            formatted: dict[tuple[float | int, ...], list[str]] = {}
            for model, texture, values in self.appended:
                key = tuple(values.get(name, 0) for name in FIELDS[2:])
                if key not in formatted:
                    formatted[key] = [format_value(name, value) for name, value in zip(FIELDS[2:], key)]
                fields = [model, texture, *formatted[key]]
                fields = (fields + ["0"] * listing.header)[: listing.header]
                texts.append(line_end + line_end.join([f"#entry {number}", *fields]) + line_end)
                number += 1
            parts.append(listing.encode("".join(texts), "object"))
        return b"".join(parts)
