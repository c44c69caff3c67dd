"""argparse, adapted to gamepak's command line: `CommandParser` (options anywhere among the
positionals; words matched to nargs without compiling regular expressions), `HelpFormatter`
(descriptions as written, the terminal's width asked cheaply) and `OnlyOneBuilt` (only the
running command's parser is built). `gamepak.cli.build_parser` puts them together; `cli.common`
declares commands and options with them.
"""

from __future__ import annotations

import argparse
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, NoReturn

# What argparse compiles in every parser it makes, to tell a word that looks like a negative
# number (`-5`, `-.5`) from an option: the one regular expression every command compiled (0.6 M
# instructions, about 1% of a short command). `_argparse_re` hands argparse `negative_number`
# for it instead: the same answer, found without compiling anything.
NEGATIVE_NUMBER_PATTERN = r"^-\d+$|^-\d*\.\d+$"


def negative_number(word: str) -> bool:
    """Whether `re.match(NEGATIVE_NUMBER_PATTERN, word)` matches: a '-', then decimal digits
    (`\\d`: any Unicode decimal digit, as `str.isdecimal` tells), or digits (maybe none), a '.'
    and digits; `$` also matches before a last newline."""
    if word.endswith("\n"):
        word = word[:-1]
    if word[:1] != "-":
        return False
    whole, dot, fraction = word[1:].partition(".")
    if not dot:
        return whole.isdecimal()
    return (not whole or whole.isdecimal()) and fraction.isdecimal()


def _argparse_re() -> Any:
    """The module argparse knows as `_re`: `re` itself, but for its `compile` of
    NEGATIVE_NUMBER_PATTERN, which gives an object whose `match` is `negative_number` (argparse
    only tests that match for truth). Any other pattern is `re`'s (help's formatting)."""
    import re
    import types

    stand_in = types.ModuleType("re")
    matcher = types.SimpleNamespace(match=negative_number, pattern=NEGATIVE_NUMBER_PATTERN)

    def compile(pattern: Any, flags: int = 0) -> Any:
        if pattern == NEGATIVE_NUMBER_PATTERN and not flags:
            return matcher
        return re.compile(pattern, flags)

    stand_in.compile = compile  # type: ignore[attr-defined]
    stand_in.__getattr__ = lambda name: getattr(re, name)  # type: ignore[method-assign]  # PEP 562: the rest is re's
    return stand_in


if getattr(argparse, "_re", None) is sys.modules.get("re"):
    argparse._re = _argparse_re()  # type: ignore[attr-defined]


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
        """argparse's, checking the metavar against nargs with `_metavar_check` rather than a
        full help formatter (whose two regular expressions and terminal size argparse would
        otherwise make for every option of every run: a tenth of a command's start-up)."""
        self._declaring = True
        try:
            return super().add_argument(*args, **kwargs)
        finally:
            self._declaring = False

    def _get_formatter(self) -> argparse.HelpFormatter:
        if self._declaring:
            return _metavar_check(self.prog)
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
        words = sys.argv[1:] if args is None else args
        if not any(word[:1] == "-" for word in words) and not any(
            action.required for action in self._get_optional_actions()
        ):
            # No option among the words (`convert a.pak b.zip`): nothing to set aside, one pass
            # gives what two would, and a third of a millisecond sooner. (With a required
            # option, the first pass is what reports it missing, alone: kept.)
            return super().parse_known_args(words, namespace)
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

    def _match_argument(self, action: argparse.Action, arg_strings_pattern: str) -> int:
        """argparse's: how many words an option takes, found without compiling argparse's
        regular expression for it (`nargs_match`); argparse's own when they do not fit (for its
        message)."""
        matched = nargs_match(self._get_nargs_pattern(action), arg_strings_pattern)  # type: ignore[attr-defined]
        if not matched:
            return super()._match_argument(action, arg_strings_pattern)  # type: ignore[misc, no-any-return]
        return matched[0][0]

    def _match_arguments_partial(self, actions: Sequence[argparse.Action], arg_strings_pattern: str) -> list[int]:
        """argparse's: how many words each of the leading positionals takes, found without
        compiling a regular expression (`nargs_match`). Where Python versions answer
        differently (a match followed by an option and ending in actions that take no word),
        argparse's own answers."""
        for count in range(len(actions), 0, -1):
            pattern = "".join(self._get_nargs_pattern(action) for action in actions[:count])  # type: ignore[attr-defined]
            matched = nargs_match(pattern, arg_strings_pattern)
            if matched is None:
                break
            if matched:
                lengths, end = matched
                if not (end < len(arg_strings_pattern) and arg_strings_pattern[end] == "O" and not lengths[-1]):
                    return lengths
                break
        else:
            return []
        return super()._match_arguments_partial(actions, arg_strings_pattern)  # type: ignore[misc, no-any-return]

    def _restore(self) -> None:
        for action, nargs, default in self._set_aside or ():
            action.nargs, action.default = nargs, default
        self._set_aside = []

    def error(self, message: str) -> NoReturn:
        """The usage error, with the usage showing the positionals even when set aside."""
        self._restore()
        super().error(message)


