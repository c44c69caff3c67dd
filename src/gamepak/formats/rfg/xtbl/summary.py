"""What `table ls` says of a table (rows, columns, whether it has a schema), counted from
the bytes without building the tree: listing hundreds of tables."""

from __future__ import annotations

import re

from .parse import TableError
from .table import Table
from .xmldoc import MAX_XML_BYTES, check_element_budget, make_parser, run_parser, source_encoding

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


_DESCRIBED_ROW = re.compile(rb"<TableDescription>\s*<Name>\s*([^<\s]+)\s*</Name>")


def summarize(data: bytes, member: str) -> dict[str, Any]:
    """{member, table, rows, columns, schema} without building the tree: `table ls` of hundreds
    of tables. The XML is checked well-formed (expat, no handler called per element); rows are
    the row tag's elements directly inside `<Table>` (found from that tag's start and end
    tags alone), columns the schema's top fields (or, without one, the rows' distinct child tags)."""
    if len(data) > MAX_XML_BYTES:
        raise TableError(f"{member}: {len(data)} bytes, more than the {MAX_XML_BYTES} a table may hold")
    check_element_budget(data, member, TableError)  # as every other reader does: the same answer
    run_parser(make_parser(member, source_encoding(data), TableError), data, member, TableError)
    start = data.find(b"<TableDescription>")
    described = _DESCRIBED_ROW.search(data, start) if start >= 0 else None
    if described is None:
        table = Table(data, member)
        tags = {child.tag for element in table.elements for child in element}
        return {"member": member, "table": table.name, "rows": len(table), "columns": len(tags), "schema": False}
    body = data.find(b"<Table>")
    end = _matching_end(data, body, b"Table") if body >= 0 else -1
    if end < 0 or not re.match(rb"(?:\xef\xbb\xbf)?(?:<\?xml[^>]*>)?\s*<root[\s>]", data):
        Table(data, member)  # raises what is wrong
    row_tag = described.group(1)
    rows = _count_top(data, body + len(b"<Table>"), end, row_tag)
    close = _matching_end(data, start, b"TableDescription")
    columns = _count_top(data, start + len(b"<TableDescription>"), close, b"Element")
    return {
        "member": member,
        "table": row_tag.decode("utf-8", "replace"),
        "rows": rows,
        "columns": columns,
        "schema": True,
    }


def _count_top(data: bytes, start: int, end: int, tag: bytes) -> int:
    """How many `tag` elements lie at the top level of data[start:end], from the start and end
    tags of that name alone (a row holding an element of its own tag counts once)."""
    count = depth = 0
    for match in _tag_pattern(tag).finditer(data, start, end):
        if match.group(1):
            depth -= 1
        elif match.group(2):
            count += depth == 0
        else:
            count += depth == 0
            depth += 1
    return count


def _matching_end(data: bytes, start: int, tag: bytes) -> int:
    """Where the end tag of the `tag` element starting at `start` begins (-1: none)."""
    depth = 0
    for match in _tag_pattern(tag).finditer(data, start):
        if match.group(1):
            depth -= 1
            if depth == 0:
                return match.start()
        elif not match.group(2):
            depth += 1
    return -1


def _tag_pattern(tag: bytes) -> re.Pattern[bytes]:
    """The start, end and empty tags of one name (group 1 `/` for an end, group 2 for `/>`)."""
    return re.compile(rb"<(/?)" + re.escape(tag) + rb"(?:\s[^>]*?)?(/?)>")
