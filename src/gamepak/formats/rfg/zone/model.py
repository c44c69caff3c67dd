"""A zone file read into objects and properties, and written back byte for byte.

The reader checks every count and size against the bytes before it allocates: a count of
objects past what the file could hold, a block or property past its end, a property block
that its records do not fill exactly. Every error names the file, the object, the offset and
the field. The writer derives counts and sizes from the objects; an unchanged zone writes
the same bytes (the relation section, non-zero padding and trailing bytes are kept as read).
"""

from __future__ import annotations

import struct

from ....errors import CorruptArchiveError, GamepakError
from .names import HANDLE_LIST_PROPERTIES, HANDLE_PROPERTIES, Names, default_names, property_hash
from .values import TYPE_FIXED, decode, encode

SIGNATURE = b"ZONE"
VERSION = 36
HEADER = struct.Struct("<4sIIIII")  # signature, version, object_count, handle_count, district_hash, district_flags
# class, handle, bbox, flags, block_size, parent, sibling, child, num, prop_count, prop_block_size
OBJECT = struct.Struct("<II6fHHIIIIHH")
OBJECT_BBOX = struct.Struct("<II24s")  # the same start, the bbox as its stored bytes
OBJECT_TAIL = struct.Struct("<HHIIIIHH")  # what follows the bbox
PROPERTY = struct.Struct("<HHI")  # type code, value size, name hash
RELATION_SIZE = 87_368
NO_HANDLE = 0xFFFFFFFF
# District flag bits 0 and 2: either one set means the file has no relation section.
NO_RELATION_BITS = 0b101
MAX_BLOCK = 0xFFFF


class ZoneError(CorruptArchiveError):
    """A zone file (or a zone document) that contradicts the format."""


def has_relation_section(district_flags: int) -> bool:
    return district_flags & NO_RELATION_BITS == 0


def _padding(size: int) -> int:
    return -size % 4


class ZoneProperty:
    """One property: its type code, name hash, value bytes, and its padding when not zero."""

    __slots__ = ("name_hash", "padding", "type_code", "value")

    def __init__(self, type_code: int, name_hash: int, value: bytes, padding: bytes = b"") -> None:
        self.type_code = type_code
        self.name_hash = name_hash
        self.value = value
        self.padding = padding  # empty for zero padding

    def record(self) -> bytes:
        padding = self.padding or bytes(_padding(len(self.value)))
        return PROPERTY.pack(self.type_code, len(self.value), self.name_hash) + self.value + padding

    def name(self, names: Names | None = None) -> str | None:
        return (names or default_names()).property_name(self.name_hash)

    def decoded(self, names: Names | None = None) -> tuple[str, object]:
        """(kind, value) as `values.decode` gives it for this property's name."""
        from .names import PROPERTY_KINDS

        name = self.name(names)
        return decode(PROPERTY_KINDS.get(name) if name else None, self.type_code, self.value)


