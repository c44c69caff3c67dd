"""`gamepak text`: export the strings of J2ME text packs, string blobs and RFG localization
files (`.rfglocatext`), import translations."""

from __future__ import annotations

import argparse
import sys

from ..core.registry import FORMATS
from .common import add_command, add_group, count, note, output_folder, summary

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FORMAT_NAMES = [spec.name for spec in FORMATS if spec.kind == "archive"]
KIND_HELP = (
    "what holds the strings: 'pack' (a j2me-sized text pack: string table + index table), "
    "'indexed' (a count and one int16/int32 offset per string, then the strings), "
    "'records' (a count byte, int16 offsets, records of layout codes around a text: Diamond Rush's tips), "
    "'blob' (NUL-terminated strings back to back, taken as they are), or 'auto' (the shape the "
    "data has; binary data is refused) (default: auto)"
)
GROUP_HELP = """Export and import the strings of Gameloft J2ME games for translators.

FILE alone is a text pack (a j2me-sized pack of a string table and an index table), strings
behind their own offset table, or a string blob (NUL-terminated strings). FILE MEMBER reads
the strings of one member of the pack FILE (its layout detected, or named with --format),
e.g. Diamond Rush's language file. A pack FILE without MEMBER: its one member that holds
strings is used and the others are listed as skipped (several: name the MEMBER). Binary
data (images, a pack's header, unknown tables) is refused, never exported as junk strings;
a string too long for its offsets or its pack is refused on import.

Strings are ISO-8859-1 with byte 0x92 as the apostrophe (' and \u2019 are written as
0x92); a character ISO-8859-1 lacks is an error naming the string's index. Translation
files keep each string's index: JSON (an array of {"index", "text"}), CSV (UTF-8 with a
byte-order mark so spreadsheets read it right, header index,text; read with or without
the mark, separated by commas, semicolons or tabs) or PO (msgctxt = index, msgid = original,
msgstr = translation; import uses msgstr when it is non-empty and not fuzzy, else the
original; a msgid that is not the original string at its index is reported as stale).
Outputs are written atomically and never replace a file without --overwrite.

Red Faction Guerrilla's localization files (.rfglocatext, one language each; loose, or a
member of a .vpp_pc/.str2_pc, nested too) hold UTF-16 strings by hash. Each string is named
by its identifier, recovered from the leaf texts of the game's .xtbl tables (--names; by
default table.vpp_pc and misc.vpp_pc beside the file), else by its hash (#5a3c91f0), which
is kept as it is. JSON and CSV carry hash, identifier and text; PO has msgctxt = identifier
or #hash (with --source FILE, msgid = that reference language's string, msgstr = this
file's); --to rfgm-xml writes RFGM's <root><Entry> XML, which import recognises by content.
Import changes only the strings that differ, adds entries for new identifiers, removes none
without --delete; inside a pack the new pack appears whole or not at all."""
EXPORT_HELP = """Export the strings of FILE (or of FILE's MEMBER) with their indices.

A pack FILE without MEMBER: the strings of its one member that holds strings; the members
skipped are listed with the reason. Binary data is refused, never exported as strings.

examples:
  gamepak text export strings.bin -o strings.po
  gamepak text export lang.bin 0 -o lang.csv
  gamepak text export lang.bin -o lang.csv
  gamepak text export locatexts_ar_eg.rfglocatext -o ar.po --source locatexts_us_en.rfglocatext
  gamepak text export misc.vpp_pc locatexts_de_de.rfglocatext -o de.xml --to rfgm-xml"""
IMPORT_HELP = """Write a copy of FILE (or of the pack FILE with MEMBER rebuilt) holding the strings of
TRANSLATION. The translation must list every index of the original exactly once. Strings
left unchanged keep their bytes, so importing an untouched export gives back FILE exactly.
A pack FILE without MEMBER: its one member that holds strings, as for export. Strings too
long for their offsets or their pack are refused before anything is written; PO entries
whose msgid is not the original string at their index are named in a warning.

examples:
  gamepak text import strings.bin strings.po -o strings-fr.bin
  gamepak text import lang.bin 0 lang.csv -o lang-fr.bin
  gamepak text import locatexts_ar_eg.rfglocatext ar.po -o new/locatexts_ar_eg.rfglocatext
  gamepak text import misc.vpp_pc locatexts_de_de.rfglocatext de.xml -o new/misc.vpp_pc"""


