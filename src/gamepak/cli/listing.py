"""`ls` and `info` without click: the click commands call these, and so does the quick path of
`gamepak.cli.main`, which answers the plain forms (`gamepak ls PACK`, `gamepak info PACK`,
`gamepak extract PACK -o DIR` without a terminal to draw a progress bar on) without importing
click (it alone costs more than starting Python)."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..core.archive import Archive


def open_noting(path: str, format_name: str | None, note: Callable[[str], object]) -> Archive:
    """Open `path` with `format_name`, or the detected format (saying which when it was only a
    structural guess)."""
    from ..core.opening import open as open_archive

    archive = open_archive(path, format_name)
    detection = getattr(archive, "detection", None)
    if detection is not None and not detection.has_magic:
        note(f"{path}: read as {detection.format} (no signature; --format to choose another)")
    return archive


def write_text(text: str) -> None:
    """Write to stdout as UTF-8 (names that are not stay readable)."""
    sys.stdout.buffer.write(text.encode("utf-8", "backslashreplace"))
    sys.stdout.buffer.flush()


def _size_text(value: int | None) -> str:
    return "-" if value is None else str(value)


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


def ls_text(opened: Archive, *, as_json: bool, long_format: bool, recursive: bool) -> str:
    """What `gamepak ls` prints."""
    if not recursive and not as_json and not long_format:
        names = opened.namelist()
        return "\n".join(names) + "\n" if names else ""
    rows = _rows(opened, recursive)
    if as_json:
        import json

        return json.dumps(rows, indent=1) + "\n"
    lines = []
    for row in rows:
        if long_format:
            lines.append(f"{row['size']:>12} {_size_text(row['stored_size']):>12} {row['offset']:>12}  {row['name']}")
        else:
            lines.append(row["name"])
    if long_format:
        lines.insert(0, f"{'size':>12} {'stored':>12} {'offset':>12}  name")
    return "\n".join(lines) + "\n"


def info_details(path: str, opened: Archive) -> dict[str, Any]:
    """What `gamepak info` shows, as a dictionary."""
    from ..core.registry import get_format

    entries = opened.infolist()
    return {
        "file": path,
        "format": opened.format_name,
        "description": get_format(opened.format_name).description,
        "file_size": opened.size,
        "member_count": len(entries),
        "total_size": sum(e.size for e in entries),
        # Members without a separate stored size are stored as they are.
        "total_stored_size": sum(e.size if e.stored_size is None else e.stored_size for e in entries),
        "header": opened.header_fields(),
    }


def info_text(details: dict[str, Any], as_json: bool) -> str:
    """What `gamepak info` prints."""
    if as_json:
        import json

        return json.dumps(details, indent=1) + "\n"
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


# The plain forms the quick path answers: command -> the flags it accepts (as click spells them).
QUICK_FLAGS = {"ls": {"--json": "as_json", "-l": "long_format", "--long": "long_format"}, "info": {"--json": "as_json"}}


def _plain_arguments(
    rest: list[str], flags: dict[str, str], valued: tuple[str, ...]
) -> tuple[str, dict[str, Any]] | None:
    """(the one path, the options chosen) of plain arguments, or None for anything else."""
    chosen: dict[str, Any] = {}
    paths = []
    arguments = iter(rest)
    for argument in arguments:
        if argument in flags:
            chosen[flags[argument]] = True
        elif argument in valued:
            value = next(arguments, None)
            if not value or value.startswith("-"):
                return None
            chosen[argument] = value
        elif argument.startswith("-") or not argument:
            return None
        else:
            paths.append(argument)
    if len(paths) != 1 or os.path.isdir(paths[0]):
        return None
    return paths[0], chosen


def run_quick(arguments: list[str]) -> int | None:
    """Answer `ls`/`info`/`extract` of one pack without click; None when the arguments need
    click (any other option, a folder, several packs, members to select, a progress bar:
    click's own messages and checks apply)."""
    command, *rest = arguments
    if command == "extract":
        return _quick_extract(rest)
    parsed = _plain_arguments(rest, QUICK_FLAGS[command], ())
    if parsed is None:
        return None
    path, chosen = parsed
    # Readers do not warn today; if one imports `warnings` and does, it prints the CLI's way.
    # (Importing `warnings` here would cost start-up time for nothing.)
    if "warnings" in sys.modules:
        sys.modules["warnings"].showwarning = _show_warning  # type: ignore[attr-defined]
    try:
        with open_noting(path, None, _note) as opened:
            if command == "ls":
                as_json, long_format = chosen.get("as_json", False), chosen.get("long_format", False)
                text = ls_text(opened, as_json=as_json, long_format=long_format, recursive=False)
            else:
                text = info_text(info_details(path, opened), chosen.get("as_json", False))
        write_text(text)
        return 0
    except BaseException as exc:
        return _exit_code(exc)


def _quick_extract(rest: list[str]) -> int | None:
    """`gamepak extract PACK [-o DIR] [--overwrite] [--manifest]`, when there is no terminal to
    show a progress bar on."""
    if sys.stderr.isatty():
        return None
    parsed = _plain_arguments(rest, {"--overwrite": "overwrite", "--manifest": "manifest"}, ("-o", "--output"))
    if parsed is None:
        return None
    path, chosen = parsed
    output = chosen.get("--output", chosen.get("-o", "."))
    if os.path.exists(output) and not os.path.isdir(output):
        return None  # click's usage error
    try:
        with open_noting(path, None, _note) as opened:
            written = opened.extractall(
                output, overwrite=chosen.get("overwrite", False), manifest=chosen.get("manifest", False)
            )
        count = len(written)
        _note(f"extracted {count} member{'s' if count != 1 else ''} to {output}")
        return 0
    except BaseException as exc:
        return _exit_code(exc)


def _exit_code(exc: BaseException) -> int:
    """What the CLI prints and returns for an exception (as `app.run` does for click commands)."""
    from ..errors import GamepakError

    if isinstance(exc, GamepakError):
        _note(f"error: {exc}")
        return 1
    if isinstance(exc, BrokenPipeError):
        sys.stderr.close()  # the reader went away (| head): not an error of ours
        return 0
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        _note(f"error: {where}{exc.strerror or exc}")
        return 1
    if isinstance(exc, KeyboardInterrupt):
        _note("interrupted")
        return 130
    if isinstance(exc, Exception) and not os.environ.get("GAMEPAK_DEBUG"):
        # A bug of ours: one line, the traceback only on request.
        _note(f"internal error: {type(exc).__name__}: {exc} (set GAMEPAK_DEBUG=1 for a traceback)")
        return 1
    raise exc


def _show_warning(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
    _note(f"warning: {message}")


def _note(message: str) -> None:
    sys.stderr.write(f"gamepak: {message}\n")
    sys.stderr.flush()
