"""RFG zones (.rfgzone_pc, .layer_pc): byte layouts from ../shared/specs/rfg-zones.md built by
hand, byte-exact round trips, object edits, the JSON document, malformed input, the CLI, and
the 8 real layers of dlcp01_activities.vpp_pc."""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gamepak.errors import GamepakError
from gamepak.formats.rfg.zone.diff import diff
from gamepak.formats.rfg.zone.document import from_document, to_document
from gamepak.formats.rfg.zone.model import RELATION_SIZE, Zone, ZoneError, ZoneObject, read
from gamepak.formats.rfg.zone.names import default_names, property_hash
from gamepak.formats.rfg.zone.values import KINDS, decode, encode
from gamepak.ops import zones

from conftest import in_process_cli, pack_members, sample, write_pack

NO = 0xFFFFFFFF


def prop(type_code: int, name_hash: int, value: bytes, padding: bytes | None = None) -> bytes:
    """A property record as the spec lays it out: u16 type, u16 size, u32 name hash, value, pad to 4."""
    pad = padding if padding is not None else bytes(-len(value) % 4)
    return struct.pack("<HHI", type_code, len(value), name_hash) + value + pad


def obj(
    class_hash: int,
    handle: int,
    props: list[bytes],
    *,
    parent: int = NO,
    sibling: int = NO,
    child: int = NO,
    num: int = 1,
    flags: int = 0xFF00,
    bbox: tuple[float, ...] = (0, 0, 0, 1, 1, 1),
) -> bytes:
    """An object record: the 56-byte header, then its property records."""
    records = b"".join(props)
    head = struct.pack(
        "<II6fHHIIIIHH",
        class_hash,
        handle,
        *bbox,
        flags,
        56 + len(records),
        parent,
        sibling,
        child,
        num,
        len(props),
        len(records),
    )
    return head + records


def zone(objects: list[bytes], *, flags: int = 4, relation: bytes | None = None, trailing: bytes = b"") -> bytes:
    header = struct.pack("<4sIIIII", b"ZONE", 36, len(objects), 0, 0, flags)
    return header + (relation or b"") + b"".join(objects) + trailing


def op_value(x: float, y: float, z: float) -> bytes:
    return struct.pack("<12f", x, y, z, 1, 0, 0, 0, 1, 0, 0, 0, 1)


OBJECT_DUMMY = 0x9F3641D4
OP, BB = 0xB2600654, 0xF4770951


def a_layer() -> bytes:
    first = obj(
        OBJECT_DUMMY, 0x78800001, [prop(4, property_hash("dummy_type"), b"crate\0"), prop(5, OP, op_value(1, 2, 3))]
    )
    second = obj(
        OBJECT_DUMMY,
        0x78800002,
        [prop(5, property_hash("enabled"), b"\x01"), prop(5, OP, op_value(4, 5, 6))],
        parent=0x78800001,
    )
    return zone([first, second])


def test_the_specs_hash_examples() -> None:
    names = default_names()
    assert names.class_hash_of("object_dummy") == 0x9F3641D4
    assert property_hash("op") == 0xB2600654 and property_hash("bb") == 0xF4770951
    assert property_hash("OP") == property_hash("op")  # names are lower-cased first
    assert names.class_name(0x9F3641D4) == "object_dummy" and names.property_name(BB) == "bb"


def test_a_hand_made_layer_reads_as_the_spec_says() -> None:
    data = a_layer()
    parsed = read(data)
    assert [o.handle for o in parsed.objects] == [0x78800001, 0x78800002]
    first, second = parsed.objects
    assert first.class_name() == "object_dummy" and first.position == (1.0, 2.0, 3.0)
    assert first.value("dummy_type") == "crate" and first.name() == "crate"
    assert second.value("enabled") is True and second.parent == 0x78800001
    assert parsed.relation is None and parsed.to_bytes() == data