def _shared_options(parser: argparse.ArgumentParser) -> None:
    """The options `export` and `import` share: the pack's layout, what holds the strings,
    and overwriting."""
    parser.add_argument(
        "--format",
        dest="format_name",
        choices=FORMAT_NAMES,
        type=str.lower,
        metavar="FORMAT",
        help="format of the pack holding the strings (default: detected)",
    )
    parser.add_argument(
        "--kind", choices=("auto", "pack", "indexed", "records", "blob"), default="auto", help=KIND_HELP
    )
    parser.add_argument("--overwrite", action="store_true", help="replace --output if it exists")
    parser.add_argument(
        "--allow-large",
        action="store_true",
        help="read strings files past the budgets: 64 MiB a file, 200,000 strings an .rfglocatext",
    )
    parser.add_argument(
        "--names",
        nargs="*",
        action="extend",
        metavar="SOURCE",
        help=".rfglocatext: where identifiers come from: packs, .xtbl tables or folders of them (their tables' "
        "leaf texts), and .txt lists of names, one a line (default: table.vpp_pc and misc.vpp_pc beside FILE; "
        "--names alone: none)",
    )


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    group = add_command(commands, "text", None, "Export and import the strings of J2ME text packs.", GROUP_HELP)
    sub = add_group(group, "text_command")
    export = add_command(sub, "export", run_export, "Export the strings of FILE (or of FILE's MEMBER).", EXPORT_HELP)
    export.add_argument("file", metavar="FILE")
    export.add_argument("member", nargs="?", metavar="MEMBER")
    export.add_argument(
        "-o", "--output", help="translation file to write (.json, .csv or .po); default: JSON on stdout"
    )
    export.add_argument(
        "--to",
        dest="translation",
        choices=("json", "csv", "po", "rfgm-xml"),
        help="translation format (default: from --output's extension; .xml is rfgm-xml, .rfglocatext only)",
    )
    export.add_argument(
        "--source",
        metavar="FILE",
        help=".rfglocatext: a reference language's file whose strings are shown beside each string "
        "(PO msgid; a source column in JSON and CSV)",
    )
    _shared_options(export)
    imported = add_command(
        sub, "import", run_import, "Write a copy of FILE holding the strings of TRANSLATION.", IMPORT_HELP
    )
    imported.add_argument("arguments", nargs="+", metavar="FILE [MEMBER] TRANSLATION")
    imported.add_argument(
        "-o", "--output", required=True, help="the new file to write (FILE with the translated strings)"
    )
    imported.add_argument(
        "--from",
        dest="translation_kind",
        choices=("json", "csv", "po", "rfgm-xml"),
        help="translation format (default: from TRANSLATION's extension; XML is told by its content)",
    )
    imported.add_argument(
        "--dry-run",
        action="store_true",
        help=".rfglocatext: say what would change, write nothing",
    )
    imported.add_argument(
        "--delete",
        action="store_true",
        help=".rfglocatext: remove the entries TRANSLATION does not list (default: keep them)",
    )
    _shared_options(imported)


def _pack_format(args: argparse.Namespace, file: str, member: str | None) -> str | None:
    """The layout of the pack holding MEMBER: --format, or detected (saying so when it was only
    a structural guess, as the other commands do)."""
    chosen = args.format_name or getattr(args, "global_format", None)
    if chosen is not None or member is None:
        return chosen  # type: ignore[no-any-return]
    from ..core.opening import choose_format

    detection = choose_format(file)
    if not detection.has_magic:
        note(f"{file}: read as {detection.format} (no signature; --format to choose another)")
    return detection.format


# Options one strings kind takes and another may not: given to a kind whose verb does not take
# them, they are refused rather than ignored.
KIND_OPTIONS = {"names": "--names", "source": "--source", "delete": "--delete", "kind": "--kind"}


