"""What a VDrift track's text files say: its `objects/list.txt` read as its objects (`parse_list`,
as VDrift reads them), its name, surface types and start positions, and where a track folder is
(`find_track_folder`). The track built as a scene from them (models, textures, materials) is
`track_scene`'s: catalog and list edits read the list without loading it.

    objects/list.txt   tokens separated by blanks; a token starting with `#` ends its line
                       HEADER                  values per object (17; 14 to 16 in older files)
                       then per object HEADER values, in this order:
    | #  | field              | type  | #  | field              | type  |
    |----|--------------------|-------|----|--------------------|-------|
    | 0  | model              | name  | 9  | collideable        | 0/1   |
    | 1  | texture            | name  | 10 | friction_nontread  | float |
    | 2  | mipmap             | 0/1   | 11 | friction_tread     | float |
    | 3  | nolighting         | 0/1   | 12 | rolling_resistance | float |
    | 4  | skybox             | 0/1   | 13 | rolling_drag       | float |
    | 5  | transparent_blend  | 0/1/2 | 14 | isashadow          | 0/1   |
    | 6  | bump_wavelength    | float | 15 | clamptexture       | 0..3  |
    | 7  | bump_amplitude     | float | 16 | surface            | int   |
    | 8  | driveable          | 0/1   |    |                    |       |
    track.txt          ini: `cull faces` (default on), `start position N` / `start orientation N`
    surfaces.txt       ini: `[surface-NN]` sections, indexed in sorted order by `surface`
    about.txt          first line: the track's name
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from . import ini
from .common import SceneError, SceneNode, euler_zyx, own_file, quaternion_multiply, vdrift_to_gltf_rotation

if TYPE_CHECKING:
    from collections.abc import Iterator

FIELDS = (
    "model",
    "texture",
    "mipmap",
    "nolighting",
    "skybox",
    "transparent_blend",
    "bump_wavelength",
    "bump_amplitude",
    "driveable",
    "collideable",
    "friction_nontread",
    "friction_tread",
    "rolling_resistance",
    "rolling_drag",
    "isashadow",
    "clamptexture",
    "surface",
)
# Field -> the values VDrift gives a meaning (None: any integer).
INTEGER_FIELDS: dict[str, tuple[int, ...] | None] = {
    "mipmap": (0, 1),
    "nolighting": (0, 1),
    "skybox": (0, 1),
    "transparent_blend": (0, 1, 2),
    "driveable": (0, 1),
    "collideable": (0, 1),
    "isashadow": (0, 1),
    "clamptexture": (0, 1, 2, 3),
    "surface": None,
}
VALUES_PER_OBJECT = 17
FEWEST_VALUES = 14
# The most objects a list.txt is read with (the largest real track lists 2,301); `allow_large`
# lifts it. A listedit line of comments is 2 tokens an object: 32 leaves room for more.
MAX_LIST_OBJECTS = 100_000
TOKENS_PER_OBJECT = 32
# The largest list.txt read (a 100,000-object list is about 6 MB), and with `allow_large`.
MAX_LIST_BYTES = 32 << 20
MAX_LARGE_LIST_BYTES = 1 << 30
LIST_FILE = "list.txt"
PACK_FILE = "objects.jpk"


@dataclass(slots=True)
class ListEntry:
    """One object of list.txt: where it starts, its model and texture names, and its values."""

    line: int
    model: str
    texture: str
    values: dict[str, float | int]


def _tokens(text: str) -> tuple[list[str], Any]:
    """The tokens of `text` and the line each is on; a token starting with `#` ends its line."""
    if text.isascii() and text:
        return _ascii_tokens(text)
    return _line_tokens(text)


def _line_tokens(text: str) -> tuple[list[str], list[int]]:
    """`_tokens`, line by line (any text)."""
    words: list[str] = []
    lines: list[int] = []
    for number, line in enumerate(text.splitlines(), 1):
        for token in line.split():
            if token.startswith("#"):
                break
            words.append(token)
            lines.append(number)
    return words, lines


# ASCII characters `str.split` splits at, and those `str.splitlines` ends lines at (\r\n is one).
_BLANKS = b"\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f "
_LINE_ENDS = b"\n\x0b\x0c\r\x1c\x1d\x1e"


def _ascii_tokens(text: str) -> tuple[list[str], Any]:
    """`_tokens` of ASCII text at numpy speed (a track's list holds tens of thousands of
    tokens): the same words as `str.split`, their lines as `str.splitlines` counts them."""
    from itertools import compress

    import numpy as np

    data = np.frombuffer(text.encode("ascii"), np.uint8)
    blank = np.zeros(256, bool)
    blank[list(_BLANKS)] = True
    line_end = np.zeros(256, bool)
    line_end[list(_LINE_ENDS)] = True
    is_blank = blank[data]
    starts = np.flatnonzero(~is_blank & np.concatenate(([True], is_blank[:-1])))
    ends_line = line_end[data]
    ends_line[1:] &= ~((data[1:] == 10) & (data[:-1] == 13))  # \r\n ends one line
    line_of = np.cumsum(ends_line) - ends_line + 1  # the line each character is on
    token_lines = line_of[starts]
    # A token starting with # hides itself and every later token of its line.
    comments = data[starts] == ord("#")
    if comments.any():
        first_comment = np.full(int(token_lines[-1]) + 1, len(data), np.int64)
        np.minimum.at(first_comment, token_lines[comments], starts[comments])
        kept = starts < first_comment[token_lines]
        return list(compress(text.split(), kept.tolist())), token_lines[kept]
    # The lines stay an array: a list of a million Python ints would outweigh the text.
    return text.split(), token_lines


def check_list_size(token_count: int, path: str, allow_large: bool = False) -> None:
    """A SceneError naming the file when a list.txt holds more tokens than `MAX_LIST_OBJECTS`
    objects would (with room for comments), unless `allow_large`: checked before the tokens
    are split out, each of which costs memory."""
    if not allow_large and token_count > MAX_LIST_OBJECTS * TOKENS_PER_OBJECT:
        raise SceneError(
            f"{path}: {token_count} tokens, more than {MAX_LIST_OBJECTS} objects (the largest real track lists "
            "2,301): not read (--allow-large reads it)"
        )


def count_tokens(data: bytes) -> int:
    """How many blank-separated tokens `data` holds (comments included), in a few numpy steps."""
    import numpy as np

    raw = np.frombuffer(data, np.uint8)
    if not len(raw):
        return 0
    blank = np.zeros(256, bool)
    blank[list(_BLANKS)] = True
    is_blank = blank[raw]
    return int(np.count_nonzero(~is_blank[1:] & is_blank[:-1]) + (not is_blank[0]))


def parse_list(text: str, path: str, warnings: list[str], *, allow_large: bool = False) -> list[ListEntry]:
    """The objects of a list.txt, as VDrift reads them; objects it would not draw as written are
    dropped or corrected with a warning naming the file and line. More than `MAX_LIST_OBJECTS`
    objects' worth of tokens is a SceneError unless `allow_large`."""
    # Counted a block at a time too (a token never spans a line end): no copy of the whole text.
    tokens = sum(count_tokens(piece.encode("utf-8", "surrogatepass")) for piece in _line_blocks(text))
    check_list_size(tokens, path, allow_large)
    # Block by block: the tokens of a whole list (17 an object) would cost 10 times the text;
    # an object cut by a block's end is carried to the next.
    entries: list[ListEntry] = []
    header = 0
    words: list[str] = []
    lines: Any = []
    _forget_shared()
    try:
        for block_words, block_lines in _token_blocks(text):
            if not header:
                if not block_words:
                    continue
                header = list_header(block_words, block_lines, path, warnings)
                block_words, block_lines = block_words[1:], block_lines[1:]
            words = words + block_words if words else block_words
            lines = _joined(lines, block_lines)
            slots, used = _slots(words, lines, header, path, warnings, 0, last=False)
            entries += (entry for entry in slots if entry is not None)
            words, lines = words[used:], lines[used:]
        if not header:
            list_header([], [], path, warnings)  # the error for an empty list
        slots, _ = _slots(words, lines, header, path, warnings, 0, last=True)
        entries += (entry for entry in slots if entry is not None)
    finally:
        _forget_shared()
    return entries