def test_the_relation_section_trailing_bytes_and_odd_values_are_kept() -> None:
    relation = bytes(range(256)) * (RELATION_SIZE // 256) + bytes(RELATION_SIZE % 256)
    odd = [
        prop(4, property_hash("dummy_type"), b"two\0\0"),  # more than one NUL
        prop(5, property_hash("enabled"), b"\x02"),  # a bool that is not 0/1
        prop(5, property_hash("spawn_prob"), struct.pack("<f", float("nan"))),
        prop(7, 0x12345678, b"abc", padding=b"\x09"),  # unknown type, non-zero padding
        prop(6, property_hash("yellow_triangles"), b""),
    ]
    data = zone([obj(OBJECT_DUMMY, 5, odd)], flags=0, relation=relation, trailing=b"tail")
    parsed = read(data)
    assert parsed.relation == relation and parsed.trailing == b"tail"
    assert parsed.to_bytes() == data
    document = json.loads(json.dumps(to_document(parsed, relation_file="x.relation.bin")))
    kinds = [p["kind"] for p in document["objects"][0]["properties"]]
    assert kinds == ["hex", "hex", "hex", "hex", "u16_list"]
    assert document["objects"][0]["properties"][3]["padding"] == "09"
    assert from_document(document, "doc", relation).to_bytes() == data


@pytest.mark.parametrize(
    ("data", "offset", "message"),
    [
        (b"ZONE" + bytes(10), 0, "24-byte header"),
        (b"ENOZ" + bytes(20), 0, "signature"),
        (struct.pack("<4sIIIII", b"ZONE", 35, 0, 0, 0, 4), 4, "version 35"),
        (struct.pack("<4sIIIII", b"ZONE", 36, 0xFFFFFFFF, 0, 0, 4), 8, "object_count 4294967295"),
        (struct.pack("<4sIIIII", b"ZONE", 36, 0, 0, 0, 0) + bytes(100), 24, "relation section"),
    ],
)
def test_malformed_headers_are_one_error_naming_the_offset(data: bytes, offset: int, message: str) -> None:
    with pytest.raises(ZoneError, match=message) as caught:
        read(data, "bad.layer_pc")
    assert caught.value.offset == offset and "bad.layer_pc" in str(caught.value)


def test_malformed_objects_name_the_object_offset_and_field() -> None:
    good = obj(OBJECT_DUMMY, 1, [prop(5, OP, op_value(0, 0, 0))])
    # block_size disagreeing with prop_block_size
    bad = bytearray(good)
    struct.pack_into("<H", bad, 34, 57)
    with pytest.raises(ZoneError, match="object 0: block_size 57"):
        read(zone([bytes(bad)]))
    # a property whose size runs past the block
    bad = bytearray(good)
    struct.pack_into("<H", bad, 56 + 2, 200)
    with pytest.raises(ZoneError, match="object 0, property 0: size 200 runs past") as caught:
        read(zone([bytes(bad)]))
    assert caught.value.offset == 24 + 56 + 2
    # prop_count more than the block can hold (checked before reading records)
    bad = bytearray(good)
    struct.pack_into("<H", bad, 52, 60000)
    with pytest.raises(ZoneError, match="prop_count 60000 cannot fit"):
        read(zone([bytes(bad)]))
    # records that do not fill prop_block_size
    bad = bytearray(good[:56]) + good[56:] + bytes(4)
    struct.pack_into("<H", bad, 34, 56 + 60)  # block_size
    struct.pack_into("<H", bad, 54, 60)
    with pytest.raises(ZoneError, match="fill 56 of prop_block_size 60"):
        read(zone([bytes(bad)]))
    # the file ends inside an object
    with pytest.raises(ZoneError, match="runs past the end of the file"):
        read(zone([good])[:-4] + b"")


def test_a_moved_object_changes_only_its_position_bytes() -> None:
    data = a_layer()
    parsed = read(data)
    parsed.objects[1].move_to((40.0, 50.0, 60.0))
    new = parsed.to_bytes()
    changed = [index for index in range(len(data)) if data[index] != new[index]]
    assert len(new) == len(data) and changed
    op_start = data.index(op_value(4, 5, 6))
    assert all(op_start <= index < op_start + 12 for index in changed)
    assert [c.describe() for c in diff(read(data), parsed)] == ["0x78800002: property op changed"]


def test_objects_added_get_unique_handles_and_a_referenced_object_cannot_be_removed() -> None:
    parsed = read(a_layer())
    added = parsed.add(ZoneObject(OBJECT_DUMMY, 0x78800001))
    assert added.handle == 0x78800003
    with pytest.raises(GamepakError, match=r"0x78800001 is referred to by 1 object\(s\) \(0x78800002\)"):
        parsed.remove(0x78800001)
    parsed.remove(0x78800002)
    parsed.remove(0x78800001)
    again = read(parsed.to_bytes())
    assert [o.handle for o in again.objects] == [0x78800003]
    assert [c.describe() for c in diff(read(a_layer()), again)][-1] == "0x78800003: added (object_dummy)"


def test_documents_that_do_not_fit_are_refused_naming_object_and_property() -> None:
    document = to_document(read(a_layer()))
    broken = json.loads(json.dumps(document))
    broken["objects"][0]["properties"][1]["value"]["position"] = [1, 2]
    with pytest.raises(GamepakError, match="doc: object 0: property op: op position must be a list of 3"):
        from_document(broken, "doc")
    twice = json.loads(json.dumps(document))
    twice["objects"][1]["handle"] = twice["objects"][0]["handle"]
    with pytest.raises(GamepakError, match="used twice"):
        from_document(twice, "doc")
    wrong = json.loads(json.dumps(document))
    wrong["objects"][0]["properties"][0]["type"] = 5
    with pytest.raises(GamepakError, match="kind string is stored with type 4"):
        from_document(wrong, "doc")
    with pytest.raises(GamepakError, match="not a zone document"):
        from_document({"objects": []}, "doc")
    kind: object
    for kind in ([], {}, 5):  # found reading the code: a list or object as the kind was a TypeError
        odd = json.loads(json.dumps(document))
        odd["objects"][0]["properties"][0]["kind"] = kind
        with pytest.raises(GamepakError, match="doc: object 0: property dummy_type: unknown kind"):
            from_document(odd, "doc")
    for handle in ("²", "0x" + "f" * 21, "12 34", True):  # ASCII digits, within range, a number
        odd = json.loads(json.dumps(document))
        odd["objects"][0]["handle"] = handle
        with pytest.raises(GamepakError, match="handle must be"):
            from_document(odd, "doc")


# --------------------------------------------------------------------------- properties

values = st.one_of(
    st.binary(max_size=40),
    st.builds(
        lambda text: text.encode("latin-1") + b"\0",
        st.text(st.characters(min_codepoint=1, max_codepoint=255), max_size=12),
    ),
    st.builds(lambda x: op_value(x, x, x), st.floats(-1e6, 1e6, width=32)),
)
known_hashes = st.sampled_from(
    [
        OP,
        BB,
        property_hash("dummy_type"),
        property_hash("enabled"),
        property_hash("spawn_prob"),
        property_hash("yellow_polygon"),
        0xDEADBEEF,
    ]
)


@st.composite
def zones_(draw: st.DrawFn) -> bytes:
    objects = []
    for handle in draw(st.lists(st.integers(0, NO - 1), max_size=5, unique=True)):
        props = [
            prop(draw(st.sampled_from([4, 5, 6, 9])), draw(known_hashes), draw(values))
            for _ in range(draw(st.integers(0, 4)))
        ]
        objects.append(obj(draw(st.sampled_from([OBJECT_DUMMY, 1, 2])), handle, props, num=draw(st.integers(0, NO))))
    flags = draw(st.sampled_from([1, 4, 5, 0x104]))
    return zone(objects, flags=flags, trailing=draw(st.binary(max_size=6)))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(zones_())
def test_any_zone_and_its_document_write_back_the_same_bytes(data: bytes) -> None:
    parsed = read(data)
    assert parsed.to_bytes() == data
    document = json.loads(json.dumps(to_document(parsed)))
    assert from_document(document, "doc").to_bytes() == data


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 255), st.integers(1, 60))
def test_damaged_zones_are_refused_or_written_back_exactly(position: int, byte: int, cut: int) -> None:
    data = bytearray(a_layer())
    data[position % len(data)] = byte
    for candidate in (bytes(data), bytes(data[:-cut])):
        try:
            parsed = read(candidate)
        except ZoneError:
            continue
        assert parsed.to_bytes() == candidate


