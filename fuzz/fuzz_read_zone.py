#!/usr/bin/env python3
"""Fuzz the RFG zone reader (`formats.rfg.zone`, `.rfgzone_pc` / `.layer_pc`) and every path a
stranger's zone reaches: `zone check` (and `verify`), the objects and their decoded properties
(what `zone ls`, the catalog's `zone_objects` rows and the viewer's zone page show), the
byte-exact rebuild, the JSON document `zone export` writes and `zone import` reads back (in
memory and through the commands' own functions on a loose file), and the object-level diff that
patches carry: a zone against itself, and against a copy with one property changed, whose
changes survive JSON and replay (and are taken back) byte for byte.

Any input may only be refused with a gamepak error. What the reader accepts is written back
byte for byte; its unchanged document imports back to the same bytes. A zone whose handles
repeat may be refused where objects are named by handle (its import, its diff): nothing else.

An input starting with `{` is a zone document a user edited (`zone import`'s input): refused with
a gamepak error, or a zone that is written, read back and exported again to the same bytes.

    python fuzz/fuzz_read_zone.py CORPUS_FOLDER [libFuzzer options]
"""

from __future__ import annotations

import json
import os
import shutil
from typing import TYPE_CHECKING

from _fuzzing import expected_errors, fuzz, scratch_folder

if TYPE_CHECKING:
    from gamepak.formats.rfg.zone.model import Zone

MEMBER = "fuzz.layer_pc"
DOCUMENT = f"{MEMBER}.json"


def _check_objects(zone: Zone) -> None:
    """Everything `zone ls` and the viewer ask of an object; a decoded value encodes back to
    its stored bytes."""
    from gamepak.formats.rfg.zone.values import encode

    for obj in zone.objects:
        obj.class_name()
        obj.name()
        obj.referenced_handles()
        position = obj.position
        assert position is None or len(position) == 3, "a position of other than three numbers"
        for prop in obj.properties:
            prop.name()
            kind, value = prop.decoded()
            if kind != "hex":
                assert encode(kind, value) == prop.value, f"a decoded {kind} encodes to other bytes"


def _check_document(data: bytes, zone: Zone, unique: bool) -> None:
    """The document export writes, read back as import reads it: the same bytes."""
    import orjson

    from gamepak.formats.rfg.zone.document import check_references, from_document, to_document

    document = to_document(zone, relation_file=f"{MEMBER}.relation.bin")
    text = orjson.dumps(document, option=orjson.OPT_INDENT_2)
    back = None
    with expected_errors():  # a handle used twice is refused; nothing else may be
        back = from_document(json.loads(text), DOCUMENT, zone.relation)
    if back is None:
        assert not unique, "an unchanged document of a zone with unique handles was refused"
        return
    check_references(back, zone, DOCUMENT)
    assert back.to_bytes() == data, "an unchanged document imports back to other bytes"


def _check_commands(data: bytes, unique: bool) -> None:
    """`zone export` of a loose zone file and `zone import --dry-run` of what it wrote: nothing
    to change."""
    from gamepak.ops import zones

    folder = os.path.join(scratch_folder(), "zone")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    loose = os.path.join(folder, MEMBER)
    with open(loose, "wb") as handle:
        handle.write(data)
    out = os.path.join(folder, "out")
    written, failures = zones.export_zones(loose, out)
    assert not failures and written, f"a zone that reads was not exported: {failures}"
    changes = None
    with expected_errors():
        changes = zones.import_zones(loose, out, dry_run=True)
    assert changes == [] or (changes is None and not unique), f"its unchanged export imports as {changes}"
    with open(loose, "rb") as handle:
        assert handle.read() == data, "a dry run changed the zone"


def _one_property_changed(data: bytes) -> tuple[bytes, int, str] | None:
    """The zone with one property's value changed (its first byte flipped, or one byte given
    to an empty value): (new bytes, handle, the field its change names: `prop:0xHASH`, or
    `properties` in an object whose names repeat); None when it has no property whose name is
    its object's alone, or the change does not fit its block."""
    from gamepak.errors import GamepakError
    from gamepak.formats.rfg.zone.model import read

    zone = read(data)
    for obj in zone.objects:
        hashes = [prop.name_hash for prop in obj.properties]
        for prop in obj.properties:
            if hashes.count(prop.name_hash) != 1:
                continue
            prop.value = bytes([prop.value[0] ^ 1]) + prop.value[1:] if prop.value else b"\x01"
            prop.padding = b""
            field = f"prop:0x{prop.name_hash:08X}" if len(set(hashes)) == len(hashes) else "properties"
            try:
                return zone.to_bytes(), obj.handle, field
            except GamepakError:
                return None
    return None