# Characters of list.txt tokenised at once (a 100,000-object list is 5.4 MB; 32 KiB of it is
# 10,000 tokens, 0.6 MB as Python strings).
TOKEN_BLOCK = 1 << 15


def _line_blocks(text: str) -> Iterator[str]:
    """`text` in pieces of about `TOKEN_BLOCK` characters, each cut after a `\n` (whole lines)."""
    block = TOKEN_BLOCK
    start = 0
    while start < len(text):
        cut = text.find("\n", start + block)
        end = len(text) if cut < 0 else cut + 1
        yield text[start:end]
        start = end


def _token_blocks(text: str) -> Iterator[tuple[list[str], Any]]:
    """`_tokens` of `text` a block of whole lines at a time, the lines numbered as in the
    whole text."""
    lines_before = 0
    for piece in _line_blocks(text):
        words, lines = _tokens(piece)
        yield words, _shifted(lines, lines_before)
        # A piece ends at a line end (or the text's end): its lines are those splitlines counts.
        lines_before += len(piece.splitlines())


def _shifted(lines: Any, by: int) -> Any:
    if not by:
        return lines
    return lines + by if not isinstance(lines, list) else [line + by for line in lines]


def _joined(first: Any, second: Any) -> Any:
    """Two runs of token lines (lists or arrays) as one."""
    if not len(first):
        return second
    import numpy as np

    return np.concatenate((np.asarray(first, np.int64), np.asarray(second, np.int64)))