class ZoneObject:
    """One object: class hash, handle, bbox (its stored 24 bytes), flags, relations, `num`,
    and its properties in file order."""

    __slots__ = ("bbox_raw", "child", "class_hash", "flags", "handle", "num", "parent", "properties", "sibling")

    def __init__(
        self,
        class_hash: int,
        handle: int,
        bbox_raw: bytes = bytes(24),
        flags: int = 0,
        parent: int = NO_HANDLE,
        sibling: int = NO_HANDLE,
        child: int = NO_HANDLE,
        num: int = 0,
        properties: list[ZoneProperty] | None = None,
    ) -> None:
        self.class_hash = class_hash
        self.handle = handle
        self.bbox_raw = bbox_raw
        self.flags = flags
        self.parent = parent
        self.sibling = sibling
        self.child = child
        self.num = num
        self.properties = properties if properties is not None else []

    @property
    def bbox(self) -> tuple[float, ...]:
        return struct.unpack("<6f", self.bbox_raw)

    def class_name(self, names: Names | None = None) -> str | None:
        return (names or default_names()).class_name(self.class_hash)

    def find(self, name: str) -> ZoneProperty | None:
        """The first property named `name` (any case)."""
        wanted = property_hash(name)
        return next((prop for prop in self.properties if prop.name_hash == wanted), None)

    def value(self, name: str) -> object | None:
        """The decoded value of property `name`, None when absent or kept as bytes."""
        prop = self.find(name)
        if prop is None:
            return None
        kind, value = prop.decoded()
        return None if kind == "hex" else value

    def set_value(self, name: str, kind: str, value: object) -> None:
        """Set property `name` to `value` of `kind` (added at the end when absent)."""
        from .values import KINDS

        data = encode(kind, value)
        prop = self.find(name)
        if prop is None:
            type_code = KINDS[kind][0] if kind in KINDS else TYPE_FIXED
            self.properties.append(ZoneProperty(type_code, property_hash(name), data))
        else:
            prop.value = data
            prop.padding = b""

    @property
    def position(self) -> tuple[float, float, float] | None:
        """Where the object is: the position of its `op` property."""
        op = self.value("op")
        if isinstance(op, dict):
            x, y, z = op["position"]
            return (x, y, z)
        return None

    def move_to(self, position: tuple[float, float, float] | list[float]) -> None:
        """Set the position of `op`, keeping its orientation's bytes."""
        prop = self.find("op")
        if prop is None or len(prop.value) != 48:
            raise GamepakError(f"object 0x{self.handle:08X} has no op property to move")
        prop.value = encode("vec3", list(position)) + prop.value[12:]

    def name(self) -> str | None:
        """The object's name where a property holds one (`name`, `display_name`, ...)."""
        for key in ("name", "display_name", "mission_info", "squad_def", "spawn_set", "dummy_type"):
            value = self.value(key)
            if isinstance(value, str) and value and value.lower() != "none":
                return value
        return None

    def block(self) -> bytes:
        records = b"".join(prop.record() for prop in self.properties)
        if OBJECT.size + len(records) > MAX_BLOCK or len(self.properties) > MAX_BLOCK:
            raise GamepakError(
                f"object 0x{self.handle:08X}: its properties take {len(records)} bytes, more than a block holds"
            )
        head = OBJECT_BBOX.pack(self.class_hash, self.handle, self.bbox_raw)
        tail = OBJECT_TAIL.pack(
            self.flags,
            OBJECT.size + len(records),
            self.parent,
            self.sibling,
            self.child,
            self.num,
            len(self.properties),
            len(records),
        )
        return head + tail + records

    def referenced_handles(self) -> set[int]:
        """The handles this object points at: parent, sibling, child and handle properties."""
        found = {self.parent, self.sibling, self.child}
        names = default_names()
        for prop in self.properties:
            name = names.property_name(prop.name_hash)
            if name in HANDLE_PROPERTIES and len(prop.value) == 4:
                found.add(int.from_bytes(prop.value, "little"))
            elif name in HANDLE_LIST_PROPERTIES and len(prop.value) % 4 == 0:
                found.update(struct.unpack(f"<{len(prop.value) // 4}I", prop.value))
        found.discard(NO_HANDLE)
        return found


class Zone:
    """A whole zone file: header fields, the relation section (None when absent), the objects
    and any bytes after them."""

    def __init__(
        self,
        objects: list[ZoneObject] | None = None,
        *,
        version: int = VERSION,
        handle_count: int = 0,
        district_hash: int = 0,
        district_flags: int = 4,
        relation: bytes | None = None,
        trailing: bytes = b"",
        name: str = "",
    ) -> None:
        self.objects = objects if objects is not None else []
        self.version = version
        self.handle_count = handle_count
        self.district_hash = district_hash
        self.district_flags = district_flags
        self.relation = relation
        self.trailing = trailing
        self.name = name

    def to_bytes(self) -> bytes:
        """The file's bytes (the same bytes for a zone read and not changed)."""
        if self.version != VERSION:  # a document's or the API's: `read` (and the game) take no other
            raise GamepakError(f"{self.name or 'zone'}: zone version {self.version} cannot be written (only {VERSION})")
        if has_relation_section(self.district_flags) != (self.relation is not None):
            want = "needs" if has_relation_section(self.district_flags) else "cannot have"
            raise GamepakError(
                f"{self.name or 'zone'}: district flags 0x{self.district_flags:X} {want} a relation section"
            )
        if self.relation is not None and len(self.relation) != RELATION_SIZE:
            raise GamepakError(f"{self.name or 'zone'}: the relation section must be {RELATION_SIZE} bytes")
        parts = [
            HEADER.pack(
                SIGNATURE, self.version, len(self.objects), self.handle_count, self.district_hash, self.district_flags
            )
        ]
        if self.relation is not None:
            parts.append(self.relation)
        parts += [obj.block() for obj in self.objects]
        parts.append(self.trailing)
        return b"".join(parts)

    def find(self, handle: int) -> ZoneObject | None:
        return next((obj for obj in self.objects if obj.handle == handle), None)

    def new_handle(self) -> int:
        """A handle no object of this zone has: the next after the largest of its own cell and
        layer (the handle's top 16 bits), as the game numbers them."""
        used = {obj.handle for obj in self.objects}
        base = max(used, default=0) & 0xFFFF0000
        candidate = (max((handle for handle in used if handle & 0xFFFF0000 == base), default=base) & 0xFFFFFFFF) + 1
        while candidate in used or candidate == NO_HANDLE or candidate & 0xFFFF0000 != base:
            candidate = base | ((candidate + 1) & 0xFFFF)
            if candidate & 0xFFFF == 0:
                raise GamepakError(f"{self.name or 'zone'}: no free handle left in 0x{base:08X}")
        return candidate

    def add(self, obj: ZoneObject) -> ZoneObject:
        """Append `obj`; a handle of 0 or one already used gets a new unique handle."""
        if obj.handle == 0 or self.find(obj.handle) is not None:
            obj.handle = self.new_handle()
        self.objects.append(obj)
        return obj

    def remove(self, handle: int) -> ZoneObject:
        """Remove the object `handle`. Refused (naming them) while other objects refer to it."""
        obj = self.find(handle)
        if obj is None:
            raise GamepakError(f"{self.name or 'zone'}: no object with handle 0x{handle:08X}")
        referring = [other for other in self.objects if other is not obj and handle in other.referenced_handles()]
        if referring:
            names = ", ".join(f"0x{other.handle:08X}" for other in referring[:8])
            raise GamepakError(
                f"{self.name or 'zone'}: object 0x{handle:08X} is referred to by {len(referring)} object(s) ({names}); "
                "remove or change them first"
            )
        self.objects.remove(obj)
        return obj


