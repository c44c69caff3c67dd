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
        help=".rfglocatext: read files past the budget of 200,000 strings",
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


def _rfg_only(args: argparse.Namespace, *options: str) -> None:
    """Refuse the .rfglocatext options for J2ME strings."""
    from ..errors import UsageError

    for option in options:
        value = getattr(args, option.lstrip("-").replace("-", "_"), None)
        if value:
            raise UsageError(f"{option} is for RFG localization files (.rfglocatext) only")
    if getattr(args, "translation", None) == "rfgm-xml" or getattr(args, "translation_kind", None) == "rfgm-xml":
        raise UsageError("rfgm-xml is for RFG localization files (.rfglocatext) only")


def _refuse_plain_text(file: str) -> None:
    """A plain text file (notes.txt) is not strings to translate: J2ME strings end in NUL bytes
    and sit behind binary counts and offsets, which a text file has none of."""
    import os

    if not os.path.isfile(file):
        return
    with open(file, "rb") as handle:
        head = handle.read(1 << 16)
    if not head or b"\0" in head:
        return
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 3:  # not only a character cut at the end of the window
            return
    from ..errors import GamepakError

    raise GamepakError(
        f"{file}: plain text (no NUL byte), not J2ME strings or an RFG localization file; "
        "`gamepak text` exports those (--kind names a layout)"
    )


def _is_locatext(file: str, member: str | None) -> bool:
    from ..ops.locatext import is_locatext_target

    return is_locatext_target(file, member)


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
    if _is_locatext(file, member):
        _export_locatext(args)
        return
    _rfg_only(args, "--names", "--source")
    if member is None and args.kind == "auto":
        _refuse_plain_text(file)
    from ..formats.j2me.text import export_strings

    result = export_strings(
        file,
        output,
        member,
        format=_pack_format(args, file, member),
        kind=args.kind,
        translation=args.translation,
        overwrite=args.overwrite,
    )
    _report(file, member, args.format_name, result)
    if output is None:
        sys.stdout.buffer.write(result.data)
        sys.stdout.buffer.flush()
    else:
        summary(f"exported {count(len(result.table), 'string')} of {_where(file, result)} to {output}")


def run_import(args: argparse.Namespace) -> None:
    from ..errors import UsageError

    arguments = args.arguments
    if len(arguments) not in (2, 3):
        raise UsageError("expected FILE TRANSLATION or FILE MEMBER TRANSLATION")
    file, translation = arguments[0], arguments[-1]
    member = arguments[1] if len(arguments) == 3 else None
    _remove_dead_temporaries(file)
    output_folder(args.output)
    if _is_locatext(file, member):
        _import_locatext(args, file, member, translation)
        return
    _rfg_only(args, "--names", "--delete", "--dry-run")
    from ..formats.j2me.text import import_strings

    result = import_strings(
        file,
        translation,
        args.output,
        member,
        format=_pack_format(args, file, member),
        kind=args.kind,
        translation_kind=args.translation_kind,
        overwrite=args.overwrite,
    )
    _report(file, member, args.format_name, result)
    inside = f" in member {result.member}" if result.member is not None else ""
    summary(f"wrote {args.output} ({count(result.changed, 'string')} changed{inside})")


def _export_locatext(args: argparse.Namespace) -> None:
    from ..core.content_limits import limits
    from ..ops.locatext import export_locatext

    with limits(allow_large=args.allow_large):  # --allow-large lifts the string budget
        result = export_locatext(
            args.file,
            args.output,
            args.member,
            format=args.format_name,
            translation=args.translation,
            names=args.names,
            source=args.source,
            overwrite=args.overwrite,
        )
    strings = count(len(result.located.table), "string")
    if args.output is None:
        sys.stdout.buffer.write(result.data)
        sys.stdout.buffer.flush()
    else:
        summary(f"exported {strings} of {result.located.label} to {args.output}")
    summary(f"{result.named} of {strings} named; the others are exported by hash (#xxxxxxxx)")


def _import_locatext(args: argparse.Namespace, file: str, member: str | None, translation: str) -> None:
    from ..core.content_limits import limits
    from ..ops.locatext import import_locatext

    with limits(allow_large=args.allow_large):  # --allow-large lifts the string budget
        result = import_locatext(
            file,
            translation,
            args.output,
            member,
            format=args.format_name,
            translation_kind=args.translation_kind,
            names=args.names,
            delete=args.delete,
            overwrite=args.overwrite,
            dry_run=args.dry_run,
        )
    _report_import(args, result, translation)


def _report_import(args: argparse.Namespace, result: Any, translation: str) -> None:
    applied = result.applied
    inside = f" in member {result.located.member}" if result.located.member is not None else ""
    if result.unchanged:
        if args.dry_run:
            done = "nothing written (--dry-run)"
        else:
            done = f"wrote the copy {args.output}" if result.written else f"{args.output} left untouched"
        summary(f"unchanged: {result.located.label}'s strings are those of {translation}; {done}")
        return
    parts = [f"{count(len(applied.changed), 'string')} changed"]
    if applied.added:
        parts.append(f"{len(applied.added)} added")
    if applied.removed:
        parts.append(f"{len(applied.removed)} removed")
    verb = "would write" if args.dry_run else "wrote"
    summary(f"{verb} {args.output} ({', '.join(parts)}{inside})")


def _where(file: str, result: Any) -> str:
    return f"{file}/{result.member}" if result.member is not None else file


def _report(file: str, member: str | None, chosen: str | None, result: Any) -> None:
    """Say which member of a pack held the strings and what was skipped (when FILE was a
    pack given without MEMBER)."""
    if member is not None or result.member is None:
        return
    from ..core.registry import get_format

    if chosen is None and not get_format(result.format).has_magic:
        note(f"{file}: read as {result.format} (no signature; --format to choose another)")
    skipped = f"; skipped {len(result.skipped)}:" if result.skipped else ""
    summary(f"{file}: the strings are member {result.member}{skipped}")
    for name, why in result.skipped:
        summary(f"  skipped {name}: {why}")