def list_header(words: list[str], lines: Any, path: str, warnings: list[str]) -> int:
    """The number of values per object the first token of a list.txt gives (checked)."""
    if not words:
        raise SceneError(f"{path}: empty: no header (the number of values per object)")
    header_token, header_line = words[0], lines[0]
    try:
        header = int(header_token)
    except ValueError:
        raise SceneError(
            f"{path}:{header_line}: header {header_token!r} is not a number of values per object"
        ) from None
    if not FEWEST_VALUES <= header <= 64:
        raise SceneError(
            f"{path}:{header_line}: header says {header} values per object; VDrift reads "
            f"{FEWEST_VALUES} to {VALUES_PER_OBJECT}"
        )
    if header != VALUES_PER_OBJECT:
        warnings.append(
            f"{path}:{header_line}: header says {header} values per object; VDrift since 2011 needs "
            f"{VALUES_PER_OBJECT} (read anyway{', missing ones as 0' if header < VALUES_PER_OBJECT else ''})"
        )
    return header


def parse_slots(words: list[str], lines: Any, header: int, path: str, warnings: list[str]) -> list[ListEntry | None]:
    """Each whole object of a list.txt's tokens after the header (`header` tokens each), read,
    or None where VDrift would not draw it as written (a warning says why); a last object cut
    short is a warning and no slot."""
    _forget_shared()
    try:
        return _slots(words, lines, header, path, warnings, 1, last=True)[0]
    finally:
        _forget_shared()


def _forget_shared() -> None:
    _SHARED_VALUES.clear()
    _NAMES.clear()


def _slots(
    words: list[str], lines: Any, header: int, path: str, warnings: list[str], position: int, *, last: bool
) -> tuple[list[ListEntry | None], int]:
    """`parse_slots` from token `position`, and the token where it stopped: unless `last`, an
    object cut short stops the reading there (its tokens are read again with the next block)."""
    entries: list[ListEntry | None] = []
    while position < len(words):
        end = position + header
        if end > len(words):
            if not last:
                break
            warnings.append(
                f"{path}:{lines[position]}: the last object ({words[position]}) stops after "
                f"{len(words) - position} of {header} values: left out"
            )
            break
        entries.append(_entry(words, lines, position, end, path, warnings))
        position = end
    return entries, position


# Integer fields by position after the two names, with the values VDrift gives a meaning.
_INTEGER_CHECKS = [
    (position, field_name, frozenset(map(float, INTEGER_FIELDS[field_name] or ())))
    for position, field_name in enumerate(FIELDS[2:])
    if field_name in INTEGER_FIELDS and INTEGER_FIELDS[field_name] is not None
]
_SURFACE = FIELDS[2:].index("surface")
_INTEGER_AT = [position for position, _, _ in _INTEGER_CHECKS]
_INTEGER_SETS = [allowed for _, _, allowed in _INTEGER_CHECKS]


# Values dicts of the list being read, by their tokens (see `_entry`); cleared per list.
_SHARED_VALUES: dict[tuple[str, ...], dict[str, float | int]] = {}
_SHARED_LIMIT = 1 << 16


# Model and texture names of the list being read, each kept once (a track names a texture from
# thousands of objects); cleared with `_SHARED_VALUES`.
_NAMES: dict[str, str] = {}


def _name(word: str) -> str:
    """`word`, or the equal name read before (one string for every object naming it)."""
    kept = _NAMES.get(word)
    if kept is not None:
        return kept
    if len(_NAMES) < _SHARED_LIMIT:
        _NAMES[word] = word
    return word


def _known(allowed: frozenset[float], value: float) -> bool:
    return value in allowed


