"""A PO file in gamepak's own shape (four lines an entry, no comments) is cut into columns by one
`split` instead of the regular expression (issue 48.4): the columns are the ones the regular
expression finds, every other shape is left to it, and the rows read are the same."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamepak.errors import GamepakError
from gamepak.formats.rfg.locatext import LocaEntry, po
from gamepak.formats.rfg.locatext.translate import dump_translation

HEADER = 'msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\n'
PIECES = ["a", "ب", '"', "\\", "n", "\\n", '\\"', "\\\\", "\\q", "\r", " "]
bodies = st.lists(st.sampled_from(PIECES), max_size=6).map("".join)
entries = st.lists(st.tuples(bodies, bodies, bodies), min_size=1, max_size=6)


def by_regex(text: str, start: int) -> list[list[str]] | None:
    """The columns the regular expression finds, None when its matches do not tile the text."""
    found = po.PO_SIMPLE_ENTRY.findall(text, start)
    columns = [list(column) for column in zip(*found)]
    covered = len(found) * po.PO_SIMPLE_FIXED + sum(sum(map(len, column)) for column in columns)
    return columns if found and start + covered == len(text) else None


def po_text(chosen: list[tuple[str, str, str]], last_blank: bool, extra: str) -> str:
    blocks = [f'msgctxt "{key}"\nmsgid "{source}"\nmsgstr "{text}"\n' for key, source, text in chosen]
    return HEADER + "\n".join(blocks) + ("\n" if last_blank else "") + extra


@settings(max_examples=300, deadline=None)
@given(chosen=entries, last_blank=st.booleans(), extra=st.sampled_from(["", "\n", "#, fuzzy\n", 'msgstr "x"\n', "x"]))
def test_the_split_finds_what_the_regular_expression_finds(
    chosen: list[tuple[str, str, str]], last_blank: bool, extra: str
) -> None:
    text = po_text(chosen, last_blank, extra)
    start = po.PO_HEADER.match(text).end()  # type: ignore[union-attr]
    split = po._uniform_columns(text, start)
    if split is not None:
        assert split == by_regex(text, start)
    # What the split leaves is read as before: the same rows either way.
    assert _read(text) == _read(text, uniform=False)


def _read(text: str, uniform: bool = True) -> object:
    saved = po._uniform_columns
    if not uniform:
        po._uniform_columns = lambda text, start: None  # type: ignore[assignment]
    try:
        rows = po._simple_po_columns(text, "t.po")
    finally:
        po._uniform_columns = saved
    if rows is None:
        return None
    return rows.hashes, rows.identifiers, rows.texts, rows.fallbacks, [rows.where(n) for n in range(len(rows.hashes))]


@pytest.mark.parametrize("names", [False, True])
def test_gamepak_s_own_po_without_names_is_split(names: bool) -> None:
    entries = [LocaEntry(number, f'line "{number}"\\\n\tب'.encode("utf-16-le") + b"\0\0") for number in range(1, 40)]
    if names:
        entries[3].identifier = "NAMED"
    text = dump_translation(entries, "po").decode()
    start = po.PO_HEADER.match(text).end()  # type: ignore[union-attr]
    split = po._uniform_columns(text, start)
    if names:  # a named entry carries its hash in a comment: that shape is the expression's
        assert split is None
    else:
        assert split is not None and split == by_regex(text, start)
    assert _read(text) == _read(text, uniform=False)
    assert po._simple_po_columns(text, "t.po").fallbacks[0] == 'line "1"\\\n\tب'  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "broken",
    [
        'msgctxt "#00000001"\nmsgid "a"b"\nmsgstr ""\n',  # a quote inside
        'msgctxt "#00000001"\nmsgid "\nmsgstr ""\n\nmsgctxt "#00000002"\nmsgid "a"b"\nmsgstr ""\n',  # quotes moved
        'msgctxt "#00000001"\nmsgid "ab\nmsgstr ""\n\nmsgctxt "#00000002"\nmsgid "a"b"\nmsgstr ""\n',  # ... again
        'msgctxt "#00000001"\nmsgid "a\\"\nmsgstr ""\n',  # the closing quote escaped
        'msgctxt "#00000001"\nmsgid "a"b\nmsgstr ""\n',  # the last line's closing quote inside
        'msgctxt "#00000001"\nmsgid "a\nmsgstr ""\n\nmsgctxt "#00000002"\nmsgid "b""\nmsgstr ""\n',  # moved
        'msgctxt "#00000001"\nmsgstr "a"\nmsgstr ""\n',  # a msgstr for the msgid
        'msgctxt "#00000001"\nmsgid "a"\nmsgstr ""\n\nmsgctxt "#00000002"\nmsgstr "b"\nmsgstr ""\n',
        'msgctxt "#00000001"\nmsgid  "a"\nmsgstr ""\n',  # two blanks
        'msgctxt "#00000001"\nmsgid "a"\nmsgstr ""',  # no last line end
        '#. comment\nmsgctxt "#00000001"\nmsgid "a"\nmsgstr ""\n',
        'msgctxt "#00000001"\nmsgid "a"\nmsgstr ""\n\n\n',
        # Two empty msgstrs on one line, none on the next entry's
        'msgctxt "#00000001"\nmsgid "a"\nmsgstr ""msgstr ""\n\nmsgctxt "#00000002"\nmsgid "b"\n\n',
    ],
)
def test_other_shapes_are_left_to_the_regular_expression(broken: str) -> None:
    text = HEADER + broken
    assert po._uniform_columns(text, len(HEADER)) is None
    assert _read(text) == _read(text, uniform=False)


def test_an_import_that_changes_nothing_writes_the_file_s_bytes_without_rebuilding_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_rfg_locatext import handmade

    from gamepak.formats.rfg.locatext import LocaText
    from gamepak.ops.locatext import export_locatext, import_locatext

    data = handmade([(7, "seven"), (3, 'three "3"\\'), (9, "")], gap=b"\0\0")  # not the game's layout
    source = tmp_path / "a.rfglocatext"
    source.write_bytes(data)
    translation = tmp_path / "a.po"
    export_locatext(source, translation, names=[])
    rebuilt: list[bytes] = []
    to_bytes = LocaText.to_bytes

    def counted(table: LocaText) -> bytes:
        rebuilt.append(to_bytes(table))
        return rebuilt[-1]

    monkeypatch.setattr(LocaText, "to_bytes", counted)
    done = import_locatext(source, translation, tmp_path / "same.rfglocatext")
    assert done.unchanged and not rebuilt and (tmp_path / "same.rfglocatext").read_bytes() == data
    # A changed string is rebuilt (and only then).
    translation.write_text(translation.read_text().replace('msgid "seven"\nmsgstr ""', 'msgid "seven"\nmsgstr "7"'))
    done = import_locatext(source, translation, tmp_path / "changed.rfglocatext")
    assert not done.unchanged and len(rebuilt) == 1
    assert LocaText.parse((tmp_path / "changed.rfglocatext").read_bytes()).entries[0].text == "7"


BODY_PIECES = ["a", "ب", '"', "\\", "\\\\", '\\"', "\\n", "\n", " "]


@settings(max_examples=400, deadline=None)
@given(body=st.lists(st.sampled_from(BODY_PIECES), max_size=8).map("".join))
def test_a_quoted_body_is_told_as_the_regular_expression_tells_it(body: str) -> None:
    import re

    assert po._quoted_body(body) == (re.fullmatch(po._QUOTED, f'"{body}"') is not None)


@settings(max_examples=300, deadline=None)
@given(
    msgstr=st.lists(st.sampled_from(BODY_PIECES), max_size=6).map("".join),
    after=st.sampled_from(["\n", '\n"x"\n\n', '"\n\n', "\n\n", "", "\nmsgctxt"]),
    before=st.sampled_from(["", "# c\n", "#, fuzzy\n"]),
)
def test_the_header_ends_where_the_regular_expression_says(msgstr: str, after: str, before: str) -> None:
    text = f'{before}msgid ""\nmsgstr "{msgstr}"\n{after}msgctxt "#00000001"\nmsgid "a"\nmsgstr ""\n'
    header = po.PO_HEADER.match(text)
    assert po._header_end(text) == (header.end() if header else 0)


def test_the_own_header_is_told_without_the_regular_expression(monkeypatch: pytest.MonkeyPatch) -> None:
    text = HEADER + 'msgctxt "#00000001"\nmsgid "a"\nmsgstr ""\n'

    def refused(name: str) -> object:
        raise AssertionError(f"compiled {name}")

    monkeypatch.setattr(po, "_compiled", refused)
    assert po._header_end(text) == len(HEADER)
    assert po.rows_from_po(text, "t.po").hashes == [1]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "keys",
    [
        ['msgctxt "#0000000a"x', 'msgctxt "#000000b"'],  # 20 and 18 characters
        ['msgctxt "#0000000a', '"msgctxt "#0000000b"'],  # 18 and 20
        ['msgctxt "#000000\na"', 'msgctxt "#0000000b'],  # a line end among the digits
        ['msgctxt "#0000000a"', 'msgctxt "#0000000g"'],  # not hexadecimal
        ['msgctxt "#0000000a"', 'msgctxt "#0000 00b"'],  # a blank fromhex would skip
        ['msgctxt "#0000000a"', 'msgctxt "#00000٣0b"'],  # not ASCII
        ['msgctxt "#0000000a"', 'msgctxt "x0000000b"'],
        ['msgctxt "#0000000a"', 'msgctxt "#0000000b '],
    ],
)
def test_hash_key_lines_that_are_not_all_keys(keys: list[str]) -> None:
    assert po._hash_key_lines(keys) is None
    assert po._hash_key_lines(['msgctxt "#0000000a"', 'msgctxt "#FFFFFFFF"']) == (10, 0xFFFFFFFF)


@pytest.mark.parametrize("line", ['msgid "a\\qb"', 'msgid "\\"', 'msgid "a"b"', 'msgid "a', 'msgid "'])
def test_a_bad_msgid_in_gamepak_s_shape_is_named_by_the_general_reader(line: str) -> None:
    text = HEADER + f'msgctxt "#00000001"\nmsgid "a"\nmsgstr ""\n\nmsgctxt "#00000002"\n{line}\nmsgstr ""\n'
    assert po._simple_po_columns(text, "t.po") is None
    with pytest.raises(GamepakError, match="t.po: line 9: "):
        po.rows_from_po(text, "t.po")


@pytest.mark.parametrize("verb", ["export", "import"])
def test_text_export_loads_no_po_reader_and_text_import_no_po_writer(tmp_path: Path, verb: str) -> None:
    from test_rfg_locatext import handmade
    from test_startup import gamepak_modules_after

    source = tmp_path / "a.rfglocatext"
    source.write_bytes(handmade([(7, "seven"), (3, "three")]))
    translation = tmp_path / "a.po"
    translation.write_text(HEADER + 'msgctxt "#00000007"\nmsgid "seven"\nmsgstr "7"\n')
    if verb == "export":
        arguments = ["text", "export", str(source), "-o", str(tmp_path / "out.po"), "--names"]
    else:
        arguments = ["text", "import", str(source), str(translation), "-o", str(tmp_path / "b.rfglocatext"), "--names"]
    code, loaded = gamepak_modules_after(*arguments)
    assert code == 0
    used, unused = ("po_write", "po") if verb == "export" else ("po", "po_write")
    assert f"gamepak.formats.rfg.locatext.{used}" in loaded  # the probe sees the modules the verb used
    assert f"gamepak.formats.rfg.locatext.{unused}" not in loaded
