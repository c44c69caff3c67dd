"""`verify --engine`: the engines' limits on hand-made files built from the spec's byte layouts
(quake-assets.md, quake-pak.txt), each limit broken and each limit just kept, and no finding on
the real samples."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from quake_bytes import bsp_bytes, miptex_bytes, wad_bytes

import gamepak
from gamepak.core.archive import Problem
from gamepak.formats.quake import limits
from gamepak.formats.quake.limits import ANY, GOLDSRC, KNOWN, QUAKE, QUAKESPASM, Engine

from conftest import in_process_cli, quick_cli, sample

MDL_HEADER = struct.Struct("<4si3f3ff3fiiiiiiiif")


def mdl(
    *,
    width: int = 8,
    height: int = 4,
    vertices: int = 3,
    triangles: int = 1,
    skins: int = 1,
    poses: int = 1,
) -> bytes:
    """An IDPO v6 model laid out as the spec says: header, `skins` single skins, st-vertices,
    triangles (all over vertices 0, 1, 2) and `poses` single frames."""
    out = MDL_HEADER.pack(
        b"IDPO", 6, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 10.0, 0.0, 0.0, 0.0,
        skins, width, height, vertices, triangles, poses, 0, 0, 1.0,
    )  # fmt: skip
    out += (struct.pack("<i", 0) + bytes(width * height)) * skins
    out += struct.pack("<iii", 0, 0, 0) * vertices
    out += struct.pack("<iiii", 1, 0, 1, 2) * triangles
    frame = struct.pack("<i", 0) + bytes(8) + b"pose".ljust(16, b"\0") + bytes(4 * vertices)
    return out + frame * poses


def pak(members: list[tuple[bytes, bytes]]) -> bytes:
    """A PAK as quake-pak.txt lays it out: header, data from 12, the directory last (raw
    56-byte name fields, so a name may fill its field)."""
    body = b""
    directory = b""
    for name, data in members:
        directory += struct.pack("<56sII", name, 12 + len(body), len(data))
        body += data
    return b"PACK" + struct.pack("<II", 12 + len(body), len(directory)) + body + directory


def messages(problems: list[Problem], severity: str | None = None) -> list[str]:
    return [problem.message for problem in problems if severity is None or problem.severity == severity]


def with_lump(index: int, data: bytes, *, bsp2: bool = False) -> bytes:
    """The spec-built one-face map with lump `index` replaced by `data` (appended at the end)."""
    base = bsp_bytes(bsp2=bsp2)
    return bsp_bytes(lumps={index: (len(base), len(data))}, bsp2=bsp2) + data


# --- MDL ---


def test_a_201_pixel_tall_skin_stops_vanilla_quake_only() -> None:
    data = mdl(height=201)
    (problem,) = limits.check_mdl(data, QUAKE, "tall.mdl")
    assert problem.severity == "error"
    assert "skin height 201 is over quake's limit of 200" in problem.message
    assert problem.offset == 56
    assert limits.check_mdl(data, QUAKESPASM, "tall.mdl") == []
    assert limits.check_mdl(data, GOLDSRC, "tall.mdl") == []
    assert limits.check_mdl(data, ANY, "tall.mdl") == []
    assert limits.check_mdl(mdl(height=200), QUAKE, "ok.mdl") == []


def test_a_481_pixel_tall_skin_is_a_quakespasm_warning_and_a_goldsrc_error() -> None:
    data = mdl(height=481)
    assert messages(limits.check_mdl(data, QUAKESPASM, "x"), "warning") == [
        "skin height 481 is over quakespasm's limit of 480 "
        "(MAX_LBM_HEIGHT in Quake/glquake.h; Con_DWarning in QuakeSpasm Quake/gl_model.c)"
    ]
    assert len(messages(limits.check_mdl(data, GOLDSRC, "x"), "error")) == 1
    assert limits.check_mdl(data, ANY, "x") == []


def test_vertex_triangle_skin_and_pose_counts() -> None:
    assert "vertex count 2001 is over" in messages(limits.check_mdl(mdl(vertices=2001), QUAKE, "x"))[0]
    assert limits.check_mdl(mdl(vertices=2000), QUAKE, "x") == []
    # Every known engine stops past 2000 vertices, so the default reports it too.
    assert messages(limits.check_mdl(mdl(vertices=2001), ANY, "x"), "error")
    triangles = mdl(triangles=4097)
    assert (
        "triangle count 4097 is over quakespasm's limit of 4096"
        in messages(limits.check_mdl(triangles, QUAKESPASM, "x"))[0]
    )
    assert limits.check_mdl(triangles, QUAKE, "x") == []  # WinQuake's loader has no triangle limit
    assert limits.check_mdl(mdl(triangles=4096), QUAKESPASM, "x") == []
    assert "skin count 33" in messages(limits.check_mdl(mdl(skins=33), QUAKESPASM, "x"))[0]
    assert (
        "pose count (frames and frame group members) 257"
        in messages(limits.check_mdl(mdl(poses=257), QUAKESPASM, "x"))[0]
    )
    assert limits.check_mdl(mdl(poses=256, skins=32), QUAKESPASM, "x") == []


def test_skin_width_not_a_multiple_of_4() -> None:
    data = mdl(width=10)
    assert "skin width 10 is not a multiple of 4" in messages(limits.check_mdl(data, QUAKE, "x"), "error")[0]
    assert limits.check_mdl(data, QUAKESPASM, "x") == []


def test_verify_engine_quake_flags_a_201_pixel_tall_skin(tmp_path: Path) -> None:
    path = tmp_path / "tall.mdl"
    path.write_bytes(mdl(height=201))
    code, out, err = in_process_cli("verify", "--engine", "quake", str(path))
    assert code == 1
    assert f"error: {path}: skin height 201 is over quake's limit of 200" in err
    code, out, err = in_process_cli("verify", "--engine", "quakespasm", str(path))
    assert (code, err) == (0, "")
    assert "OK (1 model)" in out
    code, _, _ = in_process_cli("verify", str(path))  # the default: every engine but vanilla loads it
    assert code == 0


def test_verify_engine_warnings_fail_only_under_strict(tmp_path: Path) -> None:
    path = tmp_path / "taller.mdl"
    path.write_bytes(mdl(height=481))
    code, out, err = in_process_cli("verify", "--engine", "quakespasm", str(path))
    assert code == 0 and "warning:" in err and "1 warning" in out
    code, _, _ = in_process_cli("verify", "--engine", "quakespasm", "--strict", str(path))
    assert code == 1


def test_a_broken_model_is_an_error_naming_why() -> None:
    cut = mdl()[:-10]
    (problem,) = limits.check_mdl(cut, QUAKESPASM, "cut.mdl")  # QuakeSpasm's pose limit: the whole model is read
    assert problem.severity == "error" and "not a model the engine can load" in problem.message
    assert limits.check_mdl(cut, QUAKE, "cut.mdl") == []  # only the header counts for vanilla
    (short,) = limits.check_mdl(cut[:80], QUAKE, "cut.mdl")
    assert "shorter than its 84-byte header" in short.message


def test_the_default_check_of_a_pack_reads_model_headers_only(tmp_path: Path) -> None:
    path = tmp_path / "models.pak"
    path.write_bytes(pak([(b"progs/a.mdl", mdl(vertices=2001)), (b"progs/b.mdl", mdl())]))
    code, _, err = quick_cli("verify", str(path))
    assert code == 1 and "member 'progs/a.mdl': vertex count 2001 is over every known engine's limit of 2000" in err
    assert err.rstrip().endswith("heavy imported: []")  # no numpy: the headers are enough


def test_verify_rejects_an_unknown_engine(tmp_path: Path) -> None:
    path = tmp_path / "a.mdl"
    path.write_bytes(mdl())
    code, _, err = in_process_cli("verify", "--engine", "doom", str(path))
    assert code == 2 and "doom" in err


def test_the_cli_names_every_engine_table() -> None:
    from gamepak.cli import reading

    assert reading.ENGINE_NAMES == limits.ENGINE_NAMES


# --- PAK ---


def test_a_56_byte_pak_name_is_over_every_engines_limit(tmp_path: Path) -> None:
    path = tmp_path / "long.pak"
    long_name = b"maps/" + b"n" * 47 + b".bsp"  # 56 bytes: no room for the NUL
    assert len(long_name) == 56
    path.write_bytes(pak([(long_name, b"x"), (b"ok.txt", b"y")]))
    with gamepak.open(path) as archive:
        found = messages(limits.check_pak(archive, QUAKE), "error")
        assert found == [
            f"member {long_name.decode()!r}: name length 56 bytes is over quake's limit of 55 "
            "(dpackfile_t name[56] in WinQuake/common.c)"
        ]
        assert "every known engine's limit of 55" in messages(limits.check_pak(archive, ANY))[0]
    code, _, err = in_process_cli("verify", "--engine", "quakespasm", str(path))
    assert code == 1 and "name length 56 bytes is over quakespasm's limit of 55" in err


def test_a_55_byte_pak_name_passes(tmp_path: Path) -> None:
    path = tmp_path / "ok.pak"
    path.write_bytes(pak([(b"m" * 55, b"x")]))
    with gamepak.open(path) as archive:
        assert limits.check_pak(archive, QUAKE) == []


def test_more_than_2048_members_stop_quake_but_not_the_default(tmp_path: Path) -> None:
    path = tmp_path / "many.pak"
    path.write_bytes(pak([(f"f{number:05}".encode(), b"") for number in range(2049)]))
    with gamepak.open(path) as archive:
        assert messages(limits.check_pak(archive, QUAKE)) == [
            "member count 2049 is over quake's limit of 2048 "
            "(MAX_FILES_IN_PACK; Sys_Error in WinQuake/common.c COM_LoadPackFile)"
        ]
        assert limits.check_pak(archive, ANY) == []  # Quake II's engine takes 4096


def test_pak_members_are_checked_by_what_they_are(tmp_path: Path) -> None:
    path = tmp_path / "mod.pak"
    quake2_map = b"IBSP" + struct.pack("<i", 38) + bytes(152)
    studio_model = b"IDST" + struct.pack("<i", 10) + bytes(200)
    path.write_bytes(
        pak(
            [
                (b"progs/tall.mdl", mdl(height=201)),
                (b"maps/q2.bsp", quake2_map),
                (b"models/hl.mdl", studio_model),
                (b"maps/fence.bsp", with_lump(9, bytes(8 * 32768))),
                (b"gfx.wad", wad_bytes([(b"CONCHARS", 0x44, bytes(128 * 128))])),
            ]
        )
    )
    with gamepak.open(path) as archive:
        problems = limits.check_pak(archive, QUAKE)
    by_member = {problem.member for problem in problems}
    assert by_member == {"progs/tall.mdl", "maps/fence.bsp", "gfx.wad"}
    assert any(m.startswith("member 'progs/tall.mdl': skin height 201") for m in messages(problems))
    code, _, err = in_process_cli("verify", "--engine", "quake", str(path))
    assert code == 1 and "member 'maps/fence.bsp': clipnodes count 32768" in err


# --- miptex names and sizes ---


def test_a_16_character_miptex_name_in_a_map() -> None:
    data = bsp_bytes(b"sixteen_chars_ab")
    found = limits.check_bsp(data, QUAKE, "m.bsp")
    assert messages(found, "warning") == [
        "texture 0 'sixteen_chars_ab': name length (bytes) 16 is over quake's limit of 15 "
        "(miptex_t name[16] in WinQuake/bspfile.h, copied in WinQuake/model.c)"
    ]
    assert limits.check_bsp(bsp_bytes(b"fifteen_chars_a"), QUAKE, "m.bsp") == []
    assert limits.check_bsp(data, ANY, "m.bsp") == []


def test_a_24x24_texture_in_a_wad(tmp_path: Path) -> None:
    path = tmp_path / "textures.wad"
    path.write_bytes(
        wad_bytes([(b"odd", 0x44, miptex_bytes(b"odd", 24, 24)), (b"fine", 0x44, miptex_bytes(b"fine", 32, 16))])
    )
    with gamepak.open(path) as archive:
        quake = limits.check_wad(archive, QUAKE)
        assert [problem.severity for problem in quake] == ["error", "error"]
        assert "lump 'odd' miptex 'odd': width 24 is not a multiple of 16" in quake[0].message
        assert "height 24" in quake[1].message
        assert {problem.severity for problem in limits.check_wad(archive, QUAKESPASM)} == {"warning"}
        assert limits.check_wad(archive, ANY) == []


def test_a_24_pixel_wide_texture_in_a_map() -> None:
    data = bytearray(bsp_bytes())
    (textures_offset,) = struct.unpack_from("<i", data, 4 + 8 * 2)
    struct.pack_into("<I", data, textures_offset + 8 + 16, 24)  # the miptex's width field
    found = limits.check_bsp(bytes(data), GOLDSRC, "m.bsp")
    assert messages(found, "error") == [
        "texture 0 'wall': width 24 is not a multiple of 16, as goldsrc's loader needs "
        "(Sys_Error 'not 16 aligned' in ReHLDS rehlds/engine/model.cpp Mod_LoadTextures)"
    ]


# --- BSP counts and versions ---


def test_too_many_clipnodes() -> None:
    data = with_lump(9, bytes(8 * 32768))
    assert messages(limits.check_bsp(data, QUAKE, "m.bsp"), "error") == [
        "clipnodes count 32768 is over quake's limit of 32767 (dclipnode_t short children in WinQuake/bspfile.h)"
    ]
    assert len(messages(limits.check_bsp(data, QUAKESPASM, "m.bsp"), "warning")) == 1
    assert limits.check_bsp(data, ANY, "m.bsp") == []
    assert limits.check_bsp(with_lump(9, bytes(8 * 32767)), QUAKE, "m.bsp") == []


def test_too_many_leafs_stop_quakespasm() -> None:
    data = with_lump(10, bytes(28 * 32768))
    (problem,) = limits.check_bsp(data, QUAKESPASM, "m.bsp")
    assert problem.severity == "error" and "leafs count 32768 is over quakespasm's limit of 32767" in problem.message
    assert "Host_Error" in problem.message


def test_bsp2_lifts_the_bsp29_counts_and_only_quakespasm_loads_it() -> None:
    data = with_lump(9, bytes(12 * 32768), bsp2=True)
    assert limits.check_bsp(data, QUAKESPASM, "m.bsp") == []
    (problem,) = limits.check_bsp(data, QUAKE, "m.bsp")
    assert problem.severity == "error" and "map version BSP2 is not one quake's loader takes (BSP29" in problem.message
    assert limits.check_bsp(data, ANY, "m.bsp") == []


def test_world_visleafs_past_the_decompression_buffer() -> None:
    data = bytearray(bsp_bytes())
    (models_offset,) = struct.unpack_from("<i", data, 4 + 8 * 14)
    struct.pack_into("<i", data, models_offset + 52, 8193)
    assert "world visleafs 8193 is over quake's limit of 8192" in messages(limits.check_bsp(bytes(data), QUAKE, "m"))[0]
    assert messages(limits.check_bsp(bytes(data), QUAKESPASM, "m"), "warning")


def test_too_many_models() -> None:
    data = with_lump(14, struct.pack("<9f4iiii", *([0.0] * 9), 0, -1, -1, -1, 0, 0, 1) * 257)
    assert (
        "model count (world and brush entities) 257 is over quake's limit of 256"
        in messages(limits.check_bsp(data, QUAKE, "m"))[0]
    )
    assert limits.check_bsp(data, GOLDSRC, "m") == []


# --- gfx.wad ---


def test_gfx_wad_without_the_lumps_the_engine_looks_up(tmp_path: Path) -> None:
    path = tmp_path / "gfx.wad"
    path.write_bytes(wad_bytes([(b"DISC", 0x42, struct.pack("<ii", 1, 1) + b"\0")]))
    with gamepak.open(path) as archive:
        quake = limits.check_wad(archive, QUAKE)
        spasm = limits.check_wad(archive, QUAKESPASM)
        default = limits.check_wad(archive, ANY)
    assert all(problem.severity == "error" for problem in quake)
    assert len(quake) == len(QUAKE.gfx_lumps) - 1  # all but DISC (names are case-insensitive)
    assert messages(spasm, "error") == [
        "gfx.wad has no 'conchars' lump, which the engine looks up at start-up "
        "(Sys_Error in Quake/gl_draw.c Draw_LoadPics)"
    ]
    assert messages(default) == messages(spasm, "error")
    other = tmp_path / "other.wad"
    other.write_bytes(path.read_bytes())
    with gamepak.open(other) as archive:
        assert limits.check_wad(archive, QUAKE) == []  # only gfx.wad is looked up


def test_gfx_wad_lumps_follow_each_engines_loader(tmp_path: Path) -> None:
    path = tmp_path / "gfx.wad"
    lumps = [(name.encode(), 0x42, struct.pack("<ii", 1, 1) + b"\0") for name in QUAKE.gfx_lumps if name != "ram"]
    path.write_bytes(wad_bytes(lumps))
    with gamepak.open(path) as archive:
        assert messages(limits.check_wad(archive, QUAKE)) == [
            "gfx.wad has no 'ram' lump, which the engine looks up at start-up "
            "(W_GetLumpinfo (WinQuake/wad.c) calls Sys_Error for a missing lump)"
        ]
        (warning,) = limits.check_wad(archive, QUAKESPASM)  # QuakeSpasm draws a blank and goes on
        assert warning.severity == "warning" and "no 'ram' lump" in warning.message
        assert limits.check_wad(archive, ANY) == []


def test_gfx_wad_must_be_wad2(tmp_path: Path) -> None:
    path = tmp_path / "gfx.wad"
    lumps = [(name.encode(), 0x42, struct.pack("<ii", 1, 1) + b"\0") for name in QUAKE.gfx_lumps]
    path.write_bytes(wad_bytes(lumps, magic=b"WAD3"))
    with gamepak.open(path) as archive:
        assert messages(limits.check_wad(archive, QUAKE)) == [
            "gfx.wad is b'WAD3', not WAD2 (Sys_Error 'doesn't have WAD2 id' in WinQuake/wad.c W_LoadWadFile)"
        ]
    path.write_bytes(wad_bytes(lumps))
    with gamepak.open(path) as archive:
        assert limits.check_wad(archive, QUAKE) == []


# --- the default table ---


def test_the_default_keeps_only_what_every_engine_refuses() -> None:
    for key, rule in ANY.rules.items():
        assert rule is not None and rule.severity == "error"
        for engine in KNOWN:
            if key in engine.rules:
                theirs = engine.rules[key]
                assert theirs is not None and theirs.severity == "error" and theirs.limit <= rule.limit
    assert "mdl.skin_height" not in ANY.rules and "miptex.size_multiple" not in ANY.rules
    assert ANY.rules["mdl.vertices"].limit == 2000  # type: ignore[union-attr]


@settings(max_examples=30, deadline=None)
@given(
    height=st.integers(1, 600),
    width=st.sampled_from([4, 6, 8, 12]),
    vertices=st.integers(3, 2100),
    triangles=st.sampled_from([1, 4096, 4097]),
)
def test_what_the_default_reports_every_engine_reports(height: int, width: int, vertices: int, triangles: int) -> None:
    data = mdl(width=width, height=height, vertices=vertices, triangles=triangles)
    default = limits.check_mdl(data, ANY, "x")
    assert all(problem.severity == "error" for problem in default)
    for engine in KNOWN:
        theirs = messages(limits.check_mdl(data, engine, "x"), "error")
        for problem in default:
            field = problem.message.split(" is over ")[0]
            assert any(message.startswith(field) for message in theirs), (engine.name, problem.message)


# --- the real files ---

SAMPLES = [
    "quake/flame2.mdl",
    "quake/s_light.mdl",
    "quake/v_rock2.mdl",
    "quake/s_explod.spr",
    "quake/q1_cube.bsp",
    "quake/q1_detail_fence2.bsp",
    "quake/gfx.wad",
    "pak/quakespasm.pak",
]


@pytest.mark.parametrize("engine", [ANY, *KNOWN], ids=lambda engine: engine.name)
@pytest.mark.parametrize("relative", SAMPLES)
def test_no_finding_on_the_game_files(relative: str, engine: Engine) -> None:
    path = sample(relative)
    loose = limits.check_loose(str(path), engine)
    if loose is not None:
        assert loose[0] == []
        return
    with gamepak.open(path) as archive:
        assert limits.check_archive(archive, engine) == []


@pytest.mark.parametrize("relative", SAMPLES)
def test_verify_engine_quake_passes_the_samples(relative: str) -> None:
    code, _out, err = in_process_cli("verify", "--engine", "quake", str(sample(relative)))
    assert code == 0, err
    assert "error:" not in err


def test_the_written_out_any_is_the_most_permissive_of_the_known_engines() -> None:
    from gamepak.formats.quake import engines

    derived = engines._most_permissive()
    assert ANY.rules == derived.rules and list(ANY.rules) == list(derived.rules)
    assert ANY.bsp_versions == derived.bsp_versions
    assert ANY.gfx_wad2 == derived.gfx_wad2
    assert ANY.gfx_lumps == derived.gfx_lumps
    assert (ANY.name, ANY.title) == (derived.name, derived.title)


def test_engines_by_name() -> None:
    assert limits.engine_named(None) is ANY and limits.engine_named("any") is ANY
    assert [limits.engine_named(name) for name in limits.ENGINE_NAMES] == list(KNOWN)
    assert {engine.name: engine for engine in (*KNOWN, ANY)} == limits.ENGINES
    assert tuple(engine.name for engine in KNOWN) == limits.ENGINE_NAMES
    with pytest.raises(AttributeError, match="no attribute 'QUAK'"):
        limits.QUAK  # noqa: B018 - the attribute's lookup is the test
