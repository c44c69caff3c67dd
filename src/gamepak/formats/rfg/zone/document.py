"""A zone as a JSON document that people read and edit, and back to the same bytes.

```
{"format": "gamepak-rfg-zone", "version": 36, "handle_count": 0, "district_hash": "0x00000000",
 "district_flags": 4, "relation": "NAME.relation.bin" | null, "trailing": "",
 "objects": [{"class": "object_dummy", "class_hash": "0x9F3641D4", "handle": "0x78800001",
              "num": 1, "flags": "0xFF00", "bbox": [x0, y0, z0, x1, y1, z1],
              "parent": "0xFFFFFFFF", "sibling": "0xFFFFFFFF", "child": "0xFFFFFFFF",
              "properties": [{"name": "op", "hash": "0xB2600654", "type": 5, "kind": "op",
                              "value": {"position": [...], "orient": [[...], [...], [...]]}}]}]}
```
Names are shown where known, hashes always (the hash is what is stored: a name only stands in
for a hash when the hash is absent, as for a property the user adds). A value is decoded only
where encoding it again gives the stored bytes (`values`); otherwise `"kind": "hex"`. Numbers
in hex strings or plain numbers are both read back. The relation section, when the file has
one, is kept byte for byte in a file beside the document (`relation`), never regenerated.
"""

from __future__ import annotations

import math
import re

from ....errors import GamepakError
from .model import NO_HANDLE, Zone, ZoneObject, ZoneProperty
from .names import PROPERTY_KINDS, Names, default_names, property_hash
from .values import KINDS, ZoneValueError, decode, encode

FORMAT = "gamepak-rfg-zone"


def _hex32(value: int) -> str:
    return f"0x{value:08X}"


def to_document(zone: Zone, names: Names | None = None, relation_file: str | None = None) -> dict[str, object]:
    """The JSON document of `zone` (the relation section named by `relation_file`)."""
    names = names or default_names()
    objects = []
    for obj in zone.objects:
        bbox = list(obj.bbox)
        properties = []
        for prop in obj.properties:
            name = names.property_name(prop.name_hash)
            kind, value = decode(PROPERTY_KINDS.get(name) if name else None, prop.type_code, prop.value)
            entry: dict[str, object] = {"name": name, "hash": _hex32(prop.name_hash), "type": prop.type_code}
            entry["kind"] = kind
            entry["value"] = value
            if prop.padding:
                entry["padding"] = prop.padding.hex()
            properties.append(entry)
        item: dict[str, object] = {
            "class": names.class_name(obj.class_hash),
            "class_hash": _hex32(obj.class_hash),
            "handle": _hex32(obj.handle),
            "num": obj.num,
            "flags": f"0x{obj.flags:04X}",
        }
        if all(math.isfinite(value) for value in bbox):
            item["bbox"] = bbox
        else:
            item["bbox_hex"] = obj.bbox_raw.hex()
        item.update(
            parent=_hex32(obj.parent), sibling=_hex32(obj.sibling), child=_hex32(obj.child), properties=properties
        )
        objects.append(item)
    return {
        "format": FORMAT,
        "version": zone.version,
        "handle_count": zone.handle_count,
        "district_hash": _hex32(zone.district_hash),
        "district_flags": zone.district_flags,
        "relation": relation_file if zone.relation is not None else None,
        "trailing": zone.trailing.hex(),
        "objects": objects,
    }


class _Where:
    """Names the place in a document an error is about."""

    def __init__(self, source: str) -> None:
        self.source = source

    def error(self, reason: str, index: int | None = None, prop: str | None = None) -> GamepakError:
        where = [self.source]
        if index is not None:
            where.append(f"object {index}")
        if prop is not None:
            where.append(f"property {prop}")
        return GamepakError(": ".join([*where, reason]))


# A number in a document: decimal or 0x hex, ASCII digits only (int() would take "²" and other
# Unicode digits), at most 20 of them.
_NUMBER = re.compile(r"\s*(?:0[xX]([0-9a-fA-F]{1,20})|([0-9]{1,20}))\s*\Z")


def _number(value: object, bits: int, field: str, where: _Where, index: int | None = None) -> int:
    if type(value) is str:
        found = _NUMBER.match(value)
        if found is None:
            raise where.error(f"{field} must be a number or 0x hex, not {value!r}", index)
        hex_digits, decimal = found.groups()
        value = int(hex_digits, 16) if hex_digits is not None else int(decimal)
    if type(value) is not int or not 0 <= value < 1 << bits:
        raise where.error(f"{field} must be a whole number from 0 to {(1 << bits) - 1}, not {value!r}", index)
    return value


def _hex_bytes(value: object, field: str, where: _Where, index: int | None = None) -> bytes:
    if not isinstance(value, str):
        raise where.error(f"{field} must be a string of hex digits", index)
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise where.error(f"{field} must be a string of hex digits", index) from None