# --------------------------------------------------------------------------- packs and CLI


def nested_pack(tmp_path: Path) -> Path:
    inner = write_pack(tmp_path / "build" / "dlc01_dm_01.str2_pc", {"dlc01_09_08_130.layer_pc": a_layer()})
    other = write_pack(tmp_path / "build" / "other.str2_pc", {"x.xtbl": b"<root/>"})
    return write_pack(
        tmp_path / "activities.vpp_pc", {"dlc01_dm_01.str2_pc": inner.read_bytes(), "other.str2_pc": other.read_bytes()}
    )


def test_zones_inside_nested_packs_list_export_and_import_back_unchanged(tmp_path: Path) -> None:
    pack = nested_pack(tmp_path)
    before = pack.read_bytes()
    stamp = os.stat(pack).st_mtime_ns
    code, out, err = in_process_cli("zone", "ls", str(pack))
    assert code == 0 and "dlc01_dm_01.str2_pc/dlc01_09_08_130.layer_pc  0x78800001  object_dummy" in out
    assert "(1.00, 2.00, 3.00)" in out and "crate" in out
    code, _, err = in_process_cli("zone", "export", str(pack), "-o", str(tmp_path / "out"))
    assert code == 0 and "exported 1 zone to" in err
    document = tmp_path / "out" / "dlc01_dm_01.str2_pc" / "dlc01_09_08_130.layer_pc.json"
    assert json.loads(document.read_text())["objects"][0]["class"] == "object_dummy"
    code, out, err = in_process_cli("zone", "import", str(pack), str(tmp_path / "out"))
    assert code == 0 and out == "" and "unchanged" in err
    assert pack.read_bytes() == before and os.stat(pack).st_mtime_ns == stamp


