"""Commands that read a pack and change nothing: `ls`, `info`, `cat`, `detect`, `verify`,
`formats`."""

from __future__ import annotations

import argparse
import os
import sys

from .common import (
    add_command,
    add_format_option,
    add_json_option,
    count,
    counting_bar,
    ends_quickly,
    note,
    open_input,
    summary,
    windows_path,
    write_text,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..core.archive import Archive, Problem


# The tables of formats/quake/limits.py (not imported here: the CLI starts without them).
ENGINE_NAMES = ("quake", "quakespasm", "goldsrc")

# The pack formats some content row checks in `verify` (`gamepak.content.verifiers`: the rows
# with a `verify` verb whose `packs` hold the format), and those rows' names in the registry's
# order. Importing the content registry to find that out was ~6% of `verify`'s start-up, and
# most formats have no such row; tests/test_startup.py holds this index to the registry.
PACK_CHECKS: dict[str, tuple[str, ...]] = {"vpp": ("xtbl", "rfg-zone")}


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    ls = add_command(commands, "ls", run_ls, "List the members of a pack, one name per line, in archive order.")
    ls.add_argument("archive", metavar="ARCHIVE")
    add_json_option(ls, "a JSON array of member objects")
    ls.add_argument("-l", "--long", dest="long_format", action="store_true", help="show size, stored size and offset")
    ls.add_argument(
        "-r", "--recursive", action="store_true", help="also list members of nested archives as OUTER/INNER"
    )
    add_format_option(ls)

    info = add_command(commands, "info", run_info, "Show a pack's format, member count, sizes and header fields.")
    info.add_argument("archive", metavar="ARCHIVE")
    add_json_option(info, "the information as a JSON object")
    add_format_option(info)

    cat = add_command(
        commands, "cat", run_cat, "Write a member's bytes (or OUTER/INNER's, in a nested archive) to stdout."
    )
    cat.add_argument("archive", metavar="ARCHIVE")
    cat.add_argument("member", metavar="MEMBER")
    add_format_option(cat)

    detect = add_command(
        commands,
        "detect",
        run_detect,
        "Say which formats each file fits, most plausible first, with a confidence.",
        "Say which formats each FILE fits, most plausible first, with a confidence.\n"
        "Exits 1 if some file fits no format.",
    )
    detect.add_argument("files", nargs="+", metavar="FILE")
    add_json_option(detect, "a JSON object per file")

    verify = add_command(
        commands,
        "verify",
        run_verify,
        "Check a pack's structure and every member (or a JOE model as a model).",
        "Check ARCHIVE's structure and every member.\n\n"
        "Errors (data that cannot be read, sizes or offsets that make a member's bytes wrong, hashes\n"
        "the game checks) exit 1. Warnings (a field filled in another tool's way, nothing lost) are\n"
        "printed and exit 0, or 1 with --strict. A JOE model is checked as a model: counts, sizes and\n"
        "indices that do not fit are errors, NaN or infinite values warnings.",
    )
    verify.add_argument("archive", metavar="ARCHIVE")
    verify.add_argument("--strict", action="store_true", help="exit 1 on warnings too, not only on errors")
    verify.add_argument(
        "--asm",
        metavar="FILE",
        help="RFG: also check a separate .asm_pc file's containers against ARCHIVE's .str2_pc members",
    )
    verify.add_argument(
        "--base",
        metavar="ORIGINAL",
        help="RFG: check ARCHIVE's tables only for what is new against ORIGINAL, the unmodified pack "
        "(a new value error is then an error)",
    )
    verify.add_argument(
        "--engine",
        choices=ENGINE_NAMES,
        help="Quake files (PAK, WAD, BSP, MDL, SPR): check them against this engine's limits "
        "(default: only what every known engine refuses)",
    )
    add_json_option(verify, "a JSON object: ok, member count, errors and warnings with offsets")
    add_format_option(verify)

    formats = add_command(
        commands, "formats", run_formats, "List the formats, their extensions and their writer options."
    )
    add_json_option(formats, "a list of {name, description, kind, extensions, signature, options}")


def run_ls(args: argparse.Namespace) -> None:
    with open_input(args.archive, args.format_name) as opened:
        text = ls_text(opened, as_json=args.as_json, long_format=args.long_format, recursive=args.recursive)
        hint = opened.contents_hint if not len(opened) else None
    if text:
        write_text(text)
    if hint:
        note(f"{args.archive} holds no members: {hint}")
    ends_quickly()


def _rows(archive: Archive, recursive: bool) -> list[dict[str, Any]]:
    if not recursive:
        return [entry.to_dict() for entry in archive.infolist()]
    from ..core.nested import walk

    rows = []
    for path, entry, _ in walk(archive):
        row = entry.to_dict()
        row["name"] = path
        rows.append(row)
    return rows


def _size_text(value: int | None) -> str:
    return "-" if value is None else str(value)


def ls_text(opened: Archive, *, as_json: bool, long_format: bool, recursive: bool) -> str:
    """What `gamepak ls` prints."""
    if not recursive and not as_json and not long_format:
        names = opened.namelist()
        return "\n".join(names) + "\n" if names else ""
    rows = _rows(opened, recursive)
    if as_json:
        from .json_output import json_text

        return json_text(rows)
    lines = []
    for row in rows:
        if long_format:
            lines.append(f"{row['size']:>12} {_size_text(row['stored_size']):>12} {row['offset']:>12}  {row['name']}")
        else:
            lines.append(row["name"])
    if long_format:
        lines.insert(0, f"{'size':>12} {'stored':>12} {'offset':>12}  name")
    return "\n".join(lines) + "\n"


def run_info(args: argparse.Namespace) -> None:
    from ..ops.inspect import info_details

    with open_input(args.archive, args.format_name) as opened:
        details = info_details(args.archive, opened)
    write_text(info_text(details, args.as_json))
    ends_quickly()


def info_text(details: dict[str, Any], as_json: bool) -> str:
    """What `gamepak info` prints."""
    if as_json:
        from .json_output import json_text

        return json_text(details)
    lines: list[str] = []
    for key, value in details.items():
        if key == "header":
            for field, field_value in value.items():
                _field_lines(lines, field, field_value, "  ")
        else:
            lines.append(f"{key}: {value}")
    return "\n".join(lines) + "\n"


def _field_lines(lines: list[str], name: str, value: Any, indent: str) -> None:
    """One header field; a list of records (e.g. an .asm_pc's containers) one per line, nested."""
    if not _is_records(value):
        lines.append(f"{indent}{name}: {value}")
        return
    lines.append(f"{indent}{name}:")
    for record in value:
        scalars = ", ".join(f"{k} {v}" for k, v in record.items() if k != "name" and not _is_records(v))
        lines.append(f"{indent}  {record.get('name', '-')}: {scalars}")
        for k, v in record.items():
            if _is_records(v):
                _field_lines(lines, k, v, indent + "    ")


def _is_records(value: Any) -> bool:
    """Whether a header field is a list of records (dicts)."""
    return isinstance(value, list) and bool(value) and all(isinstance(item, dict) for item in value)


def run_cat(args: argparse.Namespace) -> None:
    from ..errors import MemberNotFoundError

    with open_input(args.archive, args.format_name) as opened:
        name = windows_path(opened, args.member)
        try:
            # A member of the pack itself, as most are: `core.nested` (OUTER/INNER paths) is
            # then not imported, ~1% of the command's start-up.
            holder, entry = opened, opened.getinfo(name)
        except MemberNotFoundError:
            from ..core.nested import resolve

            holder, entry = resolve(opened, name)
        with holder.open(entry) as stream:
            out = sys.stdout.buffer
            while chunk := stream.read(1 << 20):
                out.write(chunk)
            out.flush()
    ends_quickly()


def run_detect(args: argparse.Namespace) -> int:
    from ..core.opening import detect
    from ..core.registry import other_command_for
    from ..errors import GamepakError

    results: list[dict[str, Any]] = []
    unknown = False
    for path in args.files:
        try:
            found = detect(path)
        except GamepakError as exc:  # one unreadable file does not stop the others
            note(f"error: {exc.cli_message or exc}")
            unknown = True
            results.append({"file": path, "formats": [], "error": exc.cli_message or str(exc)})
            continue
        other = other_command_for(path)
        if other and (not found or not found[0].has_magic):
            found = []  # a content file (a .wal, a peg): its name says what it is, not a chance fit
        unknown |= not found
        result: dict[str, Any] = {
            "file": path,
            "formats": [{"format": d.format, "confidence": d.confidence, "signature": d.has_magic} for d in found],
        }
        if other and not found:
            result["other_command"] = other
        results.append(result)
    if args.as_json:
        from .json_output import print_json

        print_json(results)
    else:
        for result in results:
            if "error" in result:
                continue
            fits = ", ".join(f"{f['format']} ({f['confidence']:.2f})" for f in result["formats"])
            if not fits and "other_command" in result:
                fits = f"no pack format: {result['other_command']}"
            if not fits:
                from ..core.registry import other_command_for

                hint = other_command_for(result["file"])
                fits = f"unknown ({hint})" if hint else "unknown"
            write_text(f"{result['file']}: {fits}\n")
    ends_quickly()
    return 1 if unknown else 0


def _model_check(format_name: str | None, path: str) -> tuple[list[Problem], int] | None:
    """(problems, face count) when `path` is a model (by --format, or by what it is), else None.
    A model that cannot be read raises its ModelError (one line, exit 1)."""
    from ..core.archive import Problem
    from ..core.registry import get_format
    from ..errors import GamepakError

    if format_name is not None:
        if get_format(format_name).kind != "model":
            return None
    else:
        from ..core.registry import format_for_path

        named = format_for_path(path)
        if named is not None and named.kind != "model":
            return None  # a pack by its name: the model layer (numpy, dataclasses) is not loaded
        from ..models import format_for_file

        try:
            if format_for_file(path) != "joe":
                return None
        except GamepakError:
            return None  # unreadable: opening it as an archive says why
    from ..models import load

    # The reader refuses counts, sizes and indices that do not fit (errors); what it only notes
    # (NaN or infinite values, which VDrift reads as they are) are warnings.
    mesh = load(path, "joe")
    return [Problem(f"{path}: {issue}", severity="warning") for issue in mesh.summary()["issues"]], mesh.face_count


def _peg_check(format_name: str | None, path: str) -> tuple[list[Problem], int] | None:
    """(problems, texture count) when `path` is the CPU file of a loose RFG peg pair (its GPU
    partner beside it), else None."""
    from ..core.registry import format_for_path

    if format_name is not None or format_for_path(path) is not None:
        return None  # named as a pack (`.pak`, `.vpp_pc`...): the peg modules are not loaded
    from ..formats.rfg.peg.partners import is_cpu_name

    if not is_cpu_name(path) or not os.path.isfile(path):
        return None
    from ..ops.inspect import check_loose_peg

    return check_loose_peg(path)


def _quake_check(format_name: str | None, path: str, engine: str | None) -> tuple[list[Problem], str] | None:
    """(problems, "model" or "sprite") for a loose Quake MDL or SPR, checked against `engine`'s
    limits; None for anything else."""
    if format_name is not None or not path.lower().endswith((".mdl", ".spr")) or not os.path.isfile(path):
        return None
    from ..formats.quake.limits import check_loose, engine_named

    return check_loose(path, engine_named(engine))


def _content_checks(opened: Any, source: str, base_path: str | None, format_name: str | None) -> list[Problem]:
    """The content registry's pack checks of `opened` (RFG tables against their schemas, RFG
    zones read): the `verify` verb of every row whose `packs` hold its format. `--base` (the
    original pack) is opened once, for the rows whose verb takes it."""
    if opened.format_name not in PACK_CHECKS:
        return []  # most formats: no row checks them (the registry and contextlib are not loaded)
    from contextlib import ExitStack

    from ..content import verifiers

    kinds = verifiers(opened.format_name)

    problems: list[Problem] = []
    with ExitStack() as stack:
        base = None
        for kind in kinds:
            if base is None and base_path is not None and "base" in kind.verbs["verify"].options:
                base = stack.enter_context(open_input(base_path, format_name))
            problems += kind.call("verify", opened, options={"base": base, "source": source})
    return problems


def run_verify(args: argparse.Namespace) -> int:
    archive = args.archive
    model = _model_check(args.format_name, archive)
    peg = _peg_check(args.format_name, archive)
    quake = _quake_check(args.format_name, archive, args.engine) if model is None and peg is None else None
    if quake is not None:
        problems, what = quake
        member_count, filename = 1, archive
    elif model is not None:
        problems, member_count = model
        filename = archive
        what = "face"
    elif peg is not None:
        problems, member_count = peg
        filename = archive
        what = "texture"
    else:
        with counting_bar("verifying", ticking=True), open_input(archive, args.format_name) as opened:
            problems = opened.check()
            problems += _content_checks(opened, archive, args.base, args.format_name)
            if args.asm is not None:
                if opened.format_name != "vpp":
                    from ..errors import UsageError

                    raise UsageError(
                        f"--asm: {archive} is a {opened.format_name} pack; .asm_pc tables describe RFG packs"
                    )
                from ..formats.rfg.check import check_separate_asm

                problems += check_separate_asm(opened, args.asm)
            if opened.format_name in ("pak", "wad", "bsp"):  # Quake files against an engine's limits
                from ..formats.quake.limits import check_archive, engine_named

                problems += check_archive(opened, engine_named(args.engine))
            member_count = len(opened)
            filename = opened.filename
        what = "member"
    from ..core.entry import split_problems  # in core: verify needs nothing else of ops.inspect

    errors, warnings_found = split_problems(problems)
    failed = bool(errors) or (args.strict and bool(warnings_found))
    if args.as_json:
        from .json_output import print_json

        print_json(
            {
                "file": archive,
                "ok": not failed,
                f"{what}s": member_count,
                "errors": [problem.to_dict() for problem in errors],
                "warnings": [problem.to_dict() for problem in warnings_found],
            }
        )
    else:
        for problem in problems:
            # Problems that come from errors already name the file.
            text = problem.message if problem.message.startswith(filename) else f"{archive}: {problem.message}"
            note_line = f"{problem.severity}: {text}\n"
            sys.stderr.write(note_line)
        counted = count(member_count, what)
        if warnings_found:
            counted += f", {count(len(warnings_found), 'warning')}"
        if not failed:
            summary(f"{archive}: OK ({counted})", stdout=True)
        elif not errors:
            # --strict: the warnings fail the check; "OK" would contradict the exit code.
            summary(f"{archive}: FAILED under --strict ({counted})", stdout=True)
    ends_quickly()
    return 1 if failed else 0


# The writer options (and their defaults) `gamepak formats` lists, per format: each writer's
# `option_defaults`, written out here because importing every format module and making every
# writer class to read them was a third of the command's start-up. A format not here has none.
# tests/test_startup.py holds this table to the writers.
WRITER_OPTIONS: dict[str, dict[str, object]] = {
    "pak": {"align": 1, "directory": "end"},
    "wad": {"version": "WAD2"},
    "jpk": {"name_field_size": None},
    "vpp": {
        "flags": None,
        "level": None,
        "align": None,
        "strategy": 0,
        "mem_level": 8,
        "window_bits": 15,
        "finish": True,
        "short_name": "",
        "path_name": "",
        "runtime": None,
        "asm": None,
    },
    "zip": {"compression": "deflate", "level": None},
    "tar": {"level": None},
    "j2me-end-offsets": {"terminator": 0},
    "j2me-ids": {"ids": None},
}


def run_formats(args: argparse.Namespace) -> None:
    from ..core.registry import FORMATS

    lines = []
    rows = []
    for spec in FORMATS:
        defaults = WRITER_OPTIONS.get(spec.name, {})
        rows.append(
            {
                "name": spec.name,
                "description": spec.description,
                "kind": spec.kind,
                "extensions": list(spec.extensions),
                "signature": spec.has_magic,
                "options": dict(defaults),
            }
        )
        options = ", ".join(f"{k}={v}" for k, v in defaults.items()) or "none"
        extensions = " ".join(spec.extensions) or "(no extension)"
        lines.append(f"{spec.name:18} {spec.description}  [{extensions}]  options: {options}\n")
    if args.as_json:
        from .json_output import print_json

        print_json(rows)
    else:
        write_text("".join(lines))
    ends_quickly()
