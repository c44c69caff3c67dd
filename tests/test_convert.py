"""gamepak convert: members streamed between any two archive formats, limits checked first."""

from __future__ import annotations

import io
import os
import struct
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gamepak
from gamepak.errors import FormatLimitError, GamepakError, NotAnArchiveError, OutputExistsError

from conftest import in_process_cli, sample

# Flat names: every format (RFG's included) can hold them.
FLAT = [("readme.txt", b"read me\n"), ("data.bin", bytes(range(256)) * 300), ("empty.dat", b"")]
# Names with folders: every format but the flat and nameless ones.
FOLDERS = [("maps/e1m1.bsp", b"IBSP" + bytes(5000)), ("sound/a.wav", b"RIFF"), ("progs.dat", b"\x06\x00")]
CHAIN = ["x.pak", "x.jpk", "x.vpp_pc", "x.str2_pc", "x.zip", "x.tar", "x.tgz", "y.pak"]


def make(path: Path, members: list[tuple[str, bytes]], **options: object) -> Path:
    with gamepak.create(path, **options) as writer:  # type: ignore[arg-type]
        for name, data in members:
            writer.add(name, data)
    return path


def members_of(path: Path, format_name: str | None = None) -> list[tuple[str, bytes]]:
    with gamepak.open(path, format_name) as archive:
        return [(entry.name, archive.read(entry)) for entry in archive.infolist()]


def test_round_trip_through_every_format(tmp_path: Path) -> None:
    previous = make(tmp_path / CHAIN[0], FLAT)
    for target in CHAIN[1:]:
        result = gamepak.convert(previous, tmp_path / target)
        assert members_of(tmp_path / target) == FLAT, target
        assert result.member_count == len(FLAT) and not result.renamed
        previous = tmp_path / target
    assert (tmp_path / "y.pak").read_bytes() == (tmp_path / "x.pak").read_bytes()


@pytest.mark.parametrize("chain", [["a.pak", "b.zip", "c.jpk", "d.tar", "e.pak"], ["a.zip", "b.tgz", "c.pak"]])
def test_folder_names_survive_formats_that_hold_them(tmp_path: Path, chain: list[str]) -> None:
    previous = make(tmp_path / chain[0], FOLDERS)
    for target in chain[1:]:
        gamepak.convert(previous, tmp_path / target)
        assert members_of(tmp_path / target) == FOLDERS
        previous = tmp_path / target


@given(
    st.lists(
        st.tuples(st.from_regex(r"[a-z0-9_]{1,12}(\.[a-z]{1,3})?", fullmatch=True), st.binary(max_size=3000)),
        max_size=6,
        unique_by=lambda member: member[0],
    ),
    st.lists(st.sampled_from(["pak", "jpk", "vpp_pc", "str2_pc", "zip", "tar", "tgz"]), min_size=1, max_size=4),
)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_random_members_through_random_formats(
    tmp_path: Path, members: list[tuple[str, bytes]], extensions: list[str]
) -> None:
    previous = make(tmp_path / "start.zip", members, overwrite=True)
    for step, extension in enumerate(extensions):
        target = tmp_path / f"step{step}.{extension}"
        gamepak.convert(previous, target, overwrite=True)
        previous = target
    assert members_of(previous) == members


def test_target_limits_are_all_reported_and_nothing_is_written(tmp_path: Path) -> None:
    long_names = [(f"{index}-" + "n" * 60, b"x") for index in range(3)]
    source = make(tmp_path / "long.zip", [("fine.txt", b"ok"), *long_names])
    with pytest.raises(FormatLimitError) as caught:
        gamepak.convert(source, tmp_path / "out.pak")
    message = str(caught.value)
    assert "3 of 4 members" in message and "nothing was written" in message
    assert all(name in message for name, _ in long_names)
    assert not (tmp_path / "out.pak").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["long.zip"]  # no temporary left either


def test_cli_reports_limits_with_exit_1(tmp_path: Path) -> None:
    source = make(tmp_path / "long.zip", [("a" * 70, b"x"), ("b" * 80, b"y")])
    code, _, err = in_process_cli("convert", str(source), str(tmp_path / "out.pak"))
    assert code == 1
    assert "a" * 70 in err and "b" * 80 in err and "Traceback" not in err
    assert not (tmp_path / "out.pak").exists()


