"""What changed between two versions of one zone, object by object: the unit that zone imports,
their summaries and mods that merge speak in.

An object is known by its handle. A change is one of:
- an object added (`field` "", `after` its block's bytes, `anchor` the handle it follows) or
  removed (`before` its block's bytes, `after` None);
- one header field of an object set (`class_hash`, `flags`, `parent`, `sibling`, `child`, `num`:
  numbers; `bbox`: the 24 stored bytes);
- one property set, added or removed (`prop:0xHASH`: its record's bytes or None; an added one
  has `anchor`, the hash of the property it follows, or None for the first);
- the order of an object's properties changed (`properties`: all its records, before and after).

`apply_changes` replays changes on another version of the zone when each one still finds what it
expects there (or finds it already done): two mods that change different objects, or different
properties of one object, apply together; the same (object, field) changed two ways is a
conflict named by object and property (`ZoneConflict`). Changes turn into JSON and back
(`to_json`, `from_json`) for patch files.
"""

from __future__ import annotations

import re

from ....errors import GamepakError
from .model import OBJECT, PROPERTY, Zone, ZoneError, ZoneObject, ZoneProperty, read
from .names import Names, default_names

HEADER_FIELDS = ("class_hash", "bbox", "flags", "parent", "sibling", "child", "num")
_ATTRIBUTE = {"bbox": "bbox_raw"}


class ZoneConflict(GamepakError):
    """Changes that cannot be replayed on a zone: each (handle, field, why) in `conflicts`."""

    def __init__(self, where: str, conflicts: list[tuple[int, str, str]]) -> None:
        self.conflicts = conflicts
        names = default_names()
        shown = "; ".join(
            f"object 0x{handle:08X} {_label(field, names)}: {why}" for handle, field, why in conflicts[:8]
        )
        more = f" (and {len(conflicts) - 8} more)" if len(conflicts) > 8 else ""
        super().__init__(f"{where}: {shown}{more}")


def _label(field: str, names: Names) -> str:
    if field.startswith("prop:"):
        return "property " + (names.property_name(int(field[5:], 16)) or field[5:])
    return field or "(the object)"


class ZoneChange:
    """One object-level change (see the module's docstring)."""

    __slots__ = ("after", "anchor", "before", "field", "handle")

    def __init__(
        self, handle: int, field: str, before: int | bytes | None, after: int | bytes | None, anchor: int | None = None
    ) -> None:
        self.handle = handle
        self.field = field
        self.before = before
        self.after = after
        self.anchor = anchor

    @property
    def key(self) -> tuple[int, str]:
        return (self.handle, self.field)

    def describe(self, names: Names | None = None) -> str:
        names = names or default_names()
        where = f"0x{self.handle:08X}"
        if self.field == "":
            if self.after is None:
                return f"{where}: removed"
            assert isinstance(self.after, bytes)
            class_hash = int.from_bytes(self.after[:4], "little")
            return f"{where}: added ({names.class_name(class_hash) or f'0x{class_hash:08X}'})"
        if self.field.startswith("prop:"):
            label = _label(self.field, names)
            verb = "added" if self.before is None else "removed" if self.after is None else "changed"
            return f"{where}: {label} {verb}"
        if self.field == "properties":
            return f"{where}: properties changed as one list (reordered, or a name repeats)"
        return f"{where}: {self.field} changed"

    def to_json(self) -> dict[str, object]:
        def value(item: int | bytes | None) -> object:
            return item.hex() if isinstance(item, bytes) else item

        document: dict[str, object] = {
            "handle": self.handle,
            "field": self.field,
            "before": value(self.before),
            "after": value(self.after),
        }
        if self.anchor is not None:
            document["anchor"] = self.anchor
        return document


class RepeatedHandle(GamepakError):
    """A zone two of whose objects share a handle: changes name objects by handle, so such a
    zone cannot be diffed or have changes replayed on it (which object would they mean?)."""


def _by_handle(zone: Zone, where: str) -> dict[int, ZoneObject]:
    """The objects of `zone` by handle; RepeatedHandle naming the handle and both objects when
    one repeats (`zone check` reports it as an error too)."""
    objects: dict[int, ZoneObject] = {}
    for index, obj in enumerate(zone.objects):
        if obj.handle in objects:
            first = zone.objects.index(objects[obj.handle])
            raise RepeatedHandle(
                f"{where or zone.name or 'zone'}: objects {first} and {index} share handle 0x{obj.handle:08X}; "
                "object-level changes name objects by handle"
            )
        objects[obj.handle] = obj
    return objects


