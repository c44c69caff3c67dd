"""`gamepak table`: RFG `.xtbl` tables listed, checked, exported to CSV/JSON and imported back."""

from __future__ import annotations

from .common import add_command, add_group, add_json_option, count, note, print_json, write_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

DESCRIPTION = """\
Red Faction Guerrilla tables (.xtbl): the game's weapons, vehicles, AI, economy... as rows and
columns, typed by each table's own <TableDescription>.

SOURCE is a pack (table.vpp_pc, misc.vpp_pc; nested .str2_pc packs included), a folder or a
loose .xtbl. A table that cannot be read is listed with the reason; the others go on.

The modder's loop:
  gamepak table export table.vpp_pc -o sheets weapons.xtbl   # sheets/weapons.xtbl.csv
  (edit sheets/weapons.xtbl.csv in a spreadsheet)
  gamepak table import table.vpp_pc sheets --dry-run          # what would change
  gamepak table import table.vpp_pc sheets                    # only the edited elements change
  gamepak table check table.vpp_pc                            # values against the schemas

CSV: one column per field, nested fields as dotted columns (Damage_Scaling_Max.NPC_Damage),
repeated items (List, Grid, Flags) as JSON text in their cell; UTF-8 with a byte-order mark.
Rows are matched by their key (Name, else a unique field, else # the row's position).
"""


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    group = add_command(
        commands, "table", None, "RFG tables (.xtbl): list, check, export, import", description=DESCRIPTION
    )
    sub = add_group(group, "table_command")

    ls = add_command(sub, "ls", run_ls, "List the tables of a pack, folder or .xtbl: rows, columns, schema.")
    ls.add_argument("source", metavar="SOURCE", help="a pack, a folder or a .xtbl file")
    add_json_option(ls, "a list of {member, table, rows, columns, schema} ({member, error} for unreadable ones)")

    export = add_command(
        sub,
        "export",
        run_export,
        "Write each table as CSV (one column per field) or JSON (lossless), at its member path plus .csv/.json.",
    )
    export.add_argument("source", metavar="SOURCE", help="a pack, a folder or a .xtbl file")
    # MEMBERs right after SOURCE: Python 3.11's argparse cannot take positionals on both sides of options.
    export.add_argument(
        "members", metavar="MEMBER", nargs="*", help="only these tables: member paths, file names or globs"
    )
    export.add_argument("-o", "--output", required=True, metavar="DIR", help="folder to write to")
    export.add_argument("--as", dest="kind", choices=("csv", "json"), default="csv", help="file kind (default csv)")
    export.add_argument("--overwrite", action="store_true", help="replace existing files")

    imp = add_command(
        sub,
        "import",
        run_import,
        "Put the changed cells, added and removed rows of a folder export wrote back into TARGET: one "
        "crash-safe edit, each table rewritten byte-minimally (only the edited elements change).",
    )
    imp.add_argument("target", metavar="TARGET", help="a pack, a folder or a .xtbl file")
    imp.add_argument("folder", metavar="DIR", help="the folder export wrote (X.xtbl.csv or X.xtbl.json files)")
    imp.add_argument("--dry-run", action="store_true", help="say what would change, write nothing")

    check = add_command(
        sub,
        "check",
        run_check,
        "Check every value against its field's type: numbers, Selections, Flags, Filenames, References, "
        "duplicate keys, unknown elements. Exit 1 when a finding is an error.",
    )
    check.add_argument("source", metavar="SOURCE", help="a pack, a folder or a .xtbl file")
    add_json_option(check, "a list of {member, row, field, value, problem, severity}")


def _kind(path: str) -> Any:
    """The table kind (content registry row) that takes `path` (RFG `.xtbl` tables)."""
    from ..content import for_path

    return for_path("table", path)


def run_ls(args: argparse.Namespace) -> int | None:
    listed = _kind(args.source).call("ls", args.source)
    if args.as_json:
        print_json(listed)
        return None
    lines = []
    for item in listed:
        if "error" in item:
            lines.append(f"{'-':>6} {'-':>4}  {'':<6}  {item['member']}  (cannot be read: {item['error']})")
        else:
            schema = "schema" if item["schema"] else "no schema"
            lines.append(f"{item['rows']:>6} {item['columns']:>4}  {schema:<9}  {item['member']}  <{item['table']}>")
    write_text("".join(line + "\n" for line in lines))
    return None


def run_export(args: argparse.Namespace) -> int | None:
    written, failures = _kind(args.source).call("export", args.source, args.output, options=vars(args))
    for reason in failures.values():
        note(f"skipped {reason}")
    note(f"exported {count(len(written), 'table')} to {args.output}")
    return None


def run_import(args: argparse.Namespace) -> int | None:
    changes = _kind(args.target).call("import", args.target, args.folder, options=vars(args))
    write_text("".join(change + "\n" for change in changes))
    verb = "would change" if args.dry_run else "changed"
    note(f"{count(len(changes), 'change')} {verb}" if changes else "nothing changed: the files match the tables")
    return None


def run_check(args: argparse.Namespace) -> int | None:
    findings, failures, not_checked = _kind(args.source).call("check", args.source)
    errors = sum(finding.severity == "error" for finding in findings) + len(failures)
    if args.as_json:
        documents = [finding.to_dict() for finding in findings]
        documents += [
            {"member": member, "row": "", "field": "", "value": "", "problem": reason, "severity": "error"}
            for member, reason in failures.items()
        ]
        print_json(documents)
    else:
        lines = [f"{finding.severity}: {finding}" for finding in findings]
        lines += [f"error: {reason}" for reason in failures.values()]
        write_text("".join(line + "\n" for line in lines))
        kinds: dict[tuple[str, str], int] = {}
        for finding in findings:
            kinds[(finding.severity, finding.kind)] = kinds.get((finding.severity, finding.kind), 0) + 1
        for (severity, kind), number in sorted(kinds.items(), key=lambda item: -item[1]):
            note(f"{number:>7} {severity}: {kind}")
        if failures:
            note(f"{len(failures):>7} error: table cannot be read")
        if not_checked:
            note(f"{not_checked} reference field(s) not checked: their table is not in {args.source}")
        warnings = len(findings) + len(failures) - errors
        note(f"{count(errors, 'error')}, {count(warnings, 'warning')}")
    return 1 if errors else None
