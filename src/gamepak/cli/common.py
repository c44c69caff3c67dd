"""What every command module shares: declaring a command, the reader's `--format` option,
writer `-O` options, and writing to the terminal. Light: argparse and the format table only."""

from __future__ import annotations

import argparse
import os
import sys

from ..core.registry import FORMATS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any, NoReturn

FORMAT_NAMES = [spec.name for spec in FORMATS]


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's formatter, keeping descriptions as written, that asks the terminal's width
    itself: argparse's own way imports `shutil` (and with it bz2 and lzma) in every command,
    a tenth of Python's start-up, only to check help strings nobody prints."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        if width is None:
            width = terminal_columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)

    def _split_lines(self, text: str, width: int) -> list[str]:
        """An option's help as lines of at most `width`, broken at spaces: what argparse does
        through `textwrap`, whose regular expressions take longer to compile than the rest of
        `--help` (a word longer than the line keeps its own line instead of being cut)."""
        lines: list[str] = []
        line = ""
        for word in text.split():
            if line and len(line) + 1 + len(word) > width:
                lines.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        return [*lines, line] if line else lines


class CommandParser(argparse.ArgumentParser):
    """argparse's parser that takes a command's options anywhere among its positionals, as
    tar, git and zip do: `extract test.pak -o out 'maps/*'` as `extract -o out test.pak 'maps/*'`.

    `parse_args` stops taking positionals once an option follows the first group of them
    (`unrecognized arguments: maps/*`). A command's own parser (one without sub-commands) is
    therefore parsed in two passes, as argparse's `parse_intermixed_args` does: the options
    first, with the positionals set aside, then the positionals from the words left. That is
    refused for a parser holding sub-commands, so the top parser and the command groups
    (`table`, `patch`, ...) parse as usual and hand their sub-command's words to its parser,
    which takes them in two passes. `--` still ends the options.

    Done here rather than with `parse_known_intermixed_args` itself, which formats the usage
    on every run (for its error messages): half a millisecond of a 15 ms start-up. An error
    puts the positionals back before the usage is printed instead."""

    _set_aside: list[tuple[argparse.Action, Any, Any]] | None = None
    _declaring = False

    @property
    def version(self) -> str:
        """What `--version` prints (argparse's version action asks the parser when it has no
        text of its own): gamepak's version, imported only then."""
        from ..version import __version__

        return f"gamepak {__version__}"

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        """argparse's, checking the metavar against nargs with `_MetavarCheck` rather than a
        full help formatter (whose two regular expressions and terminal size argparse would
        otherwise make for every option of every run: a tenth of a command's start-up)."""
        self._declaring = True
        try:
            return super().add_argument(*args, **kwargs)
        finally:
            self._declaring = False

    def _get_formatter(self) -> argparse.HelpFormatter:
        if self._declaring:
            return _MetavarCheck(self.prog)
        return super()._get_formatter()

    def add_subparsers(self, **kwargs: Any) -> Any:
        """argparse's, given the sub-commands' program name when it is only this parser's (no
        positionals before them, no usage of its own), which argparse would otherwise work out
        by formatting a usage line."""
        if kwargs.get("prog") is None and self.usage is None and not self._get_positional_actions():
            kwargs["prog"] = self.prog
        return super().add_subparsers(**kwargs)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:  # type: ignore[override]
        if self._set_aside is not None or self._subparsers is not None:
            return super().parse_known_args(args, namespace)
        positionals = self._get_positional_actions()
        self._set_aside = [(action, action.nargs, action.default) for action in positionals]
        try:
            for action in positionals:  # nargs SUPPRESS: the action takes no word, sets nothing
                action.nargs = action.default = argparse.SUPPRESS
            namespace, remaining = super().parse_known_args(args, namespace)
        finally:
            self._restore()
        optionals = [(action, action.required) for action in self._get_optional_actions()]
        self._set_aside = []
        try:
            for action, _ in optionals:  # a required option was given (or refused) in the first pass
                action.required = False
            return super().parse_known_args(remaining, namespace)
        finally:
            for action, required in optionals:
                action.required = required
            self._set_aside = None

    def _restore(self) -> None:
        for action, nargs, default in self._set_aside or ():
            action.nargs, action.default = nargs, default
        self._set_aside = []

    def error(self, message: str) -> NoReturn:
        """The usage error, with the usage showing the positionals even when set aside."""
        self._restore()
        super().error(message)


