"""Patches of RFG zones as object-level changes (encoding "zone-changes"): made between two packs
whose layers differ, replayed on a layer someone else changed, stacked across patches changing
different objects, a conflict named by object and property, hand-edited blobs refused in one
line, undo and revert back to the exact bytes, and the real layers of dlcp01_activities.vpp_pc."""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gamepak.errors import GamepakError
from gamepak.formats.rfg.zone.diff import changes_between, load_changes, replay
from gamepak.formats.rfg.zone.model import Zone, ZoneObject, ZoneProperty, read
from gamepak.formats.rfg.zone.names import default_names, property_hash
from gamepak.ops import patch, zones
from gamepak.ops.patch import Patch, PatchError

from conftest import in_process_cli, pack_members, sample, write_pack

LAYER = "dm.str2_pc/a.layer_pc"
NO = 0xFFFFFFFF
# An object block of no properties whose handle (0) is not the one its change names.
ADDED_BLOCK = struct.pack("<II6fHHIIIIHH", 0, 0, 0, 0, 0, 1, 1, 1, 0, 56, NO, NO, NO, 0, 0, 0).hex()
FIRST, THIRD = 0x78800001, 0x78800003


@pytest.fixture(autouse=True)
def _no_asm_table_warning() -> object:
    # The hand-made .str2_pc has no .asm_pc describing it: the RFG writer says so on each rewrite.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*no .asm_pc in this pack describes")
        yield


def layer(edit: Callable[[Zone], object] | None = None) -> Zone:
    """Three object_dummy objects at (i, i, i), each enabled, built with the zone writer."""
    dummy = default_names().class_hash_of("object_dummy")
    assert dummy is not None
    objects = []
    for index in range(3):
        op = struct.pack("<12f", index, index, index, 1, 0, 0, 0, 1, 0, 0, 0, 1)
        properties = [ZoneProperty(5, property_hash("op"), op), ZoneProperty(5, property_hash("enabled"), b"\x01")]
        bbox = struct.pack("<6f", 0, 0, 0, 1, 1, 1)
        objects.append(ZoneObject(dummy, FIRST + index, bbox, 0xFF00, num=1, properties=properties))
    zone = Zone(objects)
    if edit is not None:
        edit(zone)
    return zone


def pack(path: Path, zone: Zone) -> Path:
    """A .vpp_pc holding dm.str2_pc, which holds the layer and a table (the RFG writer)."""
    inner = write_pack(
        path.parent / f"{path.stem}-build" / "dm.str2_pc", {"a.layer_pc": zone.to_bytes(), "t.xtbl": b"<root/>"}
    )
    return write_pack(path, {"dm.str2_pc": inner.read_bytes()})


def layer_bytes(path: Path, scratch: Path) -> bytes:
    """The layer's bytes inside `path`'s dm.str2_pc."""
    inner = scratch / f"{path.name}.inner.str2_pc"
    inner.write_bytes(pack_members(path)["dm.str2_pc"])
    return pack_members(inner)["a.layer_pc"]


def moved(handle: int, position: tuple[float, float, float]) -> Callable[[Zone], object]:
    return lambda zone: zone.find(handle).move_to(position)  # type: ignore[union-attr]


def disabled(handle: int) -> Callable[[Zone], object]:
    return lambda zone: zone.find(handle).set_value("enabled", "bool", False)  # type: ignore[union-attr]


def made(tmp_path: Path, name: str, edit: Callable[[Zone], object]) -> Path:
    """A patch named `name` from the base pack to a copy with `edit` applied to its layer."""
    base = tmp_path / "base.vpp_pc"
    if not base.exists():
        pack(base, layer())
    modded = pack(tmp_path / f"{name}.vpp_pc", layer(edit))
    output = tmp_path / f"{name}.gpatch"
    patch.make(base, modded, output, name=name)
    return output


