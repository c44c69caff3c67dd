"""`gamepak text`: export the strings of J2ME text packs and string blobs, import translations."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from ..registry import FORMATS
from .app import Settings, note

FORMAT_NAMES = [spec.name for spec in FORMATS if spec.kind == "archive"]
KIND_HELP = (
    "What holds the strings: 'pack' (a j2me-sized text pack: string table + index table), "
    "'blob' (NUL-terminated strings back to back), or 'auto' (a text pack when the data has its shape)."
)


def _pack_format(ctx: click.Context, local: str | None, file: str, member: str | None) -> str | None:
    """The layout of the pack holding MEMBER: --format, or detected (saying so when it was only
    a structural guess, as the other commands do)."""
    settings: Settings = ctx.find_object(Settings) or Settings(None)
    chosen = local or settings.format_name
    if chosen is not None or member is None:
        return chosen
    from .. import choose_format

    detection = choose_format(file)
    if not detection.has_magic:
        note(f"{file}: read as {detection.format} (no signature; --format to choose another)")
    return detection.format


def _shared_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options `export` and `import` share: the pack's layout, what holds the strings,
    and overwriting."""
    command = click.option("--overwrite", is_flag=True, help="Replace --output if it exists.")(command)
    command = click.option(
        "--kind", type=click.Choice(["auto", "pack", "blob"]), default="auto", show_default=True, help=KIND_HELP
    )(command)
    return click.option(
        "--format",
        "format_name",
        type=click.Choice(FORMAT_NAMES, case_sensitive=False),
        help="Layout of the pack holding MEMBER (default: detected).",
    )(command)


@click.group("text")
def text() -> None:
    """Export and import the strings of Gameloft J2ME games for translators.

    FILE alone is a text pack (a j2me-sized pack of a string table and an index table) or a
    string blob (NUL-terminated strings). FILE MEMBER reads the strings of one member of the
    pack FILE (its layout detected, or named with --format), e.g. Diamond Rush's language file.

    Strings are ISO-8859-1 with byte 0x92 as the apostrophe (' and ’ are written as
    0x92); a character ISO-8859-1 lacks is an error naming the string's index. Translation
    files keep each string's index: JSON (an array of {"index", "text"}), CSV (UTF-8 with a
    byte-order mark so spreadsheets read it right, header index,text; read with or without
    the mark) or PO (msgctxt = index, msgid = original, msgstr = translation; import uses
    msgstr when it is non-empty and not fuzzy, else msgid). Outputs are written atomically
    and never replace a file without --overwrite.
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

    \b
    gamepak text export strings.bin -o strings.po
    gamepak text export lang.bin 0 -o lang.csv
    """
    from ..text import export_strings

    encoded = export_strings(
        file,
        output,
        member,
        format=_pack_format(ctx, format_name, file, member),
        kind=kind,
        translation=translation,
        overwrite=overwrite,
    )
    if output is None:
        sys.stdout.buffer.write(encoded)
        sys.stdout.buffer.flush()
    else:
        note(f"exported the strings of {file}{'/' + member if member else ''} to {output}")


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

    \b
    gamepak text import strings.bin strings.po -o strings-fr.bin
    gamepak text import lang.bin 0 lang.csv -o lang-fr.bin
    """
    from ..text import import_strings

    if len(arguments) not in (2, 3):
        raise click.UsageError("expected FILE TRANSLATION or FILE MEMBER TRANSLATION")
    file, translation = arguments[0], arguments[-1]
    member = arguments[1] if len(arguments) == 3 else None
    changed = import_strings(
        file,
        translation,
        output,
        member,
        format=_pack_format(ctx, format_name, file, member),
        kind=kind,
        translation_kind=translation_kind,
        overwrite=overwrite,
    )
    note(f"wrote {output} ({changed} string{'s' if changed != 1 else ''} changed)")