def test_an_edited_position_is_imported_as_one_object_change(tmp_path: Path) -> None:
    pack = nested_pack(tmp_path)
    in_process_cli("zone", "export", str(pack), "-o", str(tmp_path / "out"))
    document = tmp_path / "out" / "dlc01_dm_01.str2_pc" / "dlc01_09_08_130.layer_pc.json"
    loaded = json.loads(document.read_text())
    loaded["objects"][1]["properties"][1]["value"]["position"] = [7.5, 8, 9]
    document.write_text(json.dumps(loaded))
    before = pack.read_bytes()
    code, out, _ = in_process_cli("zone", "import", str(pack), str(tmp_path / "out"), "--dry-run")
    assert code == 0 and out == "dlc01_dm_01.str2_pc/dlc01_09_08_130.layer_pc: 0x78800002: property op changed\n"
    assert pack.read_bytes() == before
    code, out, _ = in_process_cli("zone", "import", str(pack), str(tmp_path / "out"))
    assert code == 0
    inner = pack_members(pack)["dlc01_dm_01.str2_pc"]
    (tmp_path / "inner.str2_pc").write_bytes(inner)
    layer = pack_members(tmp_path / "inner.str2_pc")["dlc01_09_08_130.layer_pc"]
    assert read(layer).objects[1].position == (7.5, 8.0, 9.0)
    old = a_layer()
    position = old.index(op_value(4, 5, 6))
    changed = [i for i in range(len(old)) if old[i] != layer[i]]
    assert len(layer) == len(old) and changed and all(position <= i < position + 12 for i in changed)


