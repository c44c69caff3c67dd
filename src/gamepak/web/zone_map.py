"""The viewer's zone page: an RFG zone or layer drawn as a map seen from above (an SVG, each
object a mark at its x/z position coloured by class, with a legend), the objects beside it
(filtered by class or name by /static/zone-map.js, which also zooms and pans the map), and
each object's properties in a table. The zone is read within the preview's byte limit."""

from __future__ import annotations

from typing import Any

from ..formats.rfg.zone.check import is_zone_name

# Far above any game zone (the largest territory cells are a few MB).
MAX_ZONE_BYTES = 32 << 20
# Longest text a property value shows (the rest is cut, said with an ellipsis).
VALUE_CHARS = 160


def _short(value: object) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "\u2026"


def is_zone(name: str, head: bytes) -> bool:
    """Whether a file is a zone the page draws: its name, and the signature at its start."""
    return is_zone_name(name) and head[:4] == b"ZONE"


def zone_data(data: bytes, path: str) -> dict[str, Any]:
    """What templates/previews/zone.html draws of a zone file's bytes: objects, legend, view."""
    from ..formats.rfg.zone.model import read

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
