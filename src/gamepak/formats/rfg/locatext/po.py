"""The PO form of a translation (gettext's) read back; `po_write` writes it.

`msgctxt` is the identifier or `#hash`; `msgstr` is used when non-empty and not fuzzy, else the
string is kept, `msgid` (the reference language's string, or the file's own) standing in when
the key is new. A file in the shape gamepak writes (one line per field) is read by columns or
one regular expression; any other shape entry by entry (continuation lines, flags, obsolete
entries). Apart from `po_write` so that `text import` loads no writer and `text export` no
reader.
"""

from __future__ import annotations

import re
import struct

from ....errors import GamepakError
from .rows import Row, Rows, parse_hash

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: `typing` costs milliseconds at start-up
    from collections.abc import Iterator, Sequence
    from typing import Any


# gettext's escapes in a quoted PO string, and the characters they stand for.
PO_UNESCAPES = {"\\": "\\", '"': '"', "n": "\n", "r": "\r", "t": "\t", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}


def _key(value: str | None, where: str) -> tuple[int | None, str | None]:
    """A PO msgctxt: `#hash`, or an identifier."""
    if not value:
        raise GamepakError(f"{where}: no msgctxt: it must hold the identifier or #hash")
    if value.startswith("#"):
        return parse_hash(value, where), None
    return None, value


def _po_unquote(text: str, where: str, number: int) -> str:
    """The string a quoted PO string holds (`where` and line `number` name it in errors)."""
    body = text[1:-1]
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        raise GamepakError(f"{where}: line {number}: expected a quoted string, not {text[:40]!r}")
    if "\\" not in body:
        if '"' in body:
            raise GamepakError(f"{where}: line {number}: an unescaped quote inside the string")
        return body
    unescaped = _po_unescape(body)
    if unescaped is None:
        slash = body.index("\\")
        while body[slash + 1 : slash + 2] in PO_UNESCAPES:  # the first escape gettext lacks
            slash = body.index("\\", slash + 2)
        escaped = body[slash + 1 : slash + 2]
        raise GamepakError(f"{where}: line {number}: unknown escape \\{escaped} in a string")
    return unescaped


def _po_unescape(body: str) -> str | None:
    """A PO string's body with gettext's escapes replaced; None when it holds another."""
    out = []
    position = 0
    while True:
        slash = body.find("\\", position)
        if slash < 0:
            out.append(body[position:])
            return "".join(out)
        out.append(body[position:slash])
        escaped = PO_UNESCAPES.get(body[slash + 1 : slash + 2])
        if escaped is None:
            return None
        out.append(escaped)
        position = slash + 2


class _PoEntry:
    __slots__ = ("fields", "fuzzy", "line", "obsolete")

    def __init__(self, line: int) -> None:
        self.fields: dict[str, list[str]] = {}
        self.fuzzy = False
        self.obsolete = False
        self.line = line


def _po_entries(text: str, where: str) -> list[_PoEntry]:
    """The entries of a PO file: msgctxt, msgid and msgstr (continuation lines joined), the fuzzy
    flag, obsolete (#~) entries marked. Plural forms are refused: game strings have none."""
    entries: list[_PoEntry] = []
    current: _PoEntry | None = None
    field: list[str] | None = None
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.strip()
        if not line:
            current, field = None, None
            continue
        first = line[0]
        if first == "#":
            if current is not None and current.fields:
                current, field = None, None  # a comment after a field starts the next entry
            if current is None:
                current = _PoEntry(number)
                entries.append(current)
            if line.startswith("#~"):
                current.obsolete = True
            elif line.startswith("#,") and "fuzzy" in line[2:].replace(",", " ").split():
                current.fuzzy = True
            continue
        if first == '"':
            if field is None:
                raise GamepakError(f"{where}: line {number}: a string continues no msgctxt, msgid or msgstr")
            field.append(_po_unquote(line, where, number))
            continue
        keyword, _, rest = line.partition(" ")
        if keyword != "msgctxt" and keyword != "msgid" and keyword != "msgstr":
            what = "plural forms" if keyword.startswith(("msgid_plural", "msgstr[")) else f"{keyword!r}"
            raise GamepakError(f"{where}: line {number}: {what} not expected in a translation of game strings")
        fields = current.fields if current is not None else None
        if fields is None or keyword in fields or (keyword != "msgstr" and "msgstr" in fields):
            current = _PoEntry(number)
            entries.append(current)
            fields = current.fields
        elif keyword == "msgid" or not fields:
            current.line = number  # type: ignore[union-attr]
        field = fields[keyword] = [_po_unquote(rest.lstrip(), where, number)]
    return entries


