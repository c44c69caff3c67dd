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
        counted = _count_undescribed(data, member) if start < 0 else None
        if counted is not None:
            return {"member": member, **counted, "schema": False}
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


def _count_undescribed(data: bytes, member: str) -> dict[str, Any] | None:
    """{table, rows, columns} of a table without `<TableDescription>`, as `Table` would say
    (the rows' most common tag, their count, their children's distinct tags), from one pass of
    expat that keeps counts, never elements (a tree of 500,000 elements takes 12 times the
    bytes); None when the document is not `<root><Table>`, for `Table` to say what is wrong."""
    tags: dict[str, int] = {}
    children: set[str] = set()
    depth = 0
    state = {"root": "", "body": 0}  # body: 0 before the first <Table>, 1 inside, 2 after

    def name_of(tag: str) -> str:
        # With namespaces on, as ElementTree reads them: `uri}local` is `{uri}local`.
        return "{" + tag if "}" in tag else tag

    def start(tag: str, attributes: object) -> None:
        nonlocal depth
        depth += 1
        if depth == 1:
            state["root"] = tag
        elif depth == 2 and state["body"] == 0 and tag == "Table":
            state["body"] = 1
        elif state["body"] == 1:
            if depth == 3:
                name = name_of(tag)
                tags[name] = tags.get(name, 0) + 1
            elif depth == 4:
                children.add(name_of(tag))

    def end(tag: str) -> None:
        nonlocal depth
        if depth == 2 and state["body"] == 1:
            state["body"] = 2
        depth -= 1

    from xml.parsers import expat

    # Namespaces on, `}` between a prefix's URI and the local name: ElementTree's reading. (The
    # document passed expat once already: DTDs and malformed XML never reach this pass.)
    parser = expat.ParserCreate(source_encoding(data), "}")
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    run_parser(parser, data, member, TableError)
    if state["root"] != "root" or state["body"] == 0:
        return None
    table = max(tags, key=tags.__getitem__) if tags else ""
    return {"table": table, "rows": sum(tags.values()), "columns": len(children)}