def fresh(tmp_path: Path, name: str = "target.vpp_pc") -> Path:
    target = tmp_path / name
    shutil.copyfile(tmp_path / "base.vpp_pc", target)
    return target


def positions(zone_bytes: bytes) -> list[tuple[float, float, float] | None]:
    return [obj.position for obj in read(zone_bytes).objects]


def test_make_records_a_moved_object_as_one_change_and_apply_revert_round_trip(tmp_path: Path) -> None:
    gpatch = made(tmp_path, "A", moved(FIRST, (9, 9, 9)))
    with Patch.open(gpatch) as opened:
        (operation,) = opened.operations  # the table and the str2_pc's other bytes are not in it
        assert (operation.op, operation.member, operation.encoding) == ("replace", LAYER, "zone-changes")
        changes = opened.zone_changes(operation)
        assert [change.describe() for change in changes] == ["0x78800001: property op changed"]
    target = fresh(tmp_path)
    before = target.read_bytes()
    result = patch.apply(target, [gpatch])
    assert [step.action for step in result.steps] == ["apply"]
    assert layer_bytes(target, tmp_path) == layer(moved(FIRST, (9, 9, 9))).to_bytes()
    assert patch.apply(target, [gpatch]).steps[0].action == "skip"  # applying twice changes nothing
    assert patch.revert(target) == ["A"] and target.read_bytes() == before


def test_changes_replay_on_a_layer_someone_else_changed_and_undo_gives_its_exact_bytes(tmp_path: Path) -> None:
    gpatch = made(tmp_path, "A", moved(FIRST, (9, 9, 9)))
    theirs = pack(tmp_path / "theirs.vpp_pc", layer(disabled(THIRD)))  # neither A's base nor its target
    before_layer = layer_bytes(theirs, tmp_path)
    code, out, _ = in_process_cli("patch", "check", str(theirs), str(gpatch))
    assert code == 0 and out.startswith(f"apply      replace {LAYER}"), out
    patch.apply(theirs, [gpatch])
    assert layer_bytes(theirs, tmp_path) == layer(lambda z: (moved(FIRST, (9, 9, 9))(z), disabled(THIRD)(z))).to_bytes()
    undo = sorted((tmp_path / "theirs.vpp_pc.gamepak-undo").glob("*.gpatch"))
    with Patch.open(undo[0]) as opened:
        assert [operation.encoding for operation in opened.operations] == ["zone-changes"]
    patch.revert(theirs)
    assert layer_bytes(theirs, tmp_path) == before_layer


def test_two_patches_changing_different_objects_apply_together_and_one_after_the_other(tmp_path: Path) -> None:
    first = made(tmp_path, "A", moved(FIRST, (9, 9, 9)))
    second = made(tmp_path, "B", disabled(THIRD))
    both = layer(lambda z: (moved(FIRST, (9, 9, 9))(z), disabled(THIRD)(z))).to_bytes()

    together = fresh(tmp_path, "together.vpp_pc")
    original = together.read_bytes()
    result = patch.apply(together, [first, second])
    assert [(step.action, step.patch.name) for step in result.steps] == [("stacked", "A"), ("apply", "B")]
    assert layer_bytes(together, tmp_path) == both

    in_turn = fresh(tmp_path, "in_turn.vpp_pc")
    patch.apply(in_turn, [first])
    assert patch.apply(in_turn, [second]).steps[0].action == "apply"
    assert layer_bytes(in_turn, tmp_path) == both

    # Either one is taken back alone, leaving the other's object; everything gives the exact bytes.
    for target in (together, in_turn):
        assert patch.revert(target, first) == ["A"]
        assert layer_bytes(target, tmp_path) == layer(disabled(THIRD)).to_bytes()
        assert patch.revert(target) == ["B"] and target.read_bytes() == original


