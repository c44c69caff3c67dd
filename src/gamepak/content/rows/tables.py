"""The table family of the content registry (`gamepak table`, the viewer's table page) and
its row: RFG `.xtbl` tables."""

from __future__ import annotations

from ..spec import VERIFY as _VERIFY
from ..spec import ContentKind, Family, Verb

# A table is read by `table` and the viewer's table page; the catalog lists its file as
# a member, with no rows of its own.
TABLE = Family(
    "table",
    "table",
    None,
    None,
    "table",
    {
        "ls": "ls(source) -> [row]",
        "export": "export(source, output, options=) -> ([written], {member: why skipped})",
        "import": "import(target, folder, options=) -> [change] (options: dry_run, strict, delete, warnings)",
        "check": "check(source, options=) -> (findings, failures, references not checked) (options: base)",
        "verify": _VERIFY,
    },
    ("ls", "export", "import", "check"),
)

XTBL = ContentKind(
    "xtbl",
    TABLE,
    "Red Faction Guerrilla tables (.xtbl): rows and columns typed by their own description",
    extensions=(".xtbl",),
    packs=("vpp",),
    types={".xtbl": "text/xml"},
    verbs={
        "ls": Verb("gamepak.ops.tables:list_tables"),
        "export": Verb("gamepak.ops.tables:export_tables", ("kind", "members", "overwrite")),
        "import": Verb("gamepak.ops.tables:import_tables", ("dry_run", "strict", "delete", "warnings")),
        "check": Verb("gamepak.ops.tables:check_tables", ("base",)),
        # `gamepak verify PACK`: every table of the pack against its schema, folded into one line.
        "verify": Verb("gamepak.formats.rfg.xtbl.parallel:check_pack_tables", ("base", "source")),
    },
    fallback=True,
)