def _records(obj: ZoneObject) -> bytes:
    return b"".join(prop.record() for prop in obj.properties)


def _properties(obj: ZoneObject) -> dict[int, ZoneProperty]:
    found: dict[int, ZoneProperty] = {}
    for prop in obj.properties:
        found.setdefault(prop.name_hash, prop)
    return found


def _field(obj: ZoneObject, field: str) -> int | bytes:
    value: int | bytes = getattr(obj, _ATTRIBUTE.get(field, field))
    return value


def diff(before: Zone, after: Zone, where: str = "") -> list[ZoneChange]:
    """The object-level changes that turn `before` into `after` (objects by handle; a zone
    whose handles repeat is a RepeatedHandle)."""
    changes: list[ZoneChange] = []
    old = _by_handle(before, where)
    new = _by_handle(after, where)
    for handle, obj in old.items():
        if handle not in new:
            changes.append(ZoneChange(handle, "", obj.block(), None))
    previous: int | None = None
    for obj in after.objects:
        handle = obj.handle
        if handle not in old:
            changes.append(ZoneChange(handle, "", None, obj.block(), previous))
            previous = handle
            continue
        previous = handle
        was = old[handle]
        for field in HEADER_FIELDS:
            if _field(was, field) != _field(obj, field):
                changes.append(ZoneChange(handle, field, _field(was, field), _field(obj, field)))
        was_props, props = _properties(was), _properties(obj)
        duplicated = len(was_props) != len(was.properties) or len(props) != len(obj.properties)
        kept_order = [p.name_hash for p in was.properties if p.name_hash in props]
        new_order = [p.name_hash for p in obj.properties if p.name_hash in was_props]
        if duplicated or kept_order != new_order:
            # A repeated name or a new order: the object's properties change as one list (when
            # they changed: an object whose names repeat is still the same as itself).
            if _records(was) != _records(obj):
                changes.append(ZoneChange(handle, "properties", _records(was), _records(obj)))
            continue
        anchor: int | None = None
        for prop in obj.properties:
            was_prop = was_props.get(prop.name_hash)
            if was_prop is None:
                changes.append(ZoneChange(handle, f"prop:0x{prop.name_hash:08X}", None, prop.record(), anchor))
            elif was_prop.record() != prop.record():
                changes.append(ZoneChange(handle, f"prop:0x{prop.name_hash:08X}", was_prop.record(), prop.record()))
            anchor = prop.name_hash
        for prop in was.properties:
            if prop.name_hash not in props:
                changes.append(ZoneChange(handle, f"prop:0x{prop.name_hash:08X}", prop.record(), None))
    return changes


def _parse_records(data: bytes, where: str) -> list[ZoneProperty]:
    """Property records (as `ZoneProperty.record()` writes them) back into properties."""
    header = bytes(OBJECT.size - 4) + (0).to_bytes(4, "little")  # an object header of no properties
    try:
        count = 0
        offset = 0
        while offset < len(data):
            size = int.from_bytes(data[offset + 2 : offset + 4], "little")
            offset += PROPERTY.size + size + (-size % 4)
            count += 1
        block = bytearray(header)
        block[34:36] = (OBJECT.size + len(data)).to_bytes(2, "little")
        block[52:54] = count.to_bytes(2, "little")
        block[54:56] = len(data).to_bytes(2, "little")
        return _parse_block(bytes(block) + data, where).properties
    except (ZoneError, OverflowError) as exc:
        raise GamepakError(f"{where}: a change's property records do not read ({exc})") from None


def _parse_block(block: bytes, where: str) -> ZoneObject:
    try:
        zone = read(
            b"ZONE"
            + (36).to_bytes(4, "little")
            + (1).to_bytes(4, "little")
            + bytes(8)
            + (4).to_bytes(4, "little")
            + block
        )
    except ZoneError as exc:
        raise GamepakError(f"{where}: a change's object does not read ({exc.reason})") from None
    if len(zone.objects) != 1 or zone.trailing:
        raise GamepakError(f"{where}: a change's object is not one object block")
    return zone.objects[0]