def test_the_same_property_changed_by_two_patches_is_one_conflict_line(tmp_path: Path) -> None:
    first = made(tmp_path, "A", moved(FIRST, (9, 9, 9)))
    other = made(tmp_path, "C", moved(FIRST, (1, 1, 1)))
    target = fresh(tmp_path)
    before = target.read_bytes()
    code, out, err = in_process_cli("patch", "apply", str(target), str(first), str(other))
    assert code == 1 and out == "" and "Traceback" not in err
    conflict = f"conflict: {LAYER}: object 0x78800001 property op is changed differently by A, C"
    assert conflict in [line.strip() for line in err.splitlines()], err
    assert target.read_bytes() == before
    # Against a layer that already holds the other value: refused, naming object and property.
    patch.apply(target, [first])
    with pytest.raises(
        PatchError, match=r"C: .*a\.layer_pc: object 0x78800001 property op: changed here to another value"
    ):
        patch.apply(target, [other])
    # --later-wins: the later patch's value of a field both change; the earlier one's other
    # changes stay.
    again = fresh(tmp_path, "again.vpp_pc")
    result = patch.apply(again, [first, other], later_wins=True)
    assert [(step.action, step.reason) for step in result.steps] == [("overridden", "C comes later"), ("apply", "")]
    assert layer_bytes(again, tmp_path) == layer(moved(FIRST, (1, 1, 1))).to_bytes()
    wider = made(tmp_path, "W", lambda z: (moved(FIRST, (9, 9, 9))(z), disabled(THIRD)(z)))
    again = fresh(tmp_path, "again2.vpp_pc")
    result = patch.apply(again, [wider, other], later_wins=True)
    assert [step.action for step in result.steps] == ["stacked", "apply"]
    assert "some overridden by C" in result.steps[0].reason
    assert layer_bytes(again, tmp_path) == layer(lambda z: (moved(FIRST, (1, 1, 1))(z), disabled(THIRD)(z))).to_bytes()
    code, _, err = in_process_cli("patch", "apply", str(fresh(tmp_path, "cli.vpp_pc")), str(wider), str(other))
    assert code == 1 and "object 0x78800001 property op is changed differently by W, C" in err


def rewrite_blob(gpatch: Path, blob: bytes) -> None:
    """The patch with its one blob replaced by `blob` (the manifest unchanged)."""
    with zipfile.ZipFile(gpatch) as source:
        manifest = source.read("patch.json")
    with zipfile.ZipFile(gpatch, "w") as output:
        output.writestr("patch.json", manifest)
        output.writestr("blobs/0", blob)


def blob_of(gpatch: Path) -> list[dict[str, object]]:
    with zipfile.ZipFile(gpatch) as opened:
        loaded: list[dict[str, object]] = json.loads(opened.read("blobs/0"))
        return loaded


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda c: b"{not json", "zone changes: not JSON"),
        (lambda c: b"{}", "zone changes must be a list"),
        (lambda c: json.dumps([{**c[0], "handle": "1"}]).encode(), "needs a handle (number)"),
        (lambda c: json.dumps([{**c[0], "field": "prop:0xZZ"}]).encode(), "not a field zone changes know"),
        (lambda c: json.dumps([{**c[0], "field": "flags"}]).encode(), "must be 16-bit numbers"),
        (lambda c: json.dumps([{**c[0], "field": "bbox"}]).encode(), "must be 24 bytes in hex"),
        (
            lambda c: json.dumps([{**c[0], "after": "00"}]).encode(),
            "does not read (object 0: prop_count 1 cannot fit in 1 bytes)",
        ),
        (
            lambda c: json.dumps([{**c[0], "after": c[0]["after"][:8] + "00000000" + c[0]["after"][16:]}]).encode(),
            "not that one property",
        ),
        (lambda c: json.dumps([{**c[0], "before": None, "after": None}]).encode(), "cannot both be null"),
        (
            lambda c: json.dumps(
                [{**c[0], "handle": 0x12345678, "field": "", "before": None, "after": ADDED_BLOCK}]
            ).encode(),
            "added block holds handle 0x00000000",
        ),
        (lambda c: b"[" * 300 + b"]" * 300, "nested more than"),
    ],
)
def test_a_hand_edited_zone_changes_blob_is_refused_in_one_line(
    tmp_path: Path, edit: Callable[[list[dict[str, object]]], bytes], message: str
) -> None:
    gpatch = made(tmp_path, "A", moved(FIRST, (9, 9, 9)))
    rewrite_blob(gpatch, edit(blob_of(gpatch)))
    target = fresh(tmp_path)
    before = target.read_bytes()
    code, out, err = in_process_cli("patch", "apply", str(target), str(gpatch))
    lines = err.strip().splitlines()
    assert code == 1 and out == "" and "Traceback" not in err and message in err, err
    assert any(line.strip().startswith("A: ") and LAYER in line and message in line for line in lines), err
    assert target.read_bytes() == before


