"""The zone family of the content registry (`gamepak zone`, the catalog's `zone_objects`
table, the viewer's zone page) and its row: RFG zones and layers (their verbs are in
`gamepak.content.zones`)."""

from __future__ import annotations

from ..spec import VERIFY as _VERIFY
from ..spec import ContentKind, Family, Verb

# A zone has its own command (`gamepak zone`: ls, export, import, check, by
# `gamepak.ops.zones`), its own catalog table (`zone_objects`: one row per object) and
# its own page in the viewer (a map).
ZONE = Family(
    "zone",
    "zone",
    "zone_objects",
    "zone",
    "zone",
    {
        "rows": "rows(data, name, label) -> [{zone, index, class, class_hash, handle, name, x, y, z}]"
        " (the catalog's zone_objects rows)",
        "preview": "preview(data, label) -> what the viewer's zone page draws, or None (not a zone)",
        "verify": _VERIFY,
    },
    ("ls", "export", "import", "check"),
)

RFG_ZONE = ContentKind(
    "rfg-zone",
    ZONE,
    "Red Faction Guerrilla zones and layers: objects with a class, a position and properties",
    extensions=(".rfgzone_pc", ".layer_pc"),
    packs=("vpp",),
    types={".rfgzone_pc": "map/rfg-zone", ".layer_pc": "map/rfg-zone"},
    verbs={
        "rows": Verb("gamepak.content.zones:rows"),
        "preview": Verb("gamepak.content.zones:preview"),
        # `gamepak verify PACK`: every zone of the pack read and checked.
        "verify": Verb("gamepak.formats.rfg.zone.check:check_pack_zones"),
    },
)
