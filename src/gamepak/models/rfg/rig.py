"""RFG animation rigs (`.rig_pc`): the bone names, parents and bind-pose translations a
character mesh's skin needs (spec section 6; the mesh holds no bone names).

| off  | type          | field                                                        |
|------|---------------|--------------------------------------------------------------|
| 0x00 | char[32]      | name (zero in the game's files)                              |
| 0x20 | u32           | flags                                                        |
| 0x24 | i32 x 4       | bone, common bone, virtual bone and tag counts               |
| 0x34 | i32 x 3       | offsets of the checksums, bones and tags (zero: they follow) |
| 0x40 | u32 x bones   | bone name CRCs                                               |
|      | BONE x bones  | name offset, float3 inverse translation, float3 translation  |
|      |               | (relative to the parent), parent (-1: none), id              |
|      | 60 x tags     | tags (name offset, 3x3 rotation, translation, parent, id)    |
|      | names         | NUL-terminated; a name offset counts from here               |

UNCERTAIN (no rig among the samples): the names' base (after the tags, as RfgTools reads them)
and the meaning of the translations; the export does not depend on the latter for the bind
pose (its inverse bind matrices are made from the same translations).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from .reader import MeshFormatError

HEADER = struct.Struct("<32sIiiiiiii")
BONE = struct.Struct("<i3f3fii")
TAG_SIZE = 60


@dataclass
class RigBone:
    name: str
    parent: int
    translation: tuple[float, float, float]
    inverse_translation: tuple[float, float, float]


@dataclass
class Rig:
    bones: list[RigBone]
    label: str = ""

    def world_translations(self) -> list[tuple[float, float, float]]:
        """Each bone's bind-pose position: its translation added along its parents (a parent
        past the list, or a cycle, ends the chain)."""
        found: list[tuple[float, float, float]] = []
        for bone in self.bones:
            x, y, z = bone.translation
            seen = set()
            parent = bone.parent
            while 0 <= parent < len(self.bones) and parent not in seen:
                seen.add(parent)
                px, py, pz = self.bones[parent].translation
                x, y, z = x + px, y + py, z + pz
                parent = self.bones[parent].parent
            found.append((x, y, z))
        return found


def read_rig(data: bytes, label: str = "<rig_pc>") -> Rig:
    """Parse a rig; counts are checked against the file before anything is read from them."""
    if len(data) < HEADER.size:
        raise MeshFormatError(label, 0, "header", f"{len(data)} bytes, a rig header takes {HEADER.size}")
    _, _, bone_count, _, _, tag_count, *offsets = HEADER.unpack_from(data, 0)
    if bone_count < 0 or tag_count < 0:
        raise MeshFormatError(label, 0x24, "bone/tag count", f"{bone_count}/{tag_count} is negative")
    if any(offsets):
        raise MeshFormatError(label, 0x34, "offsets", f"{offsets}: non-zero offsets are not known in rigs")
    bones_at = HEADER.size + 4 * bone_count
    names_at = bones_at + BONE.size * bone_count + TAG_SIZE * tag_count
    if names_at > len(data):
        raise MeshFormatError(label, 0x24, "bone count", f"{bone_count} bones and {tag_count} tags run past the file")
    bones = []
    for number in range(bone_count):
        name_offset, ix, iy, iz, x, y, z, parent, _ = BONE.unpack_from(data, bones_at + BONE.size * number)
        at = names_at + name_offset
        end = data.find(b"\0", at) if name_offset >= 0 and at < len(data) else -1
        if end < 0:
            raise MeshFormatError(label, bones_at + BONE.size * number, f"bone {number} name offset", f"{name_offset}")
        name = data[at:end].decode("latin-1")
        bones.append(RigBone(name, parent, (x, y, z), (ix, iy, iz)))
    return Rig(bones, label)