def test_a_refused_import_writes_nothing(tmp_path: Path) -> None:
    pack = nested_pack(tmp_path)
    in_process_cli("zone", "export", str(pack), "-o", str(tmp_path / "out"))
    document = tmp_path / "out" / "dlc01_dm_01.str2_pc" / "dlc01_09_08_130.layer_pc.json"
    loaded = json.loads(document.read_text())
    loaded["objects"][1]["parent"] = "0x12345678"  # no such object, and not one the zone referred to
    document.write_text(json.dumps(loaded))
    before = pack.read_bytes()
    code, _, err = in_process_cli("zone", "import", str(pack), str(tmp_path / "out"))
    assert code == 1 and "object 1 (0x78800002) refers to 0x12345678, no object of the zone" in err
    assert pack.read_bytes() == before
    # Removing an object another one hangs under is refused, naming both.
    loaded["objects"][1]["parent"] = "0x78800001"
    del loaded["objects"][0]
    document.write_text(json.dumps(loaded))
    code, _, err = in_process_cli("zone", "import", str(pack), str(tmp_path / "out"))
    assert code == 1 and "object 0 (0x78800002) refers to 0x78800001, a removed object" in err
    assert pack.read_bytes() == before
    document.write_text("[" * 100_000)
    code, _, err = in_process_cli("zone", "import", str(pack), str(tmp_path / "out"))
    assert code == 1 and "Traceback" not in err and err.count("\n") == 1 and pack.read_bytes() == before


def test_zone_check_and_a_damaged_zone_in_a_pack(tmp_path: Path) -> None:
    broken = bytearray(a_layer())
    struct.pack_into("<I", broken, 8, 99)
    loose = tmp_path / "bad.layer_pc"
    loose.write_bytes(bytes(broken))
    code, out, _ = in_process_cli("zone", "check", str(loose))
    assert code == 1 and "object_count 99 cannot fit" in out
    good = tmp_path / "good.layer_pc"
    good.write_bytes(a_layer())
    code, out, _ = in_process_cli("zone", "check", str(good))
    assert code == 0 and out == ""


def test_the_python_api_edits_a_zone_in_place(tmp_path: Path) -> None:
    import gamepak

    pack = nested_pack(tmp_path)
    opened = gamepak.zones.open(pack)
    layer = opened.find("dlc01_09_08_130.layer_pc")
    assert layer is not None
    layer.objects[0].move_to((10.0, 20.0, 30.0))
    assert opened.save() == ["dlc01_dm_01.str2_pc/dlc01_09_08_130.layer_pc"]
    assert gamepak.zones.open(pack).find("dlc01_09_08_130.layer_pc").objects[0].position == (10.0, 20.0, 30.0)  # type: ignore[union-attr]


# --------------------------------------------------------------------------- real layers


def test_the_real_layers_read_name_and_round_trip(tmp_path: Path) -> None:
    source = sample("vpp/dlcp01_activities.vpp_pc")
    opened = zones.open(source)
    assert len(opened) == 8 and not opened.failures
    objects = [o for layer in opened.values() for o in layer.objects]
    properties = [p for o in objects for p in o.properties]
    assert len(objects) == 169 and len(properties) == 1251
    assert all(p.decoded()[0] != "hex" for p in properties)
    assert all(o.class_name() for o in objects) and all(p.name() for p in properties)
    assert sum(o.find("op") is not None for o in objects) == 169
    copy = tmp_path / "copy.vpp_pc"
    copy.write_bytes(source.read_bytes())
    assert in_process_cli("zone", "export", str(copy), "-o", str(tmp_path / "out"))[0] == 0
    code, _, err = in_process_cli("zone", "import", str(copy), str(tmp_path / "out"))
    assert code == 0 and "unchanged" in err and copy.read_bytes() == source.read_bytes()


