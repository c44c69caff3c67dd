"""What every command module shares: declaring a command, the reader's `--format` option,
writer `-O` options, and writing to the terminal. Light: argparse and the format table only."""

from __future__ import annotations

import argparse
import sys

from ..core.registry import FORMATS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

FORMAT_NAMES = [spec.name for spec in FORMATS]
Handler = "Callable[[argparse.Namespace], int | None]"


def add_command(
    commands: argparse._SubParsersAction,  # type: ignore[type-arg]
    name: str,
    handler: Callable[[argparse.Namespace], int | None] | None,
    summary: str,
    description: str | None = None,
    **kwargs: Any,
) -> argparse.ArgumentParser:
    """Declare one command: `summary` is its line in the parent's help, `description` (default:
    the summary) its own `--help` text, kept as written. A group passes `handler=None` and adds
    its own sub-commands with `add_group`."""
    parser: argparse.ArgumentParser = commands.add_parser(
        name,
        help=summary,
        description=description or summary,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        **kwargs,
    )
    if handler is not None:
        parser.set_defaults(handler=handler)
    return parser


def add_group(parser: argparse.ArgumentParser, dest: str) -> argparse._SubParsersAction:  # type: ignore[type-arg]
    """The sub-commands of a command group (`gamepak model export`, `gamepak texture ls`)."""
    return parser.add_subparsers(dest=dest, metavar="COMMAND", required=True)


def add_format_option(parser: argparse.ArgumentParser, what: str = "ARCHIVE", dest: str = "format_name") -> None:
    """`--format NAME`: read the input as this format instead of detecting it."""
    parser.add_argument(
        "--format",
        dest=dest,
        choices=FORMAT_NAMES,
        type=str.lower,
        metavar="FORMAT",
        help=f"read {what} as this format instead of detecting it ({', '.join(FORMAT_NAMES)})",
    )


def add_json_option(parser: argparse.ArgumentParser, what: str = "the result") -> None:
    parser.add_argument("--json", dest="as_json", action="store_true", help=f"print {what} as JSON")


def note(message: str) -> None:
    """A line for the user on stderr, prefixed `gamepak: `."""
    sys.stderr.write(f"gamepak: {message}\n")
    sys.stderr.flush()


def write_text(text: str) -> None:
    """Text to stdout as UTF-8 whatever the console's encoding (undecodable names escaped)."""
    sys.stdout.flush()
    sys.stdout.buffer.write(text.encode("utf-8", "backslashreplace"))
    sys.stdout.buffer.flush()


def print_json(document: object) -> None:
    """`document` as indented JSON on stdout."""
    import json

    write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