def _property(entry: object, index: int, where: _Where, names: Names) -> ZoneProperty:
    if not isinstance(entry, dict):
        raise where.error("each property must be an object", index)
    label = entry.get("name") or entry.get("hash") or "?"
    if entry.get("hash") is not None:
        name_hash = _number(entry["hash"], 32, "hash", where, index)
    elif isinstance(entry.get("name"), str) and entry["name"]:
        name_hash = property_hash(entry["name"])
    else:
        raise where.error("a property needs a name or a hash", index)
    kind = entry.get("kind", "hex")
    if not isinstance(kind, str) or (kind != "hex" and kind not in KINDS):
        raise where.error(f"unknown kind {kind!r} (one of: hex, {', '.join(KINDS)})", index, str(label))
    try:
        value = encode(str(kind), entry.get("value"))
    except ZoneValueError as exc:
        raise where.error(str(exc), index, str(label)) from None
    default_type = KINDS[kind][0] if kind in KINDS else 5
    type_code = _number(entry.get("type", default_type), 16, "type", where, index)
    if kind in KINDS and KINDS[kind][0] != type_code:
        raise where.error(f"kind {kind} is stored with type {KINDS[kind][0]}, not {type_code}", index, str(label))
    if len(value) > 0xFFFF:
        raise where.error(f"a value of {len(value)} bytes is more than a property holds (65535)", index, str(label))
    padding = _hex_bytes(entry.get("padding", ""), "padding", where, index)
    if padding and len(padding) != -len(value) % 4:
        raise where.error(f"padding must be {-len(value) % 4} bytes for a {len(value)}-byte value", index, str(label))
    return ZoneProperty(type_code, name_hash, value, padding if any(padding) else b"")


def _object(item: object, index: int, where: _Where, names: Names) -> ZoneObject:
    if not isinstance(item, dict):
        raise where.error("each object must be a JSON object", index)
    if item.get("class_hash") is not None:
        class_hash = _number(item["class_hash"], 32, "class_hash", where, index)
    elif isinstance(item.get("class"), str) and item["class"]:
        class_hash = names.class_hash_of(item["class"])
    else:
        raise where.error("an object needs a class or a class_hash", index)
    if "bbox_hex" in item:
        bbox_raw = _hex_bytes(item["bbox_hex"], "bbox_hex", where, index)
        if len(bbox_raw) != 24:
            raise where.error("bbox_hex must be 24 bytes", index)
    else:
        corners = item.get("bbox", [0] * 6)
        try:
            bbox_raw = encode("bbox", {"min": list(corners)[:3], "max": list(corners)[3:]})
        except (ZoneValueError, TypeError):
            raise where.error("bbox must be a list of six finite numbers (min x y z, max x y z)", index) from None
    properties = item.get("properties", [])
    if not isinstance(properties, list):
        raise where.error("properties must be a list", index)
    return ZoneObject(
        class_hash,
        _number(item.get("handle", 0), 32, "handle", where, index),
        bbox_raw,
        _number(item.get("flags", 0), 16, "flags", where, index),
        _number(item.get("parent", NO_HANDLE), 32, "parent", where, index),
        _number(item.get("sibling", NO_HANDLE), 32, "sibling", where, index),
        _number(item.get("child", NO_HANDLE), 32, "child", where, index),
        _number(item.get("num", 0), 32, "num", where, index),
        [_property(entry, index, where, names) for entry in properties],
    )


def from_document(document: object, source: str, relation: bytes | None = None, names: Names | None = None) -> Zone:
    """The zone a document describes (`relation`: the bytes of the file it names). Refused in
    one line naming the object and property: a value that does not fit its kind, a handle used
    twice, a parent that is neither in the zone nor an outside handle the zone had."""
    names = names or default_names()
    where = _Where(source)
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise where.error(f'not a zone document (expected "format": "{FORMAT}")')
    objects = document.get("objects")
    if not isinstance(objects, list):
        raise where.error("objects must be a list")
    zone = Zone(
        [_object(item, index, where, names) for index, item in enumerate(objects)],
        version=_number(document.get("version", 36), 32, "version", where),
        handle_count=_number(document.get("handle_count", 0), 32, "handle_count", where),
        district_hash=_number(document.get("district_hash", 0), 32, "district_hash", where),
        district_flags=_number(document.get("district_flags", 4), 32, "district_flags", where),
        relation=relation,
        trailing=_hex_bytes(document.get("trailing", ""), "trailing", where),
        name=source,
    )
    seen: dict[int, int] = {}
    for index, obj in enumerate(zone.objects):
        if obj.handle in seen:
            raise where.error(
                f"handle 0x{obj.handle:08X} is used twice (objects {seen[obj.handle]} and {index})", index
            )
        seen[obj.handle] = index
    return zone


def check_references(zone: Zone, before: Zone, where: str) -> None:
    """Refuse a parent, sibling, child or handle property that names no object: neither an
    object of `zone` nor an outside object `before` already referred to (one of the base zone
    file's). A removed object that others still refer to is named with them."""
    own_before = {obj.handle for obj in before.objects}
    outside = {handle for obj in before.objects for handle in obj.referenced_handles()} - own_before
    present = {obj.handle for obj in zone.objects}
    removed = own_before - present
    problems = []
    for index, obj in enumerate(zone.objects):
        for handle in sorted(obj.referenced_handles()):
            if handle in present or handle in outside:
                continue
            what = "a removed object" if handle in removed else "no object of the zone"
            problems.append(f"object {index} (0x{obj.handle:08X}) refers to 0x{handle:08X}, {what}")
    if problems:
        more = f" (and {len(problems) - 4} more)" if len(problems) > 4 else ""
        raise GamepakError(f"{where}: " + "; ".join(problems[:4]) + more)