def test_verify_reads_the_zones_of_a_pack(tmp_path: Path) -> None:
    broken = bytearray(a_layer())
    struct.pack_into("<H", broken, 24 + 34, 57)  # object 0's block_size
    good = write_pack(tmp_path / "good.str2_pc", {"x.layer_pc": a_layer()})
    bad = write_pack(tmp_path / "bad.str2_pc", {"x.layer_pc": bytes(broken)})
    assert in_process_cli("verify", str(good))[0] == 0
    code, out, err = in_process_cli("verify", str(bad))
    assert code == 1 and "zone x.layer_pc: object 0: block_size 57 is not 56 + prop_block_size" in out + err


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(sorted(KINDS)), st.binary(max_size=64))
def test_a_decoded_value_encodes_to_the_same_bytes(kind: str, raw: bytes) -> None:
    got_kind, value = decode(kind, KINDS[kind][0], raw)
    assert encode(got_kind, value) == raw


def test_the_catalog_lists_every_zone_object(tmp_path: Path) -> None:
    import duckdb

    from gamepak.catalog import build_catalog

    root = tmp_path / "in"
    root.mkdir()
    nested_pack(tmp_path).rename(root / "activities.vpp_pc")
    broken = bytearray(a_layer())
    struct.pack_into("<I", broken, 8, 99)
    write_pack(root / "broken.str2_pc", {"bad.layer_pc": bytes(broken)})
    build_catalog([str(root)], str(tmp_path / "out"), scheduler="synchronous")
    rows = duckdb.execute(
        f"SELECT zone, index, class, handle, name, x, y, z FROM '{tmp_path}/out/zone_objects/*.parquet' ORDER BY handle"
    ).fetchall()
    assert rows == [
        ("dlc01_09_08_130.layer_pc", 0, "object_dummy", 0x78800001, "crate", 1.0, 2.0, 3.0),
        ("dlc01_09_08_130.layer_pc", 1, "object_dummy", 0x78800002, None, 4.0, 5.0, 6.0),
    ]
    errors = duckdb.execute(f"SELECT stage, member, message FROM '{tmp_path}/out/errors/*.parquet'").fetchall()
    assert [(stage, member) for stage, member, _ in errors] == [("zones", "bad.layer_pc")]
    assert "object_count 99" in errors[0][2]


# --------------------------------------------------------------------------- object-level merges


def edited(edit: Callable[[Zone], object]) -> Zone:
    """A copy of the hand-made layer with `edit(zone)` applied."""
    zone_copy = read(a_layer())
    edit(zone_copy)
    return zone_copy


def test_two_versions_changing_different_objects_merge() -> None:
    from gamepak.formats.rfg.zone.diff import merge

    base = read(a_layer())
    ours = edited(lambda z: z.objects[0].move_to((9.0, 9.0, 9.0)))
    theirs = edited(lambda z: z.objects[1].set_value("enabled", "bool", False))
    merged = merge(base, ours, theirs)
    assert merged.objects[0].position == (9.0, 9.0, 9.0) and merged.objects[1].value("enabled") is False
    # Different properties of one object merge too; a new property lands after its neighbour.
    ours = edited(lambda z: z.objects[1].move_to((1.0, 1.0, 1.0)))
    theirs = edited(lambda z: z.objects[1].properties.insert(1, z.objects[0].properties[0]))
    merged = merge(base, ours, theirs)
    assert [p.name() for p in merged.objects[1].properties] == ["enabled", "dummy_type", "op"]
    assert merged.objects[1].position == (1.0, 1.0, 1.0)


def test_the_same_property_changed_two_ways_is_a_conflict_naming_object_and_property() -> None:
    from gamepak.formats.rfg.zone.diff import ZoneConflict, merge

    base = read(a_layer())
    ours = edited(lambda z: z.objects[1].move_to((1.0, 1.0, 1.0)))
    theirs = edited(lambda z: z.objects[1].move_to((2.0, 2.0, 2.0)))
    with pytest.raises(ZoneConflict, match="object 0x78800002 property op: changed differently"):
        merge(base, ours, theirs)
    same = edited(lambda z: z.objects[1].move_to((1.0, 1.0, 1.0)))
    assert merge(base, ours, same).to_bytes() == ours.to_bytes()
    removed = edited(lambda z: z.remove(0x78800002))
    with pytest.raises(ZoneConflict, match="0x78800002"):
        merge(base, ours, removed)


