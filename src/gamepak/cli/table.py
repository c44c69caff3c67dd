"""`gamepak table`: RFG `.xtbl` tables listed, checked, exported to CSV/JSON and imported back."""

from __future__ import annotations

import sys

from .common import add_command, add_group, add_json_option, count, note, require_input, summary, write_text
from .json_output import print_json

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
A cell a spreadsheet would run as a formula (starting with = + - @, a tab or a carriage
return; plain numbers aside) is written with a leading ', as is a cell starting with ';
import removes one leading ' from every cell.
Rows are matched by their key (Name, else a unique field, else # the row's position).
Modders: `table check MOD --base ORIGINAL` reports only what the mod made new.
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
    imp.add_argument(
        "--strict",
        action="store_true",
        help="refuse a value that breaks its field's rule (not a Selection's choice, a number that does not "
        "parse...) instead of warning",
    )
    imp.add_argument(
        "--delete",
        action="store_true",
        help="let a file that lists no row (or none of the table's) remove every row of its table",
    )

    check = add_command(
        sub,
        "check",
        run_check,
        "Check every value against its field's type: numbers, Selections, Flags, Filenames, References, "
        "duplicate keys, unknown elements. Exit 1 when a finding is an error.",
    )
    check.add_argument("source", metavar="SOURCE", help="a pack, a folder or a .xtbl file")
    check.add_argument(
        "--base",
        metavar="ORIGINAL",
        help="report only what is new against ORIGINAL (the unmodified pack, folder or .xtbl): the game's "
        "own findings are left out, and the exit code is 1 only for new errors",
    )
    add_json_option(check, "a list of {member, row, field, value, problem, severity}")
    for parser in (ls, export, imp, check):
        parser.add_argument(
            "--allow-large",
            action="store_true",
            help="read tables and sheets past the element budgets (500,000 elements, one per 12 bytes)",
        )


def _not_strings(source: str) -> None:
    """An RFG localization file holds strings, not tables: say which command takes it. (Only
    the file itself: an RFG pack holding one may hold tables too.)"""
    import os

    if os.path.isdir(source):
        return  # a folder of tables
    from ..core.files import read_head
    from ..formats.rfg.locatext import is_locatext

    # A FIFO or a missing file: one line naming it (a FIFO is never waited on).
    if is_locatext(read_head(source, 16)):
        from ..errors import GamepakError

        raise GamepakError(
            f"{source}: holds strings (an RFG localization file), not tables: `gamepak text export` takes it"
        )


def _kind(path: str) -> Any:
    """The table kind (content registry row) that takes `path` (RFG `.xtbl` tables)."""
    from ..content import for_path

    return for_path("table", path)


def run_ls(args: argparse.Namespace) -> int | None:
    with _budgets(args):
        return _run_ls(args)


def _run_ls(args: argparse.Namespace) -> int | None:
    _not_strings(args.source)
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
    with _budgets(args):
        return _run_export(args)


def _run_export(args: argparse.Namespace) -> int | None:
    _not_strings(args.source)
    written, failures = _kind(args.source).call("export", args.source, args.output, options=vars(args))
    for reason in failures.values():
        note(f"skipped {reason}")
    summary(f"exported {count(len(written), 'table')} to {args.output}")
    return None


def run_import(args: argparse.Namespace) -> int | None:
    with _budgets(args):
        return _run_import(args)


def _run_import(args: argparse.Namespace) -> int | None:
    require_input(args.target)
    warnings: list[str] = []
    options = {**vars(args), "warnings": warnings}
    changes = _kind(args.target).call("import", args.target, args.folder, options=options)
    for warning in warnings:
        sys.stderr.write(f"warning: {warning}\n")
    write_text("".join(change + "\n" for change in changes))
    if not changes:
        summary("unchanged: nothing changed, the files match the tables")
    elif args.dry_run:
        summary(f"dry run: {count(len(changes), 'change')} to make, nothing written")
    else:
        summary(f"{count(len(changes), 'change')} made")
    return None


def run_check(args: argparse.Namespace) -> int | None:
    import gc

    from ..core.collector import collector_paused

    # The check pauses the collector while it parses (`ops.tables.check_tables`); what it and
    # the imports on its way made goes to the oldest generation before the collector runs
    # again (frozen and thawed at once: nothing stays frozen for a caller in this process):
    # the first collection after the pause walked those 25,000 objects (6-14 ms of the game's
    # tables' 0.75 s, after the last table) for a command about to end.
    with _budgets(args), collector_paused():
        try:
            return _run_check(args)
        finally:
            gc.freeze()
            gc.unfreeze()


def _run_check(args: argparse.Namespace) -> int | None:
    _not_strings(args.source)
    if args.base is not None:
        findings, failures, not_checked = _kind(args.source).call("check", args.source, options={"base": args.base})
    else:
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
        from ..formats.rfg.xtbl.check import count_kinds, finding_lines

        write_text(finding_lines(findings) + "".join(f"error: {reason}\n" for reason in failures.values()))
        kinds = count_kinds(findings)
        for (severity, kind), number in sorted(kinds.items(), key=lambda item: -item[1]):
            summary(f"{number:>7} {severity}: {kind}")
        if failures:
            summary(f"{len(failures):>7} error: table cannot be read")
        if not_checked:
            summary(f"{count(not_checked, 'reference field')} not checked: their table is not in {args.source}")
        warnings = len(findings) + len(failures) - errors
        new = f" new against {args.base}" if args.base is not None else ""
        summary(f"{count(errors, 'error')}, {count(warnings, 'warning')}{new}")
    from . import common

    # Nothing left open (the pack was read in one `with`): the run ends without the
    # interpreter's tear-down of the tables' bytes and findings (`cli.run`; 14 ms).
    common.QUICK_EXIT = True
    return 1 if errors else None


def _budgets(args: argparse.Namespace) -> Any:
    """The content budgets for this command: `--allow-large` lifts them (`core.content_limits`)."""
    from ..core.content_limits import limits

    return limits(allow_large=bool(getattr(args, "allow_large", False)))