def test_nameless_target_numbers_members_and_says_which_names_were_dropped(tmp_path: Path) -> None:
    source = make(tmp_path / "src.pak", FOLDERS)
    result = gamepak.convert(source, tmp_path / "out.bin", "j2me-table")
    assert result.renamed == [("maps/e1m1.bsp", "0.bsp"), ("sound/a.wav", "1.wav"), ("progs.dat", "2.dat")]
    assert any("no member names" in line and "3 names dropped" in line for line in result.notes)
    assert [data for _, data in members_of(tmp_path / "out.bin", "j2me-table")] == [data for _, data in FOLDERS]
    code, _, err = in_process_cli("convert", "--format", "j2me-sized", str(source), str(tmp_path / "out2.bin"))
    assert code == 0, err
    assert "3 names dropped" in err and "0.bsp <- maps/e1m1.bsp" in err


def test_j2me_to_j2me_keeps_numbers(tmp_path: Path) -> None:
    source = tmp_path / "a.bin"
    with gamepak.create(source, "j2me-offsets") as writer:
        writer.add("0", b"first")
        writer.add("1", b"second")
    result = gamepak.convert(source, tmp_path / "b.bin", "j2me-end-offsets", source_format="j2me-offsets")
    assert result.renamed == [] and result.notes == []
    assert members_of(tmp_path / "b.bin", "j2me-end-offsets") == [("0", b"first"), ("1", b"second")]


def test_flatten_nested_names_members_outer_inner(tmp_path: Path) -> None:
    inner = make(tmp_path / "inner.jpk", [("model.joe", b"JOE"), ("skin.png", b"PNG")])
    outer = make(tmp_path / "outer.pak", [("readme.txt", b"hi"), ("cars.jpk", inner.read_bytes())])
    gamepak.convert(outer, tmp_path / "kept.zip")
    assert members_of(tmp_path / "kept.zip") == [("readme.txt", b"hi"), ("cars.jpk", inner.read_bytes())]
    result = gamepak.convert(outer, tmp_path / "flat.zip", flatten_nested=True)
    assert members_of(tmp_path / "flat.zip") == [
        ("readme.txt", b"hi"),
        ("cars.jpk/model.joe", b"JOE"),
        ("cars.jpk/skin.png", b"PNG"),
    ]
    assert len(result.flattened) == 1 and any("flattened 1 nested pack" in line for line in result.notes)
    code, _, err = in_process_cli("convert", "--flatten-nested", str(outer), str(tmp_path / "flat.tar"))
    assert code == 0, err
    assert [name for name, _ in members_of(tmp_path / "flat.tar")][1:] == ["cars.jpk/model.joe", "cars.jpk/skin.png"]


def pak_with_duplicates() -> bytes:
    members = [(b"a.txt", b"first"), (b"a.txt", b"second")]
    data = b"".join(content for _, content in members)
    directory = b""
    offset = 12
    for name, content in members:
        directory += struct.pack("<56sii", name, offset, len(content))
        offset += len(content)
    return struct.pack("<4sii", b"PACK", 12 + len(data), len(directory)) + data + directory


def test_duplicates_need_allow_duplicates(tmp_path: Path) -> None:
    source = tmp_path / "dup.pak"
    source.write_bytes(pak_with_duplicates())
    with pytest.raises(FormatLimitError, match="allow-duplicates"):
        gamepak.convert(source, tmp_path / "out.zip")
    gamepak.convert(source, tmp_path / "out.zip", allow_duplicates=True)
    # Quake loads the first copy, zip readers the last: the copies swap places, so both load "first".
    assert members_of(tmp_path / "out.zip") == [("a.txt", b"second"), ("a.txt", b"first")]
    code, _, err = in_process_cli("convert", str(source), str(tmp_path / "cli.tar"))
    assert code == 1 and "a.txt" in err
    assert in_process_cli("convert", "--allow-duplicates", str(source), str(tmp_path / "cli.tar"))[0] == 0


