"""The CLI's JSON output, one shape for every `--json` (README "JSON output"): two-space indent,
UTF-8 text, and the same key for the same thing in every verb: `file` the input, `members` a
member count, `size` bytes of content, `stored_size` bytes as the pack stores them.

Apart from `cli.common`, so that a command imports it only when it prints JSON. `json` itself is
imported when a document is written: a command module that names these helpers at its top (a
command group) starts without it.
"""

from __future__ import annotations

from .common import write_lines, write_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator


def json_text(document: object) -> str:
    """`document` as the CLI's JSON text (one shape for every --json), newline-terminated."""
    import json

    from ..core.jsontext import JSON_INDENT

    return json.dumps(document, indent=JSON_INDENT, ensure_ascii=False) + "\n"


def print_json(document: object) -> None:
    """`document` as the CLI's JSON on stdout."""
    write_text(json_text(document))


def print_json_rows(rows: Iterable[object]) -> None:
    """A list of rows as `print_json` prints it (the same bytes), each row written as it
    comes: rows read lazily are never all held."""
    import json

    from ..core.jsontext import JSON_INDENT

    def pieces() -> Iterator[str]:
        first = True
        for row in rows:
            text = json.dumps(row, indent=JSON_INDENT, ensure_ascii=False)
            # Nested one level deeper than alone; JSON text holds no raw newline but its own.
            yield ("[\n  " if first else ",\n  ") + text.replace("\n", "\n  ")
            first = False
        yield "[]\n" if first else "\n]\n"

    write_lines(pieces())