def _copy(zone: Zone) -> Zone:
    """A copy of `zone` sharing nothing that edits change in place (objects, properties); the
    bytes values are immutable and shared. `copy.deepcopy` of a 400-object layer took 0.65 s,
    most of a patch apply; this takes a few milliseconds."""
    objects = [
        ZoneObject(
            obj.class_hash,
            obj.handle,
            obj.bbox_raw,
            obj.flags,
            obj.parent,
            obj.sibling,
            obj.child,
            obj.num,
            [ZoneProperty(prop.type_code, prop.name_hash, prop.value, prop.padding) for prop in obj.properties],
        )
        for obj in zone.objects
    ]
    return Zone(
        objects,
        version=zone.version,
        handle_count=zone.handle_count,
        district_hash=zone.district_hash,
        district_flags=zone.district_flags,
        relation=zone.relation,
        trailing=zone.trailing,
        name=zone.name,
    )


def apply_changes(
    zone: Zone, changes: list[ZoneChange], where: str = "", applied: list[ZoneChange] | None = None
) -> Zone:
    """A copy of `zone` with `changes` replayed. Each change must find its `before` (or its
    `after`: already done, skipped); otherwise nothing is changed and ZoneConflict lists them.
    `applied`, when given, receives the changes that changed something (not those already done).
    A zone whose handles repeat is a RepeatedHandle: a change could mean either object."""
    done: list[ZoneChange] = applied if applied is not None else []
    result = _copy(zone)
    where = where or zone.name or "zone"
    conflicts: list[tuple[int, str, str]] = []
    objects = _by_handle(result, where)
    for change in changes:
        obj = objects.get(change.handle)
        if change.field == "":
            if change.after is None:  # removal
                if obj is None:
                    continue
                if obj.block() != change.before:
                    conflicts.append((change.handle, "", "changed here, removed by the change"))
                    continue
                result.objects.remove(obj)
                del objects[change.handle]
                done.append(change)
            else:
                assert isinstance(change.after, bytes)
                if obj is not None:
                    if obj.block() != change.after:
                        conflicts.append((change.handle, "", "added by the change, present here with other bytes"))
                    continue
                added = _parse_block(change.after, where)
                if added.handle != change.handle:
                    raise GamepakError(
                        f"{where}: object 0x{change.handle:08X}: the added block holds handle 0x{added.handle:08X}"
                    )
                # No anchor: the first object; an anchor this zone does not hold: after the others.
                anchor = objects.get(change.anchor) if change.anchor is not None else None
                if change.anchor is None:
                    position = 0
                else:
                    position = result.objects.index(anchor) + 1 if anchor is not None else len(result.objects)
                result.objects.insert(position, added)
                objects[change.handle] = added
                done.append(change)
            continue
        if obj is None:
            conflicts.append((change.handle, change.field, "the object is not in the zone"))
            continue
        if change.field in HEADER_FIELDS:
            current = _field(obj, change.field)
            if current == change.after:
                continue
            if current != change.before:
                conflicts.append((change.handle, change.field, "changed here to another value"))
                continue
            setattr(obj, _ATTRIBUTE.get(change.field, change.field), change.after)
            done.append(change)
        elif change.field == "properties":
            current_records = _records(obj)
            if current_records == change.after:
                continue
            if current_records != change.before:
                conflicts.append((change.handle, "properties", "its properties changed here too"))
                continue
            assert isinstance(change.after, bytes)
            obj.properties = _parse_records(change.after, where)
            done.append(change)
        elif change.field.startswith("prop:"):
            name_hash = int(change.field[5:], 16)
            props = _properties(obj)
            prop = props.get(name_hash)
            current_record = prop.record() if prop is not None else None
            if current_record == change.after:
                continue
            if current_record != change.before:
                conflicts.append((change.handle, change.field, "changed here to another value"))
                continue
            done.append(change)
            if change.after is None:
                obj.properties.remove(prop)  # type: ignore[arg-type]
                continue
            assert isinstance(change.after, bytes)
            parsed = _parse_records(change.after, where)
            if len(parsed) != 1 or parsed[0].name_hash != name_hash:
                raise GamepakError(
                    f"{where}: object 0x{change.handle:08X} {change.field}: the record is not that one property"
                )
            new = parsed[0]
            if prop is not None:
                obj.properties[obj.properties.index(prop)] = new
            else:
                anchor_prop = props.get(change.anchor) if change.anchor is not None else None
                position = obj.properties.index(anchor_prop) + 1 if anchor_prop is not None else 0
                obj.properties.insert(position, new)
        else:
            raise GamepakError(f"{where}: unknown zone change field {change.field!r}")
    if conflicts:
        raise ZoneConflict(where, conflicts)
    return result


