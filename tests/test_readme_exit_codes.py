"""Every statement of an exit code in the README agrees with gamepak.errors.EXIT_CODES.

Each "exit N", "exits N", "exit code N", "exits with status N" (and lists such as "exit 0 equal,
3 different") is read with what it says the code means: the words after the number, else the
clause before "exit". Those words are looked up in a small vocabulary of what each code means;
a statement the vocabulary cannot place fails too, so a new statement is checked when written.
"""

from __future__ import annotations

import re
from pathlib import Path

from gamepak.errors import EXIT_BAD_INPUT, EXIT_CODES, EXIT_DIFFERENT, EXIT_OK, EXIT_USAGE

README = Path(__file__).resolve().parent.parent / "README.md"

# What a statement's words say the code means; the first phrase found decides (specific first).
MEANINGS: list[tuple[str, int]] = [
    ("equal", EXIT_OK),
    ("applies cleanly", EXIT_OK),
    ("warnings", EXIT_OK),
    ("sigterm", EXIT_OK),  # a server stopped as asked has done its work
    ("conflict", EXIT_BAD_INPUT),
    ("differ", EXIT_DIFFERENT),
    ("usage", EXIT_USAGE),
    ("naming the option", EXIT_USAGE),
    ("naming the known", EXIT_USAGE),
    ("not an archive", EXIT_USAGE),
    ("cannot be read", EXIT_BAD_INPUT),
    ("says why", EXIT_BAD_INPUT),
    ("error", EXIT_BAD_INPUT),
    ("install", EXIT_BAD_INPUT),
    ("optional dependency", EXIT_BAD_INPUT),
    ("one line naming the file", EXIT_BAD_INPUT),
    ("crashed", EXIT_BAD_INPUT),
]
# How EXIT_CODES itself words each code: the vocabulary above must agree with the table.
TABLE_WORDS = {EXIT_OK: "equal", EXIT_BAD_INPUT: "input", EXIT_USAGE: "usage", EXIT_DIFFERENT: "differ"}

EXIT_WORD = re.compile(
    r"\bexit(?:s|ed)?(?:\s+with)?(?:\s+codes?(?:\s+follow\s+`\w+`)?|\s+status)?:?\s+(?=\d+\b(?!\.\d))", re.IGNORECASE
)
CODE = re.compile(r"(\d+):?([^,;.()]*)")
NEXT_CODE = re.compile(r"[,;]\s*(?=\d+\b)")


def _clause_before(text: str, at: int) -> str:
    """The words from the start of the sentence, list item or code comment up to `at`."""
    starts = [text.rfind(mark, 0, at) for mark in (". ", ".\n", ";", "\n- ", "# ", "\n\n")]
    start = max(starts)
    return text[start + 1 if start >= 0 else 0 : at]


def statements(text: str) -> list[tuple[int, str, int]]:
    """(code, what the README says it means, line number) for every exit-code statement."""
    found = []
    for match in EXIT_WORD.finditer(text):
        position = match.end()
        subject = _clause_before(text, match.start())
        while True:
            code = CODE.match(text, position)
            assert code is not None
            found.append((int(code.group(1)), f"{code.group(2)} | {subject}", text.count("\n", 0, position) + 1))
            more = NEXT_CODE.match(text, code.end())
            if more is None:
                break
            position = more.end()
    return found


def meaning_of(words: str) -> int | None:
    description, _, subject = words.partition(" | ")
    for part in (description, subject):
        lowered = " ".join(part.lower().split())
        for phrase, code in MEANINGS:
            if phrase in lowered:
                return code
    return None


def test_the_vocabulary_agrees_with_the_table() -> None:
    table = dict(EXIT_CODES)
    for code, word in TABLE_WORDS.items():
        assert word in table[code], (code, table[code])


def test_every_exit_code_statement_in_the_readme_agrees_with_the_table() -> None:
    text = README.read_text(encoding="utf-8")
    found = statements(text)
    assert len(found) >= 15, found  # the reader still finds the README's statements
    table = dict(EXIT_CODES)
    wrong = []
    for code, words, line in found:
        meant = meaning_of(words)
        if meant is None:
            wrong.append(f"README.md:{line}: cannot tell what exit {code} means here: {words!r}")
        elif code not in table or code != meant:
            wrong.append(f"README.md:{line}: exit {code} for {words.split(' | ')[0]!r}; EXIT_CODES gives {meant}")
    assert not wrong, "\n".join(wrong)


def test_the_reader_catches_the_old_diff_statement() -> None:
    old = "Exit\ncodes follow `diff`: 0 equal, 1 different, 2 error. In Python"
    found = statements(old)
    assert [(code, meaning_of(words)) for code, words, _ in found] == [
        (0, EXIT_OK),
        (1, EXIT_DIFFERENT),
        (2, EXIT_BAD_INPUT),
    ]