def test_a_blob_larger_than_any_zone_changes_is_refused_when_opened(tmp_path: Path) -> None:
    gpatch = made(tmp_path, "A", moved(FIRST, (9, 9, 9)))
    size = len(layer().to_bytes())
    limit = 4 * size + (1 << 16)  # each record in hex twice, and room for the JSON
    rewrite_blob(gpatch, b" " * (limit + 1))
    code, _, err = in_process_cli("patch", "check", str(fresh(tmp_path)), str(gpatch))
    assert code == 1 and f"declares {limit + 1} bytes, more than the {limit} the member may hold" in err, err
    rewrite_blob(gpatch, b" " * limit)  # within the limit: read, and refused as not JSON
    code, out, _ = in_process_cli("patch", "check", str(fresh(tmp_path)), str(gpatch))
    assert code == 1 and f"A: {LAYER}: zone changes: not JSON" in out, out


def test_zones_fall_back_to_bytes_when_object_changes_do_not_say_it_all(tmp_path: Path) -> None:
    # The district hash is in the header, not in an object: a byte delta says it.
    gpatch = made(tmp_path, "H", lambda zone: setattr(zone, "district_hash", 0x1234))
    with Patch.open(gpatch) as opened:
        assert [operation.encoding for operation in opened.operations] == ["zstd-delta"]
    assert changes_between(layer().to_bytes(), layer().to_bytes()) is None  # nothing changed
    assert changes_between(b"not a zone", layer().to_bytes()) is None


def test_patch_info_lists_a_zones_changes(tmp_path: Path) -> None:
    gpatch = made(tmp_path, "A", lambda z: (moved(FIRST, (9, 9, 9))(z), z.remove(THIRD)))
    code, out, _ = in_process_cli("patch", "info", str(gpatch))
    size = len(layer(lambda z: z.remove(THIRD)).to_bytes())
    expected = (
        f"  replace {LAYER} ({size} bytes, zone-changes)\n"
        "    0x78800003: removed\n"
        "    0x78800001: property op changed\n"
    )
    assert code == 0 and expected in out, out
    code, out, _ = in_process_cli("patch", "info", str(gpatch), "--json")
    (operation,) = json.loads(out)["operations"]
    assert operation["zone_changes"] == ["0x78800003: removed", "0x78800001: property op changed"]


edits = st.lists(
    st.tuples(st.sampled_from([FIRST, FIRST + 1, THIRD]), st.floats(-1e4, 1e4, width=32), st.booleans()),
    min_size=1,
    max_size=4,
)


