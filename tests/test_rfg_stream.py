"""RFG compressed data: stored bytes reused by the writer, seek checkpoints, bounded reads, and the
writer's option validators."""

from __future__ import annotations

import io
import random
import tracemalloc
import zlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gamepak
from gamepak.errors import CorruptArchiveError, UnsupportedFeatureError
from gamepak.formats.rfg import inflate, packfile
from gamepak.formats.rfg.packfile import Reader

import rfg_bytes
from conftest import in_process_cli


def words(seed: int, count: int) -> bytes:
    rng = random.Random(seed)
    vocabulary = [b"alpha", b"beta", b"<gamma/>", b"delta", b"\n", b"epsilon=", b"42", b"zeta"]
    return b" ".join(rng.choice(vocabulary) for _ in range(count))


MEMBERS = [(f"m{index}.txt", words(index, 400 + 300 * index)) for index in range(5)]


def write(path: Path, members: list[tuple[str, bytes]], **options: Any) -> Path:
    with gamepak.create(path, overwrite=True, **options) as writer:
        for name, data in members:
            writer.add(name, data)
    return path


def stored_chunks(path: Path) -> list[bytes]:
    """Each member's stored bytes, found from the entries by hand."""
    data = path.read_bytes()
    with gamepak.open(path) as archive:
        assert isinstance(archive, Reader)
        return [
            data[archive.chunk_start(e) : archive.chunk_start(e) + (e.stored_size or 0)] for e in archive.infolist()
        ]


# -- the writer reuses stored bytes --------------------------------------------------------------
def test_compressed_members_are_copied_not_recompressed(tmp_path: Path) -> None:
    source = write(tmp_path / "source.vpp_pc", MEMBERS, flags=1, level=9)
    out = tmp_path / "out.vpp_pc"
    with gamepak.open(source) as archive:
        with gamepak.create(out, flags=1, level=1) as writer:  # level 1 would give other bytes
            for index, entry in enumerate(archive.infolist()):
                if index == 2:
                    writer.add(entry.name, b"replaced")
                else:
                    writer.add_member(entry.name, archive, entry)
    before, after = stored_chunks(source), stored_chunks(out)
    assert [after[i] == before[i] for i in range(5)] == [True, True, False, True, True]
    assert after[2] == zlib.compress(b"replaced", 1)
    with gamepak.open(out) as archive:
        assert [archive.read(e) for e in archive.infolist()] == [d for _, d in MEMBERS[:2]] + [b"replaced"] + [
            d for _, d in MEMBERS[3:]
        ]
        assert archive.verify() == []


@pytest.mark.parametrize("changed", [None, 0, 2, 4])
def test_solid_stream_keeps_the_prefix_before_the_first_change(tmp_path: Path, changed: int | None) -> None:
    source = write(tmp_path / "source.str2_pc", MEMBERS, level=9)
    out = tmp_path / "out.str2_pc"
    expected = [(name, b"changed" * 50 if index == changed else data) for index, (name, data) in enumerate(MEMBERS)]
    with gamepak.open(source) as archive:
        with gamepak.create(out, level=1) as writer:
            for index, entry in enumerate(archive.infolist()):
                if index == changed:
                    writer.add(entry.name, expected[index][1])
                else:
                    writer.add_member(entry.name, archive, entry)
    before, after = stored_chunks(source), stored_chunks(out)
    reused = 5 if changed is None else changed
    assert after[:reused] == before[:reused]  # byte-exact, although written at another level
    if changed is not None:
        assert after[changed] != before[changed]
    with gamepak.open(out) as archive:
        assert [(e.name, archive.read(e)) for e in archive.infolist()] == expected
        assert archive.check() == []
    block = out.read_bytes()[6144:]
    assert zlib.decompressobj().decompress(block) == b"".join(data for _, data in expected)


def test_solid_prefix_respects_changed_alignment(tmp_path: Path) -> None:
    source = write(tmp_path / "source.vpp_pc", MEMBERS[:3], flags=3, align=16)
    out = tmp_path / "out.vpp_pc"
    with gamepak.open(source) as archive:
        with gamepak.create(out, flags=3, align=16) as writer:
            entries = archive.infolist()
            writer.add_member(entries[0].name, archive, entries[0])
            writer.add_member(entries[1].name, archive, entries[1])
        # The pack now ends after member 1: its chunk must not carry the padding it had.
    with gamepak.open(out) as archive:
        assert [archive.read(e) for e in archive.infolist()] == [MEMBERS[0][1], MEMBERS[1][1]]
        assert archive.check() == []
    assert stored_chunks(out)[0] == stored_chunks(source)[0]