def test_changes_replay_on_a_zone_someone_else_changed_and_survive_json() -> None:
    from gamepak.formats.rfg.zone.diff import apply_changes, diff, from_json, to_json

    base = read(a_layer())
    mine = edited(lambda z: z.add(ZoneObject(OBJECT_DUMMY, 0x78800009, properties=[z.objects[0].properties[1]])))
    changes = from_json(json.loads(json.dumps(to_json(diff(base, mine)))), "patch.json")
    assert [c.describe() for c in changes] == ["0x78800009: added (object_dummy)"]
    theirs = edited(lambda z: z.objects[0].move_to((5.0, 5.0, 5.0)))
    both = apply_changes(theirs, changes)
    assert [o.handle for o in both.objects] == [0x78800001, 0x78800002, 0x78800009]
    assert both.objects[0].position == (5.0, 5.0, 5.0)
    assert apply_changes(both, changes).to_bytes() == both.to_bytes()  # applying twice changes nothing
    with pytest.raises(GamepakError, match="not a number or hex"):
        from_json([{"handle": 1, "field": "prop:0x00000001", "before": None, "after": "zz"}], "patch.json")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e4, 1e4, width=32), min_size=2, max_size=2), st.booleans())
def test_disjoint_edits_merge_to_what_applying_both_gives(xs: list[float], flag: bool) -> None:
    from gamepak.formats.rfg.zone.diff import merge

    base = read(a_layer())
    ours = edited(lambda z: z.objects[0].move_to((xs[0], 0.0, 0.0)))
    theirs = edited(lambda z: z.objects[1].set_value("enabled", "bool", flag))

    def both(z: Zone) -> None:
        z.objects[0].move_to((xs[0], 0.0, 0.0))
        z.objects[1].set_value("enabled", "bool", flag)

    assert merge(base, ours, theirs).to_bytes() == edited(both).to_bytes()


def test_zone_check_warns_of_values_kept_as_bytes_and_lists_that_disagree_with_their_counts() -> None:
    from gamepak.formats.rfg.zone.check import check_zone

    props = [
        prop(4, property_hash("spawn_set"), b"no-nul"),
        prop(5, property_hash("spawn_prob"), b"\x00\x00"),
        prop(5, property_hash("yellow_num_points"), struct.pack("<I", 3)),
        prop(6, property_hash("yellow_polygon"), struct.pack("<4f", 0, 0, 1, 1)),
    ]
    findings = check_zone(zone([obj(OBJECT_DUMMY, 7, props)]), "x.layer_pc")
    assert findings == [
        ("warning", "object 0 (0x00000007): property spawn_set: a string without its final NUL (kept as bytes)"),
        ("warning", "object 0 (0x00000007): property spawn_prob: 2 bytes (type 5) do not hold a f32 (kept as bytes)"),
        ("warning", "object 0 (0x00000007): yellow_polygon holds 2 items, yellow_num_points = 3 says 3"),
    ]


def test_the_real_layers_check_without_a_warning() -> None:
    from gamepak.formats.rfg.zone.check import check_zone

    real = sample("vpp/dlcp01_activities.vpp_pc")
    assert [f for member, data in zones.iter_zones(real) for f in check_zone(data, member) if f[0] != "note"] == []


# --------------------------------------------------------------------------- fuzz findings


