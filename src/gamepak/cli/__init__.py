"""The `gamepak` command: one argparse parser, declared once, thin over the library.

Each command module (`cli/<name>.py`) has a `register(commands)` that declares its commands with
`cli.common.add_command` and points each at a handler `run_…(args) -> int | None`. Declaring
imports nothing heavy: a handler imports what it needs when it runs, so every command, and
`--help`, starts about as fast as Python itself. Only this package prints or exits; handlers raise
`GamepakError`, which `main` turns into one line on stderr and the exit code of
`gamepak.errors.EXIT_CODES`.

Here: `COMMANDS`, `build_parser` and `main`. `cli.parser` adapts argparse (`CommandParser`,
`HelpFormatter`, `OnlyOneBuilt`); `cli.common` holds what the command modules share.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterator

# The command modules, the commands each declares and their one-line summaries, in the order
# `gamepak --help` lists them. A run imports only the module of the command it runs, and
# `gamepak --help` none: it lists the commands from here. tests/test_cli.py holds this table
# to what the modules declare (names and summaries).
COMMANDS: dict[str, dict[str, str]] = {
    "gamepak.cli.reading": {
        "ls": "List the members of a pack, one name per line, in archive order.",
        "info": "Show a pack's format, member count, sizes and header fields.",
        "cat": "Write a member's bytes (or OUTER/INNER's, in a nested archive) to stdout.",
        "detect": "Say which formats each file fits, most plausible first, with a confidence.",
        "verify": "Check a pack's structure and every member (or a JOE model as a model).",
        "formats": "List the formats, their extensions and their writer options.",
    },
    "gamepak.cli.packing": {
        "extract": "Extract members (all, names, globs or OUTER/INNER paths) safely into a folder.",
        "create": "Create a pack from files and folders (or rebuild one from an extracted folder).",
    },
    "gamepak.cli.edit": {
        "add": "Add files to a pack (in place where the format allows).",
        "rm": "Remove members (names or globs) from a pack.",
        "mv": "Rename a member of a pack.",
        "update": "Sync an extracted folder back into its pack.",
        "compact": "Rebuild a pack without the space edits left.",
    },
    "gamepak.cli.convert": {
        "convert": "Convert a pack to another format.",
        "diff": "Compare two packs or folders member by member.",
    },
    "gamepak.cli.model": {
        "model": "Inspect, convert and preview JOE models (and Quake MDL models and BSP maps).",
    },
    "gamepak.cli.text": {
        "text": "Export and import the strings of J2ME text packs.",
    },
    "gamepak.cli.texture": {
        "texture": "Textures (RFG pegs, Quake images): list, export, import, build, add, rm",
    },
    "gamepak.cli.sprite": {
        "sprite": "Gameloft J2ME sprites (BSPRITE): list, export to PNG + JSON, import",
    },
    "gamepak.cli.table": {
        "table": "RFG tables (.xtbl): list, check, export, import",
    },
    "gamepak.cli.zone": {
        "zone": "RFG zones and layers: list, export, import, check",
    },
    "gamepak.cli.patch": {
        "patch": "Make, check, apply and revert mod patches",
    },
    "gamepak.cli.mount": {
        "mount": "Mount packs read-only as folders (FUSE).",
        "unmount": "Unmount a folder mounted with 'gamepak mount'.",
    },
    "gamepak.cli.catalog": {
        "catalog": "Catalog collections of archives into Parquet (Dask).",
        "catalog-diff": "Compare two catalogs.",
    },
    "gamepak.cli.serve": {
        "serve": "Browse packs, textures and models in a web page.",
    },
}
COMMAND_MODULES = tuple(COMMANDS)


def _import_argparse() -> None:
    """argparse, imported without gettext, locale and warnings (about 2.5 ms of a 15 ms
    start-up). argparse binds gettext's two functions when imported, to translate its messages,
    and no translation of them is installed with CPython: a stand-in holds the two functions as
    the identity. It binds the module `warnings` for one call, `warnings.warn`, made only when
    argument groups are nested (deprecated; gamepak nests none): the stand-in holds the very
    function `warnings.warn` is, C's `_warnings.warn`, which imports `warnings` itself when it
    has a warning to show. The stand-ins are in place only while argparse is imported, so a
    later `import gettext` or `import warnings` gets the real module."""
    if "argparse" in sys.modules:
        return
    import types

    stand_ins = {}
    if "gettext" not in sys.modules:
        gettext = stand_ins["gettext"] = types.ModuleType("gettext")
        gettext.gettext = lambda message: message  # type: ignore[attr-defined]
        gettext.ngettext = lambda singular, plural, count: singular if count == 1 else plural  # type: ignore[attr-defined]
    if "warnings" not in sys.modules:
        import _warnings

        warnings = stand_ins["warnings"] = types.ModuleType("warnings")
        warnings.warn = _warnings.warn  # type: ignore[attr-defined]
    sys.modules.update(stand_ins)
    try:
        import argparse  # noqa: F401 - imported here for its side of sys.modules
    finally:
        for name in stand_ins:
            del sys.modules[name]


def build_parser(
    command: str | None = "*", subcommand: str | None = None, *, listed: bool = True
) -> argparse.ArgumentParser:
    """The command line: every command module's declarations under one parser. Only `command`'s
    own parser is built in full ("*": every one); the others are listed by name and summary,
    which is all `gamepak --help` shows of them. argparse spends about half a millisecond on
    each parser it makes (translations looked up, help formats checked): building thirty of
    them for one command would double the start-up time. `subcommand` does the same inside a
    command group (`texture export`: the group's other four sub-commands are only listed).
    `listed`: False when no help will be printed (no -h/--help on the command line): the
    commands not built then get no line for it either (argparse makes an object for each,
    some thirty: 0.2 M instructions); the names are still known, for a mistyped command's
    message."""
    _import_argparse()
    from ..errors import EXIT_CODES
    from .common import add_format_option, add_quiet_option
    from .parser import CommandParser, HelpFormatter, OnlyOneBuilt

    epilog = "exit codes:\n" + "\n".join(f"  {code:<4}{meaning}" for code, meaning in EXIT_CODES)
    parser = CommandParser(
        prog="gamepak",
        description="Open, list, extract, create, edit, verify, convert, patch, mount, serve and catalog "
        "game asset packs, their textures and models.",
        epilog=epilog,
        formatter_class=HelpFormatter,
    )
    # No version text: argparse then asks the parser's `version`, which imports it (`--version` only).
    parser.add_argument("--version", action="version")
    add_format_option(parser, "the input (also accepted after the command)", dest="global_format")
    add_quiet_option(parser, dest="global_quiet")
    commands = parser.add_subparsers(  # type: ignore[call-overload]
        dest="command",
        metavar="COMMAND",
        required=True,
        action=OnlyOneBuilt,
        only=None if command == "*" else (command or ""),  # None: build every one; "": none
        inner=subcommand,
        listed=listed,
    )
    if command == "*":
        modules = list(COMMAND_MODULES)
    else:
        # Only the running command's module is imported; `gamepak --help` (and --version)
        # imports none: every other command is listed by its line in COMMANDS.
        modules = [module for module, names in COMMANDS.items() if command in names]
        for module, names in COMMANDS.items():
            if module not in modules:
                for name, summary in names.items():
                    commands.add_parser(name, help=summary)
    for module_name in modules:
        __import__(module_name, fromlist=["register"]).register(commands)
    return parser


def _global_words(arguments: list[str]) -> Iterator[str]:
    """The words of a command line up to its end, without the value of `--format` (the one
    global option that takes a value, so the only one whose next word is not a word of its own)."""
    skip = False
    for word in arguments:
        if skip:
            skip = False
        elif word == "--format":
            skip = True
        else:
            yield word


def _words_of(arguments: list[str]) -> tuple[str | None, str | None]:
    """The command word of a command line (the first word that is not a global option) and the
    word after it (a group's sub-command: group parsers take no options with values), or None
    when there is none (`gamepak`, `gamepak --help`)."""
    words: list[str | None] = []
    for word in _global_words(arguments):
        if not word.startswith("-"):
            words.append(word)
            if len(words) == 2:
                break
    words += [None, None]
    return words[0], words[1]


def _lists_commands(arguments: list[str]) -> bool:
    """Whether `gamepak --help`'s list of commands may be printed: help asked for before the
    command word (`gamepak --help`, `gamepak -q --help ls`), as -h, --help, an abbreviation
    (--he) or among short flags (-qh). Any option word there with an h counts: a needless
    listing costs little. After the command word, help is the command's own (`ls --help`)."""
    for word in _global_words(arguments):
        if not word.startswith("-"):
            return False  # the command word: its own help, if any
        if "h" in word:
            return True
    return False


def _innermost_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the deepest (sub-)command `args` ran (`texture add`: the `add` parser)."""
    import argparse

    while True:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen = action.choices.get(getattr(args, action.dest, None) or "")  # type: ignore[union-attr]
                if isinstance(chosen, argparse.ArgumentParser):
                    parser = chosen
                    break
        else:
            return parser


# The collector's first threshold while the `gamepak` command runs (Python's default: 700).
GC_THRESHOLD = 20000


def run() -> None:
    """The `gamepak` command (the console script and `python -m gamepak`): `main`, then exit
    with its code.

    Everything the run made is frozen out of the cyclic garbage collector first (`gc.freeze`):
    the interpreter's last collection would otherwise walk every object every import made, about
    a seventh of a short command's time (`gamepak ls` of a small pack: 1.49x -> 1.28x the time
    of `python -c "import re"`), only to free memory the process is handing back anyway. The
    rest of the exit is as usual: atexit handlers and thread joins run, files are flushed and
    closed, objects are released by reference counting as the modules are torn down; but a
    command that closed everything it opened may skip the tear-down (`_quick_exit`).

    The collector's first threshold is raised first (700 -> GC_THRESHOLD allocations between
    young collections): importing the modules a command needs makes tens of thousands of
    objects, none of them garbage, and the young collections they set off were about 4%
    of a short command (`gamepak ls` of a small pack: 84.4 -> 80.9 M instructions). Cyclic
    garbage of a long command is still collected, in larger batches."""
    import gc

    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
    code = main()
    gc.freeze()
    _quick_exit(code)
    sys.exit(code)


def _quick_exit(code: int) -> None:
    """End the process now, without the interpreter's tear-down, when the command said it left
    nothing open (`common.QUICK_EXIT`) and no other thread runs: the atexit handlers run and
    stdout and stderr are flushed first, as a normal exit would; only the freeing of every
    object the run made is skipped. Returns (for the normal exit) when a flush fails, so a
    closed pipe is reported as before."""
    common = sys.modules.get(f"{__name__}.common")
    if common is None or not common.QUICK_EXIT:
        return
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return  # the normal exit joins them
    atexit = sys.modules.get("atexit")
    if atexit is not None:  # never imported: nothing was registered with it
        atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):  # a closed pipe, or no stdout (pythonw)
        return
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code (`gamepak.errors.EXIT_CODES`)."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(*_words_of(arguments), listed=_lists_commands(arguments))
    try:
        args, unknown = parser.parse_known_args(arguments)
        if unknown:
            # argparse reports unknown words with the top-level usage; the (sub-)command's
            # own usage tells the user what that command takes.
            _innermost_parser(parser, args).error(f"unrecognized arguments: {' '.join(unknown)}")
    except SystemExit as exc:  # --help, --version, or a usage error (argparse printed it)
        return exc.code if isinstance(exc.code, int) else 0
    if getattr(args, "format_name", None) is None and args.global_format is not None:
        args.format_name = args.global_format
    from . import common

    common.MADE_FOLDERS.clear()
    common.QUICK_EXIT = False
    args.quiet = common.QUIET = bool(
        getattr(args, "quiet", False) or args.global_quiet or getattr(args, "group_quiet", False)
    )
    common.route_warnings()
    return run_handler(args)


def run_handler(args: argparse.Namespace) -> int:
    """Call the command's handler; a GamepakError becomes one line and its exit code. A command
    that fails takes back the empty output folders it made."""
    from ..errors import EXIT_DIFFERENT, EXIT_OK

    code = _call_handler(args)
    if code not in (EXIT_OK, EXIT_DIFFERENT):
        from .common import remove_made_folders

        remove_made_folders()
    return code


def _call_handler(args: argparse.Namespace) -> int:
    from ..errors import EXIT_BAD_INPUT, EXIT_INTERRUPTED, GamepakError, exit_code_for
    from .common import note

    try:
        code = args.handler(args)
    except GamepakError as exc:
        note(f"error: {exc.cli_message or exc}")
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
