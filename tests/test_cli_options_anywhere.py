"""Issue 42 item 1: options anywhere on every verb. Each verb's documented examples (the README's
command lines and the `gamepak ... ` lines of every command's own --help) are run with their
options moved to the front, the middle and the end, and must mean the same thing."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
SHELL_WORDS = ("|", "&&", "||", ";", ">", ">>", "<", "2>", "2>&1")


def _parser() -> argparse.ArgumentParser:
    from gamepak.cli import build_parser

    return build_parser("*")


def verbs(parser: argparse.ArgumentParser | None = None, path: tuple[str, ...] = ()) -> dict[str, Any]:
    """Every verb `gamepak --help` leads to (nested ones as 'table export'): its parser."""
    parser = parser or _parser()
    found: dict[str, Any] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.update(verbs(sub, (*path, name)))
            return found
    return {" ".join(path): parser}


def _help_texts(parser: argparse.ArgumentParser) -> list[str]:
    texts = [parser.description or "", parser.epilog or ""]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                texts += _help_texts(sub)
    return texts


def _words(line: str) -> list[str]:
    """A documented command line's words up to what is the shell's (a pipe, a redirection, a
    comment, a second command)."""
    words = []
    for word in shlex.split(line, comments=True):
        if word in SHELL_WORDS or word.startswith((">", "2>")):
            break
        words.append(word)
    return words


def _code_lines(text: str) -> list[str]:
    """The lines of `text` that are code: inside ``` fences, or indented (Markdown's indented
    blocks, the examples of a --help text)."""
    lines = []
    fenced = False
    for raw in text.splitlines():
        if raw.lstrip().startswith("```"):
            fenced = not fenced
        elif fenced or raw.startswith(("  ", "\t")):
            lines.append(raw.strip())
    return lines


def documented_examples() -> list[list[str]]:
    """Every `gamepak ...` command line of the README and of the commands' --help texts, as
    words after `gamepak`."""
    lines: list[str] = []
    for text in [README.read_text(encoding="utf-8"), *_help_texts(_parser())]:
        for line in _code_lines(text):
            line = line.removeprefix("$ ")
            for prefix in (".venv/bin/gamepak ", "gamepak "):
                if line.startswith(prefix):
                    # A remark after the command: `# ...` or `   (take back one patch)`.
                    lines.append(re.split(r"\s{2,}\(", line[len(prefix) :])[0])
                    break
    examples = []
    for line in dict.fromkeys(lines):
        words = _words(line)
        if words:
            examples.append(words)
    return examples


def split_example(
    words: list[str], table: dict[str, Any]
) -> tuple[list[str], str, list[str], list[list[str]], list[list[str]]]:
    """(words before the verb, verb, positionals, options each with its values, options taking
    a variable number of values)."""
    before: list[str] = []
    index = 0
    while index < len(words) and words[index].startswith("-"):
        before.append(words[index])
        if words[index] == "--format":
            before.append(words[index + 1])
            index += 1
        index += 1
    verb_words: list[str] = []
    while index < len(words) and " ".join([*verb_words, words[index]]) in _prefixes(table):
        verb_words.append(words[index])
        index += 1
    verb = " ".join(verb_words)
    parser = table[verb]
    positionals: list[str] = []
    options: list[list[str]] = []
    variable: list[list[str]] = []
    rest = words[index:]
    while rest:
        word = rest.pop(0)
        if not word.startswith("-") or word == "-":
            positionals.append(word)
            continue
        action = parser._option_string_actions.get(word.split("=")[0])
        assert action is not None, f"`gamepak {' '.join(words)}`: {word} is not an option of {verb}"
        taken = [word]
        if "=" not in word and action.nargs is None:
            taken.append(rest.pop(0))
        elif "=" not in word and action.nargs in ("*", "+", "?"):
            while rest and not rest[0].startswith("-"):
                taken.append(rest.pop(0))
            variable.append(taken)
            continue
        options.append(taken)
    return before, verb, positionals, options, variable


def _prefixes(table: dict[str, Any]) -> set[str]:
    prefixes: set[str] = set()
    for verb in table:
        parts = verb.split()
        prefixes.update(" ".join(parts[: n + 1]) for n in range(len(parts)))
    return prefixes