@settings(max_examples=40, deadline=None)
@given(edits, edits)
def test_changes_of_different_objects_replay_in_either_order_to_both_edits(
    ours: list[tuple[int, float, bool]], theirs: list[tuple[int, float, bool]]
) -> None:
    def apply(zone: Zone, items: list[tuple[int, float, bool]]) -> None:
        for handle, x, flag in items:
            obj = zone.find(handle)
            assert obj is not None
            obj.move_to((x, 0.0, 0.0))
            obj.set_value("enabled", "bool", flag)

    mine = [item for item in ours if item[0] == FIRST]
    others = [item for item in theirs if item[0] != FIRST]
    base = layer().to_bytes()
    mine_bytes = layer(lambda z: apply(z, mine)).to_bytes()
    others_bytes = layer(lambda z: apply(z, others)).to_bytes()

    def apply_both(zone: Zone) -> None:
        apply(zone, mine)
        apply(zone, others)

    both = layer(apply_both).to_bytes()
    mine_blob, others_blob = changes_between(base, mine_bytes), changes_between(base, others_bytes)
    if mine_blob is None or others_blob is None:  # an edit that changed nothing
        return
    assert replay(base, load_changes(mine_blob, "p"), "p") == mine_bytes
    assert replay(mine_bytes, load_changes(others_blob, "p"), "p") == both
    assert replay(others_bytes, load_changes(mine_blob, "p"), "p") == both


def moved_copy(source: Path, path: Path, member: str | None, index: int, dx: float) -> tuple[Path, str, int]:
    """A copy of `source` with object `index` of `member` (default: the first layer) moved by
    `dx` along x, through `gamepak.zones` (one crash-safe edit); (the copy, the member, the handle)."""
    shutil.copyfile(source, path)
    opened = zones.open(path)
    member = member or sorted(opened)[0]
    obj = opened[member].objects[index]
    x, y, z = obj.position  # type: ignore[misc]
    obj.move_to((x + dx, y, z))
    assert opened.save() == [member]
    return path, member, obj.handle


def test_the_real_layers_one_moved_object_is_the_only_change(tmp_path: Path) -> None:
    source = sample("vpp/dlcp01_activities.vpp_pc")
    modded, member, handle = moved_copy(source, tmp_path / "modded.vpp_pc", None, 3, 10.0)
    gpatch = tmp_path / "moved.gpatch"
    patch.make(source, modded, gpatch, name="moved")
    with Patch.open(gpatch) as loaded:
        # Only the layer: the .asm_pc's new sizes are what the writer derives on apply.
        (operation,) = loaded.operations
        assert (operation.member, operation.encoding) == (member, "zone-changes")
        (change,) = loaded.zone_changes(operation)
        assert (change.handle, change.describe()) == (handle, f"0x{handle:08X}: property op changed")
    target = tmp_path / "target.vpp_pc"
    shutil.copyfile(source, target)
    patch.apply(target, [gpatch])
    after, modded_zones, original = zones.open(target), zones.open(modded), zones.open(source)
    assert after[member].to_bytes() == modded_zones[member].to_bytes()
    assert all(after[name].to_bytes() == original[name].to_bytes() for name in original if name != member)
    assert in_process_cli("verify", str(target))[0] == 0  # its .asm_pc describes the rewritten .str2_pc
    patch.revert(target)
    assert target.read_bytes() == source.read_bytes()


def test_the_real_layers_two_patches_moving_two_objects_of_one_layer_apply_together(tmp_path: Path) -> None:
    source = sample("vpp/dlcp01_activities.vpp_pc")
    first, member, first_handle = moved_copy(source, tmp_path / "first.vpp_pc", None, 3, 10.0)
    second, _, second_handle = moved_copy(source, tmp_path / "second.vpp_pc", member, 0, -5.0)
    patches = [tmp_path / "first.gpatch", tmp_path / "second.gpatch"]
    patch.make(source, first, patches[0], name="first")
    patch.make(source, second, patches[1], name="second")
    target = tmp_path / "target.vpp_pc"
    shutil.copyfile(source, target)
    result = patch.apply(target, patches)
    assert [step.action for step in result.steps] == ["stacked", "apply"]
    layer_now = zones.open(target)[member]
    assert layer_now.find(first_handle).position == zones.open(first)[member].find(first_handle).position  # type: ignore[union-attr]
    assert layer_now.find(second_handle).position == zones.open(second)[member].find(second_handle).position  # type: ignore[union-attr]
    assert in_process_cli("verify", str(target))[0] == 0
    patch.revert(target)
    assert hashlib.sha256(target.read_bytes()).digest() == hashlib.sha256(source.read_bytes()).digest()