class _MetavarCheck(HelpFormatter):
    """The formatter argparse's `add_argument` asks only to format an option's metavar (an error
    when it does not fit nargs): `_format_args` reads the action alone, so nothing of a real
    formatter is set up."""

    def __init__(self, prog: str) -> None:  # the base's is not called: it builds what this never uses
        self._prog = prog


def terminal_columns() -> int:
    """The width of the terminal stdout is on ($COLUMNS first), else 80."""
    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return 80


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
        formatter_class=HelpFormatter,
        # A command may declare its own -q/--quiet (with its own help) over the shared one.
        conflict_handler="resolve",
        **kwargs,
    )
    if handler is not None:
        parser.set_defaults(handler=handler)
        add_quiet_option(parser)
    else:  # a group: `gamepak texture -q ls` as `gamepak texture ls -q`
        add_quiet_option(parser, dest="group_quiet")
    return parser


def add_quiet_option(parser: argparse.ArgumentParser, dest: str = "quiet") -> None:
    """`-q/--quiet`, which every command takes: no progress and no summary lines (errors and
    warnings are still printed; the exit code still answers)."""
    parser.add_argument("-q", "--quiet", dest=dest, action="store_true", help="no progress, no summary lines")


# Set by `gamepak.cli.main` from -q/--quiet: progress bars and summary lines stay silent.
QUIET = False


def summary(message: str, *, stdout: bool = False) -> None:
    """What a command did (`wrote x.pak (3 members)`, `verify`'s `OK`, `diff`'s `equal`), unless
    -q/--quiet: the one place that rule lives, so every command keeps it (progress asks
    `shows_progress`). One line on stderr (`gamepak: ...`), or with `stdout` the text as it is
    on stdout (lines a script used to read there). Warnings, errors and what a command was asked
    to print (a listing, JSON, a member's bytes) never come here: -q keeps them."""
    if QUIET:
        return
    if stdout:
        write_text(message if message.endswith("\n") else message + "\n")
    else:
        note(message)


class _NotBuilt:
    """Stands for the parser of a command that this run does not parse: takes every
    declaration and keeps none."""

    def __getattr__(self, name: str) -> Any:
        return self._ignore

    def _ignore(self, *args: object, **kwargs: object) -> _NotBuilt:
        return self


NOT_BUILT: Any = _NotBuilt()
# Set by `OnlyOneBuilt` on the parser it builds: the sub-command its command line names.
ONLY_SUBCOMMAND = "_gamepak_only_subcommand"


