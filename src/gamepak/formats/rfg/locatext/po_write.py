"""The PO form of a translation (gettext's) written; `po` reads it back.

One line per field, as polib writes with wrapwidth=0: `msgctxt` is the identifier or `#hash`;
`msgid` the reference language's string (with `source`) and `msgstr` the file's, or, without a
reference, `msgid` the file's string and `msgstr` empty. Apart from `po` so that `text export`
loads no reader and `text import` no writer.
"""

from __future__ import annotations

from . import texts_of

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: `typing` costs milliseconds at start-up
    from collections.abc import Iterator, Sequence

    from . import LocaEntry


# PO escapes (gettext's): what a quoted PO string cannot hold as it is.
PO_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
PO_TABLE = {ord(character): escaped for character, escaped in PO_ESCAPES.items()}


def _po_quote(text: str) -> str:
    """`text` as a quoted PO string (the header, or a field holding a NUL)."""
    return f'"{text.translate(PO_TABLE)}"'


def _po_escape_all(fields: list[str]) -> list[str]:
    """`fields` escaped for PO strings: one pass of `str.replace` per escape over all of them
    joined (a call per field takes longer), field by field when one holds the joining NUL."""
    joined = "\0".join(fields)
    if joined.count("\0") != len(fields) - 1:
        return [_po_quote(field)[1:-1] for field in fields]
    for character, escaped in PO_ESCAPES.items():  # the backslash first: it is in the others' output
        if character in joined:
            joined = joined.replace(character, escaped)
    return joined.split("\0")


def dump_po(entries: Sequence[LocaEntry], sources: dict[int, str] | None, title: str) -> bytes:
    """The PO file of `entries` (see the module's docstring)."""
    return b"".join(po_parts(entries, sources, title))


def po_parts(entries: Sequence[LocaEntry], sources: dict[int, str] | None, title: str) -> Iterator[bytes]:
    """`dump_po`'s bytes, made and encoded a block of entries at a time as they are asked for:
    the texts, keys and lines of every entry are never all held at once (200,000 strings took
    19 times the file's size)."""
    # Written directly (polib takes 10x longer for the game's 7,298 strings); one line per
    # field, as polib writes with wrapwidth=0.
    header = (
        f"Project-Id-Version: {title or 'gamepak text export'}\n"
        "MIME-Version: 1.0\n"
        "Content-Type: text/plain; charset=UTF-8\n"
        "Content-Transfer-Encoding: 8bit\n"
    )
    head = f'msgid ""\nmsgstr {_po_quote(header)}\n'
    if not entries:
        yield head.encode("utf-8")
        return
    yield f"{head}\n".encode()
    for start in range(0, len(entries), _PO_BLOCK):
        text = "\n".join(_po_blocks(entries[start : start + _PO_BLOCK], sources))
        yield (text if not start else "\n" + text).encode("utf-8")


_PO_BLOCK = 4096  # entries made into text at a time


def _po_blocks(entries: Sequence[LocaEntry], sources: dict[int, str] | None) -> list[str]:
    """Each entry's lines in the PO file (without the blank line between entries)."""
    texts = texts_of(entries)
    count = len(entries)
    keys = [f"#{entry.hash:08x}" if entry.identifier is None else entry.identifier for entry in entries]
    if sources is None:
        msgids, msgstrs = texts, [""] * count
    else:
        msgids = [sources.get(entry.hash, text) for entry, text in zip(entries, texts)]
        msgstrs = texts
    escaped = _po_escape_all([*keys, *msgids, *msgstrs])
    # Comments: the hash of a named entry, and whether the reference file lacks it.
    comments = [f"#. hash {entry.hash:08x}\n" if entry.identifier is not None else "" for entry in entries]
    if sources is not None:
        comments = [
            comment if entry.hash in sources else f"{comment}#. not in the reference file\n"
            for entry, comment in zip(entries, comments)
        ]
    # One string per entry (a list item per line took a third longer).
    return [
        f'{comment}msgctxt "{key}"\nmsgid "{msgid}"\nmsgstr "{msgstr}"\n'
        for comment, key, msgid, msgstr in zip(
            comments, escaped[:count], escaped[count : 2 * count], escaped[2 * count :]
        )
    ]
