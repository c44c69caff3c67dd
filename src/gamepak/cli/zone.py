"""`gamepak zone`: RFG zones and layers (`.rfgzone_pc`, `.layer_pc`) listed, exported to JSON,
imported back and checked."""

from __future__ import annotations

from .common import add_command, add_group, add_json_option, count, summary, write_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

DESCRIPTION = """\
Red Faction Guerrilla zones: every building, spawn, crate, vehicle, trigger and mission marker
of a map cell (.rfgzone_pc) or a mission/activity layer (.layer_pc), as objects with a class and
properties (position and orientation, names, flags, lists).

SOURCE is a pack (a .vpp_pc, its nested .str2_pc packs included), a .str2_pc, a folder or a loose
zone file. Names come from the hashes (the class and property names the community's tools know,
shipped with gamepak; --names FILE adds more, one per line); an unknown hash stays a hash.

The modder's loop:
  gamepak zone ls dlcp01_activities.vpp_pc                       # class, handle, name, position
  gamepak zone export dlcp01_activities.vpp_pc -o zones          # one JSON per zone
  (edit zones/dlc01_dm_01.str2_pc/dlc01_09_08_130.layer_pc.json: a position, a property)
  gamepak zone import dlcp01_activities.vpp_pc zones --dry-run   # which objects would change
  gamepak zone import dlcp01_activities.vpp_pc zones             # only those objects' bytes change

A value is decoded where encoding it again gives the stored bytes (string, bool, numbers, vec3,
matrices, op = position + orientation, bbox, lists), and kept as hex otherwise; a zone's
relation section (87,368 bytes, in territory cells) is written beside its JSON and put back byte
for byte.
"""


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    group = add_command(
        commands, "zone", None, "RFG zones and layers: list, export, import, check", description=DESCRIPTION
    )
    sub = add_group(group, "zone_command")

    ls = add_command(sub, "ls", run_ls, "List the objects of every zone: class, handle, name, position.")
    ls.add_argument("source", metavar="SOURCE", help="a pack, a folder or a zone file")
    ls.add_argument("members", metavar="MEMBER", nargs="*", help="only these zones: member paths, file names or globs")
    add_json_option(ls, "a list of {member, index, class, class_hash, handle, name, x, y, z}")

    export = add_command(
        sub,
        "export",
        run_export,
        "Write each zone as a JSON document at its member path plus .json (names, decoded values).",
    )
    export.add_argument("source", metavar="SOURCE", help="a pack, a folder or a zone file")
    export.add_argument(
        "members", metavar="MEMBER", nargs="*", help="only these zones: member paths, file names or globs"
    )
    export.add_argument("-o", "--output", required=True, metavar="DIR", help="folder to write to")
    export.add_argument("--names", metavar="FILE", help="more class and property names, one per line")
    export.add_argument("--overwrite", action="store_true", help="replace existing files")

    imp = add_command(
        sub,
        "import",
        run_import,
        "Put the edited objects of a folder export wrote back into TARGET: one crash-safe edit; only "
        "the edited objects' bytes change.",
    )
    imp.add_argument("target", metavar="TARGET", help="a pack, a folder or a zone file")
    imp.add_argument("folder", metavar="DIR", help="the folder export wrote (X.layer_pc.json, X.rfgzone_pc.json)")
    imp.add_argument("--dry-run", action="store_true", help="say what would change, write nothing")

    check = add_command(
        sub,
        "check",
        run_check,
        "Check every zone: counts, block and property sizes, the relation section, handles used twice, "
        "relations to objects outside the file. Exit 1 on an error.",
    )
    check.add_argument("source", metavar="SOURCE", help="a pack, a folder or a zone file")


def run_ls(args: argparse.Namespace) -> int | None:
    from ..ops.zones import list_objects

    rows = list_objects(args.source, args.members)
    if args.as_json:
        from .json_output import print_json

        print_json(rows)
        return None
    lines = []
    for row in rows:
        if "error" in row:
            lines.append(f"{row['member']}: cannot be read: {row['error']}")
            continue
        where = "" if row["x"] is None else f"({row['x']:.2f}, {row['y']:.2f}, {row['z']:.2f})"
        label = row["class"] or row["class_hash"]
        lines.append(f"{row['member']}  {row['handle']}  {label:<30} {where:<32} {row['name'] or ''}".rstrip())
    write_text("".join(line + "\n" for line in lines))
    return 1 if any("error" in row for row in rows) else None


def _names(path: str | None) -> object:
    if not path:
        return None
    from ..errors import cannot_read
    from ..formats.rfg.zone.names import Names, read_name_list

    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return Names(read_name_list(handle.read(1 << 24)))
    except OSError as exc:
        raise cannot_read(path, exc) from None


def run_export(args: argparse.Namespace) -> int | None:
    from ..ops.zones import export_zones

    written, failures = export_zones(
        args.source,
        args.output,
        members=args.members,
        overwrite=args.overwrite,
        names=_names(args.names),  # type: ignore[arg-type]
    )
    from .common import note

    for member, reason in failures.items():
        note(f"skipped {member}: {reason}")
    documents = sum(name.endswith(".json") for name in written)
    summary(f"exported {count(documents, 'zone')} to {args.output}")
    return 1 if failures else None


def run_import(args: argparse.Namespace) -> int | None:
    from ..ops.zones import import_zones

    changes = import_zones(args.target, args.folder, dry_run=args.dry_run)
    write_text("".join(change + "\n" for change in changes))
    verb = "would change" if args.dry_run else "changed"
    summary(f"{count(len(changes), 'object change')} {verb}" if changes else "unchanged: the files match the zones")
    return None


def run_check(args: argparse.Namespace) -> int | None:
    from ..ops.zones import check_zones

    findings = check_zones(args.source)
    write_text("".join(f"{severity}: {member}: {problem}\n" for member, severity, problem in findings))
    errors = sum(severity == "error" for _, severity, _ in findings)
    summary(f"{count(errors, 'error')} in the zones of {args.source}")
    return 1 if errors else None