def read(data: bytes, path: str | None = None, member: str | None = None) -> Zone:
    """Parse a zone file's bytes. Raises ZoneError naming the object, offset and field."""
    size = len(data)

    def fail(offset: int, reason: str) -> ZoneError:
        return ZoneError(reason, path=path, offset=offset, member=member)

    if size < HEADER.size:
        raise fail(0, f"a zone file holds at least a {HEADER.size}-byte header; this one has {size} bytes")
    signature, version, object_count, handle_count, district_hash, district_flags = HEADER.unpack_from(data)
    if signature != SIGNATURE:
        raise fail(0, f"not a zone file: signature {signature!r}, expected b'ZONE'")
    if version != VERSION:
        raise fail(4, f"zone version {version} is not supported (only {VERSION})")
    offset = HEADER.size
    relation = None
    if has_relation_section(district_flags):
        if size < offset + RELATION_SIZE:
            raise fail(
                offset,
                f"the relation section ({RELATION_SIZE} bytes: district flags 0x{district_flags:X}) is cut short",
            )
        relation = data[offset : offset + RELATION_SIZE]
        offset += RELATION_SIZE
    if object_count > (size - offset) // OBJECT.size:
        raise fail(8, f"object_count {object_count} cannot fit in the {size - offset} bytes left")
    objects: list[ZoneObject] = []
    for index in range(object_count):
        start = offset
        if size - start < OBJECT.size:
            raise fail(start, f"object {index}: header cut short")
        class_hash, handle, bbox_raw = OBJECT_BBOX.unpack_from(data, start)
        flags, block_size, parent, sibling, child, num, prop_count, prop_block_size = OBJECT_TAIL.unpack_from(
            data, start + 32
        )
        if block_size != OBJECT.size + prop_block_size:
            raise fail(
                start + 34,
                f"object {index}: block_size {block_size} is not {OBJECT.size} + prop_block_size {prop_block_size}",
            )
        end = start + block_size
        if end > size:
            raise fail(start + 34, f"object {index}: its block ({block_size} bytes) runs past the end of the file")
        if prop_count > prop_block_size // PROPERTY.size:
            raise fail(start + 52, f"object {index}: prop_count {prop_count} cannot fit in {prop_block_size} bytes")
        properties = []
        cursor = start + OBJECT.size
        for prop_index in range(prop_count):
            if end - cursor < PROPERTY.size:
                raise fail(cursor, f"object {index}, property {prop_index}: record header past the block's end")
            type_code, value_size, name_hash = PROPERTY.unpack_from(data, cursor)
            value_start = cursor + PROPERTY.size
            value_end = value_start + value_size
            padded_end = value_end + _padding(value_size)
            if padded_end > end:
                raise fail(
                    cursor + 2, f"object {index}, property {prop_index}: size {value_size} runs past the block's end"
                )
            padding = data[value_end:padded_end]
            properties.append(
                ZoneProperty(type_code, name_hash, data[value_start:value_end], padding if any(padding) else b"")
            )
            cursor = padded_end
        if cursor != end:
            raise fail(
                cursor,
                f"object {index}: its {prop_count} properties fill {cursor - start - OBJECT.size}"
                f" of prop_block_size {prop_block_size} bytes",
            )
        objects.append(ZoneObject(class_hash, handle, bbox_raw, flags, parent, sibling, child, num, properties))
        offset = end
    name = member or path or ""
    return Zone(
        objects,
        version=version,
        handle_count=handle_count,
        district_hash=district_hash,
        district_flags=district_flags,
        relation=relation,
        trailing=data[offset:],
        name=name,
    )