@settings(max_examples=25, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 3000), min_size=1, max_size=5),
    change=st.integers(0, 5),
    align=st.sampled_from([1, 16, 64]),
)
def test_solid_reuse_round_trip(
    tmp_path_factory: pytest.TempPathFactory, sizes: list[int], change: int, align: int
) -> None:
    folder = tmp_path_factory.mktemp("reuse")
    members = [(f"f{index}", words(index * 7 + size, size // 5)[:size]) for index, size in enumerate(sizes)]
    source = write(folder / "s.vpp_pc", members, flags=3, align=align)
    expected = [(name, b"new" * index if index == change else data) for index, (name, data) in enumerate(members)]
    out = folder / "o.vpp_pc"
    with gamepak.open(source) as archive:
        with gamepak.create(out, flags=3, align=align, level=2) as writer:
            for index, entry in enumerate(archive.infolist()):
                if index == change:
                    writer.add(entry.name, expected[index][1])
                else:
                    writer.add_member(entry.name, archive, entry)
    with gamepak.open(out) as archive:
        assert [(e.name, archive.read(e)) for e in archive.infolist()] == expected
        assert archive.verify() == []


# -- seek checkpoints -------------------------------------------------------------------------------
@pytest.mark.parametrize("flags", [1, 3])
def test_seeking_back_resumes_from_a_checkpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: int) -> None:
    monkeypatch.setattr(inflate, "CHECKPOINT_SPACING", 64 << 10)
    monkeypatch.setattr(inflate, "_OUTPUT_STEP", 8 << 10)
    monkeypatch.setattr(packfile, "SMALL_MEMBER", 0)
    big = words(99, 400_000)  # about 2.4 MiB
    path = write(tmp_path / "big.vpp_pc", [("head.txt", b"x" * 1000), ("big.txt", big)], flags=flags, level=1)
    with gamepak.open(path) as archive:
        assert isinstance(archive, Reader)
        with archive.open("big.txt") as stream:
            stream.seek(len(big) - 100)
            assert stream.read(100) == big[-100:]
            first_pass = archive.inflated_bytes
            assert first_pass >= len(big) - 100
            for target in (len(big) // 2, 1000, len(big) // 3, len(big) - 5000):
                before = archive.inflated_bytes
                stream.seek(target)
                assert stream.read(200) == big[target : target + 200]
                # From the nearest checkpoint, not from the start of the stream.
                assert archive.inflated_bytes - before <= (64 << 10) + 3 * (8 << 10) + (1 << 20) // 64
        assert len(archive._checkpoints) == 1
        (points,) = archive._checkpoints.values()
        # A checkpoint holds its decompressor's state and little unconsumed input (a memory cap).
        assert len(points) > 10
        assert all(len(point.decompressor.unconsumed_tail) <= inflate._FEED_STEP for point in points._points)


def test_checkpoints_stay_under_their_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    points = inflate.Checkpoints()
    monkeypatch.setattr(inflate, "MAX_CHECKPOINTS", 8)
    for position in range(0, 100 * points.spacing, points.spacing):
        if points.due(position):
            points.add(inflate.Checkpoint(None, 0, 0, position))
    assert len(points) <= 8
    assert points.before(50 * (4 << 20)) is not None


# -- bounded reads ----------------------------------------------------------------------------------
def _zeros_stream(mebibytes: int) -> bytes:
    """A zlib stream of `mebibytes` MiB of zeros, ~1 KiB per MiB: after a full flush the
    compressor starts afresh, so one flushed MiB is repeated instead of compressing them all."""
    compressor = zlib.compressobj(9)
    first = compressor.compress(bytes(1 << 20)) + compressor.flush(zlib.Z_FULL_FLUSH)
    block = compressor.compress(bytes(1 << 20)) + compressor.flush(zlib.Z_FULL_FLUSH)
    return first + block * (mebibytes - 1)


def _bomb_pack(declared: int, payload: bytes, flags: int = 1) -> bytes:
    name = b"bomb.bin"
    header = rfg_bytes.header(
        flags=flags,
        count=1,
        file_size=6144 + len(payload),
        entries_size=rfg_bytes.ENTRY.size,
        names_size=len(name) + 1,
        data_size=declared,
        compressed_size=len(payload),
    )
    entry = rfg_bytes.entry(0, 0, name, declared, len(payload))
    return header + entry.ljust(2048, b"\0") + (name + b"\0").ljust(2048, b"\0") + payload


def test_zeros_stream_helper_inflates_as_claimed() -> None:
    stream = _zeros_stream(3)
    assert zlib.decompressobj().decompress(stream) == bytes(3 << 20)


@pytest.mark.parametrize("flags", [1, 3])
def test_declared_size_beyond_what_zlib_can_hold_fails_before_inflating(flags: int) -> None:
    payload = _zeros_stream(1024)  # ~1 MiB of zlib that inflates to 1 GiB
    assert len(payload) < 2 << 20
    archive = gamepak.open(io.BytesIO(_bomb_pack(0xFFFFFFF0, payload, flags)), name="b.vpp_pc")
    assert isinstance(archive, Reader)
    tracemalloc.start()
    try:
        with pytest.raises(CorruptArchiveError, match="more than its .* bytes of zlib data can hold") as caught:
            archive.read("bomb.bin")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.member == "bomb.bin" and caught.value.offset == 6144
    assert archive.inflated_bytes == 0 and peak < 8 << 20
    assert any("can hold" in problem for problem in archive.verify())


def test_output_never_passes_the_declared_size() -> None:
    payload = _zeros_stream(64)  # inflates to 64 MiB; 100 KiB declared
    archive = gamepak.open(io.BytesIO(_bomb_pack(100 << 10, payload)), name="b.vpp_pc")
    assert isinstance(archive, Reader)
    with pytest.raises(CorruptArchiveError, match="more than its declared size"):
        archive.read("bomb.bin")
    assert archive.inflated_bytes <= (100 << 10) + 1


# -- option validators ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("level", "abc"),
        ("level", 12),
        ("flags", 7),
        ("align", 0),
        ("finish", "maybe"),
        ("runtime", "0102"),
        ("window_bits", 30),
        ("mem_level", 0),
        ("strategy", 9),
        ("path_name", "x" * 256),
    ],
)
def test_bad_option_values_are_refused_up_front(tmp_path: Path, option: str, value: object) -> None:
    with pytest.raises(UnsupportedFeatureError, match=option):
        options: dict[str, Any] = {option: value}
        gamepak.create(tmp_path / "x.vpp_pc", **options)
    assert not list(tmp_path.iterdir())


def test_option_values_are_normalised(tmp_path: Path) -> None:
    writer = gamepak.create(tmp_path / "x.str2_pc", level="3", finish="no", runtime="0x" + "ab" * 12, flags=None)
    assert (writer.options["level"], writer.options["finish"], writer.options["runtime"]) == (3, False, "ab" * 12)
    writer.abort()


def test_cli_refuses_a_bad_option_value(tmp_path: Path) -> None:
    member = tmp_path / "a.txt"
    member.write_bytes(b"a")
    code, _, err = in_process_cli("create", str(tmp_path / "x.vpp_pc"), str(member), "-O", "finish=maybe")
    assert code != 0 and "finish" in err and "internal error" not in err


@settings(max_examples=30, deadline=None)
@given(
    flags=st.sampled_from([1, 3]),
    seeks=st.lists(st.tuples(st.integers(0, 300_000), st.integers(1, 40_000)), min_size=1, max_size=12),
)
def test_random_seeks_read_what_slicing_gives(
    tmp_path_factory: pytest.TempPathFactory, flags: int, seeks: list[tuple[int, int]]
) -> None:
    data = words(5, 50_000)  # about 300 KiB
    path = write(tmp_path_factory.mktemp("seek") / "s.vpp_pc", [("a", b"head"), ("b", data)], flags=flags, level=1)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(inflate, "CHECKPOINT_SPACING", 16 << 10)
        patch.setattr(inflate, "_OUTPUT_STEP", 4 << 10)
        patch.setattr(packfile, "SMALL_MEMBER", 0)
        with gamepak.open(path) as archive, archive.open("b") as stream:
            for offset, size in seeks:
                stream.seek(offset)
                assert stream.read(size) == data[offset : offset + size]


# -- after a change, the solid stream falls back in step with the source ------------------------
BIG_MEMBERS = [(f"t{index:02}.xtbl", words(100 + index, 900)) for index in range(24)]  # ~5 KiB each


def test_solid_stream_copies_chunks_again_32_kib_after_a_change(tmp_path: Path) -> None:
    source = write(tmp_path / "source.str2_pc", BIG_MEMBERS, level=9)
    out = tmp_path / "out.str2_pc"
    changed = 8
    expected = [(name, b"changed" * 99 if index == changed else data) for index, (name, data) in enumerate(BIG_MEMBERS)]
    with gamepak.open(source) as archive:
        with gamepak.create(out, level=1) as writer:  # level 1: a recompressed chunk differs
            for index, entry in enumerate(archive.infolist()):
                if index == changed:
                    writer.add(entry.name, expected[index][1])
                else:
                    writer.add_member(entry.name, archive, entry)
    before, after = stored_chunks(source), stored_chunks(out)
    # The first member whose preceding 32 KiB of output are all unchanged members.
    in_step = changed + 1
    while sum(len(data) for _, data in BIG_MEMBERS[changed + 1 : in_step]) < 32 << 10:
        in_step += 1
    assert in_step < len(BIG_MEMBERS) - 2
    assert after[:changed] == before[:changed]
    assert all(after[index] != before[index] for index in range(changed, in_step))
    assert after[in_step:] == before[in_step:]
    with gamepak.open(out) as archive:
        assert isinstance(archive, Reader)
        # One valid stream: a plain zlib decoder gives every member back.
        block = out.read_bytes()[archive.data_start :]
        assert zlib.decompressobj().decompress(block) == b"".join(data for _, data in expected)
        assert [(e.name, archive.read(e)) for e in archive.infolist()] == expected
        assert archive.check() == []


@settings(max_examples=25, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 12000), min_size=1, max_size=14),
    edits=st.lists(st.tuples(st.sampled_from(["replace", "remove", "keep"]), st.integers(0, 13)), max_size=3),
    align=st.sampled_from([1, 16, 64]),
)
def test_solid_stream_in_step_round_trip(
    tmp_path_factory: pytest.TempPathFactory, sizes: list[int], edits: list[tuple[str, int]], align: int
) -> None:
    folder = tmp_path_factory.mktemp("instep")
    members = [(f"f{index}", words(index * 13 + size, size // 4)[:size]) for index, size in enumerate(sizes)]
    source = write(folder / "s.vpp_pc", members, flags=3, align=align, level=6)
    plan: list[tuple[str, bytes | None]] = [(name, None) for name, _ in members]
    for action, index in edits:
        if index >= len(plan):
            continue
        if action == "replace":
            plan[index] = (plan[index][0], words(index, 50 + index * 300))
        elif action == "remove":
            del plan[index]
    out = folder / "o.vpp_pc"
    data = dict(members)
    with gamepak.open(source) as archive:
        with gamepak.create(out, flags=3, align=align, level=1) as writer:
            for name, replacement in plan:
                if replacement is None:
                    writer.add_member(name, archive, archive.getinfo(name))
                else:
                    writer.add(name, replacement)
    expected = [(name, data[name] if replacement is None else replacement) for name, replacement in plan]
    with gamepak.open(out) as archive:
        assert isinstance(archive, Reader)
        assert [(e.name, archive.read(e)) for e in archive.infolist()] == expected
        assert archive.verify() == []
        if expected:
            entries = archive.infolist()
            end = entries[-1].offset + entries[-1].size
            stream = zlib.decompressobj().decompress(out.read_bytes()[archive.data_start :])
            assert len(stream) == end
            for entry, (_, content) in zip(entries, expected):
                assert stream[entry.offset : entry.offset + entry.size] == content


# -- window checkpoints ---------------------------------------------------------------------------
def test_a_pass_with_seek_points_leaves_window_checkpoints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inflate, "CHECKPOINT_SPACING", 16 << 10)
    source = write(tmp_path / "source.str2_pc", BIG_MEMBERS, level=9)
    with gamepak.open(source) as archive:
        assert isinstance(archive, Reader)
        block = zlib.decompressobj().decompress(source.read_bytes()[archive.data_start :])
        archive.keep_seek_points()
        assert [b"".join(chunks) for _, chunks in archive.iter_data()] == [data for _, data in BIG_MEMBERS]
        (points,) = archive._checkpoints.values()
        # isal's decompressor cannot be copied: the pass leaves windows where chunks start.
        assert len(points) >= 5 and all(point.decompressor is None and point.window for point in points._points)
        entries = archive.infolist()
        for entry in entries[1:]:
            before = archive.inflated_bytes
            start = max(0, entry.offset - (32 << 10))
            assert archive.plain_range(start, entry.offset) == block[start : entry.offset]
            # Resumed near the target, not from the start of the stream.
            assert archive.inflated_bytes - before <= (16 << 10) + 2 * len(BIG_MEMBERS[0][1]) + (32 << 10)
