"""Every command line the README shows parses with the real parser (issue 19 class 15): the
command exists, every flag exists, and the arguments fit. (Running them needs the files they
name; the demo and the format tests run the same commands on made packs.)"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def command_lines() -> list[str]:
    text = README.read_text(encoding="utf-8")
    lines = []
    for block in re.findall(r"```(?:sh|bash|console)\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            line = line.strip().removeprefix("$ ")
            for prefix in (".venv/bin/gamepak ", "gamepak "):
                if line.startswith(prefix):
                    lines.append("gamepak " + line[len(prefix) :])
                    break
    return lines


def test_the_readme_shows_commands() -> None:
    assert len(command_lines()) > 40


@pytest.mark.parametrize("line", command_lines())
def test_every_readme_command_parses(line: str) -> None:
    from gamepak.cli import build_parser

    words = []
    for word in shlex.split(line, comments=True):
        if word in ("|", "&&", ";", ">", ">>", "<") or word.startswith(">"):
            break  # the rest is the shell's: a pipe, a redirection, another command
        words.append(word)
    parser = build_parser(words[1] if len(words) > 1 and not words[1].startswith("-") else "*")
    try:
        parser.parse_args(words[1:])
    except SystemExit as exc:
        assert exc.code == 0, f"the README's `{line}` does not parse"
