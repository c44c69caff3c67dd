"""`gamepak text`: export the strings of J2ME text packs and string blobs, import translations."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from ..core.registry import FORMATS, get_format
from .app import Settings, note

FORMAT_NAMES = [spec.name for spec in FORMATS if spec.kind == "archive"]
KIND_HELP = (
    "What holds the strings: 'pack' (a j2me-sized text pack: string table + index table), "
    "'indexed' (a count and one int16/int32 offset per string, then the strings), "
    "'blob' (NUL-terminated strings back to back, taken as they are), or 'auto' (the shape the "
    "data has; binary data is refused)."
)


def _pack_format(ctx: click.Context, local: str | None, file: str, member: str | None) -> str | None:
    """The layout of the pack holding MEMBER: --format, or detected (saying so when it was only
    a structural guess, as the other commands do)."""
    settings: Settings = ctx.find_object(Settings) or Settings(None)
    chosen = local or settings.format_name
    if chosen is not None or member is None:
        return chosen
    from ..core.opening import choose_format

    detection = choose_format(file)
    if not detection.has_magic:
        note(f"{file}: read as {detection.format} (no signature; --format to choose another)")
    return detection.format


def _shared_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options `export` and `import` share: the pack's layout, what holds the strings,
    and overwriting."""
    command = click.option("--overwrite", is_flag=True, help="Replace --output if it exists.")(command)
    command = click.option(
        "--kind",
        type=click.Choice(["auto", "pack", "indexed", "blob"]),
        default="auto",
        show_default=True,
        help=KIND_HELP,
    )(command)
    return click.option(
        "--format",
        "format_name",
        type=click.Choice(FORMAT_NAMES, case_sensitive=False),
        help="Format of the pack holding the strings (default: detected).",
    )(command)


@click.group("text")
def text() -> None:
    """Export and import the strings of Gameloft J2ME games for translators.

    FILE alone is a text pack (a j2me-sized pack of a string table and an index table), strings
    behind their own offset table, or a string blob (NUL-terminated strings). FILE MEMBER reads
    the strings of one member of the pack FILE (its layout detected, or named with --format),
    e.g. Diamond Rush's language file. A pack FILE without MEMBER: its one member that holds
    strings is used and the others are listed as skipped (several: name the MEMBER). Binary
    data (images, a pack's header, unknown tables) is refused, never exported as junk strings;
    a string too long for its offsets or its pack is refused on import.

    Strings are ISO-8859-1 with byte 0x92 as the apostrophe (' and ’ are written as
    0x92); a character ISO-8859-1 lacks is an error naming the string's index. Translation
    files keep each string's index: JSON (an array of {"index", "text"}), CSV (UTF-8 with a
    byte-order mark so spreadsheets read it right, header index,text; read with or without
    the mark, separated by commas, semicolons or tabs) or PO (msgctxt = index, msgid = original,
    msgstr = translation; import uses msgstr when it is non-empty and not fuzzy, else the
    original; a msgid that is not the original string at its index is reported as stale).
    Outputs are written atomically and never replace a file without --overwrite.
    """


@text.command("export")
@click.argument("file", type=click.Path(dir_okay=False))
@click.argument("member", required=False)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    help="Translation file to write (.json, .csv or .po); default: JSON on stdout.",
)
@click.option(
    "--to",
    "translation",
    type=click.Choice(["json", "csv", "po"]),
    help="Translation format (default: from --output's extension).",
)
@_shared_options
@click.pass_context
def export_command(
    ctx: click.Context,
    file: str,
    member: str | None,
    output: str | None,
    translation: str | None,
    format_name: str | None,
    kind: str,
    overwrite: bool,
) -> None:
    """Export the strings of FILE (or of FILE's MEMBER) with their indices.

    A pack FILE without MEMBER: the strings of its one member that holds strings; the members
    skipped are listed with the reason. Binary data is refused, never exported as strings.

    \b
    gamepak text export strings.bin -o strings.po
    gamepak text export lang.bin 0 -o lang.csv
    gamepak text export lang.bin -o lang.csv
    """
    from ..formats.j2me.text import export_strings

    result = export_strings(
        file,
        output,
        member,
        format=_pack_format(ctx, format_name, file, member),
        kind=kind,
        translation=translation,
        overwrite=overwrite,
    )
    _report(file, member, format_name or _settings_format(ctx), result)
    if output is None:
        sys.stdout.buffer.write(result.data)
        sys.stdout.buffer.flush()
    else:
        note(f"exported {len(result.table)} strings of {_where(file, result)} to {output}")


@text.command("import")
@click.argument("arguments", nargs=-1, required=True, metavar="FILE [MEMBER] TRANSLATION")
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False),
    help="The new file to write (FILE with the translated strings).",
)
@click.option(
    "--from",
    "translation_kind",
    type=click.Choice(["json", "csv", "po"]),
    help="Translation format (default: from TRANSLATION's extension).",
)
@_shared_options
@click.pass_context
def import_command(
    ctx: click.Context,
    arguments: tuple[str, ...],
    output: str,
    translation_kind: str | None,
    format_name: str | None,
    kind: str,
    overwrite: bool,
) -> None:
    """Write a copy of FILE (or of the pack FILE with MEMBER rebuilt) holding the strings of
    TRANSLATION. The translation must list every index of the original exactly once. Strings
    left unchanged keep their bytes, so importing an untouched export gives back FILE exactly.
    A pack FILE without MEMBER: its one member that holds strings, as for export. Strings too
    long for their offsets or their pack are refused before anything is written; PO entries
    whose msgid is not the original string at their index are named in a warning.

    \b
    gamepak text import strings.bin strings.po -o strings-fr.bin
    gamepak text import lang.bin 0 lang.csv -o lang-fr.bin
    """
    from ..formats.j2me.text import import_strings

    if len(arguments) not in (2, 3):
        raise click.UsageError("expected FILE TRANSLATION or FILE MEMBER TRANSLATION")
    file, translation = arguments[0], arguments[-1]
    member = arguments[1] if len(arguments) == 3 else None
    result = import_strings(
        file,
        translation,
        output,
        member,
        format=_pack_format(ctx, format_name, file, member),
        kind=kind,
        translation_kind=translation_kind,
        overwrite=overwrite,
    )
    _report(file, member, format_name or _settings_format(ctx), result)
    changed = result.changed
    inside = f" in member {result.member}" if result.member is not None else ""
    note(f"wrote {output} ({changed} string{'s' if changed != 1 else ''} changed{inside})")


def _settings_format(ctx: click.Context) -> str | None:
    settings: Settings = ctx.find_object(Settings) or Settings(None)
    return settings.format_name


def _where(file: str, result: Any) -> str:
    return f"{file}/{result.member}" if result.member is not None else file


def _report(file: str, member: str | None, chosen: str | None, result: Any) -> None:
    """Say which member of a pack held the strings and what was skipped (when FILE was a
    pack given without MEMBER)."""
    if member is not None or result.member is None:
        return
    if chosen is None and not get_format(result.format).has_magic:
        note(f"{file}: read as {result.format} (no signature; --format to choose another)")
    note(f"{file}: the strings are member {result.member}; skipped {len(result.skipped)}:")
    for name, why in result.skipped:
        note(f"  skipped {name}: {why}")