def merge(base: Zone, *versions: Zone, where: str = "") -> Zone:
    """`base` with the changes of every version (each a changed copy of `base`) replayed in
    order; the same (object, field) changed differently by two of them is a ZoneConflict."""
    seen: dict[tuple[int, str], object] = {}
    conflicts: list[tuple[int, str, str]] = []
    every: list[ZoneChange] = []
    for version in versions:
        for change in diff(base, version):
            if change.key in seen and seen[change.key] != change.after:
                conflicts.append((change.handle, change.field, "changed differently by two versions"))
            seen.setdefault(change.key, change.after)
            every.append(change)
    if conflicts:
        raise ZoneConflict(where or base.name or "zone", conflicts)
    return apply_changes(base, every, where)


def to_json(changes: list[ZoneChange]) -> list[dict[str, object]]:
    return [change.to_json() for change in changes]


def from_json(document: object, where: str) -> list[ZoneChange]:
    """Changes from `to_json`'s form; one line naming `where` for anything else."""
    if not isinstance(document, list):
        raise GamepakError(f"{where}: zone changes must be a list")
    changes = []
    for item in document:
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("handle"), int)
            or not isinstance(item.get("field"), str)
        ):
            raise GamepakError(f"{where}: each zone change needs a handle (number) and a field (text)")

        def value(raw: object, name: str, item: dict[str, object] = item) -> int | bytes | None:
            if raw is None or (
                isinstance(raw, int)
                and not isinstance(raw, bool)
                and item["field"] in HEADER_FIELDS
                and item["field"] != "bbox"
            ):
                return raw  # type: ignore[return-value]
            if isinstance(raw, str):
                try:
                    return bytes.fromhex(raw)
                except ValueError:
                    pass
            raise GamepakError(f"{where}: zone change {name} of 0x{item['handle']:08X} is not a number or hex")

        anchor = item.get("anchor")
        if anchor is not None and (not isinstance(anchor, int) or isinstance(anchor, bool)):
            raise GamepakError(f"{where}: a zone change's anchor must be a number")
        change = ZoneChange(
            item["handle"],
            item["field"],
            value(item.get("before"), "before"),
            value(item.get("after"), "after"),
            anchor,
        )
        _check_change(change, where)
        changes.append(change)
    return changes


_PROPERTY_FIELD = re.compile(r"prop:0x[0-9A-Fa-f]{8}")
# The header fields' widths in the object record (`model.OBJECT`): bits of a number, bytes of bbox.
_FIELD_BITS = {"class_hash": 32, "flags": 16, "parent": 32, "sibling": 32, "child": 32, "num": 32}
_BBOX_BYTES = 24


def _check_change(change: ZoneChange, where: str) -> None:
    """A change from a stranger's patch holds what its field can: checked before it is replayed,
    so a hand-edited blob is one line naming the object and field, never a struct error."""
    handle, field = change.handle, change.field
    if not 0 <= handle <= 0xFFFFFFFF:
        raise GamepakError(f"{where}: zone change handle {handle} is not a 32-bit number")
    label = f"{where}: zone change of object 0x{handle:08X} field {field!r}"
    if field in _FIELD_BITS:
        for side in (change.before, change.after):
            if not isinstance(side, int) or not 0 <= side < 1 << _FIELD_BITS[field]:
                raise GamepakError(f"{label}: before and after must be {_FIELD_BITS[field]}-bit numbers")
    elif field == "bbox":
        for side in (change.before, change.after):
            if not isinstance(side, bytes) or len(side) != _BBOX_BYTES:
                raise GamepakError(f"{label}: before and after must be {_BBOX_BYTES} bytes in hex")
    elif field == "" or field == "properties":
        if change.before is None and change.after is None:
            raise GamepakError(f"{label}: before and after cannot both be null")
        if field == "properties" and (change.before is None or change.after is None):
            raise GamepakError(f"{label}: before and after must be property records in hex")
    elif _PROPERTY_FIELD.fullmatch(field):
        if change.before is None and change.after is None:
            raise GamepakError(f"{label}: before and after cannot both be null")
    else:
        raise GamepakError(f"{label}: not a field zone changes know")