def _entry(words: list[str], lines: Any, start: int, end: int, path: str, warnings: list[str]) -> ListEntry | None:
    # The common case first, in few steps (a track lists thousands of objects): every value a
    # number and every integer field one VDrift knows; anything else takes the careful path.
    key = tuple(words[start + 2 : end])
    shared = _SHARED_VALUES.get(key)
    if shared is not None:
        # Objects with the same values share one (never changed) dict: a list of a million
        # objects holds a few distinct rows of values, not a million.
        return ListEntry(
            line=int(lines[start]), model=_name(words[start]), texture=_name(words[start + 1]), values=shared
        )
    try:
        numbers = list(map(float, words[start + 2 : end]))
    except ValueError:
        return _entry_checked(list(zip(words[start:end], lines[start:end])), path, warnings)
    if len(numbers) == VALUES_PER_OBJECT - 2 and all(map(_known, _INTEGER_SETS, itemgetter(*_INTEGER_AT)(numbers))):
        surface = numbers[_SURFACE]
        if math.isfinite(sum(numbers)) and surface == int(surface):
            values: dict[str, float | int] = dict(zip(FIELDS[2:], numbers))
            for _, field_name, _ in _INTEGER_CHECKS:
                values[field_name] = int(values[field_name])
            values["surface"] = int(surface)
            if len(_SHARED_VALUES) < _SHARED_LIMIT:
                _SHARED_VALUES[key] = values
            model, texture = _name(words[start]), _name(words[start + 1])
            return ListEntry(line=int(lines[start]), model=model, texture=texture, values=values)
    return _entry_checked(list(zip(words[start:end], lines[start:end])), path, warnings)


def _entry_checked(chunk: list[tuple[str, int]], path: str, warnings: list[str]) -> ListEntry | None:
    values: dict[str, float | int] = {}
    model, texture = chunk[0][0], chunk[1][0]
    for field_name, (token, line) in zip(FIELDS[2:], chunk[2:]):
        try:
            number = float(token)
        except ValueError:
            warnings.append(f"{path}:{line}: {model}: {field_name} {token!r} is not a number: object left out")
            return None
        if not math.isfinite(number) and field_name not in INTEGER_FIELDS:
            # VDrift's stream reading stops at nan/inf: the object would not load as written.
            warnings.append(f"{path}:{line}: {model}: {field_name} {token!r} is not a finite number: object left out")
            return None
        if field_name in INTEGER_FIELDS:
            meaningful = INTEGER_FIELDS[field_name]
            if not math.isfinite(number) or number != int(number) or (meaningful and int(number) not in meaningful):
                shown = "/".join(map(str, meaningful)) if meaningful else "an integer"
                warnings.append(f"{path}:{line}: {model}: {field_name} {token} is not {shown}: read as 0")
                number = 0
            values[field_name] = int(number)
        else:
            values[field_name] = number
    for field_name in FIELDS[2:]:
        values.setdefault(field_name, 0)
    return ListEntry(line=int(chunk[0][1]), model=model, texture=texture, values=values)


def find_track_folder(path: str) -> str | None:
    """The track folder `path` is, or the track whose `objects/` folder it is; None if neither."""
    if os.path.isfile(os.path.join(path, "objects", LIST_FILE)):
        return path
    if os.path.basename(os.path.normpath(path)).lower() == "objects" and os.path.isfile(os.path.join(path, LIST_FILE)):
        return os.path.dirname(os.path.normpath(path)) or "."
    return None


def about_name(folder: str, confine: str | None = None) -> str:
    """The track's (or car's) name: the first line of its about.txt, else the folder's name."""
    path = os.path.join(folder, "about.txt")
    if os.path.isfile(path) and own_file(path, folder, confine):
        lines = ini.read_text(path).splitlines()
        if lines and lines[0].strip():
            return lines[0].strip()
    return os.path.basename(os.path.abspath(folder))


def surface_types(path: str) -> dict[int, str]:
    """surfaces.txt's `Type` of each surface, by the index list.txt's `surface` gives it (the
    sections in sorted order)."""
    if not os.path.isfile(path):
        return {}
    surfaces = ini.read(path)
    names = sorted(name for name in surfaces.sections if name.startswith("surface"))
    return {index: surfaces.sections[name].get("Type", name) for index, name in enumerate(names)}


def start_positions(settings: ini.Ini | None) -> list[SceneNode]:
    """`start position N` / `start orientation N` as empty marker nodes. The text files keep an
    older axis order: (a, b, c) is VDrift's (c, a, b), glTF's (c, b, -a)."""
    if settings is None:
        return []
    nodes = []
    number = 0
    while True:
        position = settings.floats("", f"start position {number}", 3)
        if position is None:
            break
        a, b, c = position
        node = SceneNode(f"start position {number}", translation=(c, b, -a))
        angles = settings.floats("", f"start orientation {number}", 3)
        if angles is not None:
            x, y, z, w = euler_zyx(*angles)
            # The vector part moves to VDrift's axes as points do, then VDrift turns it a
            # quarter about +Z ("historical reasons", its code says).
            turned = quaternion_multiply((0.0, 0.0, math.sqrt(0.5), math.sqrt(0.5)), (z, x, y, w))
            node.rotation = vdrift_to_gltf_rotation(turned)
        nodes.append(node)
        number += 1
    return nodes


# The name the tests and older callers know it by.
_start_positions = start_positions
