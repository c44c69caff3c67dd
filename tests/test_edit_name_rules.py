"""Each format's rule for new member names lives in its module (the registry row's `name_rule`),
and both its writer and an editor call it: `add` and `mv` check names without making a writer,
and refuse a name with the writer's own message, dry run or not (issue 48, item 3)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import gamepak
from gamepak.core.registry import FORMATS

from conftest import in_process_cli

# (format, file name, writer options, a member's name): one small pack of every format with names.
PACKS: list[tuple[str, str, dict[str, Any], str]] = [
    ("pak", "pack.pak", {}, "docs/a.txt"),
    ("wad", "pack.wad", {}, "A"),
    ("jpk", "pack.jpk", {}, "docs/a.txt"),
    ("jpk", "field.jpk", {"name_field_size": 12}, "docs/a.txt"),
    ("vpp", "pack.vpp_pc", {}, "a.txt"),
    ("vpp", "pack.str2_pc", {}, "a.txt"),
    ("zip", "pack.zip", {}, "docs/a.txt"),
    ("tar", "pack.tar", {}, "docs/a.txt"),
    ("j2me-table", "table.bin", {}, "0"),
    ("j2me-offsets", "offsets.bin", {}, "0"),
    ("j2me-end-offsets", "end.bin", {}, "0"),
    ("j2me-sized", "sized.bin", {}, "0"),
    ("j2me-ids", "ids.bin", {}, "0"),
]
# Names some writer refuses: too long for a PAK, WAD or a 12-byte JoePack field, folders in a flat
# format, not UTF-8 for a zip, not an index for a J2ME pack, unsafe for every format.
REFUSED = ["x" * 56, "y" * 16, "docs/longer.txt", "a/b.txt", "bad\udcff.txt", "name.txt", "../up", "/abs", "a\\b"]


@pytest.fixture(scope="module")
def packs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("rules")
    made = {}
    for format_name, file_name, options, member in PACKS:
        path = folder / file_name
        with gamepak.create(path, format_name, **options) as writer:
            writer.add(member, b"data")
        made[file_name] = path
    return made


def test_every_format_with_names_has_a_rule_and_the_rows_flat_names_are_the_writers() -> None:
    for spec in FORMATS:
        if spec.kind == "model":
            continue
        writer = spec.writer_class()
        assert spec.flat_names is writer.flat_names, spec.name
        if spec.kind == "archive":
            assert spec.name_rule is not None, spec.name
            assert callable(getattr(spec.load(), spec.name_rule)), spec.name
    assert [spec.name for spec in FORMATS if spec.name_rule_options] == ["jpk"]


def _outcome(check: object, *arguments: object) -> tuple[type, str] | None:
    try:
        check(*arguments)  # type: ignore[operator]
    except gamepak.GamepakError as error:
        return type(error), str(error)
    return None


@pytest.mark.parametrize("file_name", [row[1] for row in PACKS])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.one_of(st.text(max_size=30), st.text(alphabet="ab0/.\\:\0é\udcff", max_size=20)))
@example(name="x" * 56)
@example(name="y" * 16)
@example(name="docs/longer.txt")
@example(name="")
@example(name="12.png")
def test_an_editor_refuses_a_name_as_the_writer_does_without_making_one(
    packs: dict[str, Path], file_name: str, name: str
) -> None:
    from gamepak.core.stored_names import check_new_name

    editor = gamepak.edit(packs[file_name], plan_only=True)
    try:
        edit = editor._root
        light = _outcome(edit.check_name, name), _outcome(edit._check_new_name, name)
        assert edit._checker is None  # the row's rule: no writer made
        writer = edit.checker  # what a writer of the pack, with its options, says
        flat = writer.flat_names
        assert (_outcome(writer.check_name, name), _outcome(lambda new: check_new_name(new, flat=flat), name)) == light
    finally:
        editor.abort()


@pytest.mark.parametrize("file_name", [row[1] for row in PACKS])
def test_a_dry_run_refuses_a_name_with_the_real_runs_message(
    packs: dict[str, Path], file_name: str, tmp_path: Path
) -> None:
    pack = packs[file_name]
    before = pack.read_bytes()
    source = tmp_path / "new.txt"
    source.write_bytes(b"new")
    member = next(row[3] for row in PACKS if row[1] == file_name)
    refused = 0
    for name in REFUSED:
        commands = [["add", str(pack), str(source), "--name", name]]
        if not member.isdigit():  # J2ME members have no names to change
            commands.append(["mv", str(pack), member, name])
        for command in commands:
            dry = in_process_cli(*command, "--dry-run")
            real = in_process_cli(*command)
            assert dry[0] == real[0] and dry[2] == real[2], command
            refused += real[0] == 1
            assert real[0] == 1 or dry[1].endswith("nothing written\n"), (command, real)
            if real[0] == 0:  # a name this format takes: put the pack back
                pack.write_bytes(before)
    assert refused >= 3  # each format refuses several of them
    assert pack.read_bytes() == before


def _unsafe_reason_as_first_written(name: str) -> str | None:
    """`unsafe_name_reason` as it was first written (a generator over the parts): the rule the
    counting version must keep, name for name."""
    if "\\" in name:
        return "backslash in name (use '/' between folders)"
    if name.startswith("/") or (len(name) > 1 and name[1] == ":" and name[0].isascii() and name[0].isalpha()):
        return "absolute path"
    parts = name.split("/")
    if ".." in parts:
        return "'..' would leave the folder it is extracted to"
    if not name or all(part in ("", ".") for part in parts):
        return "the name has no file part"
    if name.endswith("/"):
        return "a trailing '/' names a folder, not a file"
    return None


@settings(max_examples=300, deadline=None)
@given(name=st.text(alphabet="./a:\\é", max_size=9))
@example(name="")
@example(name="./.")
@example(name="a/./")
@example(name="...")
def test_the_shared_name_rule_refuses_what_it_refused_before(name: str) -> None:
    from gamepak.core.stored_names import unsafe_name_reason

    assert unsafe_name_reason(name) == _unsafe_reason_as_first_written(name)