# --------------------------------------------------------------------------- patch files
# A patch's "zone-changes" blob: the changes that turn the base zone into the target, as
# compact UTF-8 JSON (`to_json`'s form). Replayed on whatever version of the zone a target holds.


def changes_between(base: bytes, target: bytes, name: str = "") -> bytes | None:
    """The "zone-changes" blob turning the zone `base` into `target`, or None when either does not
    read as a zone, nothing object-level changed, or replaying the changes on `base` would not
    give `target` byte for byte (a header field, the relation section or the objects' order
    changed: what object-level changes do not say)."""
    import json

    try:
        before, after = read(base, member=name), read(target, member=name)
    except ZoneError:
        return None
    try:
        changes = diff(before, after, name)
    except RepeatedHandle:
        return None  # the patch records the zone's bytes instead
    if not changes:
        return None
    try:
        replayed = apply_changes(before, changes, name).to_bytes()
    except GamepakError:
        return None
    if replayed != target:
        return None
    return json.dumps(to_json(changes), separators=(",", ":")).encode("utf-8")


def load_changes(blob: bytes, where: str) -> list[ZoneChange]:
    """A "zone-changes" blob read back; one line naming `where` for anything that is not one."""
    from ....core.json_input import load_json

    return from_json(load_json(blob, f"{where}: zone changes"), where)


def replay(data: bytes, changes: list[ZoneChange], where: str) -> bytes:
    """The zone `data` with `changes` replayed (`apply_changes`), as bytes. A zone that does not
    read, or changes that do not fit it (a ZoneConflict), are one line naming `where`."""
    return replay_with_undo(data, changes, where, undo=False)[0]


def replay_with_undo(
    data: bytes, changes: list[ZoneChange], where: str, *, undo: bool = True
) -> tuple[bytes, bytes | None]:
    """(`replay`'s bytes, the "zone-changes" blob that takes them back to `data`): the changes
    that changed something, inverted, when replaying them gives `data` byte for byte; else None
    (and None without `undo`, or when nothing changed)."""
    import json

    try:
        zone = read(data, member=where)
    except ZoneError as exc:
        raise GamepakError(f"{where}: not a zone the changes can be replayed on ({exc.reason})") from None
    applied: list[ZoneChange] = []
    result = apply_changes(zone, changes, where, applied)
    new = result.to_bytes()
    if not undo or not applied:
        return new, None
    back = _inverse(applied, zone)
    try:
        exact = apply_changes(result, back, where).to_bytes() == data
    except GamepakError:
        exact = False
    return new, json.dumps(to_json(back), separators=(",", ":")).encode("utf-8") if exact else None


def _inverse(applied: list[ZoneChange], before: Zone) -> list[ZoneChange]:
    """The changes that take `applied` (replayed on `before`) back: each one's before and after
    swapped; what was removed comes back after what preceded it in `before`. A stranger's
    changes may remove what an earlier one of them added (absent from `before`): its anchor is
    then a guess, and `replay_with_undo` keeps such an undo only when it gives `before` back."""
    objects = {obj.handle: obj for obj in before.objects}
    previous_object: dict[int, int | None] = {}
    prior: int | None = None
    for obj in before.objects:
        previous_object[obj.handle] = prior
        prior = obj.handle
    back = []
    for change in applied:
        anchor = None
        if change.after is None and change.field == "":
            anchor = previous_object.get(change.handle)
        elif change.after is None and change.field.startswith("prop:"):
            name_hash = int(change.field[5:], 16)
            owner = objects.get(change.handle)
            properties = owner.properties if owner is not None else []
            index = next((i for i, prop in enumerate(properties) if prop.name_hash == name_hash), None)
            anchor = properties[index - 1].name_hash if index else None
        back.append(ZoneChange(change.handle, change.field, change.after, change.before, anchor))
    return back


def clashes(first: list[ZoneChange], second: list[ZoneChange]) -> list[tuple[int, str, str]]:
    """(handle, field, why) for each (object, field) that `first` and `second` both change, to
    different values: what two change sets cannot both make."""
    wanted = {change.key: change.after for change in first}
    return [
        (change.handle, change.field, "changed differently by two patches")
        for change in second
        if change.key in wanted and wanted[change.key] != change.after
    ]


def change_label(handle: int, field: str) -> str:
    """An (object, field) as messages name it: `object 0x78800002 property op`."""
    return f"object 0x{handle:08X} {_label(field, default_names())}"
