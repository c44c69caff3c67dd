"""What every command module shares: declaring a command, the reader's `--format` option,
writer `-O` options, writing to the terminal, opening its inputs and showing progress. Light:
argparse and the format table only. argparse's adaptations are `cli.parser`'s; JSON output is
`cli.json_output`'s."""

from __future__ import annotations

import argparse
import os
import sys
import types  # loaded with `re` (enum) already: no start-up cost

from ..core.registry import FORMATS, made_on_first_use
from .parser import ONLY_SUBCOMMAND, HelpFormatter, OnlyOneBuilt

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any

FORMAT_NAMES = [spec.name for spec in FORMATS]


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


def _show_warning(
    message: object, category: object, filename: str, lineno: int, file: object = None, line: object = None
) -> None:
    """Library warnings as one `gamepak: warning: ...` line, without file and line numbers."""
    note(f"warning: {message}")


def route_warnings() -> None:
    """Show library warnings with `_show_warning`: set now when `warnings` is imported, else the
    moment it is. Importing it for every command would cost about 2% of a short command's
    start-up (0.9 M instructions), and it is needed only once something warns: code that warns
    imports it first (`import warnings; warnings.warn(...)`), and Python imports it at start-up
    when given -W or PYTHONWARNINGS."""
    module = sys.modules.get("warnings")
    if module is not None:
        module.showwarning = _show_warning  # type: ignore[attr-defined]
    elif _ROUTE_WARNINGS_ON_IMPORT not in sys.meta_path:
        sys.meta_path.insert(0, _ROUTE_WARNINGS_ON_IMPORT)


def _find_warnings_spec(name: str, path: object = None, target: object = None) -> Any:
    """The finder's `find_spec`: `warnings`' spec from the finders after it, its loader setting
    `showwarning`; this finder then leaves `sys.meta_path`."""
    if name != "warnings":
        return None
    sys.meta_path.remove(_ROUTE_WARNINGS_ON_IMPORT)
    for finder in sys.meta_path:
        find_spec = getattr(finder, "find_spec", None)
        spec = find_spec(name, path, target) if find_spec is not None else None
        if spec is not None:
            spec.loader = _routing_loader(spec.loader)
            return spec
    return None


# A finder ahead of the others that hands `warnings`' import to them and, once the module is
# executed, sets its `showwarning` (and then leaves `sys.meta_path`). A finder is any object
# with a `find_spec`: a namespace holding the function, not a class of its own (making a class
# costs 0.2 M instructions, in every command).
_ROUTE_WARNINGS_ON_IMPORT: Any = types.SimpleNamespace(find_spec=_find_warnings_spec)


def _routing_loader(loader: Any) -> Any:
    """`loader` (the one that found `warnings`), setting `showwarning` once it has executed the
    module; anything else (`get_source` for tracebacks...) is the loader's own. Its class is
    made here, when `warnings` is imported: making a class costs ~0.07 M instructions, and most
    runs never import `warnings`."""

    class RoutingLoader:
        def __init__(self, loader: Any) -> None:
            self.loader = loader

        def __getattr__(self, name: str) -> Any:
            return getattr(self.loader, name)

        def create_module(self, spec: Any) -> Any:
            return self.loader.create_module(spec)

        def exec_module(self, module: Any) -> None:
            self.loader.exec_module(module)
            module.showwarning = _show_warning

    return RoutingLoader(loader)


def write_lines(lines: Iterable[str], batch: int = 1 << 14) -> None:
    """Text pieces to stdout as `write_text` writes them, in batches of about `batch`
    characters as they come: a listing of a million rows is never held whole."""
    # A batch is held as its lines (a str object each, ~50 bytes over its text), joined, then
    # encoded: about 4x its characters. At 64 Ki characters that was 260 kB, more than a small
    # file's own listing costs; 16 Ki is one write a few hundred lines, no slower measurably.
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
    (`texture ls gone.cpeg_pc`: its GPU partner is not what is missing), in the line every
    command gives an input it cannot read (`PATH: cannot read: REASON`, the system's reason)."""
    try:
        os.lstat(path)
    except OSError as exc:
        from ..errors import cannot_read

        raise cannot_read(path, exc) from None


# Set by a command whose handler closes everything it opens (`extract`): the `gamepak` command
# then ends without the interpreter's tear-down (`cli.run`), which on 20,000 members freed
# objects for 10-20 ms of a 300 ms run only for the process to hand the memory back.
QUICK_EXIT = False


def ends_quickly() -> None:
    """Let this run end without the interpreter's tear-down (`QUICK_EXIT`, `cli._quick_exit`):
    for a command that reads and writes nothing but stdout and stderr, called as its handler's
    last step, so that a failure before it (an error, a closed pipe) still ends as usual. What
    it opened to read may stay open: the process ends, and `_quick_exit` flushes stdout and
    stderr first. About 2 M instructions of a short command (`gamepak ls` of a small pack)."""
    global QUICK_EXIT
    QUICK_EXIT = True


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


def _make_progress_bar() -> type:
    """`progress_bar`, made on first use (`core.registry.made_on_first_use`): extract and create
    show one; the other commands never make the class (0.2 M instructions)."""

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

    return progress_bar


__getattr__ = made_on_first_use(globals(), {"progress_bar": _make_progress_bar})


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
    from ..core.stored_names import member_matches

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