def orders(positionals: list[str], fixed: list[list[str]], variable: list[list[str]]) -> dict[str, list[str]]:
    """The example's arguments with the options at the front, in the middle (after each
    positional but the last) and at the end. An option taking a variable number of values
    (--names A B) is kept last: what follows it would be its value in any order."""
    flat = [word for option in fixed for word in option]
    tail = [word for option in variable for word in option]
    arrangements = {
        "front": flat + positionals + tail,
        "end": positionals + flat + tail,
    }
    for cut in range(1, len(positionals)):
        arrangements[f"middle {cut}"] = positionals[:cut] + flat + positionals[cut:] + tail
    # Each option in its own place: the first after the first positional, and so on.
    spread: list[str] = []
    remaining = list(fixed)
    for positional in positionals:
        spread.append(positional)
        if remaining:
            spread += remaining.pop(0)
    arrangements["spread"] = spread + [word for option in remaining for word in option] + tail
    return arrangements


def _parsed(arguments: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, dict[str, Any]]:
    """Run the CLI's `main` on `arguments` with the handler call replaced by a recorder: the
    exit code and what the handler would get."""
    import gamepak.cli as cli

    seen: dict[str, Any] = {}

    def record(args: argparse.Namespace) -> int:
        seen.update({key: value for key, value in vars(args).items() if key != "handler"})
        return 0

    monkeypatch.setattr(cli, "run_handler", record)
    code = cli.main(arguments)
    return code, seen


TABLE = verbs()
EXAMPLES = documented_examples()


def _examples_of(verb: str) -> list[list[str]]:
    found = []
    for words in EXAMPLES:
        try:
            _, example_verb, *_ = split_example(list(words), TABLE)
        except (KeyError, AssertionError, IndexError):
            continue
        if example_verb == verb:
            found.append(words)
    return found


def test_the_verbs_are_found() -> None:
    assert {"ls", "extract", "table export", "patch make", "texture export", "model export"} <= set(TABLE)
    assert len(TABLE) > 35


@pytest.mark.parametrize("verb", sorted(TABLE))
def test_every_verb_takes_its_options_anywhere(verb: str, monkeypatch: pytest.MonkeyPatch) -> None:
    examples = _examples_of(verb)
    assert examples, f"`gamepak {verb}` has no documented example (README or its --help)"
    for words in examples:
        before, _, positionals, options, variable = split_example(list(words), TABLE)
        code, expected = _parsed(list(words), monkeypatch)
        assert code == 0, f"the documented `gamepak {' '.join(words)}` does not parse"
        for where, arguments in orders(positionals, options, variable).items():
            line = [*before, *verb.split(), *arguments]
            code, got = _parsed(line, monkeypatch)
            assert code == 0, f"`gamepak {' '.join(line)}` (options {where}) does not parse"
            assert got == expected, f"`gamepak {' '.join(line)}` (options {where}) means something else"


def test_every_documented_example_names_a_verb() -> None:
    """Each example is checked above under its verb: none is left out for naming no verb."""
    unknown = []
    for words in EXAMPLES:
        try:
            split_example(list(words), TABLE)
        except (KeyError, IndexError):
            unknown.append(" ".join(words))
    assert not unknown, unknown


@pytest.mark.parametrize(
    "line",
    [
        "extract test.pak -o out maps/*",
        "extract -o out test.pak maps/*",
        "table export table.vpp_pc -o out --as csv decal_info.xtbl",
        "texture export --overwrite src.cpeg_pc -o out a b",
        "patch make base -o p.gpatch modded --name Fix",
        "rm -q pack.pak --dry-run a b",
        "cat pack.pak --format pak member",
    ],
)
def test_the_issues_command_lines_parse(line: str, monkeypatch: pytest.MonkeyPatch) -> None:
    code, _ = _parsed(line.split(), monkeypatch)
    assert code == 0, line


def test_options_anywhere_keeps_usage_errors(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Unknown options and missing arguments are still usage errors with the verb's own usage;
    `--` still ends the options (a member named like an option)."""
    code, _ = _parsed(["extract", "a.pak", "--bogus", "x"], monkeypatch)
    err = capsys.readouterr().err
    assert code == 2 and "usage: gamepak extract" in err and "--bogus" in err, err
    code, _ = _parsed(["extract", "-o", "out"], monkeypatch)
    err = capsys.readouterr().err
    assert code == 2 and "ARCHIVE" in err, err
    code, got = _parsed(["rm", "a.pak", "--dry-run", "--", "-odd-name"], monkeypatch)
    assert code == 0 and got["members"] == ["-odd-name"] and got["dry_run"], got
    code, got = _parsed(["texture", "-q", "ls", "x.cpeg_pc"], monkeypatch)
    assert code == 0 and got["quiet"], got