# A quoted PO string on one line (the unrolled form: re matches it without backtracking).
_QUOTED = r'"([^"\\\n]*(?:\\.[^"\\\n]*)*)"'
# The shape gamepak (and polib with wrapwidth=0) writes: one line per field. A file made only
# of these is read by one regular expression; any other shape goes through `_po_entries`.
# The regular expressions, compiled when first used (`_compiled`; as module attributes, e.g.
# `po.PO_HEADER`, too): compiling them all took a millisecond of every `text import`, which
# uses one or two.
_PATTERNS = {
    "PO_HEADER": r'(?:#[^\n]*\n)*msgid ""\nmsgstr "[^"\\\n]*(?:\\.[^"\\\n]*)*"\n(?:"[^"\\\n]*(?:\\.[^"\\\n]*)*"\n)*\n',
    "PO_SIMPLE_ENTRY": (
        rf"((?:#[^\n]*\n)*)msgctxt {_QUOTED}\nmsgid {_QUOTED}\nmsgstr {_QUOTED}\n(?:(\n)|(?=#|msgctxt)|$)"
    ),
    # msgctxts that are all gamepak's `#5a3c91f0` hash keys, one a line.
    "PO_HASH_KEYS": r"#[0-9A-Fa-f]{8}(?:\n#[0-9A-Fa-f]{8})*",
}


def _compiled(name: str) -> re.Pattern[str]:
    """The regular expression `name` of `_PATTERNS` (re keeps what it compiled)."""
    return re.compile(_PATTERNS[name])