def _kind(args: argparse.Namespace, file: str, member: str | None, verb: str) -> tuple[Any, dict[str, Any]]:
    """The strings kind (content registry row) that takes FILE (or FILE's MEMBER), and the
    options of the command for its verb; an option the kind does not take is refused."""
    from ..content import for_path, kinds

    kind = for_path("strings", file, member)
    taken = kind.verbs[verb].options
    for key, option in KIND_OPTIONS.items():
        value = getattr(args, key, None)
        if value and value != "auto" and key not in taken:
            takers = [row.description for row in kinds("strings") if key in row.verbs[verb].options]
            raise _usage_error(f"{option} is for {' and '.join(takers) or 'no strings kind'}, not {kind.description}")
    asked = (getattr(args, "translation", None), getattr(args, "translation_kind", None))
    if "rfgm-xml" in asked and "names" not in taken:  # RFGM's XML names strings: the kinds that name them
        raise _usage_error(f"rfgm-xml is for RFG localization files (.rfglocatext), not {kind.description}")
    if getattr(args, "dry_run", False) and "dry_run" not in taken:
        raise _usage_error(f"--dry-run is for RFG localization files (.rfglocatext), not {kind.description}")
    options = dict(vars(args), format=_pack_format(args, file, member))
    return kind, options


def _usage_error(message: str) -> Exception:
    """A `UsageError` saying `message`: the class is made on first use (`gamepak.errors`), so it
    is imported only when one is raised (0.2 M instructions of every `text import`)."""
    from ..errors import UsageError

    return UsageError(message)


def _remove_dead_temporaries(file: str) -> None:
    """The next `text` command on FILE removes what a killed import left beside it (J2ME and
    RFG alike: `core.atomic`'s temporaries of dead processes)."""
    import os

    from ..core.atomic import remove_stale_temporaries

    remove_stale_temporaries(os.path.dirname(os.path.abspath(file)))


def run_export(args: argparse.Namespace) -> None:
    file, member, output = args.file, args.member, args.output
    _remove_dead_temporaries(file)
    if output is not None:
        output_folder(output)
    kind, options = _kind(args, file, member, "export")
    with _budgets(args):
        done = kind.call("export", file, output, member, options=options)
    for line in done.notes:
        summary(line)
    if output is None:
        sys.stdout.buffer.write(done.data)
        sys.stdout.buffer.flush()
    else:
        summary(f"exported {count(done.count, 'string')} of {done.where} to {output}")
    for line in done.after:
        summary(line)
    _end_quickly()


def run_import(args: argparse.Namespace) -> None:
    arguments = args.arguments
    if len(arguments) not in (2, 3):
        raise _usage_error("expected FILE TRANSLATION or FILE MEMBER TRANSLATION")
    file, translation = arguments[0], arguments[-1]
    member = arguments[1] if len(arguments) == 3 else None
    if not args.dry_run:  # a dry run is read-only, as the edit verbs' are
        _remove_dead_temporaries(file)
    output_folder(args.output)
    kind, options = _kind(args, file, member, "import")
    with _budgets(args):
        done = kind.call("import", file, translation, args.output, member, options=options)
    for line in done.notes:
        summary(line)
    if done.unchanged:
        if args.dry_run:
            state = "nothing written (--dry-run)"
        else:
            state = f"wrote the copy {args.output}" if done.written else f"{args.output} left untouched"
        summary(f"unchanged: {done.where}'s strings are those of {translation}; {state}")
    else:
        verb = "would write" if args.dry_run else "wrote"
        summary(f"{verb} {args.output} ({done.summary})")
    _end_quickly()


def _end_quickly() -> None:
    """Every file the command opened is closed (read whole, written through `core.atomic`):
    the run may end without the interpreter's tear-down (`cli.run`), which freed the
    translation's lines and the strings one by one (4 M instructions of a PO import)."""
    from . import common

    common.QUICK_EXIT = True


def _budgets(args: argparse.Namespace) -> Any:
    """The content budgets for this command: `--allow-large` lifts the string budget."""
    from ..core.content_limits import limits

    return limits(allow_large=getattr(args, "allow_large", False))
