"""Red Faction Guerrilla tables (`.xtbl`): XML documents of rows with their own schema.

    bytes                   what it is
    <root>                  the document element
      <Table>               the rows: every child is a row, all of one tag (`<Weapon>`)
        <Weapon>            a row: one child per field it sets (fields left out take the
          <Name>..</Name>     schema's Default); struct fields hold sub-fields, List/Grid/Flags
          ...                 fields hold repeated items
        </Weapon>
      </Table>
      <TableTemplates/>     editor templates (not rows)
      <TableDescription>    the schema (see `schema`): <Name> the row tag, one <Element> per field
      <EntryCategories/>    editor categories (a row's <_Editor><Category>)
    </root>

UTF-8 without a declaration, or Latin-1 for a few (credits.xtbl); tabs, LF or CRLF as written.
The game is known to misbehave on reformatted XML: a table is never re-serialised; an edit
rewrites only the elements it changes (`xmldoc`).

    table.Table(data, member)     schema, rows (cells by dotted column), row(key), set, write()
    summary.summarize(data, member) what `table ls` prints, without building the tree
    check.check_table(table)      values against the schema
    sheet                         CSV/JSON out, and back in as edits
"""

from __future__ import annotations

from .parse import TableError
from .schema import Field, Schema
from .summary import summarize
from .table import Row, Table, open_table

__all__ = ["Field", "Row", "Schema", "Table", "TableError", "open_table", "summarize"]
