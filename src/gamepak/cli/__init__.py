"""The `gamepak` command: one argparse parser, declared once, thin over the library.

Each command module (`cli/<name>.py`) has a `register(commands)` that declares its commands with
`cli.common.add_command` and points each at a handler `run_…(args) -> int | None`. Declaring
imports nothing heavy: a handler imports what it needs when it runs, so every command, and
`--help`, starts about as fast as Python itself. Only this package prints or exits; handlers raise
`GamepakError`, which `main` turns into one line on stderr and the exit code of
`gamepak.errors.EXIT_CODES`.
"""

from __future__ import annotations

import importlib
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

# The command modules, in the order `gamepak --help` lists their commands.
COMMAND_MODULES: tuple[str, ...] = ("gamepak.cli.patch", "gamepak.cli.texture")
# Commands still declared with click (cli/app.py) while they move to argparse.
LEGACY_CLICK = True


def build_parser() -> argparse.ArgumentParser:
    """The whole command line: every command module's declarations under one parser."""
    import argparse

    from ..errors import EXIT_CODES
    from ..version import __version__
    from .common import add_format_option

    epilog = "exit codes:\n" + "\n".join(f"  {code:<4}{meaning}" for code, meaning in EXIT_CODES)
    parser = argparse.ArgumentParser(
        prog="gamepak",
        description="Open, list, extract, create, edit, verify, convert, patch, mount, serve and catalog "
        "game asset packs, their textures and models.",
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"gamepak {__version__}")
    add_format_option(parser, "the input (also accepted after the command)", dest="global_format")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(commands)
    return parser


def _declared_commands() -> set[str]:
    names: set[str] = set()
    parser = build_parser()
    for action in parser._subparsers._group_actions if parser._subparsers else ():  # type: ignore[union-attr]
        names.update(getattr(action, "choices", {}) or {})
    return names


def _command_of(arguments: list[str]) -> str | None:
    """The command word of a command line (the first word that is not a global option)."""
    skip = False
    for word in arguments:
        if skip:
            skip = False
            continue
        if word == "--format":
            skip = True
            continue
        if word.startswith("-"):
            continue
        return word
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code (`gamepak.errors.EXIT_CODES`)."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    command = _command_of(arguments)
    if LEGACY_CLICK and (command is None or command not in _declared_commands()) and arguments != ["--version"]:
        if arguments and arguments[0] in ("ls", "info", "extract"):
            from .listing import run_quick

            code = run_quick(arguments)
            if code is not None:
                return code
        if arguments and arguments[0] in ("add", "update"):
            from .editing import run_quick as run_quick_edit

            code = run_quick_edit(arguments)
            if code is not None:
                return code
        from .app import run

        return run(arguments)
    parser = build_parser()
    try:
        args = parser.parse_args(arguments)
    except SystemExit as exc:  # --help, --version, or a usage error (argparse printed it)
        return exc.code if isinstance(exc.code, int) else 0
    if getattr(args, "format_name", None) is None and args.global_format is not None:
        args.format_name = args.global_format
    return run_handler(args)


def run_handler(args: argparse.Namespace) -> int:
    """Call the command's handler; a GamepakError becomes one line and its exit code."""
    from ..errors import EXIT_BAD_INPUT, EXIT_INTERRUPTED, GamepakError, exit_code_for
    from .common import note

    try:
        code = args.handler(args)
    except GamepakError as exc:
        note(f"error: {exc}")
        return exit_code_for(exc)
    except BrokenPipeError:
        # The reader went away (| head): not an error of ours.
        sys.stderr.close()
        return 0
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        note(f"error: {where}{exc.strerror or exc}")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        note("interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:  # a bug of ours: one line, the traceback only on request
        if os.environ.get("GAMEPAK_DEBUG"):
            raise
        note(f"internal error: {type(exc).__name__}: {exc} (set GAMEPAK_DEBUG=1 for a traceback)")
        return EXIT_BAD_INPUT
    return 0 if code is None else int(code)


if __name__ == "__main__":
    sys.exit(main())