def _check_diff(data: bytes, zone: Zone) -> None:
    """A zone against itself: no change. Against a copy with one property changed: one change
    naming that object and property, which replays, survives a patch's JSON and is taken back."""
    from gamepak.formats.rfg.zone.diff import (
        apply_changes,
        changes_between,
        diff,
        load_changes,
        merge,
        replay,
        replay_with_undo,
        to_json,
    )
    from gamepak.formats.rfg.zone.model import read
    from gamepak.ops.patch.zones import changes_blob

    assert diff(zone, read(data)) == [], "a zone differs from itself"
    assert changes_between(data, data, MEMBER) is None, "a zone has changes against itself"
    changed = _one_property_changed(data)
    if changed is None:
        return
    new, handle, field = changed
    changes = diff(zone, read(new))
    assert [(change.handle, change.field) for change in changes] == [(handle, field)], (
        f"one property changed gives {[change.describe() for change in changes]}"
    )
    assert apply_changes(zone, changes).to_bytes() == new, "the change replays to other bytes"
    assert merge(zone, read(new)).to_bytes() == new, "the change merges to other bytes"
    loaded = load_changes(json.dumps(to_json(changes)).encode(), MEMBER)
    replayed, back = replay_with_undo(data, loaded, MEMBER)
    assert replayed == new, "the change read back from JSON replays to other bytes"
    assert back is not None, "a one-property change has no undo"
    assert replay(new, load_changes(back, MEMBER), MEMBER) == data, "its undo does not give the zone back"
    blob = changes_between(data, new, MEMBER)
    assert blob is not None and replay(data, load_changes(blob, MEMBER), MEMBER) == new, "a patch's blob"
    patch_blob = changes_blob(MEMBER, data, new)
    assert patch_blob is None or patch_blob == blob, "a patch records other zone changes"


def _check_edits(data: bytes, unique: bool) -> None:
    """The Python API's edits of a stranger's zone: an object added (a new handle of its cell
    and layer) is the one change a diff finds; every object with an `op` moved changes only
    position bytes."""
    from gamepak.formats.rfg.zone.diff import diff
    from gamepak.formats.rfg.zone.model import ZoneObject, read

    zone = read(data)
    added = None
    with expected_errors():  # no free handle left in the cell and layer
        added = zone.add(ZoneObject(0x9F3641D4, 0))
    if added is not None:
        grown = read(zone.to_bytes())
        assert [obj.handle for obj in grown.objects] == [obj.handle for obj in zone.objects], "an added object"
        if unique:
            changes = [(change.handle, change.field) for change in diff(read(data), grown)]
            assert changes == [(added.handle, "")], f"an added object diffs as {changes}"
    moved = read(data)
    for obj in moved.objects:
        if obj.position is not None:
            obj.move_to((1.5, -2.5, 3.5))
    new = moved.to_bytes()
    assert len(new) == len(data), "moving objects changed the zone's size"
    assert all(obj.position in (None, (1.5, -2.5, 3.5)) for obj in read(new).objects), "a move reads back otherwise"


def _check_edited_document(text: bytes) -> None:
    """A document a user edited (an input starting with `{`), as `zone import` reads it: refused
    with a gamepak error, or a zone that writes, reads back and exports to a document that
    imports to the same bytes."""
    import orjson

    from gamepak.formats.rfg.zone.document import from_document, to_document
    from gamepak.formats.rfg.zone.model import read

    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return  # `zone import` refuses what is not JSON (ops.zones._load_json)
    written = None
    with expected_errors():
        zone = from_document(document, DOCUMENT, None)
        written = zone.to_bytes()
    if written is None:
        return
    again = read(written)
    assert again.to_bytes() == written, "an imported document's zone is not written back byte for byte"
    exported = json.loads(orjson.dumps(to_document(again)))
    assert from_document(exported, DOCUMENT, None).to_bytes() == written, "an imported zone exports otherwise"


def TestOneInput(data: bytes) -> None:
    from gamepak.content import zones as zone_content

    if data[:1] == b"{":
        _check_edited_document(data)
        return
    from gamepak.formats.rfg.zone.check import check_zone
    from gamepak.formats.rfg.zone.model import read

    findings = []
    with expected_errors():
        findings = check_zone(data, MEMBER)
    with expected_errors():
        zone_content.rows(data, MEMBER, MEMBER)
    with expected_errors():
        zone_content.preview(data, MEMBER)
    zone = None
    with expected_errors():
        zone = read(data, None, MEMBER)
    if zone is None:
        assert any(severity == "error" for severity, _ in findings), "check passes a zone the reader refuses"
        return
    assert zone.to_bytes() == data, "an unchanged zone is not written back byte for byte"
    _check_objects(zone)
    handles = [obj.handle for obj in zone.objects]
    unique = len(set(handles)) == len(handles)
    _check_document(data, zone, unique)
    _check_commands(data, unique)
    _check_edits(data, unique)
    if unique:
        _check_diff(data, zone)
    else:
        with expected_errors():
            _check_diff(data, zone)


def main() -> None:
    fuzz(TestOneInput, "gamepak.core", "gamepak.formats.rfg.zone", "gamepak.ops.zones", "gamepak.ops.patch.zones")


if __name__ == "__main__":
    main()