def __getattr__(name: str) -> re.Pattern[str]:
    if name in _PATTERNS:
        return _compiled(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _header_end(text: str) -> int:
    """Where PO_HEADER's match at the start of `text` ends (0: none). gamepak's own header, the
    empty msgid and a msgstr of one line, is told without the regular expression (compiling it
    took a million instructions of every `text import`)."""
    if text.startswith(_OWN_HEADER):
        end = text.find("\n", len(_OWN_HEADER))  # the msgstr line's end: a blank line follows
        if (
            end > len(_OWN_HEADER)
            and text[end - 1] == '"'
            and text.startswith("\n", end + 1)
            and _quoted_body(text[len(_OWN_HEADER) : end - 1])
        ):
            return end + 2
    return _header_regex_end(text)


_OWN_HEADER = 'msgid ""\nmsgstr "'


def _header_regex_end(text: str) -> int:
    header = _compiled("PO_HEADER").match(text)
    return header.end() if header else 0


def _quoted_body(body: str) -> bool:
    """Whether `body` is what a quoted PO string holds between its quotes (as `_QUOTED` takes
    it: no line end, no quote or backslash but in a backslash and the character after it),
    told by replacing, not by the regular expression. Escaped backslashes go first, left to
    right as the expression pairs them; then escaped quotes; what is left holds no quote
    and does not end with a lone backslash."""
    if "\\" in body:
        body = body.replace("\\\\", "").replace('\\"', "")
        if body.endswith("\\"):
            return False
    return '"' not in body and "\n" not in body


# The characters of a PO_SIMPLE_ENTRY match outside its groups.
PO_SIMPLE_FIXED = len('msgctxt ""\nmsgid ""\nmsgstr ""\n')


def _hash_keys(keys: list[str]) -> tuple[int, ...] | None:
    """The hashes of `keys` when every one is gamepak's `#5a3c91f0` (`#` and 8 hexadecimal
    digits), else None: checked by a few passes over them all, not a match each."""
    count = len(keys)
    joined = "".join(keys)
    if len(joined) != 9 * count or joined[::9] != "#" * count or joined.count("#") != count:
        return None
    if set(map(len, keys)) != {9}:
        return None  # (a key of 8 and one of 10 would leave every # at its place)
    return _hexadecimal(joined.replace("#", ""), count)


def _simple_po_rows(text: str, where: str) -> Rows | None:
    """The rows of a PO file in the one-line-per-field shape, or None when it has another."""
    columns = _simple_po_columns(text, where)
    if columns is not None:
        return columns
    rows = _simple_po_rows_in_order(text, where)
    return None if rows is None else Rows.of(rows)


def _simple_po_columns(text: str, where: str) -> Rows | None:
    """The rows of a PO file in the one-line-per-field shape read column by column (one
    `findall`, bulk checks), or None when anything needs a closer look (another shape, flags,
    escapes that are not gettext's, keys that are not clean): `_simple_po_rows_in_order` then
    reads it entry by entry and names the first problem."""
    start = _header_end(text)
    columns = _uniform_columns(text, start)
    if columns is None:
        found = _compiled("PO_SIMPLE_ENTRY").findall(text, start)
        if not found:
            return None
        columns = [list(column) for column in zip(*found)]
        # findall's matches do not overlap and come in order: they tile the rest of the file
        # exactly when their lengths add up to it.
        covered = len(found) * PO_SIMPLE_FIXED + sum(sum(map(len, column)) for column in columns)
        if start + covered != len(text):
            return None
        flags = "".join(columns[0])
        if "#~" in flags or "#," in flags:
            return None  # flags or obsolete entries: the general reader decides
    comments, msgctxts, msgids, msgstrs, blanks = columns
    count = len(msgctxts)
    keys = msgctxts.hashes if isinstance(msgctxts, _Bodies) else _hash_keys(msgctxts)
    if keys is not None:
        hashes: list[int | None] = list(keys)
        identifiers: list[str | None] = [None] * count
    else:
        hashes, identifiers = [], []
        for key in msgctxts:
            if not key or "\\" in key or (key.startswith("#") and _hash_keys([key]) is None):
                return None
            if key[0] == "#":
                hashes.append(int(key[1:], 16))
                identifiers.append(None)
            else:
                hashes.append(None)
                identifiers.append(key)
    untranslated = msgstrs.count("") == count  # an untouched export has no msgstr
    escapable = [] if untranslated else [msgstrs]
    if isinstance(msgids, _Bodies):
        if not msgids.unescape():
            return None
    else:
        escapable.append(msgids)
    for column in escapable:
        if "\\" in "".join(column):
            for number, value in enumerate(column):
                if "\\" in value:
                    unescaped = _po_unescape(value)
                    if unescaped is None:
                        return None
                    column[number] = unescaped
    first_line = text.count("\n", 0, start) + 1
    lines: list[int] = []

    def location(number: int) -> str:
        if not lines:  # each entry's msgid line, as polib numbers entries
            line = first_line
            for comment, blank in zip(comments, blanks):
                line += comment.count("\n") + 1
                lines.append(line)
                line += 2 + len(blank)
        return f"{where}: line {lines[number]}"

    texts: list[str | None] = [None] * count if untranslated else [msgstr or None for msgstr in msgstrs]
    # (`_Bodies` is a sequence of str, without the ABC's weight)
    fallbacks: Sequence[str | None] = msgids if isinstance(msgids, _Bodies) else list(msgids)  # type: ignore[assignment]
    return Rows(hashes, identifiers, texts, fallbacks, location)


def _uniform_columns(text: str, start: int) -> list[Any] | None:
    """What `PO_SIMPLE_ENTRY.findall(text, start)` gives as columns (comments, msgctxts,
    msgids, msgstrs, blank lines), when the entries from `start` on are all four lines without
    comments (msgctxt, msgid, msgstr, a blank line but after the last), as gamepak writes them;
    None otherwise. Cut by one `split` and checked a column at a time (the regular expression
    walked every character in Python's matcher: a fifth of a PO import); the msgids, most of
    the text and needed only for new entries, are checked by counts over their column and cut
    from their lines when asked for (`_Bodies`)."""
    if not text.endswith("\n") or start >= len(text):
        return None
    lines = text.split("\n")  # the whole text (its rest cut first was a copy of it), then
    del lines[: text.count("\n", 0, start)]  # without the header's lines
    lines.pop()  # (the empty one after the last line end)
    last_blank = "\n"
    if len(lines) % 4 == 3:
        lines.append("")
        last_blank = ""
    if len(lines) % 4 or any(lines[3::4]):
        return None
    count = len(lines) // 4
    columns: list[Any] = []
    for prefix, column in (('msgctxt "', lines[0::4]), ('msgstr "', lines[2::4])):
        # The common columns first, checked whole: gamepak's hash keys, no translation yet.
        if prefix == 'msgctxt "' and (hashes := _hash_key_lines(column)) is not None:
            columns.append(_Bodies(column, len(prefix), hashes))
            continue
        # (one comparison of the column joined: a comparison a line took twice as long)
        if prefix == 'msgstr "' and "\n".join(column) == ('msgstr ""\n' * count)[:-1]:
            columns.append([""] * count)
            continue
        quoted = _quoted_column(column, prefix)
        if quoted is None:
            return None
        columns.append(quoted)
    msgids = _msgid_column(lines[1::4])
    if msgids is None:
        return None
    blanks = ["\n"] * count
    blanks[-1] = last_blank
    return [[""] * count, columns[0], msgids, columns[1], blanks]


_HASH_KEY_LINE = 'msgctxt "#01234567"'
_HASH_KEY_BYTES = _HASH_KEY_LINE.encode()
_HASH_DIGITS = range(_HASH_KEY_LINE.index("#") + 1, len(_HASH_KEY_LINE) - 1)


def _hash_key_lines(lines: list[str]) -> tuple[int, ...] | None:
    """The hashes of msgctxt `lines` that all hold gamepak's `#5a3c91f0` keys, else None:
    checked a character column at a time over them all (as bytes, each line with its line
    end), the digits gathered a column at a time (the keys cut out by `replace` took 5 M
    instructions). The line ends can only be at every 20th place, so every line has 19
    characters: each other place holds a character of `msgctxt "#` or the closing quote, or
    a digit (a line end there is a blank `fromhex` skips, and the digits come out short)."""
    count = len(lines)
    width = len(_HASH_KEY_LINE) + 1
    joined = "\n".join(lines)
    if len(joined) != width * count - 1 or not joined.isascii():
        return None
    raw = joined.encode("ascii")
    for place, character in enumerate(_HASH_KEY_BYTES):  # `msgctxt "#` and the closing quote
        if place not in _HASH_DIGITS and raw[place::width] != bytes((character,)) * count:
            return None
    digits = bytearray(len(_HASH_DIGITS) * count)
    for column, place in enumerate(_HASH_DIGITS):
        digits[column :: len(_HASH_DIGITS)] = raw[place::width]
    return _hexadecimal(digits.decode("ascii"), count)


def _hexadecimal(digits: str, count: int) -> tuple[int, ...] | None:
    """`count` big-endian u32 written as 8 hexadecimal digits each in `digits`, else None."""
    if len(digits) != 8 * count:
        return None
    try:
        raw = bytes.fromhex(digits)
    except ValueError:
        return None
    # fromhex skips blanks between the digits: so many bytes only when none was there.
    return struct.unpack(f">{count}I", raw) if len(raw) == 4 * count else None


def _quoted_column(lines: list[str], prefix: str) -> list[str] | None:
    """The bodies of `lines`, each `prefix` (a keyword and the opening quote), a body as
    `_QUOTED` takes it, and the closing quote; None when one is not."""
    count = len(lines)
    cut = len(prefix)
    joined = "\n".join(lines)
    # Every line starts with the prefix and ends with a quote of its own (it is long enough)...
    if (
        min(map(len, lines)) <= cut
        or not joined.startswith(prefix)
        or joined.count("\n" + prefix) != count - 1
        or not joined.endswith('"')
        or joined.count('"\n') != count - 1
    ):
        return None
    bodies = [line[cut:-1] for line in lines]
    quotes = joined.count('"')
    if "\\" in joined:
        escaped = [number for number, line in enumerate(lines) if "\\" in line]
        for number in escaped:
            if not _quoted_body(bodies[number]):
                return None
            quotes -= lines[number].count('"')
        count -= len(escaped)
    # ... and the others hold no quote between those two.
    return bodies if quotes == 2 * count else None


_MSGID = 'msgid "'


def _msgid_column(lines: list[str]) -> _Bodies | None:
    """The msgid column of `_uniform_columns` (`lines`: the msgid lines, one an entry), checked
    as `_quoted_column` checks a column but without cutting it: by counts over the column
    joined. (Counted over the whole text instead, the lines' starts, their ends and the quotes
    took three passes over all of it, 7.9 M instructions for the game's Arabic PO; joined, one
    count finds every line's end and the next one's start, then one counts the quotes.) The
    few lines holding a backslash are found in the joined column, not by a look into every
    line, and checked one by one."""
    count = len(lines)
    joined = "\n".join(lines)
    if (
        # Every msgid line starts with the keyword and ends with a quote of its own (a line
        # boundary is a closing quote, then the next line's keyword and opening quote)...
        not joined.startswith(_MSGID)
        or not joined.endswith('"')
        or joined.count('"\n' + _MSGID) != count - 1
        or _MSGID in lines
    ):
        return None
    # ... and holds no quote between those two, but in escapes.
    quotes = 2 * count
    escapes_known = True
    backslash = joined.find("\\")
    while backslash >= 0:
        start = joined.rfind("\n", 0, backslash) + 1
        end = joined.find("\n", backslash)
        line = joined[start:] if end < 0 else joined[start:end]
        body = line[len(_MSGID) : -1]
        if not _quoted_body(body):
            return None
        quotes += line.count('"') - 2
        escapes_known = escapes_known and _po_unescape(body) is not None
        backslash = -1 if end < 0 else joined.find("\\", end)
    if joined.count('"') != quotes:
        return None
    return _Bodies(lines, len(_MSGID), escapes_known=escapes_known)


class _Bodies:
    """The bodies of a column of quoted lines (`prefix "body"`), cut from a line when asked for;
    once `unescape`d, with gettext's escapes replaced."""

    __slots__ = ("cut", "escapes_known", "hashes", "lines", "unescaped")

    def __init__(
        self, lines: list[str], cut: int, hashes: tuple[int, ...] | None = None, *, escapes_known: bool = True
    ) -> None:
        self.lines = lines
        self.cut = cut
        self.hashes = hashes  # msgctxts that are all hash keys: their hashes
        self.escapes_known = escapes_known  # every escape in the bodies is gettext's
        self.unescaped = False

    def __len__(self) -> int:
        return len(self.lines)

    def __getitem__(self, number: int) -> str:
        value = self.lines[number][self.cut : -1]
        if self.unescaped and "\\" in value:
            unescaped = _po_unescape(value)
            assert unescaped is not None  # (checked by `unescape`)
            return unescaped
        return value

    def __iter__(self) -> Iterator[str]:
        return map(self.__getitem__, range(len(self.lines)))

    def __eq__(self, other: object) -> bool:
        return list(self) == other if isinstance(other, list) else NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def unescape(self) -> bool:
        """Give the bodies with gettext's escapes replaced from now on; False when one holds
        another escape."""
        self.unescaped = self.escapes_known
        return self.escapes_known


def _simple_po_rows_in_order(text: str, where: str) -> list[Row] | None:
    """`_simple_po_rows` entry by entry: the first problem raised with its line."""
    header = _compiled("PO_HEADER").match(text)
    position = header.end() if header else 0
    line = text.count("\n", 0, position) + 1
    rows = []
    for match in _compiled("PO_SIMPLE_ENTRY").finditer(text, position):
        if match.start() != position:
            return None
        comments, msgctxt, msgid, msgstr, blank = match.groups()
        comment_lines = comments.count("\n") if comments else 0
        number = line + comment_lines + 1  # the msgid's line, as polib numbers entries
        line = number + 2 + (blank is not None)
        position = match.end()
        if comment_lines and ("#~" in comments or "#," in comments):
            return None  # flags or obsolete entries: the general reader decides
        location = f"{where}: line {number}"
        if "\\" in msgctxt:
            msgctxt = _po_unquote(f'"{msgctxt}"', where, number - 1)
        if msgctxt.startswith("#"):
            hash_value, identifier = parse_hash(msgctxt, location), None
        else:
            hash_value, identifier = None, msgctxt or _key(msgctxt, location)[1]
        if "\\" in msgstr:
            msgstr = _po_unquote(f'"{msgstr}"', where, number + 1)
        if "\\" in msgid:
            msgid = _po_unquote(f'"{msgid}"', where, number)
        rows.append(Row(hash_value, identifier, msgstr or None, location, msgid))
    if position != len(text):
        return None
    return rows


def rows_from_po(text: str, where: str) -> Rows | list[Row]:
    simple = _simple_po_rows(text, where)
    if simple is not None:
        return simple
    rows = []
    for entry in _po_entries(text, where):
        if entry.obsolete or "msgid" not in entry.fields:
            continue
        msgctxt = "".join(entry.fields["msgctxt"]) if "msgctxt" in entry.fields else None
        msgid = "".join(entry.fields["msgid"])
        if msgctxt is None and msgid == "":
            continue  # the header
        location = f"{where}: line {entry.line}"
        if "msgstr" not in entry.fields:
            raise GamepakError(f"{location}: an entry without msgstr")
        msgstr = "".join(entry.fields["msgstr"])
        hash_value, identifier = _key(msgctxt, location)
        translated = msgstr and not entry.fuzzy
        rows.append(Row(hash_value, identifier, msgstr if translated else None, location, fallback=msgid))
    return rows