def nargs_match(pattern: str, words: str) -> tuple[list[int], int] | tuple[()] | None:
    """`re.match(pattern, words)` for the patterns argparse makes of its actions' nargs, without
    compiling them: (each group's length, where the match ends), `()` when it does not match,
    or None for a pattern not of that kind. Parsing one command line compiled about four such
    expressions, each costing about a third of a million instructions (2% of a command's
    start-up together), to be used once.

    argparse writes the words of a command line one letter each (`A` an argument, `O` an
    option, `-` the `--` ending the options) and each action's nargs as a group of items,
    each a letter or a class of letters taken once, optionally (`?`) or any number of times
    (`*`): `(-*A-*)` one argument, `(-*[A-]*)` any number, `(A)` an option's value. As in the
    regular expression, each item takes as many letters as it can and gives them back one at
    a time while the rest does not match; a failed (item, position) is remembered, so a
    pattern takes at most items x letters steps."""
    items: list[tuple[str, int, int, int]] = []  # (letters, fewest, most, group)
    group, at, size = 0, 0, len(pattern)
    while at < size:
        if pattern[at] != "(":
            return None
        at += 1
        while at < size and pattern[at] != ")":
            if pattern[at] == "[":
                close = pattern.find("]", at)
                letters = pattern[at + 1 : close] if close > at else ""
                at = close + 1
                if "-" in letters[1:-1]:  # a range, not the letter
                    return None
            else:
                letters = pattern[at]
                at += 1
            if not letters or letters.strip("AO-"):
                return None
            fewest, most = 1, 1
            if at < size and pattern[at] in "*?":
                fewest, most = 0, len(words) if pattern[at] == "*" else 1
                at += 1
            items.append((letters, fewest, most, group))
        if at >= size:
            return None
        at, group = at + 1, group + 1
    lengths = [0] * group
    failed: set[tuple[int, int]] = set()

    def end_from(index: int, position: int) -> int | None:
        if index == len(items):
            return position
        if (index, position) in failed:
            return None
        letters, fewest, most, item_group = items[index]
        run = 0
        while run < most and position + run < len(words) and words[position + run] in letters:
            run += 1
        for taken in range(run, fewest - 1, -1):
            end = end_from(index + 1, position + taken)
            if end is not None:
                lengths[item_group] += taken
                return end
        failed.add((index, position))
        return None

    end = end_from(0, 0)
    return () if end is None else (lengths, end)


def _metavar_check(prog: str) -> HelpFormatter:
    """The formatter argparse's `add_argument` asks only to format an option's metavar (an error
    when it does not fit nargs): `_format_args` reads the action alone, so nothing of a real
    formatter is set up: a `HelpFormatter` made without its `__init__` (a subclass skipping it
    was one more class made in every command, 0.2 M instructions)."""
    formatter = HelpFormatter.__new__(HelpFormatter)
    formatter._prog = prog  # type: ignore[attr-defined]
    return formatter


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
    command's own group builds (`texture export`: the group's other sub-commands are listed).
    `listed`: whether the commands not built get their line of `--help` (`build_parser`)."""

    def __init__(
        self, *args: Any, only: str | None = None, inner: str | None = None, listed: bool = True, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.only = only
        self.inner = inner
        self.listed = listed  # False: the commands not built get no help line (none is printed)

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        if self.only in (None, name):
            parser = super().add_parser(name, **kwargs)
            if self.only == name and self.inner is not None:
                setattr(parser, ONLY_SUBCOMMAND, self.inner)  # read by add_group
            return parser
        if self.listed and kwargs.get("help") is not None:
            self._choices_actions.append(self._ChoicesPseudoAction(name, (), kwargs["help"]))
        self._name_parser_map[name] = NOT_BUILT
        return NOT_BUILT