class OnlyOneBuilt(argparse._SubParsersAction):  # type: ignore[type-arg]
    """Commands (or a group's sub-commands) of which only `only` is built (None: every one);
    the others are listed by name and summary, all that `--help` shows of them. argparse spends
    about half a millisecond on each parser it makes. `inner`: the sub-command the built
    command's own group builds (`texture export`: the group's other sub-commands are listed)."""

    def __init__(self, *args: Any, only: str | None = None, inner: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.only = only
        self.inner = inner

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        if self.only in (None, name):
            parser = super().add_parser(name, **kwargs)
            if self.only == name and self.inner is not None:
                setattr(parser, ONLY_SUBCOMMAND, self.inner)  # read by add_group
            return parser
        if kwargs.get("help") is not None:
            self._choices_actions.append(self._ChoicesPseudoAction(name, (), kwargs["help"]))
        self._name_parser_map[name] = NOT_BUILT
        return NOT_BUILT


def add_group(parser: argparse.ArgumentParser, dest: str) -> argparse._SubParsersAction:  # type: ignore[type-arg]
    """The sub-commands of a command group (`gamepak model export`, `gamepak texture ls`)."""
    only = getattr(parser, ONLY_SUBCOMMAND, None)
    return parser.add_subparsers(  # type: ignore[call-overload]
        dest=dest, metavar="COMMAND", required=True, action=OnlyOneBuilt, only=only
    )


def add_format_option(
    parser: argparse.ArgumentParser, what: str = "ARCHIVE", dest: str = "format_name", flag: str = "--format"
) -> None:
    """`--format NAME` (or `flag`): read the input as this format instead of detecting it."""
    parser.add_argument(
        flag,
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
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        # A name's bytes that are not UTF-8 (kept as surrogates) are shown as \xNN, as the
        # catalog and the errors show them, not as \udcNN.
        data = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace").encode("utf-8")
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


# Every --json of the CLI: one shape (README "JSON output"): two-space indent, UTF-8 text, and
# the same key for the same thing in every verb: `file` the input, `members` a member count,
# `size` bytes of content, `stored_size` bytes as the pack stores them.


def json_text(document: object) -> str:
    """`document` as the CLI's JSON text (one shape for every --json), newline-terminated."""
    import json

    from ..core.jsontext import JSON_INDENT  # here, not at the top: one module less for every command

    return json.dumps(document, indent=JSON_INDENT, ensure_ascii=False) + "\n"


def print_json(document: object) -> None:
    """`document` as the CLI's JSON on stdout."""
    write_text(json_text(document))


def write_lines(lines: Iterable[str], batch: int = 1 << 16) -> None:
    """Text pieces to stdout as `write_text` writes them, in batches of about `batch`
    characters as they come: a listing of a million rows is never held whole."""
    pending: list[str] = []
    size = 0
    for line in lines:
        pending.append(line)
        size += len(line)
        if size >= batch:
            write_text("".join(pending))
            pending.clear()
            size = 0
    if pending:
        write_text("".join(pending))


def print_json_rows(rows: Iterable[object]) -> None:
    """A list of rows as `print_json` prints it (the same bytes), each row written as it
    comes: rows read lazily are never all held."""
    import json

    from ..core.jsontext import JSON_INDENT

    def pieces() -> Iterator[str]:
        first = True
        for row in rows:
            text = json.dumps(row, indent=JSON_INDENT, ensure_ascii=False)
            # Nested one level deeper than alone; JSON text holds no raw newline but its own.
            yield ("[\n  " if first else ",\n  ") + text.replace("\n", "\n  ")
            first = False
        yield "[]\n" if first else "\n]\n"

    write_lines(pieces())


def add_writer_options(parser: argparse.ArgumentParser) -> None:
    """`-O KEY=VALUE`, repeatable: options of the format being written (see `gamepak formats`)."""
    parser.add_argument(
        "-O",
        "--option",
        dest="options",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a writer option of the format written, e.g. -O align=4 (see 'gamepak formats'); repeatable",
    )


def parse_option(text: str) -> tuple[str, Any]:
    """One `-O KEY=VALUE`: numbers as ints (0x... too), yes/no as booleans, empty/none as None."""
    from ..errors import UsageError

    key, separator, value = text.partition("=")
    if not separator or not key:
        raise UsageError(f"-O/--option: {text!r} is not KEY=VALUE")
    lowered = value.lower()
    parsed: Any
    if lowered in ("none", "null", ""):
        parsed = None
    elif lowered in ("true", "yes"):
        parsed = True
    elif lowered in ("false", "no"):
        parsed = False
    else:
        try:
            parsed = int(value, 0)
        except ValueError:
            parsed = value
    return key.replace("-", "_"), parsed


def parse_options(texts: list[str] | tuple[str, ...]) -> dict[str, Any]:
    """-O KEY=VALUE options as a dict (see `parse_option`)."""
    return dict(parse_option(text) for text in texts)


def count(number: int, noun: str) -> str:
    """'1 member', '2 members'."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def open_input(path: str, format_name: str | None) -> Any:
    """Open the archive at `path` with `format_name`, or the detected format (saying which when
    it was only a structural guess)."""
    from ..core.opening import open as open_archive

    if os.path.isdir(path):
        from ..errors import GamepakError

        raise GamepakError(f"{path}: a folder, not a pack")
    archive = open_archive(path, format_name)
    detection = getattr(archive, "detection", None)
    if detection is not None and not detection.has_magic:
        note(f"{path}: read as {detection.format} (no signature; --format to choose another)")
    return archive


def require_input(path: str) -> None:
    """Refuse a missing input as missing, before a reader says something less direct about it
    (`texture ls gone.cpeg_pc`: its GPU partner is not what is missing)."""
    if not os.path.lexists(path):
        from ..errors import GamepakError

        raise GamepakError(f"{path}: no such file or folder")


# Set by a command whose handler closes everything it opens (`extract`): the `gamepak` command
# then ends without the interpreter's tear-down (`cli.run`), which on 20,000 members freed
# objects for 10-20 ms of a 300 ms run only for the process to hand the memory back.
QUICK_EXIT = False

# The folders `output_folder` made in this run, deepest first: taken back (when still empty) if
# the command then fails, so a refused command leaves nothing behind.
MADE_FOLDERS: list[str] = []


def output_folder(path: str) -> None:
    """Create the folder the output file `path` goes into (`model export TRACK -o new/x.gltf`),
    as `extract`, `table export` and `texture export` create theirs; refuses in one line naming
    the folder when it cannot be made (a file in the way, no permission)."""
    from ..errors import GamepakError

    folder = os.path.dirname(path)
    if not folder or os.path.isdir(folder):
        return
    missing = []
    probe = folder
    while probe and not os.path.lexists(probe):
        missing.append(probe)
        probe = os.path.dirname(probe)
    try:
        os.makedirs(folder)
    except OSError as exc:
        raise GamepakError(f"{folder}: cannot create the folder for {path}: {exc.strerror or exc}") from None
    MADE_FOLDERS.extend(missing)


def remove_made_folders() -> None:
    """Take back the folders `output_folder` made, those still empty (the command failed)."""
    for folder in MADE_FOLDERS:
        try:
            os.rmdir(folder)
        except OSError:
            break  # not empty (something else wrote there): keep it and those above it
    MADE_FOLDERS.clear()


def folder_members(folder: str, exclude: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """(name, path) for the files of `folder` as `create` packs them (gamepak.ops.inputs.scan_folder:
    sorted, symlinks leaving the folder refused, the files in `exclude` left out), saying what
    was skipped."""
    from ..ops.inputs import scan_folder

    scan = scan_folder(folder, exclude=exclude)
    for line in scan.skipped:
        note(f"skipped {os.path.join(folder, '')}{line}")
    return scan.members


def shows_progress() -> bool:
    """The one progress rule: progress is drawn on stderr when it is a terminal and the run is
    not --quiet (never into a pipe or a file). Every bar of the CLI asks here."""
    if QUIET:
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # closed or replaced by an object without a terminal
        return False


# Above this many members or bytes a long operation shows a progress bar (on a terminal).
PROGRESS_MEMBERS = 500
PROGRESS_BYTES = 64 << 20


class progress_bar:
    """A rich progress bar on stderr for long extractions and creations, when stderr is a
    terminal (plain, without colour, where NO_COLOR is set or TERM=dumb: rich reads both);
    yields the per-item callback (None when there is no bar).

    The bar appears only once the work has taken `delay` seconds, and is redrawn at most ten
    times a second: a quick run never imports rich (~60 ms), and an item costs a counter and a
    clock read, not a rich update (20,000 small members took 0.1 s more CPU with one per item)."""

    def __init__(self, total: int, total_bytes: int, label: str, delay: float = 0.5) -> None:
        self.total = total
        self.label = label
        self.delay = delay
        big = total >= PROGRESS_MEMBERS or total_bytes >= PROGRESS_BYTES
        self.enabled = big and shows_progress()
        self.done = 0
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> Any:
        if not self.enabled:
            return None
        import time

        monotonic = time.monotonic
        next_draw = monotonic() + self.delay

        def advance(item: object) -> None:
            nonlocal next_draw
            self.done += 1
            now = monotonic()
            if now >= next_draw:
                self._draw()
                next_draw = now + 0.1

        return advance

    def _draw(self) -> None:
        if self._bar is None:
            from rich.console import Console
            from rich.progress import Progress

            # No refresh thread: extraction forks worker processes only when no other thread runs.
            self._bar = Progress(transient=True, console=Console(stderr=True), auto_refresh=False)
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=self.total)
        self._bar.update(self._task, completed=self.done)
        self._bar.refresh()

    def __exit__(self, *exc_info: object) -> None:
        if self._bar is not None:
            self._bar.stop()


class counting_bar:
    """The CLI's progress line on stderr for work whose size is not known ahead: a spinner, a
    count of items done and the time taken, shown only once the work has taken `delay` seconds
    (so quick runs neither import rich nor draw anything), and only where `shows_progress()`
    (a terminal, not --quiet). Yields the per-item callback (None: no progress shown).

    `ticking`: for work that reports few or no items (a patch apply, a verify), a background
    thread keeps the line moving (spinner and time) between items. Not for work that forks
    (extract's copier forks only while no other thread runs)."""

    def __init__(self, label: str, delay: float = 0.5, *, ticking: bool = False) -> None:
        self.label = label
        self.delay = delay
        self.ticking = ticking
        self.done = 0
        self._next_draw = 0.0
        self._bar: Any = None
        self._task: Any = None
        self._lock: Any = None
        self._stop: Any = None

    def __enter__(self) -> Callable[..., None] | None:
        if not shows_progress():
            return None
        import time

        self._next_draw = time.monotonic() + self.delay
        if self.ticking:
            import threading

            self._lock = threading.Lock()
            self._stop = threading.Event()
            threading.Thread(target=self._tick, name="gamepak-progress", daemon=True).start()
        return self.advance

    def _tick(self) -> None:
        """The ticking thread: draw every tenth of a second once `delay` has passed."""
        if self._stop.wait(self.delay):
            return
        while not self._stop.wait(0.1):
            with self._lock:
                if not self._stop.is_set():
                    self._draw()

    def advance(self, *_: object) -> None:
        """One more item done (the arguments, what was done, are not shown)."""
        import time

        self.done += 1
        now = time.monotonic()
        if now < self._next_draw:
            return
        self._next_draw = now + 0.1
        if self._lock is None:
            self._draw()
        else:
            with self._lock:
                self._draw()

    def _draw(self) -> None:
        if self._bar is None:
            from rich.console import Console
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
            self._bar = Progress(*columns, transient=True, console=Console(stderr=True), auto_refresh=False)
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=None)
        # A ticking line that has counted nothing yet shows its label alone.
        counted = self.done or not self.ticking
        self._bar.update(self._task, description=f"{self.label}: {self.done}" if counted else self.label)
        self._bar.refresh()

    def __exit__(self, *exc_info: object) -> None:
        if self._stop is not None:
            with self._lock:
                self._stop.set()
        if self._bar is not None:
            self._bar.stop()


def windows_path(archive: Any, name: str) -> str:
    """A member name or pattern typed with Windows' backslashes (`maps\\e1m1.bsp`, as cmd and
    PowerShell complete paths) in the pack's own '/' form, unless the pack holds that very name
    (a few real packs store backslashes)."""
    if "\\" not in name or name in archive:
        return name
    return name.replace("\\", "/")


def select_members(archive: Any, patterns: list[str] | tuple[str, ...]) -> Iterator[tuple[Any, list[Any], str]]:
    """(archive, entries, folder prefix) groups that the patterns name; nested paths included."""
    from ..errors import MemberNotFoundError

    if not patterns:
        yield archive, archive.infolist(), ""
        return
    from ..core.names import member_matches

    entries = archive.infolist()
    for pattern in patterns:
        pattern = windows_path(archive, pattern)
        matched = [e for e in entries if member_matches(e.name, pattern)]
        if not matched:  # the names `extract` writes ("*.png" for J2ME members "0", "1", ...)
            matched = [e for e in entries if member_matches(archive.extracted_path(e) or e.name, pattern)]
        if not matched and pattern in archive:
            matched = [archive.getinfo(pattern)]  # the format's own lookup (e.g. ignoring case)
        if matched:
            yield archive, matched, ""
            continue
        # OUTER/INNER: a member (or glob) inside a nested archive.
        from ..core.nested import nested_splits

        for prefix, inner, rest in nested_splits(archive, pattern):
            for inner_archive, inner_entries, inner_prefix in select_members(inner, (rest,)):
                yield inner_archive, inner_entries, f"{prefix}/{inner_prefix}"
            break
        else:
            raise MemberNotFoundError(pattern, archive.filename)
