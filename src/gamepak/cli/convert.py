"""`gamepak convert` and `gamepak diff`: thin over gamepak.convert and gamepak.diff."""

from __future__ import annotations

import argparse

from .common import (
    add_command,
    add_format_option,
    add_json_option,
    add_writer_options,
    count,
    counting_bar,
    ends_quickly,
    note,
    output_folder,
    parse_options,
    summary,
)


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    convert = add_command(
        commands,
        "convert",
        run_convert,
        "Convert a pack to another format.",
        "Write the members of pack IN into a new pack OUT of another format (pak, jpk, vpp, zip,\n"
        "tar, j2me-*), streaming each member without extracting anything.\n\n"
        "Every member is checked against OUT's limits first (name length, folders in flat names,\n"
        "duplicates, unsafe paths); if any cannot go, all are listed and nothing is written.\n"
        "J2ME packs have no member names: members are numbered 0, 1, ... in IN's order, each keeping\n"
        "its extension, and the names dropped are reported.",
    )
    convert.add_argument("source", metavar="IN")
    convert.add_argument("target", metavar="OUT")
    add_format_option(convert, "nothing: the format to write (default: from OUT's extension)", dest="target_format")
    convert.add_argument(
        "--from", dest="format_name", metavar="FORMAT", type=str.lower, help="read IN as this format (default: detect)"
    )
    add_writer_options(convert)
    convert.add_argument(
        "--flatten-nested",
        action="store_true",
        help="replace each member that is itself a pack by its members, named OUTER/INNER",
    )
    convert.add_argument(
        "--nest",
        action="store_true",
        help="the way back from --flatten-nested: members named OUTER/INNER, where OUTER's extension names a pack "
        "format (zone.str2_pc/), are packed into a nested pack of that format",
    )
    convert.add_argument(
        "--allow-duplicates", action="store_true", help="keep duplicated member names where OUT's format can"
    )
    convert.add_argument("--overwrite", action="store_true", help="replace OUT if it exists")

    diff = add_command(
        commands,
        "diff",
        run_diff,
        "Compare two packs or folders member by member.",
        "Compare packs or folders A and B, member by member.\n\n"
        "Lists members only in A (-), only in B (+), changed in size or sha256 (~), renamed with\n"
        "the same bytes (>), and header fields that differ when both are packs of one format (!).\n"
        "Equal inputs print 'equal' (nothing with --quiet: the exit code answers).\n"
        "Exit codes: 0 equal, 3 different, 1 an input cannot be read, 2 bad usage (the table in gamepak --help).\n"
        "--format names the format of both sides instead of detecting it; --format-a and --format-b\n"
        "name one side's. -r compares packs inside packs (and pack files in a folder) member by member.",
    )
    diff.add_argument("a", metavar="A")
    diff.add_argument("b", metavar="B")
    add_json_option(diff, "the differences as one JSON object")
    add_format_option(diff, "A and B")
    add_format_option(diff, "A", dest="format_a", flag="--format-a")
    add_format_option(diff, "B", dest="format_b", flag="--format-b")
    diff.add_argument(
        "-r", "--recursive", action="store_true", help="compare nested packs member by member (OUTER/INNER)"
    )


def run_convert(args: argparse.Namespace) -> None:
    from ..ops.convert import convert

    output_folder(args.target)
    with counting_bar("converting", ticking=True) as advance:
        result = convert(
            args.source,
            args.target,
            args.target_format,
            source_format=args.format_name or getattr(args, "global_format", None),
            overwrite=args.overwrite,
            flatten_nested=args.flatten_nested,
            nest=args.nest,
            allow_duplicates=args.allow_duplicates,
            progress=advance,
            **parse_options(args.options),
        )
    for line in result.notes:
        note(line)
    for old, new in result.renamed[:10]:
        note(f"  {new} <- {old}")
    if len(result.renamed) > 10:
        note(f"  ... and {len(result.renamed) - 10} more")
    summary(
        f"wrote {args.target} ({count(result.member_count, 'member')}, "
        f"{result.source_format} -> {result.target_format})"
    )
    from . import common

    # Every pack convert opened is closed and its output is in place: the run may end without
    # the interpreter's tear-down (`cli._quick_exit`), about 2 M instructions of a small convert.
    common.QUICK_EXIT = True


def run_diff(args: argparse.Namespace) -> int:
    from ..errors import EXIT_DIFFERENT, EXIT_OK
    from ..ops.diff import diff

    with counting_bar("comparing", ticking=True) as advance:
        result = diff(
            args.a,
            args.b,
            format_a=args.format_a or args.format_name,
            format_b=args.format_b or args.format_name,
            recursive=args.recursive,
            progress=advance,
        )
    if args.as_json:
        from .json_output import print_json

        print_json(result.to_dict())
    else:
        # Equal inputs say so: silence would look like a command that did nothing. With -q
        # nothing: the exit code answers, as `cmp -s` does.
        summary("\n".join(result.lines() or ["equal"]), stdout=True)
    ends_quickly()  # both inputs were only read
    return EXIT_OK if result.equal else EXIT_DIFFERENT
