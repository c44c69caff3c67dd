"""`gamepak convert` and `gamepak diff`: thin over gamepak.convert and gamepak.diff."""

from __future__ import annotations

import json

import click

from ..errors import GamepakError
from .app import FORMAT_NAMES, Settings, _write_text, note, parse_options, writer_options_option


@click.command("convert")
@click.argument("source", metavar="IN", type=click.Path(dir_okay=False))
@click.argument("target", metavar="OUT", type=click.Path(dir_okay=False))
@click.option(
    "--format",
    "format_name",
    type=click.Choice(FORMAT_NAMES, case_sensitive=False),
    help="Format to write (default: from OUT's extension). IN's format is detected, or named "
    "with the global option: gamepak --format NAME convert ...",
)
@writer_options_option
@click.option(
    "--flatten-nested",
    is_flag=True,
    help="Replace each member that is itself a pack by its members, named OUTER/INNER.",
)
@click.option("--allow-duplicates", is_flag=True, help="Keep duplicated member names where OUT's format can.")
@click.option("--overwrite", is_flag=True, help="Replace OUT if it exists.")
@click.pass_context
def convert_command(
    ctx: click.Context,
    source: str,
    target: str,
    format_name: str | None,
    options: tuple[str, ...],
    flatten_nested: bool,
    allow_duplicates: bool,
    overwrite: bool,
) -> None:
    """Write the members of pack IN into a new pack OUT of another format (pak, jpk, vpp, zip,
    tar, j2me-*), streaming each member without extracting anything.

    Every member is checked against OUT's limits first (name length, folders in flat names,
    duplicates, unsafe paths); if any cannot go, all are listed and nothing is written.
    J2ME packs have no member names: members are numbered 0, 1, ... in IN's order, each keeping
    its extension, and the names dropped are reported.
    """
    from ..ops.convert import convert

    settings: Settings = ctx.find_object(Settings) or Settings(None)
    result = convert(
        source,
        target,
        format_name,
        source_format=settings.format_name,
        overwrite=overwrite,
        flatten_nested=flatten_nested,
        allow_duplicates=allow_duplicates,
        **parse_options(options),
    )
    for line in result.notes:
        note(line)
    for old, new in result.renamed[:10]:
        note(f"  {new} <- {old}")
    if len(result.renamed) > 10:
        note(f"  ... and {len(result.renamed) - 10} more")
    count = result.member_count
    note(
        f"wrote {target} ({count} member{'s' if count != 1 else ''}, {result.source_format} -> {result.target_format})"
    )


@click.command("diff")
@click.argument("a", type=click.Path(exists=True))
@click.argument("b", type=click.Path(exists=True))
@click.option("--json", "as_json", is_flag=True, help="Print the differences as one JSON object.")
@click.pass_context
def diff_command(ctx: click.Context, a: str, b: str, as_json: bool) -> None:
    """Compare packs or folders A and B, member by member.

    Lists members only in A (-), only in B (+), changed in size or sha256 (~), renamed with
    the same bytes (>), and header fields that differ when both are packs of one format (!).
    Exit codes, as diff's: 0 equal, 1 different, 2 error (unreadable input, bad usage).
    The global --format names the format of both sides instead of detecting it.
    """
    from ..ops.diff import diff

    settings: Settings = ctx.find_object(Settings) or Settings(None)
    try:
        result = diff(a, b, format_a=settings.format_name, format_b=settings.format_name)
    except GamepakError as exc:
        note(f"error: {exc}")
        raise SystemExit(2) from None
    if as_json:
        _write_text(json.dumps(result.to_dict(), indent=1) + "\n")
    else:
        lines = result.lines()
        if lines:
            _write_text("\n".join(lines) + "\n")
    raise SystemExit(0 if result.equal else 1)
