"""What `verify` and `zone check` find in a zone: whatever stops it being read (counts, block
and property sizes, padding, the relation section: the reader's own errors), handles used twice,
and bytes after the last object. Relations to objects outside the file are normal (a layer's
objects hang under the base zone's) and are only counted."""

from __future__ import annotations

from .model import NO_HANDLE, Zone, ZoneError, read

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ....core.archive import Archive, Problem


def is_zone_name(name: str) -> bool:
    return name.lower().endswith((".rfgzone_pc", ".layer_pc"))


def check_zone(data: bytes, member: str, path: str | None = None) -> list[tuple[str, str]]:
    """(severity, problem) for one zone's bytes: "error", "warning" or "note"."""
    try:
        zone = read(data, path, member)
    except ZoneError as exc:
        if path is not None:
            return [("error", str(exc))]
        return [("error", exc.reason + (f" (offset {exc.offset})" if exc.offset is not None else ""))]
    findings: list[tuple[str, str]] = []
    seen: dict[int, int] = {}
    for index, obj in enumerate(zone.objects):
        if obj.handle in seen:
            findings.append(
                ("error", f"object {index}: handle 0x{obj.handle:08X} also used by object {seen[obj.handle]}")
            )
        seen.setdefault(obj.handle, index)
    outside = sum(
        handle != NO_HANDLE and handle not in seen
        for obj in zone.objects
        for handle in (obj.parent, obj.sibling, obj.child)
    )
    if outside:
        findings.append(("note", f"{outside} relation(s) to objects outside this file (the base zone's)"))
    findings += _value_findings(zone)
    if zone.trailing:
        findings.append(("warning", f"{len(zone.trailing)} byte(s) after the last object (kept as they are)"))
    return findings


def check_pack_zones(archive: Archive) -> list[Problem]:
    """`verify`'s zone findings for one pack's own zone members (a `.str2_pc`; as for tables,
    nested packs are not opened: `zone check` goes into them): errors for zones that cannot be
    read or reuse a handle, warnings for bytes after the objects."""
    from ....core.archive import Problem

    members = [entry for entry in archive.infolist() if is_zone_name(entry.name)]
    problems: list[Problem] = []
    if not members:
        return problems
    for entry, chunks in archive.iter_data(members):
        member = entry.name
        for severity, problem in check_zone(b"".join(chunks), member):
            if severity != "note":
                problems.append(Problem(f"zone {member}: {problem}", severity=severity, member=member))
    return problems


# Lists whose length another property gives: (list, count, items per counted thing).
_COUNTED = (
    ("yellow_polygon", "yellow_num_points", 1),
    ("warning_polygon", "warning_num_points", 1),
    ("yellow_triangles", "yellow_num_triangles", 3),
    ("warning_triangles", "warning_num_triangles", 3),
)


def _value_findings(zone: Zone) -> list[tuple[str, str]]:
    """Warnings for values the game's tools would not read as their name says: a string
    without exactly one final NUL, a value whose size does not fit its kind (both kept as bytes),
    a list whose length disagrees with the count beside it."""
    from .names import PROPERTY_KINDS

    findings: list[tuple[str, str]] = []
    for index, obj in enumerate(zone.objects):
        for prop in obj.properties:
            name = prop.name()
            kind = PROPERTY_KINDS.get(name) if name else None
            if kind is None or prop.decoded()[0] != "hex":
                continue
            if prop.type_code == 4 and not prop.value.endswith(b"\0"):
                why = "a string without its final NUL"
            elif prop.type_code == 4:
                why = "a string with a NUL inside or more than one at its end"
            else:
                why = f"{len(prop.value)} bytes (type {prop.type_code}) do not hold a {kind}"
            findings.append(("warning", f"object {index} (0x{obj.handle:08X}): property {name}: {why} (kept as bytes)"))
        for list_name, count_name, per in _COUNTED:
            items, count = obj.value(list_name), obj.value(count_name)
            if isinstance(items, list) and isinstance(count, int) and len(items) != count * per:
                findings.append(
                    (
                        "warning",
                        f"object {index} (0x{obj.handle:08X}): {list_name} holds {len(items)} items, "
                        f"{count_name} = {count} says {count * per}",
                    )
                )
    return findings
