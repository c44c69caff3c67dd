"""What changed between two versions of one zone, object by object: the unit that zone edits,
import summaries and mods that merge speak in.

An object is known by its handle. A change is one of: an object added (with its block), an
object removed, or one object's header field or property set to new bytes (a property removed
is set to None). Two sets of changes to one zone merge when they touch different (object,
field) pairs; the same pair changed to different bytes by both is a conflict.
"""

from __future__ import annotations

from .model import Zone, ZoneObject, ZoneProperty
from .names import Names, default_names

HEADER_FIELDS = ("class_hash", "bbox_raw", "flags", "parent", "sibling", "child", "num")


class ZoneChange:
    """One object-level change. `field` is a header field name, `prop:0xHASH` for a property,
    or "" for a whole object added (`after` is the object) or removed (`after` is None)."""

    __slots__ = ("after", "before", "field", "handle")

    def __init__(self, handle: int, field: str, before: object, after: object) -> None:
        self.handle = handle
        self.field = field
        self.before = before
        self.after = after

    @property
    def key(self) -> tuple[int, str]:
        return (self.handle, self.field)

    def describe(self, names: Names | None = None) -> str:
        names = names or default_names()
        if self.field == "":
            if self.after is None:
                return f"0x{self.handle:08X}: removed"
            assert isinstance(self.after, ZoneObject)
            return (
                f"0x{self.handle:08X}: added ({names.class_name(self.after.class_hash) or hex(self.after.class_hash)})"
            )
        label = self.field
        if label.startswith("prop:"):
            label = names.property_name(int(label[5:], 16)) or label[5:]
            if self.after is None:
                return f"0x{self.handle:08X}: property {label} removed"
            if self.before is None:
                return f"0x{self.handle:08X}: property {label} added"
            return f"0x{self.handle:08X}: property {label} changed"
        return f"0x{self.handle:08X}: {label.replace('_raw', '')} changed"


def _properties(obj: ZoneObject) -> dict[int, ZoneProperty]:
    found: dict[int, ZoneProperty] = {}
    for prop in obj.properties:
        found.setdefault(prop.name_hash, prop)
    return found


def diff(before: Zone, after: Zone) -> list[ZoneChange]:
    """The object-level changes that turn `before` into `after` (objects by handle)."""
    changes: list[ZoneChange] = []
    old = {obj.handle: obj for obj in before.objects}
    new = {obj.handle: obj for obj in after.objects}
    for handle, obj in old.items():
        if handle not in new:
            changes.append(ZoneChange(handle, "", obj, None))
    for handle, obj in new.items():
        if handle not in old:
            changes.append(ZoneChange(handle, "", None, obj))
            continue
        was = old[handle]
        for field in HEADER_FIELDS:
            if getattr(was, field) != getattr(obj, field):
                changes.append(ZoneChange(handle, field, getattr(was, field), getattr(obj, field)))
        was_props, props = _properties(was), _properties(obj)
        for name_hash in [*was_props, *(key for key in props if key not in was_props)]:
            a, b = was_props.get(name_hash), props.get(name_hash)
            a_bytes = a.record() if a else None
            b_bytes = b.record() if b else None
            if a_bytes != b_bytes:
                changes.append(ZoneChange(handle, f"prop:0x{name_hash:08X}", a, b))
        if [p.name_hash for p in was.properties] != [p.name_hash for p in obj.properties] and not any(
            change.handle == handle
            and change.field.startswith("prop:")
            and (change.before is None or change.after is None)
            for change in changes
        ):
            changes.append(ZoneChange(handle, "property order", None, None))
    return changes