def test_unsafe_names_in_the_source_are_refused(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("../evil.txt", b"x")
        archive.writestr("ok.txt", b"y")
    source = tmp_path / "evil.zip"
    source.write_bytes(buffer.getvalue())
    with pytest.raises(GamepakError, match=r"\.\./evil\.txt"):
        gamepak.convert(source, tmp_path / "out.pak")
    assert not (tmp_path / "out.pak").exists()


def test_model_target_and_usage_errors_exit_2(tmp_path: Path) -> None:
    source = make(tmp_path / "a.pak", FLAT)
    with pytest.raises(NotAnArchiveError, match="model import"):
        gamepak.convert(source, tmp_path / "out.joe")
    code, _, err = in_process_cli("convert", str(source), str(tmp_path / "out.joe"))
    assert code == 2 and "model import" in err
    code, _, err = in_process_cli("convert", str(source), str(tmp_path / "out.pak"), "-O", "align=0")
    assert code == 2 and "align" in err
    code, _, err = in_process_cli("convert", str(source), str(tmp_path / "out.zip"), "-O", "compression=rar")
    assert code == 2 and "compression" in err
    assert not list(tmp_path.glob("out*"))


def test_existing_output_needs_overwrite(tmp_path: Path) -> None:
    source = make(tmp_path / "a.pak", FLAT)
    (tmp_path / "b.zip").write_bytes(b"keep")
    with pytest.raises(OutputExistsError):
        gamepak.convert(source, tmp_path / "b.zip")
    assert (tmp_path / "b.zip").read_bytes() == b"keep"
    gamepak.convert(source, tmp_path / "b.zip", overwrite=True)
    assert members_of(tmp_path / "b.zip") == FLAT


def test_options_reach_the_target_writer(tmp_path: Path) -> None:
    source = make(tmp_path / "a.zip", FLAT)
    gamepak.convert(source, tmp_path / "b.pak", align=16, directory="start")
    with gamepak.open(tmp_path / "b.pak") as archive:
        assert all(entry.offset % 16 == 0 for entry in archive.infolist() if entry.size)
        assert archive.header_fields()["directory_offset"] == 12


def test_members_are_streamed_not_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = make(tmp_path / "a.pak", FLAT)

    def no_whole_reads(self: object, member: object) -> bytes:
        raise AssertionError("convert read a member whole")

    monkeypatch.setattr(gamepak.Archive, "read", no_whole_reads)
    gamepak.convert(source, tmp_path / "b.tar")
    monkeypatch.undo()
    assert members_of(tmp_path / "b.tar") == FLAT


def test_real_compressed_vpp_converts_to_zip_and_back(tmp_path: Path) -> None:
    original = sample("vpp/table.vpp_pc")
    gamepak.convert(original, tmp_path / "t.zip")
    gamepak.convert(tmp_path / "t.zip", tmp_path / "t.vpp_pc")
    assert gamepak.diff(original, tmp_path / "t.vpp_pc").to_dict()["changed"] == []
    assert gamepak.diff(original, tmp_path / "t.zip").equal


def test_nameless_source_members_are_named_by_number_and_content(tmp_path: Path) -> None:
    source = tmp_path / "a.bin"
    png = b"\x89PNG\r\n\x1a\n" + bytes(20)
    with gamepak.create(source, "j2me-table") as writer:
        writer.add("0", png)
        writer.add("1", b"plain text\n")
    result = gamepak.convert(source, tmp_path / "b.zip", source_format="j2me-table")
    assert members_of(tmp_path / "b.zip") == [("0.png", png), ("1.txt", b"plain text\n")]
    assert result.renamed == [("0", "0.png"), ("1", "1.txt")]
    gamepak.convert(tmp_path / "b.zip", tmp_path / "c.bin", "j2me-table")
    assert (tmp_path / "c.bin").read_bytes() == source.read_bytes()


@pytest.mark.parametrize("target", ["b.jpk", "b.tar", "b.pak"])
def test_plain_members_are_copied_by_the_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str) -> None:
    import gamepak.core.archive

    big = os.urandom(200_000)
    source = make(tmp_path / "a.pak", [("big.bin", big), ("small.txt", b"s")])
    copies = []
    real_copy = gamepak.core.writer.copy_range

    def counting_copy(*arguments: int) -> None:
        copies.append(arguments[-1])
        real_copy(*arguments)

    monkeypatch.setattr(gamepak.core.writer, "copy_range", counting_copy)
    gamepak.convert(source, tmp_path / target)
    assert copies == [len(big)]
    assert members_of(tmp_path / target) == [("big.bin", big), ("small.txt", b"s")]


def test_folders_are_refused_by_flat_rfg_packfiles_all_at_once(tmp_path: Path) -> None:
    source = make(tmp_path / "mod.pak", FOLDERS)
    with pytest.raises(FormatLimitError) as caught:
        gamepak.convert(source, tmp_path / "mod.vpp_pc")
    message = str(caught.value)
    assert "maps/e1m1.bsp" in message and "sound/a.wav" in message and "progs.dat" not in message
    assert not (tmp_path / "mod.vpp_pc").exists()


