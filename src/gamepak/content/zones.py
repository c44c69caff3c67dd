"""The content registry's `rfg-zone` row's verbs: a Red Faction Guerrilla zone or layer
(`.rfgzone_pc`, `.layer_pc`) as the catalog's `zone_objects` rows and as the viewer's zone page
(a map seen from above: each object a mark at its x/z position coloured by class, with a
legend; each object's properties in a table). Each takes the file's bytes (read, bounded, by
the caller) and a label naming it in messages. `gamepak zone` is the zone's own command
(`gamepak.ops.zones`)."""

from __future__ import annotations

from typing import Any

# Longest text a property value shows on the page (the rest is cut, said with an ellipsis).
VALUE_CHARS = 160


def _short(value: object) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "\u2026"


def rows(data: bytes, name: str, label: str) -> list[dict[str, Any]]:
    """The catalog's `zone_objects` rows of a zone: one per object (zone: `name`, index, class,
    class_hash, handle, name, x, y, z); ZoneError (a GamepakError) when it does not read."""
    from ..formats.rfg.zone.model import read

    zone = read(data, None, name)
    found = []
    for index, obj in enumerate(zone.objects):
        x, y, z = obj.position or (None, None, None)
        found.append(
            {
                "zone": name,
                "index": index,
                "class": obj.class_name(),
                "class_hash": obj.class_hash,
                "handle": obj.handle,
                "name": obj.name(),
                "x": x,
                "y": y,
                "z": z,
            }
        )
    return found


def preview(data: bytes, path: str) -> dict[str, Any] | None:
    """What the viewer's zone page (templates/previews/zone.html) draws of a zone file's bytes:
    objects, legend, view; None for a file named like a zone that does not start like one."""
    from ..formats.rfg.zone.model import read

    if data[:4] != b"ZONE":
        return None
    zone = read(data, path)
    classes: dict[str, int] = {}
    objects: list[dict[str, Any]] = []
    for index, obj in enumerate(zone.objects):
        label = obj.class_name() or f"0x{obj.class_hash:08X}"
        colour = classes.setdefault(label, len(classes))
        properties = []
        for prop in obj.properties:
            kind_name, value = prop.decoded()
            properties.append((prop.name() or f"0x{prop.name_hash:08X}", kind_name, _short(value)))
        position = obj.position
        objects.append(
            {
                "index": index,
                "class": label,
                "colour": colour,
                "handle": f"0x{obj.handle:08X}",
                "name": obj.name() or "",
                "x": position[0] if position else None,
                "y": position[1] if position else None,
                "z": position[2] if position else None,
                "properties": properties,
            }
        )
    placed = [item for item in objects if item["x"] is not None]
    view = None
    if placed:
        low_x = min(item["x"] for item in placed)
        high_x = max(item["x"] for item in placed)
        low_z = min(-item["z"] for item in placed)
        high_z = max(-item["z"] for item in placed)
        margin = max(high_x - low_x, high_z - low_z, 10.0) * 0.05
        view = {
            "x": low_x - margin,
            "y": low_z - margin,
            "width": high_x - low_x + 2 * margin,
            "height": high_z - low_z + 2 * margin,
            "radius": max(high_x - low_x, high_z - low_z, 10.0) / 150,
        }
    legend = [
        {"class": label, "colour": colour, "count": sum(o["colour"] == colour for o in objects)}
        for label, colour in classes.items()
    ]
    return {"objects": objects, "legend": legend, "view": view, "unplaced": len(objects) - len(placed)}