def test_a_zone_whose_handles_repeat_is_refused_where_objects_are_named_by_handle(tmp_path: Path) -> None:
    # fuzz_read_zone/handle-repeated-*: diff paired the objects by handle (the last of each
    # repeat), so a zone differed from itself, and a change meant whichever object came last.
    from gamepak.formats.rfg.zone.diff import RepeatedHandle, apply_changes, changes_between

    first = obj(OBJECT_DUMMY, 0x78800001, [prop(5, OP, op_value(1, 2, 3))])
    second = obj(OBJECT_DUMMY, 0x78800001, [prop(5, property_hash("enabled"), b"\x01")])
    data = zone([first, second])
    parsed = read(data, member="x.layer_pc")
    with pytest.raises(RepeatedHandle, match=r"x.layer_pc: objects 0 and 1 share handle 0x78800001"):
        diff(parsed, read(data))
    with pytest.raises(RepeatedHandle, match="objects 0 and 1"):
        apply_changes(parsed, [])
    moved = read(data)
    moved.objects[0].move_to((9.0, 9.0, 9.0))
    assert changes_between(data, moved.to_bytes(), "x.layer_pc") is None  # a patch keeps the bytes instead
    # Importing a document that gives the second object its own handle still works, named whole.
    loose = tmp_path / "x.layer_pc"
    loose.write_bytes(data)
    out = tmp_path / "out"
    zones.export_zones(loose, out)
    document = json.loads((out / "x.layer_pc.json").read_text())
    document["objects"][1]["handle"] = "0x78800002"
    (out / "x.layer_pc.json").write_text(json.dumps(document))
    assert zones.import_zones(loose, out) == ["x.layer_pc: objects changed (its handles repeat: not listed one by one)"]
    assert [o.handle for o in read(loose.read_bytes()).objects] == [0x78800001, 0x78800002]


def test_an_object_whose_property_names_repeat_is_the_same_as_itself() -> None:
    # fuzz_read_zone/property-name-repeated: an object with two properties of one name was a
    # "properties" change against itself (its records compared only when names were unique).
    from gamepak.formats.rfg.zone.diff import apply_changes

    enabled = property_hash("enabled")
    data = zone(
        [obj(OBJECT_DUMMY, 1, [prop(5, enabled, b"\x01"), prop(5, enabled, b"\x00"), prop(5, OP, op_value(1, 2, 3))])]
    )
    assert diff(read(data), read(data)) == []
    moved = read(data)
    moved.objects[0].move_to((4.0, 5.0, 6.0))
    changes = diff(read(data), moved)
    assert [c.describe() for c in changes] == [
        "0x00000001: properties changed as one list (reordered, or a name repeats)"
    ]
    assert apply_changes(read(data), changes).to_bytes() == moved.to_bytes()


def test_changes_that_remove_what_they_added_replay_with_an_undo_that_is_checked() -> None:
    # Found reading the undo's code: a patch's changes adding an object and then removing its
    # property made the undo look the object up in the zone as it was (KeyError).
    from gamepak.formats.rfg.zone.diff import load_changes, replay, replay_with_undo

    data = a_layer()
    record = prop(5, OP, op_value(7, 7, 7))
    block = obj(OBJECT_DUMMY, 0x78800009, [record])
    blob = [
        {"handle": 0x78800009, "field": "", "before": None, "after": block.hex()},
        {"handle": 0x78800009, "field": f"prop:0x{OP:08X}", "before": record.hex(), "after": None},
    ]
    new, back = replay_with_undo(data, load_changes(json.dumps(blob).encode(), "p.gpatch"), "p.gpatch")
    assert [o.handle for o in read(new).objects] == [0x78800009, 0x78800001, 0x78800002]  # no anchor: first
    assert read(new).objects[0].properties == []
    assert back is None or replay(new, load_changes(back, "undo"), "undo") == data


def test_a_document_of_another_zone_version_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    # fuzz_read_zone/document-version-37: a document's version was written as it said, into a
    # zone the reader (and the game) refuse.
    with pytest.raises(GamepakError, match="zone version 37 cannot be written"):
        Zone(version=37).to_bytes()
    loose = tmp_path / "x.layer_pc"
    loose.write_bytes(a_layer())
    out = tmp_path / "out"
    zones.export_zones(loose, out)
    document = json.loads((out / "x.layer_pc.json").read_text())
    document["version"] = 37
    (out / "x.layer_pc.json").write_text(json.dumps(document))
    with pytest.raises(GamepakError, match="zone version 37 cannot be written"):
        zones.import_zones(loose, out)
    assert loose.read_bytes() == a_layer()
