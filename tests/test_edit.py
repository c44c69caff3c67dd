"""Editing packs: every operation on every format, random edit sequences, nested packs, limits,
in-place edits that keep unchanged members where they are, and the CLI over it."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gamepak
from gamepak.errors import FormatLimitError, GamepakError, MemberNotFoundError, UnsupportedFeatureError

from conftest import in_process_cli, quick_cli, sample

# (id, format, file suffix, writer options)
PACKS: list[tuple[str, str, str, dict[str, Any]]] = [
    ("pak", "pak", ".pak", {}),
    ("pak-align16", "pak", ".pak", {"align": 16}),
    ("pak-dir-start", "pak", ".pak", {"directory": "start"}),
    ("jpk", "jpk", ".jpk", {}),
    ("jpk-field40", "jpk", ".jpk", {"name_field_size": 40}),
    ("vpp0", "vpp", ".vpp_pc", {"flags": 0}),
    ("vpp1", "vpp", ".vpp_pc", {"flags": 1, "level": 6}),
    ("vpp2", "vpp", ".vpp_pc", {"flags": 2}),
    ("vpp3", "vpp", ".vpp_pc", {"flags": 3, "level": 1}),
    ("str2", "vpp", ".str2_pc", {}),
    ("j2me-table", "j2me-table", ".bin", {}),
    ("j2me-offsets", "j2me-offsets", ".bin", {}),
    ("j2me-end-offsets", "j2me-end-offsets", ".bin", {}),
    ("j2me-sized", "j2me-sized", ".bin", {}),
]
PACK_IDS = [pack[0] for pack in PACKS]
POSITIONAL = {"j2me-table", "j2me-offsets", "j2me-end-offsets", "j2me-sized"}


def build(
    tmp_path: Path, format_name: str, suffix: str, options: dict[str, Any], members: list[tuple[str, bytes]]
) -> Path:
    path = tmp_path / f"pack{suffix}"
    with gamepak.create(path, format_name, overwrite=True, **options) as writer:
        for name, data in members:
            writer.add(name, data)
    return path


def contents(path: Path, format_name: str) -> list[tuple[str, bytes]]:
    with gamepak.open(path, format_name) as archive:
        assert archive.verify() == []
        return [(entry.name, archive.read(entry)) for entry in archive.infolist()]


def stored_bytes(path: Path, format_name: str) -> dict[str, bytes] | None:
    """Each member's bytes as stored (compressed where the format compresses), when members
    are separate byte ranges of the file; None for solid-compressed packs."""
    with gamepak.open(path, format_name) as archive:
        if format_name == "vpp" and archive.header_fields().get("flags") == 3:
            return None
        found = {}
        with open(path, "rb") as handle:
            for entry in archive.infolist():
                handle.seek(entry.offset)
                found[entry.name] = handle.read(entry.stored_size if entry.stored_size is not None else entry.size)
        return found


# zlib settings are found by recompressing a solid stream; after an edit that reuses the stream's
# compressed prefix and continues it (the RFG writer does), several settings may fit or none may,
# so for solid packs the edit is checked to hand the pack's settings to the writer instead.
ZLIB_SETTINGS = ("level", "strategy", "mem_level", "window_bits")


def choices(options: dict[str, Any]) -> dict[str, Any]:
    """The layout options an edit must keep, as far as they can be read back from the bytes."""
    if options.get("flags") == 3:
        return {key: value for key, value in options.items() if key not in ZLIB_SETTINGS}
    return options


def names_for(format_name: str, count: int) -> list[str]:
    if format_name in POSITIONAL:
        return [str(index) for index in range(count)]
    return [f"dir/member{index}.txt" if format_name != "vpp" else f"member{index}.txt" for index in range(count)]


def payload(index: int, size: int = 0) -> bytes:
    return (f"member {index} ".encode() * (size // 9 + 3))[: size or (40 + 37 * index)]


# -- every operation on every format ------------------------------------------------------------
@pytest.mark.parametrize(("format_name", "suffix", "options"), [pack[1:] for pack in PACKS], ids=PACK_IDS)
def test_every_operation(tmp_path: Path, format_name: str, suffix: str, options: dict[str, Any]) -> None:
    names = names_for(format_name, 4)
    members = [(name, payload(index)) for index, name in enumerate(names)]
    path = build(tmp_path, format_name, suffix, options, members)
    with gamepak.open(path, format_name) as archive:
        options_before = archive.layout_options()
    with gamepak.edit(path, format_name) as editor:
        assert editor._root.options == options_before  # what the writer is given
    source_file = tmp_path / "new.bin"
    source_file.write_bytes(b"from a file" * 5)
    positional = format_name in POSITIONAL
    with gamepak.edit(path, format_name) as editor:
        editor.replace(names[1], b"replaced")
        editor.add("4" if positional else names[0].replace("0", "9"), source_file)
        editor.remove(names[2])
        if not positional:
            editor.rename(names[3], names[3].replace("3", "33"))
    if positional:
        expected = [("0", members[0][1]), ("1", b"replaced"), ("2", members[3][1]), ("3", source_file.read_bytes())]
    else:
        expected = [
            members[0],
            (names[1], b"replaced"),
            (names[3].replace("3", "33"), members[3][1]),
            (names[0].replace("0", "9"), source_file.read_bytes()),
        ]
    assert contents(path, format_name) == expected
    with gamepak.open(path, format_name) as archive:
        assert choices(archive.layout_options()) == choices(options_before)
        if format_name == "vpp":
            header = archive.header_fields()
            assert header["file_size"] == path.stat().st_size
    assert sorted(os.listdir(tmp_path)) == sorted(["new.bin", path.name])


@pytest.mark.parametrize(("format_name", "suffix", "options"), [pack[1:] for pack in PACKS], ids=PACK_IDS)
def test_exception_in_block_leaves_file_untouched(
    tmp_path: Path, format_name: str, suffix: str, options: dict[str, Any]
) -> None:
    names = names_for(format_name, 3)
    path = build(tmp_path, format_name, suffix, options, [(name, payload(i)) for i, name in enumerate(names)])
    before = path.read_bytes()
    with pytest.raises(RuntimeError), gamepak.edit(path, format_name) as editor:
        editor.replace(names[0], b"changed")
        editor.remove(names[1])
        raise RuntimeError("stop")
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == [path.name]


def test_nothing_changes_before_commit(tmp_path: Path) -> None:
    path = build(tmp_path, "pak", ".pak", {}, [("a", b"1"), ("b", b"2")])
    before = path.read_bytes()
    editor = gamepak.edit(path)
    editor.add("c", b"3")
    editor.remove("a")
    assert path.read_bytes() == before
    assert editor.namelist() == ["b", "c"]
    result = editor.commit()
    assert result.added == ["c"] and result.removed == ["a"]
    assert contents(path, "pak") == [("b", b"2"), ("c", b"3")]
    with pytest.raises(GamepakError, match="closed"):
        editor.add("d", b"4")


def test_plain_edit_calls(tmp_path: Path) -> None:
    path = build(tmp_path, "jpk", ".jpk", {}, [("a.txt", b"1"), ("b.txt", b"2")])
    with gamepak.edit(path) as editor:
        with pytest.raises(GamepakError, match="already holds"):
            editor.add("a.txt", b"x")
        with pytest.raises(MemberNotFoundError):
            editor.replace("zz.txt", b"x")
        with pytest.raises(MemberNotFoundError):
            editor.remove("zz.txt")
        with pytest.raises(GamepakError, match="already holds"):
            editor.rename("a.txt", "b.txt")
        editor.add("a.txt", b"new", replace=True)
        assert "a.txt" in editor and "zz.txt" not in editor
    assert contents(path, "jpk") == [("a.txt", b"new"), ("b.txt", b"2")]


# -- limits are refused before anything is written ------------------------------------------------
def test_refuses_names_the_format_cannot_hold(tmp_path: Path) -> None:
    path = build(tmp_path, "pak", ".pak", {}, [("a", b"1")])
    before = path.read_bytes()
    with pytest.raises(FormatLimitError, match="at most 55"), gamepak.edit(path) as editor:
        editor.add("x" * 56, b"data")
    with pytest.raises(FormatLimitError), gamepak.edit(path) as editor:
        editor.rename("a", "y" * 60)
    assert path.read_bytes() == before

    jpk = build(tmp_path, "jpk", ".jpk", {"name_field_size": 8}, [("short", b"1")])
    before = jpk.read_bytes()
    with pytest.raises(FormatLimitError, match="name field"), gamepak.edit(jpk) as editor:
        editor.add("much-longer-name", b"2")
    assert jpk.read_bytes() == before


def test_j2me_limits_and_positions(tmp_path: Path) -> None:
    path = build(tmp_path, "j2me-table", ".bin", {}, [("0", b"a"), ("1", b"b")])
    before = path.read_bytes()
    with pytest.raises(UnsupportedFeatureError), gamepak.edit(path, "j2me-table") as editor:
        editor.rename("0", "1")
    with pytest.raises(FormatLimitError), gamepak.edit(path, "j2me-table") as editor:
        editor.add("name.txt", b"c")
    # A gap in the indices is refused when the commit queues the members, before writing.
    with pytest.raises(FormatLimitError, match="missing"), gamepak.edit(path, "j2me-table") as editor:
        editor.add("5", b"c")
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == [path.name]
    # The table layout counts members in one byte: 256 members cannot go.
    with pytest.raises(FormatLimitError), gamepak.edit(path, "j2me-table") as editor:
        for index in range(2, 257):
            editor.add(str(index), b"x")
    assert path.read_bytes() == before
    # Members are matched by index, with or without the extension extraction gives them.
    with gamepak.edit(path, "j2me-table") as editor:
        editor.replace("1.txt", b"bb")
    assert contents(path, "j2me-table") == [("0", b"a"), ("1", b"bb")]


# -- keeping the pack's own choices --------------------------------------------------------------
def test_vpp_keeps_header_choices_and_no_stale_tail(tmp_path: Path) -> None:
    options = {"flags": 3, "level": 1, "align": 64, "short_name": "table", "path_name": "data\\", "runtime": "01" * 12}
    members = [(f"t{index}.xtbl", payload(index, 3000)) for index in range(12)]
    path = build(tmp_path, "vpp", ".vpp_pc", options, members)
    with gamepak.open(path) as archive:
        before = archive.layout_options()
    with gamepak.edit(path) as editor:
        editor.replace("t8.xtbl", b"short")
    with gamepak.open(path) as archive:
        assert choices(archive.layout_options()) == choices(before)
        assert archive.header_fields()["file_size"] == path.stat().st_size
        assert archive.read("t8.xtbl") == b"short"
        assert archive.verify() == []
    # No zero padding after the compressed stream.
    assert path.read_bytes()[-16:] != bytes(16)


def test_pak_keeps_directory_place_and_alignment(tmp_path: Path) -> None:
    path = build(tmp_path, "pak", ".pak", {"directory": "start", "align": 8}, [("a", b"1" * 5), ("b", b"2" * 9)])
    with gamepak.edit(path) as editor:
        editor.add("c", b"3" * 3)
        editor.replace("b", b"two")
    assert editor.result.method == "in place"
    with gamepak.open(path) as archive:
        assert archive.layout_options() == {"align": 8, "directory": "start"}
        assert archive.header_fields()["directory_offset"] == 12
        assert archive.verify() == []
    assert contents(path, "pak") == [("a", b"1" * 5), ("b", b"two"), ("c", b"3" * 3)]


# -- in-place edits ------------------------------------------------------------------------------
def test_pak_replace_in_place_keeps_other_members_where_they_are(tmp_path: Path) -> None:
    members = [(f"m{index}", payload(index, 5000)) for index in range(6)]
    path = build(tmp_path, "pak", ".pak", {}, members)
    with gamepak.open(path) as archive:
        offsets = {entry.name: entry.offset for entry in archive.infolist()}
    size_before = path.stat().st_size
    with gamepak.edit(path) as editor:
        editor.replace("m2", b"tiny")
    assert editor.result.method == "in place"
    with gamepak.open(path) as archive:
        for entry in archive.infolist():
            if entry.name != "m2":
                assert entry.offset == offsets[entry.name]
        assert archive.read("m2") == b"tiny"
        # The old directory and m2's old bytes are dead space now; compact drops them.
        assert archive.header_fields()["directory_offset"] >= size_before
    result = gamepak.edit(path, compact=True).commit()
    assert result.method == "compacted"
    assert result.new_size == 12 + sum(len(data) for _, data in members) - 5000 + 4 + 64 * 6
    assert [data for _, data in contents(path, "pak")][2] == b"tiny"


def test_jpk_in_place_add_moves_the_first_member_to_make_room(tmp_path: Path) -> None:
    members = [("a.txt", b"A" * 30), ("b.txt", b"B" * 100)]
    path = build(tmp_path, "jpk", ".jpk", {}, members)
    with gamepak.edit(path) as editor:
        editor.add("c.txt", b"C" * 7)
        editor.replace("b.txt", b"b")
    assert editor.result.method == "in place"
    assert contents(path, "jpk") == [("a.txt", b"A" * 30), ("b.txt", b"b"), ("c.txt", b"C" * 7)]
    with gamepak.open(path) as archive:
        assert archive.header_fields()["name_field_size"] == 5


def test_jpk_changes_spread_over_pages_are_rebuilt(tmp_path: Path) -> None:
    # 300 slots of 8 + 20 bytes: slot 0 and slot 299 lie in different pages.
    members = [(f"member{index:04}.txt".ljust(20, "_"), b"x%d" % index) for index in range(300)]
    path = build(tmp_path, "jpk", ".jpk", {}, members)
    with gamepak.edit(path) as editor:
        editor.replace(members[0][0], b"first")
        editor.replace(members[299][0], b"last")
    assert editor.result.method == "rebuilt"
    with gamepak.edit(path) as editor:
        editor.replace(members[150][0], b"middle")
    assert editor.result.method == "in place"
    read = contents(path, "jpk")
    assert read[0][1] == b"first" and read[150][1] == b"middle" and read[299][1] == b"last"


def test_one_editor_at_a_time(tmp_path: Path) -> None:
    path = build(tmp_path, "pak", ".pak", {}, [("a", b"1")])
    first = gamepak.edit(path)
    with pytest.raises(GamepakError, match="another gamepak process is editing it"):
        gamepak.edit(path)
    first.add("b", b"2")
    first.commit()
    with gamepak.edit(path) as second:
        second.add("c", b"3")
    assert [name for name, _ in contents(path, "pak")] == ["a", "b", "c"]


def test_rebuild_keeps_permissions(tmp_path: Path) -> None:
    path = build(tmp_path, "vpp", ".vpp_pc", {"flags": 1}, [("a.txt", b"1")])
    path.chmod(0o600)
    with gamepak.edit(path) as editor:
        editor.add("b.txt", b"2")
    assert editor.result.method == "rebuilt"
    assert path.stat().st_mode & 0o777 == 0o600


def test_edit_refuses_a_file_changed_meanwhile(tmp_path: Path) -> None:
    path = build(tmp_path, "pak", ".pak", {}, [("a", b"1")])
    editor = gamepak.edit(path)
    editor.add("b", b"2")
    with open(path, "ab") as handle:
        handle.write(b"grown")
    with pytest.raises(GamepakError, match="changed since"):
        editor.commit()


# -- a refused edit writes nothing -----------------------------------------------------------------
# In place (PAK, JoePack) and rebuilt; each pack ends with bytes an interrupted edit left behind,
# which an in-place edit reuses: a refused one must not have touched them either.
REFUSED = ["pak", "pak-dir-start", "jpk", "vpp1", "vpp3", "j2me-offsets"]


def refusable_pack(tmp_path: Path, pack_id: str) -> tuple[Path, str, list[Path]]:
    """A pack with a stale tail, and a folder extracted from it plus three new files."""
    _, format_name, suffix, options = next(pack for pack in PACKS if pack[0] == pack_id)
    names = names_for(format_name, 3)
    path = build(tmp_path, format_name, suffix, options, [(name, payload(index)) for index, name in enumerate(names)])
    with open(path, "ab") as handle:
        handle.write(b"\xee" * 3000)  # what a killed in-place edit leaves past the end
    folder = tmp_path / "folder"
    assert in_process_cli("extract", str(path), "-o", str(folder), "--format", format_name)[0] == 0
    new_files = []
    for index in range(3):
        new = folder / f"{len(names) + index}.new" if format_name in POSITIONAL else folder / f"new{index}.txt"
        new.write_bytes(payload(10 + index, 5000))
        new_files.append(new)
    return path, format_name, new_files


@pytest.mark.parametrize("pack_id", REFUSED)
def test_an_update_refused_for_a_file_gone_since_planning_writes_nothing(tmp_path: Path, pack_id: str) -> None:
    from gamepak.ops.sync import folder_changes

    path, format_name, new_files = refusable_pack(tmp_path, pack_id)
    before = path.read_bytes()
    editor = gamepak.edit(path, format_name)
    folder_changes(editor, str(new_files[0].parent))
    assert len(editor.plan()) == 3
    new_files[-1].unlink()  # listed by the scan, gone when the edit reads it
    with pytest.raises(GamepakError, match="new.*cannot read"):
        editor.commit()
    assert path.read_bytes() == before


def test_an_update_refused_for_a_file_it_cannot_compare_raises_gamepak_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import builtins

    import gamepak.ops.sync
    from gamepak.ops.sync import folder_changes

    path, _, new_files = refusable_pack(tmp_path, "pak")
    before = path.read_bytes()
    unreadable = new_files[0].parent / "dir" / "member1.txt"  # the same size as its member

    def guarded_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if os.fspath(file) == str(unreadable):
            raise PermissionError(13, "Permission denied")  # what chmod 000 gives (but not to root)
        return builtins.open(file, *args, **kwargs)

    monkeypatch.setattr(gamepak.ops.sync, "open", guarded_open, raising=False)
    editor = gamepak.edit(path)
    with pytest.raises(GamepakError, match="member1.txt: cannot read: Permission denied"):
        folder_changes(editor, str(new_files[0].parent))
    editor.abort()
    code, _, err = in_process_cli("update", str(path), str(new_files[0].parent))
    assert code == 1 and err.strip().splitlines() == [f"gamepak: error: {unreadable}: cannot read: Permission denied"]
    assert path.read_bytes() == before


@pytest.mark.parametrize("pack_id", REFUSED)
def test_an_add_refused_for_a_file_that_cannot_be_read_writes_nothing(
    tmp_path: Path, pack_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gamepak.core.snapshot import InputFile

    path, format_name, new_files = refusable_pack(tmp_path, pack_id)
    before = path.read_bytes()

    def failing_read(self: InputFile, *args: Any) -> Any:
        if self.path == str(new_files[-1]):
            raise OSError(5, "Input/output error")
        return original_read(self, *args)

    original_read = InputFile.read
    monkeypatch.setattr(InputFile, "read", failing_read)
    code, _, err = in_process_cli("add", str(path), *map(str, new_files), "--format", format_name)
    assert code == 1
    assert err.strip().splitlines() == [f"gamepak: error: {new_files[-1]}: cannot read: Input/output error"]
    assert path.read_bytes() == before


@pytest.mark.parametrize("pack_id", REFUSED)
def test_an_edit_refused_for_a_file_changed_since_planning_writes_nothing(tmp_path: Path, pack_id: str) -> None:
    path, format_name, new_files = refusable_pack(tmp_path, pack_id)
    before = path.read_bytes()
    editor = gamepak.edit(path, format_name)
    for new in new_files:
        editor.add(new.name, new)
    with open(new_files[-1], "ab") as handle:
        handle.write(b"grown after it was queued")
    with pytest.raises(gamepak.errors.InputChangedError, match="5000 -> 5025 bytes"):
        editor.commit()
    assert path.read_bytes() == before


# -- random edit sequences -----------------------------------------------------------------------
RANDOMIZED = [
    "pak",
    "pak-align16",
    "pak-dir-start",
    "jpk",
    "vpp0",
    "vpp1",
    "vpp2",
    "vpp3",
    "j2me-offsets",
    "j2me-sized",
]
OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from(["add", "replace", "remove", "rename"]),
        st.integers(0, 40),
        st.binary(max_size=300),
    ),
    max_size=8,
)


@pytest.mark.parametrize(
    ("format_name", "suffix", "options"),
    [pack[1:] for pack in PACKS if pack[0] in RANDOMIZED],
    ids=RANDOMIZED,
)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=OPERATIONS, initial=st.integers(0, 6))
def test_random_edit_sequences(
    tmp_path: Path,
    format_name: str,
    suffix: str,
    options: dict[str, Any],
    operations: list[tuple[str, int, bytes]],
    initial: int,
) -> None:
    check_edit_sequence(tmp_path, format_name, suffix, options, operations, initial)


@pytest.mark.parametrize(
    ("format_name", "suffix", "options"),
    [("pak", ".pak", {}), ("pak", ".pak", {"directory": "start"}), ("jpk", ".jpk", {})],
    ids=["pak", "pak-dir-start", "jpk"],
)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=OPERATIONS, initial=st.integers(100, 250))
def test_random_edits_of_large_directories(
    tmp_path: Path,
    format_name: str,
    suffix: str,
    options: dict[str, Any],
    operations: list[tuple[str, int, bytes]],
    initial: int,
) -> None:
    """Directories that span several pages: fixed ones (JoePack, a PAK's at the start) are
    edited in place or, when the change spans pages, rebuilt."""
    check_edit_sequence(tmp_path, format_name, suffix, options, operations, initial)


def check_edit_sequence(
    tmp_path: Path,
    format_name: str,
    suffix: str,
    options: dict[str, Any],
    operations: list[tuple[str, int, bytes]],
    initial: int,
) -> None:
    """Apply random operations; the pack must read back exactly the expected members, and
    members no operation touched must keep their stored bytes."""
    positional = format_name in POSITIONAL
    members = [(name, payload(index)) for index, name in enumerate(names_for(format_name, initial))]
    path = build(tmp_path, format_name, suffix, options, members)
    stored_before = stored_bytes(path, format_name)
    expected = list(members)
    touched: set[str] = set()
    with gamepak.edit(path, format_name) as editor:
        for operation, number, data in operations:
            if operation == "add":
                name = str(len(expected)) if positional else f"new{number}.bin"
                if any(existing == name for existing, _ in expected):
                    continue
                editor.add(name, data)
                expected.append((name, data))
                touched.add(name)
            elif not expected:
                continue
            elif operation == "replace":
                index = number % len(expected)
                editor.replace(expected[index][0], data)
                expected[index] = (expected[index][0], data)
                touched.add(expected[index][0])
            elif operation == "remove":
                index = number % len(expected)
                editor.remove(expected[index][0])
                if positional:
                    # Members after a removed one move up a position: their names change.
                    touched.update(str(position) for position in range(index, len(expected)))
                del expected[index]
                if positional:
                    expected = [(str(position), data) for position, (_, data) in enumerate(expected)]
            elif not positional:
                index = number % len(expected)
                new_name = f"renamed{number}.bin"
                if any(existing == new_name for existing, _ in expected):
                    continue
                editor.rename(expected[index][0], new_name)
                touched.update((expected[index][0], new_name))
                expected[index] = (new_name, expected[index][1])
    assert contents(path, format_name) == expected
    stored_after = stored_bytes(path, format_name)
    if stored_before is not None and stored_after is not None:
        for name, stored in stored_before.items():
            if name not in touched and name in stored_after:
                assert stored_after[name] == stored


# -- nested packs --------------------------------------------------------------------------------
def test_nested_edit(tmp_path: Path) -> None:
    inner_path = tmp_path / "inner.str2_pc"
    with gamepak.create(inner_path) as writer:
        for index in range(3):
            writer.add(f"part{index}.cpeg_pc", payload(index, 700))
    outer_members = [("first.xtbl", payload(7, 3000)), ("level.str2_pc", inner_path.read_bytes()), ("z.txt", b"z")]
    path = build(tmp_path, "vpp", ".vpp_pc", {"flags": 0}, outer_members)
    before = stored_bytes(path, "vpp")
    assert before is not None
    with gamepak.edit(path) as editor:
        editor.replace("level.str2_pc/part1.cpeg_pc", b"new inner bytes")
        editor.add("level.str2_pc/extra.gpeg_pc", b"extra")
        editor.remove("level.str2_pc/part0.cpeg_pc")
        assert "level.str2_pc/extra.gpeg_pc" in editor
    assert editor.result.replaced == ["level.str2_pc/part1.cpeg_pc"]
    with gamepak.open(path) as outer:
        assert outer.namelist() == ["first.xtbl", "level.str2_pc", "z.txt"]
        with outer.open_archive("level.str2_pc") as inner:
            assert inner.format_name == "vpp"
            assert inner.header_fields()["flags"] == 3  # a .str2_pc stays compressed + condensed
            assert [(entry.name, inner.read(entry)) for entry in inner.infolist()] == [
                ("part1.cpeg_pc", b"new inner bytes"),
                ("part2.cpeg_pc", payload(2, 700)),
                ("extra.gpeg_pc", b"extra"),
            ]
    after = stored_bytes(path, "vpp")
    assert after is not None
    assert after["first.xtbl"] == before["first.xtbl"] and after["z.txt"] == before["z.txt"]


def test_nested_rename_stays_inside_its_pack(tmp_path: Path) -> None:
    inner = build(tmp_path, "jpk", ".jpk", {}, [("a.txt", b"a")])
    path = tmp_path / "outer.pak"
    with gamepak.create(path) as writer:
        writer.add("data/inner.jpk", inner)
    with gamepak.edit(path) as editor:
        with pytest.raises(GamepakError, match="only inside"):
            editor.rename("data/inner.jpk/a.txt", "b.txt")
        editor.rename("data/inner.jpk/a.txt", "data/inner.jpk/b.txt")
    with gamepak.open(path) as outer, outer.open_archive("data/inner.jpk") as nested:
        assert nested.namelist() == ["b.txt"]


# -- real samples --------------------------------------------------------------------------------
@pytest.mark.parametrize("relative", ["pak/quakespasm.pak", "jpk/garage_objects.jpk", "vpp/xray_effect.str2_pc"])
def test_edit_real_samples(tmp_path: Path, relative: str) -> None:
    original = sample(relative)
    path = tmp_path / original.name
    shutil.copyfile(original, path)
    path.chmod(0o644)
    with gamepak.open(path) as archive:
        names = archive.namelist()
        data = {entry.name: archive.read(entry) for entry in archive.infolist()}
        options = archive.layout_options()
    # not half of a texture pair: verify checks a peg's CPU file against its GPU file
    modded = [name for name in names if not name.lower().endswith(("peg_pc", "vbm_pc"))][-1]
    with gamepak.edit(path) as editor:
        editor.replace(modded, b"modded")
    with gamepak.open(path) as archive:
        assert archive.namelist() == names
        assert choices(archive.layout_options()) == choices(options)
        assert archive.verify() == []
        for name in names:
            assert archive.read(name) == (b"modded" if name == modded else data[name])


# -- the command line ----------------------------------------------------------------------------
def test_cli_loop(tmp_path: Path) -> None:
    folder = tmp_path / "src"
    (folder / "maps").mkdir(parents=True)
    (folder / "maps" / "e1m1.bsp").write_bytes(b"map")
    (folder / "readme.txt").write_bytes(b"hello")
    pack = tmp_path / "mod.pak"
    assert in_process_cli("create", str(pack), str(folder))[0] == 0
    extra = tmp_path / "extra.cfg"
    extra.write_bytes(b"bind x")

    code, out, _ = in_process_cli("add", str(pack), str(extra), "--name", "cfg/extra.cfg")
    assert code == 0 and out.strip().endswith("bytes)") and "1 added" in out
    code, _, err = in_process_cli("add", str(pack), str(extra), "--name", "cfg/extra.cfg")
    assert code == 1 and "already holds" in err and len(err.strip().splitlines()) == 1
    assert in_process_cli("add", str(pack), str(extra), "--name", "cfg/extra.cfg", "--replace")[0] == 0
    code, out, _ = in_process_cli("mv", str(pack), "readme.txt", "docs/readme.txt")
    assert code == 0 and "1 renamed" in out
    code, out, _ = in_process_cli("rm", str(pack), "maps/*", "--dry-run")
    assert code == 0 and "remove maps/e1m1.bsp" in out and "nothing written" in out
    assert gamepak.open(pack).namelist() == ["maps/e1m1.bsp", "docs/readme.txt", "cfg/extra.cfg"]
    code, _, err = in_process_cli("rm", str(pack), "nothing/*")
    assert code == 1 and "no member matches" in err
    assert in_process_cli("rm", str(pack), "--bogus")[0] == 2
    assert in_process_cli("add", str(pack))[0] == 2
    assert in_process_cli("add", str(pack), str(folder), "--name", "x")[0] == 2
    code, out, _ = in_process_cli("rm", str(pack), "maps/*")
    assert code == 0 and "1 removed" in out
    code, out, _ = in_process_cli("compact", str(pack))
    assert code == 0 and "compacted" in out
    assert contents(pack, "pak") == [("docs/readme.txt", b"hello"), ("cfg/extra.cfg", b"bind x")]
    code, out, _ = in_process_cli("add", str(pack), str(folder))
    assert code == 0 and "2 added" in out


def test_cli_update(tmp_path: Path) -> None:
    members = [(f"t{index}.xtbl", payload(index, 2000)) for index in range(8)]
    pack = build(tmp_path, "vpp", ".vpp_pc", {"flags": 3, "level": 1}, members)
    out_folder = tmp_path / "out"
    assert in_process_cli("extract", str(pack), "-o", str(out_folder), "--manifest")[0] == 0
    (out_folder / "t6.xtbl").write_bytes(b"changed")
    (out_folder / "t2.xtbl").write_bytes(payload(2, 2000))  # rewritten, same bytes: no change
    (out_folder / "new.xtbl").write_bytes(b"new")
    (out_folder / "t0.xtbl").unlink()
    code, out, _ = in_process_cli("update", str(pack), str(out_folder), "--dry-run")
    assert code == 0 and "replace t6.xtbl" in out and "add new.xtbl" in out and "t0" not in out
    code, out, _ = in_process_cli("update", str(pack), str(out_folder), "--delete")
    assert code == 0
    lines = out.strip().splitlines()
    assert sorted(lines[:3]) == ["add new.xtbl (3 bytes)", "remove t0.xtbl", "replace t6.xtbl (7 bytes)"]
    assert "1 added, 1 replaced, 1 removed (rebuilt" in lines[-1]
    expected = [*members[1:6], ("t6.xtbl", b"changed"), members[7], ("new.xtbl", b"new")]
    assert contents(pack, "vpp") == expected
    code, out, _ = in_process_cli("update", str(pack), str(out_folder))
    assert code == 0 and "no member changed" in out


def test_cli_help_is_complete() -> None:
    for command in ("add", "rm", "mv", "update", "compact"):
        code, out, _ = in_process_cli(command, "--help")
        assert code == 0 and "usage: gamepak " + command in out
        assert "--format" in out
        assert "--dry-run" in out
        if command != "compact":
            assert "--compact" in out


def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pak"
    bad.write_bytes(b"PACK" + struct.pack("<ii", 9999, 64))
    code, _, err = in_process_cli("rm", str(bad), "x")
    assert code == 1 and len(err.strip().splitlines()) == 1
    code, _, err = in_process_cli("mv", str(tmp_path / "missing.pak"), "a", "b")
    assert code == 1 and "missing.pak" in err


def test_an_empty_member_added_in_place_never_points_past_the_end(tmp_path: Path) -> None:
    # Found by the random sequences: a PAK with its directory at the start, one member that the
    # growing directory pushes to the end, then an empty member aligned one byte past the end.
    path = build(tmp_path, "pak", ".pak", {"directory": "start", "align": 4}, [("dir/member0.txt", b"x" * 27)])
    with gamepak.edit(path) as editor:
        editor.add("new0.bin", b"")
    assert contents(path, "pak") == [("dir/member0.txt", b"x" * 27), ("new0.bin", b"")]


def test_update_leaves_out_what_create_leaves_out(tmp_path: Path) -> None:
    path = build(tmp_path, "pak", ".pak", {}, [("a.txt", b"a")])
    folder = tmp_path / "x"
    folder.mkdir()
    (folder / "a.txt").write_bytes(b"a")
    (folder / ".b.txt.gamepak-999999-0.tmp").write_bytes(b"left by a killed run")
    (folder / "outside").symlink_to("/etc/hostname")
    code, _, err = in_process_cli("update", str(path), str(folder))
    assert code == 1 and "outside" in err and "symlink" in err
    (folder / "outside").unlink()
    code, _, err = in_process_cli("update", str(path), str(folder))
    assert code == 0, err
    assert contents(path, "pak") == [("a.txt", b"a")]
    assert "temporary" in err


def test_an_edit_removes_temporaries_that_killed_runs_left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gamepak.core.atomic

    path = build(tmp_path, "pak", ".pak", {}, [("a.txt", b"a")])
    monkeypatch.setattr(gamepak.core.atomic, "_scanned", {})  # a new process: the folder not scanned yet
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f".pack.pak.gamepak-{int(dead.stdout)}-0.tmp"
    stale.write_bytes(b"half a pack")
    with gamepak.edit(path) as editor:
        editor.add("b.txt", b"b")
    assert not stale.exists()
    assert contents(path, "pak") == [("a.txt", b"a"), ("b.txt", b"b")]


def test_nested_edit_scratch_folders_carry_the_pid_and_killed_runs_leave_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    import gamepak.core.atomic
    from gamepak.ops.edit_commit import Scratch as _Scratch

    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.setattr(gamepak.core.atomic, "_scanned", {})  # a new process: the folder not scanned yet
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = temp / f".gamepak-edit.gamepak-{int(dead.stdout)}-0.tmp"
    (stale / "1").mkdir(parents=True)
    (stale / "1" / "zone.str2_pc").write_bytes(b"half a nested pack")
    alive = temp / f".gamepak-edit.gamepak-{os.getppid()}-0.tmp"  # another gamepak still running
    alive.mkdir()
    inner = build(tmp_path, "vpp", ".str2_pc", {}, [("a.cpeg_pc", b"a")])
    path = tmp_path / "outer.vpp_pc"
    with gamepak.create(path) as writer:
        writer.add("zone.str2_pc", inner)
    made = []
    original = _Scratch.path_for

    def path_for(self: _Scratch, file_name: str) -> str:
        built = original(self, file_name)
        assert self.folder is not None  # made by the call
        made.append(self.folder)
        return built

    monkeypatch.setattr(_Scratch, "path_for", path_for)
    with gamepak.edit(path) as editor:
        editor.add("zone.str2_pc/b.cpeg_pc", b"b")
    assert made and os.path.basename(made[0]).startswith(f".gamepak-edit.gamepak-{os.getpid()}-")
    assert sorted(os.listdir(temp)) == [alive.name]  # its own folder removed, the dead run's too
    with gamepak.open(path) as outer, outer.open_archive("zone.str2_pc") as nested:
        assert nested.namelist() == ["a.cpeg_pc", "b.cpeg_pc"]


# -- plain `add` and `update` skip click ---------------------------------------------------------


def test_add_and_update_import_nothing_heavy_and_match_in_process(tmp_path: Path) -> None:
    pak = tmp_path / "x.pak"
    with gamepak.create(pak) as writer:
        writer.add("maps/e1m1.bsp", b"bsp")
        writer.add("readme.txt", b"old")
    new = tmp_path / "new.txt"
    new.write_bytes(b"brand new")
    folder = tmp_path / "folder"
    (folder / "maps").mkdir(parents=True)
    (folder / "maps/e1m1.bsp").write_bytes(b"bsp")
    (folder / "readme.txt").write_bytes(b"changed")
    cases = [
        ["add", str(pak), str(new), "--dry-run"],
        ["add", str(pak), str(new), "--name", "readme.txt", "--dry-run"],  # exists: refused, exit 1
        ["add", str(pak), str(tmp_path / "missing.txt")],  # a missing input: exit 1
        ["add", str(tmp_path / "missing.pak"), str(new)],
        ["update", str(pak), str(folder), "--delete", "--dry-run"],
        ["update", str(pak), str(new)],  # not a folder: exit 1
        ["add", str(pak)],  # no FILES: a usage error (exit 2)
    ]
    expected_codes = [0, 1, 1, 1, 0, 1, 2]
    for arguments in cases:
        code, out, err = quick_cli(*arguments)
        assert (code, out) == in_process_cli(*arguments)[:2], arguments
        assert err.endswith("heavy imported: []\n"), arguments
        assert code == expected_codes[cases.index(arguments)], arguments
    code, out, err = quick_cli("add", str(pak), str(new), "--name", "docs/new.txt", "--replace")
    assert code == 0 and err.endswith("heavy imported: []\n") and "1 added (in place" in out
    code, out, err = quick_cli("update", str(pak), str(folder))
    assert code == 0 and err.endswith("heavy imported: []\n") and out.startswith("replace readme.txt (7 bytes)\n")
    with gamepak.open(pak) as archive:
        assert {name: archive.read(name) for name in archive.namelist()} == {
            "maps/e1m1.bsp": b"bsp",
            "readme.txt": b"changed",
            "docs/new.txt": b"brand new",
        }


def test_rm_globs_reach_nested_packs_as_extract_patterns_do(tmp_path: Path) -> None:
    """`rm PACK 'OUTER/GLOB'` removes what `extract PACK 'OUTER/GLOB'` extracts (issue 19 class 14)."""
    from conftest import in_process_cli

    inner = tmp_path / "zone.str2_pc"
    with gamepak.create(inner) as writer:
        for name in ("wall0.lmp", "wall1.lmp", "keep.txt"):
            writer.add(name, name.encode())
    outer = tmp_path / "outer.vpp_pc"
    with gamepak.create(outer) as writer:
        writer.add("zone.str2_pc", inner)
        writer.add("wall9.lmp", b"top level, not inside")
    code, _, _ = in_process_cli("extract", str(outer), "zone.str2_pc/wall*", "-o", str(tmp_path / "out"))
    extracted = sorted(p.name for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert code == 0 and extracted == ["wall0.lmp", "wall1.lmp"]
    code, _, err = in_process_cli("rm", str(outer), "zone.str2_pc/wall*")
    assert code == 0, err
    with gamepak.open(outer) as pack:
        assert pack.namelist() == ["zone.str2_pc", "wall9.lmp"]
        with pack.open_archive("zone.str2_pc") as nested:
            assert nested.namelist() == ["keep.txt"]
    code, _, err = in_process_cli("rm", str(outer), "zone.str2_pc/nothing*")
    assert code == 1 and "no member matches" in err


def test_update_takes_back_a_nested_extraction(tmp_path: Path) -> None:
    """What `extract PACK 'OUTER.str2_pc/*'` writes, `update PACK DIR` takes back into the nested
    pack (issue 19 class 2), with --delete inside it too."""
    from conftest import in_process_cli

    inner = tmp_path / "zone.str2_pc"
    with gamepak.create(inner) as writer:
        for name in ("a.txt", "b.txt", "c.txt"):
            writer.add(name, name.encode() * 10)
    outer = tmp_path / "outer.vpp_pc"
    with gamepak.create(outer) as writer:
        writer.add("zone.str2_pc", inner)
        writer.add("top.txt", b"top")
    folder = tmp_path / "work"
    assert in_process_cli("extract", str(outer), "zone.str2_pc/*", "-o", str(folder))[0] == 0
    (folder / "zone.str2_pc" / "a.txt").write_bytes(b"changed")
    (folder / "zone.str2_pc" / "new.txt").write_bytes(b"new")
    (folder / "zone.str2_pc" / "c.txt").unlink()
    code, _, err = in_process_cli("update", str(outer), str(folder))
    assert code == 0, err
    with gamepak.open(outer) as pack, pack.open_archive("zone.str2_pc") as nested:
        assert pack.namelist() == ["zone.str2_pc", "top.txt"]
        assert nested.read("a.txt") == b"changed" and nested.read("new.txt") == b"new"
        assert "c.txt" in nested.namelist()  # kept without --delete
    code, _, err = in_process_cli("update", "--delete", str(outer), str(folder))
    assert code == 0, err
    with gamepak.open(outer) as pack, pack.open_archive("zone.str2_pc") as nested:
        assert sorted(nested.namelist()) == ["a.txt", "b.txt", "new.txt"]
        assert pack.namelist() == ["zone.str2_pc"]  # top.txt had no file: --delete removes it
    assert gamepak.diff(outer, folder, recursive=True).equal