@given(
    copies=st.lists(st.sampled_from(["a.txt", "b.txt", "c.txt"]), min_size=1, max_size=8),
    source=st.sampled_from(["zip", "pak", "jpk", "vpp"]),
    target=st.sampled_from(["zip", "pak", "jpk", "vpp"]),
)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_convert_keeps_the_copy_the_game_loads(tmp_path: Path, copies: list[str], source: str, target: str) -> None:
    """Duplicated names (with --allow-duplicates): the copy the source's readers use is the one
    the target's readers use, whichever of first or last each format loads (issue 19 class 12)."""
    import warnings

    extensions = {"zip": ".zip", "pak": ".pak", "jpk": ".jpk", "vpp": ".vpp_pc"}
    source_path = tmp_path / f"source{len(copies)}{extensions[source]}"
    target_path = tmp_path / f"target{len(copies)}{extensions[target]}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about duplicate names
        with gamepak.create(source_path, allow_duplicates=True, overwrite=True) as writer:
            for index, name in enumerate(copies):
                writer.add(name, f"{name} copy {index}".encode())
        gamepak.convert(source_path, target_path, allow_duplicates=True, overwrite=True)
        with gamepak.open(source_path) as before, gamepak.open(target_path) as after:
            for name in set(copies):
                assert after.read(name) == before.read(name)
            assert sorted(after.namelist()) == sorted(before.namelist())


def test_nest_is_the_way_back_from_flatten_nested(tmp_path: Path) -> None:
    """convert --flatten-nested, then --nest, gives the nested packs back (issue 19 class 2)."""
    inner = tmp_path / "zone.str2_pc"
    with gamepak.create(inner) as writer:
        writer.add("a.txt", b"alpha")
        writer.add("b.txt", b"beta")
    deeper = tmp_path / "deep.str2_pc"
    with gamepak.create(deeper) as writer:
        writer.add("c.txt", b"gamma")
    outer = tmp_path / "outer.vpp_pc"
    with gamepak.create(outer) as writer:
        writer.add("readme.txt", b"top")
        writer.add("zone.str2_pc", inner)
        writer.add("deep.str2_pc", deeper)
    flat = tmp_path / "flat.zip"
    gamepak.convert(outer, flat, flatten_nested=True)
    assert sorted(gamepak.open(flat).namelist()) == [
        "deep.str2_pc/c.txt",
        "readme.txt",
        "zone.str2_pc/a.txt",
        "zone.str2_pc/b.txt",
    ]
    back = tmp_path / "back.vpp_pc"
    code, _, err = in_process_cli("convert", str(flat), str(back), "--nest")
    assert code == 0 and "packed 2 nested packs" in err
    with gamepak.open(back) as pack:
        assert pack.namelist() == ["readme.txt", "zone.str2_pc", "deep.str2_pc"]
        with pack.open_archive("zone.str2_pc") as zone:
            assert zone.namelist() == ["a.txt", "b.txt"] and zone.read("b.txt") == b"beta"
    assert gamepak.diff(outer, back, recursive=True).equal


@pytest.mark.parametrize("format_name", ["pak", "zip", "tar"])
def test_a_queued_members_chunks_are_what_its_stream_reads(tmp_path: Path, format_name: str) -> None:
    """A member stored as a plain range is read from the pack without a stream per member
    (PendingMember.chunks): the same chunks as `archive.open(entry)` gives, the same refusal of a
    range that runs past the end, and one progress call after the last chunk."""
    from gamepak.core.archive import PendingMember

    pack = make(tmp_path / f"chunks.{format_name}", FLAT + [("odd.bin", bytes(range(251)) * 3)])
    with gamepak.open(pack) as archive:
        for entry in archive.infolist():
            with archive.open(entry) as stream:
                expected = list(iter(lambda stream=stream: stream.read(100), b""))  # type: ignore[misc]
            calls: list[object] = []
            member = PendingMember(entry.name, None, None, entry.size, origin=(archive, entry))
            member.on_written = calls.append
            assert list(member.chunks(100)) == expected and calls == [member]
        if archive._raw_range(entry) is not None:  # a range past the end: refused before reading
            from gamepak.core.archive import Entry

            bad = Entry("bad.bin", archive.size, entry.offset)
            with pytest.raises(gamepak.CorruptArchiveError, match="runs past the end") as raised:
                archive.open(bad)
            member = PendingMember("bad.bin", None, None, bad.size, origin=(archive, bad))
            with pytest.raises(gamepak.CorruptArchiveError) as again:
                list(member.chunks())
            assert str(again.value) == str(raised.value)