def test_a_byte_level_undo_when_the_changes_back_cannot_say_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the changes back are not a zone-changes blob, the undo holds the old bytes: for the
    bytes the replay wrote (not the patch's target), and stacked patches come back latest first."""
    from gamepak.ops.patch import zones as patch_zones

    first = made(tmp_path, "A", moved(FIRST, (9, 9, 9)))
    second = made(tmp_path, "B", disabled(FIRST + 1))
    monkeypatch.setattr(patch_zones, "zone_changes_limit", lambda size: 0)  # no blob of changes back fits
    theirs = pack(tmp_path / "theirs.vpp_pc", layer(disabled(THIRD)))
    before_layer = layer_bytes(theirs, tmp_path)
    patch.apply(theirs, [first, second])
    with pytest.raises(PatchError, match="A's edits were applied inside B's change"):
        patch.revert(theirs, first)
    # Another program changes the pack: its original is forgotten, the undo goes member by member.
    extra = tmp_path / "extra.xtbl"
    extra.write_bytes(b"<root/>")
    assert in_process_cli("add", str(theirs), str(extra), "--name", "extra.xtbl")[0] == 0
    assert patch.revert(theirs, warn=lambda line: None) == ["B", "A"]
    assert layer_bytes(theirs, tmp_path) == before_layer


def test_loose_layers_of_a_game_folder_patch_and_stack_too(tmp_path: Path) -> None:
    def folder(name: str, edit: Callable[[Zone], object] | None = None) -> Path:
        path = tmp_path / name / "maps"
        path.mkdir(parents=True)
        (path / "a.layer_pc").write_bytes(layer(edit).to_bytes())
        return path.parent

    base = folder("base")
    patches = [tmp_path / "a.gpatch", tmp_path / "b.gpatch"]
    patch.make(base, folder("a", moved(FIRST, (9, 9, 9))), patches[0], name="A")
    patch.make(base, folder("b", disabled(THIRD)), patches[1], name="B")
    with Patch.open(patches[0]) as opened:
        assert [(o.file, o.member, o.encoding) for o in opened.operations] == [
            ("maps/a.layer_pc", None, "zone-changes")
        ]
    game = tmp_path / "game"
    shutil.copytree(base, game)
    result = patch.apply(game, patches)
    assert [step.action for step in result.steps] == ["stacked", "apply"]
    both = layer(lambda z: (moved(FIRST, (9, 9, 9))(z), disabled(THIRD)(z))).to_bytes()
    assert (game / "maps" / "a.layer_pc").read_bytes() == both
    patch.revert(game, patches[0])
    assert (game / "maps" / "a.layer_pc").read_bytes() == layer(disabled(THIRD)).to_bytes()
    patch.revert(game)
    assert (game / "maps" / "a.layer_pc").read_bytes() == layer().to_bytes()


def test_a_replayed_zone_shares_nothing_an_edit_changes_with_the_zone_it_came_from() -> None:
    from gamepak.formats.rfg.zone.diff import apply_changes, diff

    base = layer()
    before = base.to_bytes()
    result = apply_changes(base, diff(base, layer(disabled(THIRD))))
    for obj in result.objects:
        obj.move_to((7.0, 7.0, 7.0))
        obj.set_value("enabled", "bool", False)
        obj.flags = 1
    assert base.to_bytes() == before


zone_edits = st.lists(
    st.tuples(st.sampled_from(["move", "disable", "remove", "drop enabled", "add"]), st.integers(0, 3)),
    min_size=1,
    max_size=5,
)


def edit_zone(zone: Zone, edits: list[tuple[str, int]]) -> None:
    """Object and property edits of every kind a patch records, at positions `edits` names."""
    for number, (kind, index) in enumerate(edits):
        if kind == "add":
            twin = ZoneObject(zone.objects[0].class_hash if zone.objects else 1, 0x78900000 + number)
            zone.objects.insert(min(index, len(zone.objects)), twin)
            continue
        if not zone.objects:
            continue
        obj = zone.objects[index % len(zone.objects)]
        if kind == "move" and obj.find("op") is not None:
            obj.move_to((float(number), 1.0, 2.0))
        elif kind == "disable":
            obj.set_value("enabled", "bool", number % 2 == 0)
        elif kind == "remove":
            zone.objects.remove(obj)
        elif kind == "drop enabled":
            obj.properties = [prop for prop in obj.properties if prop.name_hash != property_hash("enabled")]


@settings(max_examples=60, deadline=None)
@given(zone_edits)
def test_any_object_level_edit_patches_exactly_and_its_changes_back_give_the_old_bytes(
    edits: list[tuple[str, int]],
) -> None:
    from gamepak.formats.rfg.zone.diff import replay_with_undo

    base = layer().to_bytes()
    target = layer(lambda zone: edit_zone(zone, edits)).to_bytes()
    blob = changes_between(base, target)
    if target == base:
        assert blob is None
        return
    assert blob is not None  # every one of these edits is said by object-level changes
    new, back = replay_with_undo(base, load_changes(blob, "p"), "p")
    assert new == target and back is not None
    assert replay(new, load_changes(back, "p"), "p") == base


def test_an_export_for_syncfaction_still_ships_the_asm_table(tmp_path: Path) -> None:
    """A gamepak patch leaves out the .asm_pc the writer derives on apply; a SyncFaction mod
    folder keeps it (SyncFaction is not known to update it)."""
    from gamepak.ops.patch.export import export

    source = sample("vpp/dlcp01_activities.vpp_pc")
    games = [tmp_path / "base" / "data", tmp_path / "modded" / "data"]
    for folder in games:
        folder.mkdir(parents=True)
    shutil.copyfile(source, games[0] / source.name)
    moved_copy(source, games[1] / source.name, None, 3, 10.0)
    export(games[0].parent, games[1].parent, tmp_path / "mod", "syncfaction")
    shipped = sorted(path.name for path in (tmp_path / "mod" / "data" / source.name).iterdir())
    assert shipped == ["DLC_AD_07_09.str2_pc", "dlc_activity_containers.asm_pc"]
    gpatch = tmp_path / "p.gpatch"
    patch.make(games[0].parent, games[1].parent, gpatch)
    with Patch.open(gpatch) as opened:
        assert [operation.encoding for operation in opened.operations] == ["zone-changes"]


def test_an_added_and_a_removed_object_from_two_patches_stack_and_come_back_one_by_one(tmp_path: Path) -> None:
    def add(zone: Zone) -> object:
        twin = ZoneObject(zone.objects[0].class_hash, 0x78800009, properties=list(zone.objects[0].properties))
        zone.objects.insert(1, twin)
        return twin

    def remove(zone: Zone) -> object:
        return zone.remove(THIRD)

    adding, removing = made(tmp_path, "add", add), made(tmp_path, "remove", remove)
    with Patch.open(adding) as opened:
        assert opened.info()["operations"][0]["zone_changes"] == ["0x78800009: added (object_dummy)"]
    target = fresh(tmp_path)
    original = target.read_bytes()
    patch.apply(target, [adding, removing])
    assert layer_bytes(target, tmp_path) == layer(lambda z: (add(z), remove(z))).to_bytes()
    assert patch.revert(target, adding) == ["add"]
    assert layer_bytes(target, tmp_path) == layer(remove).to_bytes()
    assert patch.revert(target) == ["remove"] and target.read_bytes() == original


def test_a_zone_patch_on_a_pack_without_the_layer_or_with_too_large_a_one_is_refused(tmp_path: Path) -> None:
    from gamepak.core import content_limits

    gpatch = made(tmp_path, "A", moved(FIRST, (9, 9, 9)))
    inner = write_pack(tmp_path / "other-build" / "dm.str2_pc", {"t.xtbl": b"<root/>"})
    without = write_pack(tmp_path / "without.vpp_pc", {"dm.str2_pc": inner.read_bytes()})
    code, out, _ = in_process_cli("patch", "check", str(without), str(gpatch))
    assert code == 1 and f"A: {LAYER}: missing" in out, out
    with content_limits.limits(zone_bytes=100):  # the one zone limit every zone reader keeps
        plan = patch.check(fresh(tmp_path), [gpatch])
    assert [step.action for step in plan.steps] == ["refuse"]
    assert (
        f"zone changes replay on the whole zone, {len(layer().to_bytes())} bytes here, more than 100"
        in plan.steps[0].reason
    )


def _record(prop: ZoneProperty) -> str:
    return prop.record().hex()


def current_value(handle: object, field: str) -> object:
    """What the hand-made layer holds for (handle, field), as a change's JSON says it: so that
    a hostile change finds its before-value and its after-value is replayed."""
    obj = layer().find(handle) if isinstance(handle, int) else None
    if obj is None:
        return None
    if field == "":
        return obj.block().hex()
    if field == "properties":
        return b"".join(prop.record() for prop in obj.properties).hex()
    if field == "bbox":
        return obj.bbox_raw.hex()
    if field.startswith("prop:0x") and field[7:].isalnum():
        prop = next((p for p in obj.properties if f"{p.name_hash:08X}" == field[7:].upper()), None)
        return None if prop is None else prop.record().hex()
    return getattr(obj, field, None)


values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(1 << 40), 1 << 40),
    st.binary(max_size=80).map(bytes.hex),
    st.sampled_from(["zz", "0", "", _record(ZoneProperty(5, property_hash("op"), bytes(48))), ADDED_BLOCK]),
    st.lists(st.integers(), max_size=2),
    st.sampled_from([1 << 16, 1 << 32, 1 << 40, -1, 1.5, "00" * 23, "00" * 25]),  # what no field holds
)
hostile_changes = st.lists(
    st.fixed_dictionaries(
        {
            "handle": st.one_of(
                st.sampled_from([FIRST, THIRD, 0x12345678]), st.integers(-5, 1 << 33), st.text(max_size=3)
            ),
            "field": st.sampled_from(
                [
                    "",
                    "properties",
                    "bbox",
                    "flags",
                    "num",
                    "parent",
                    "class_hash",
                    "prop:0xB2600654",
                    "prop:0x00000000",
                    "prop:0xZZ",
                    "op",
                    "PROP:0xB2600654",
                ]
            ),
            "before": st.one_of(st.just("current"), values),
            "after": values,
        },
        optional={"anchor": st.one_of(st.none(), st.integers(-1, 1 << 33), st.text(max_size=2))},
    ),
    max_size=4,
)


@settings(max_examples=300, deadline=None)
@given(hostile_changes)
@example([{"handle": FIRST, "field": "flags", "before": "current", "after": 1 << 40}])
@example([{"handle": FIRST, "field": "bbox", "before": "current", "after": "00" * 23}])
@example([{"handle": THIRD, "field": "prop:0xB2600654", "before": "current", "after": ADDED_BLOCK}])
def test_any_hand_edited_changes_replay_or_are_one_gamepak_error(document: list[dict[str, object]]) -> None:
    base = layer().to_bytes()
    for change in document:
        if change["before"] == "current":
            change["before"] = current_value(change["handle"], str(change["field"]))
    try:
        changes = load_changes(json.dumps(document).encode(), "p.gpatch: x.layer_pc")
        result = replay(base, changes, "p.gpatch: x.layer_pc")
    except GamepakError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("p.gpatch: x.layer_pc")
        return
    assert read(result).to_bytes() == result  # whatever replayed is a zone that reads back
