"""`model import SCENE --into TRACK`: a track scene edited elsewhere (Blender) written back into
the track, so a track goes VDrift -> glTF -> Blender -> VDrift.

Objects are matched by node name (`Wall.017.joe`, a repeated one `Wall.017.joe #2`, as
`model export` names them). An object whose geometry did not change keeps its JOE bytes; a
changed one is written as a new JOE model (replacing its member of `objects.jpk`); a node that
list.txt lacks is a new object (its model added to the pack; its list.txt values from the node's
`extras.vdrift` when it has them, else the defaults below, its texture the material's image).
Objects missing from the scene stay unless `delete=True`.

The pack is edited first (models added and replaced: each edit crash-safe), then list.txt is
replaced atomically, then, with `delete`, the members no object names any more are removed: a
kill between the steps leaves a track VDrift loads (at worst with unused members).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import GamepakError

if TYPE_CHECKING:
    import numpy as np

    from ..models.mesh import Mesh
    from ..models.scene.track import ListEntry

# list.txt values of an object that the scene adds without saying (a plain lit, opaque,
# mipmapped, collideable object on surface 0).
DEFAULT_VALUES: dict[str, float | int] = {
    "mipmap": 1,
    "nolighting": 0,
    "skybox": 0,
    "transparent_blend": 0,
    "bump_wavelength": 1.0,
    "bump_amplitude": 0.0,
    "driveable": 0,
    "collideable": 1,
    "friction_nontread": 1.0,
    "friction_tread": 0.9,
    "rolling_resistance": 1.0,
    "rolling_drag": 0.0,
    "isashadow": 0,
    "clamptexture": 0,
    "surface": 0,
}
_REPEAT_SUFFIX = re.compile(r" #\d+$")


@dataclass
class SceneImport:
    """What an import changed (or would change, with `dry_run`)."""

    track: str
    kept: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # in list.txt, not in the scene, kept
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> str:
        parts = [f"{len(self.changed)} changed", f"{len(self.added)} added", f"{len(self.removed)} removed"]
        line = f"{self.track}: " + ", ".join(parts) + f", {len(self.kept)} unchanged"
        if self.missing:
            line += f"; {len(self.missing)} not in the scene kept (--delete removes them)"
        return line


def _corner_table(mesh: Mesh) -> np.ndarray:
    """(F, 3, 8) per-corner position, unit normal and texcoord: what a face draws, however the
    file indexes it."""
    import numpy as np

    positions, normals, texcoords = mesh.corner_values()
    faces = mesh.face_count
    normals = np.zeros((faces, 3, 3)) if normals is None else normals.astype(np.float64)
    normals = normals / np.maximum(np.linalg.norm(normals, axis=2, keepdims=True), 1e-12)
    texcoords = np.zeros((faces, 3, 2)) if texcoords is None else texcoords.astype(np.float64)
    return np.concatenate([positions.astype(np.float64), normals, texcoords], axis=2)


def _canonical(table: np.ndarray) -> np.ndarray:
    """The faces of a corner table in an order that does not depend on the file's: each face
    starts at its smallest corner (winding kept), faces sorted (on values rounded to 0.1 mm)."""
    import numpy as np

    keys = np.round(table[:, :, [0, 1, 2, 6, 7]], 4)
    first = np.zeros(len(table), dtype=np.int64)
    for corner in (1, 2):
        # Lexicographic comparison of corner `corner` with the smallest so far.
        current = keys[np.arange(len(keys)), first]
        candidate = keys[:, corner]
        differs = candidate != current
        index = np.argmax(differs, axis=1)
        smaller = differs.any(axis=1) & (candidate[np.arange(len(keys)), index] < current[np.arange(len(keys)), index])
        first = np.where(smaller, corner, first)
    order = (first[:, None] + np.arange(3)) % 3
    rotated = np.take_along_axis(table, order[:, :, None], axis=1)
    rotated_keys = np.round(rotated[:, :, [0, 1, 2, 6, 7]], 4).reshape(len(table), -1)
    return rotated[np.lexsort(rotated_keys.T[::-1])]


def _same_geometry(original: Mesh, imported: Mesh) -> bool:
    """Whether `imported` draws what `original` draws: the same faces with the same positions,
    texture coordinates and normal directions, within float noise (Blender stores v as 1 - v and
    back), in any order and from any corner (a tool that re-exports renumbers them)."""
    import numpy as np

    if original.face_count != imported.face_count:
        return False
    if not original.face_count:
        return True
    a, b = _corner_table(original), _corner_table(imported)
    if (len(original.texcoords) == 0) != (len(imported.texcoords) == 0):
        return False
    if a.shape == b.shape and np.allclose(a, b, atol=1e-5):
        return True
    return bool(np.allclose(_canonical(a), _canonical(b), atol=1e-3))


def _format_value(value: float | int) -> str:
    return str(value) if isinstance(value, int) else repr(float(value))


def list_text(entries: list[ListEntry]) -> str:
    """list.txt for `entries`, as VDrift's listedit writes it (17 values, one per line)."""
    from ..models.scene.track import FIELDS, VALUES_PER_OBJECT

    lines = [str(VALUES_PER_OBJECT), ""]
    for number, entry in enumerate(entries):
        lines += [f"#entry {number}", entry.model, entry.texture]
        lines += [_format_value(entry.values[name]) for name in FIELDS[2:]]
        lines.append("")
    return "\n".join(lines)


def import_scene(
    scene_path: str | os.PathLike[str], track: str | os.PathLike[str], *, delete: bool = False, dry_run: bool = False
) -> SceneImport:
    """Write the objects of the glTF scene at `scene_path` back into the VDrift track `track`
    (see the module's docstring); `dry_run` reports without writing."""
    from .. import models
    from ..core.atomic import write_bytes
    from ..core.opening import open as open_archive
    from ..models import gltf
    from ..models.mesh import y_up_to_z_up
    from ..models.scene.common import repair_mesh
    from ..models.scene.track import FIELDS, LIST_FILE, PACK_FILE, ListEntry, find_track_folder, parse_list
    from .edit import edit

    source = os.fspath(scene_path)
    folder = find_track_folder(os.fspath(track))
    if folder is None:
        raise GamepakError(f"{os.fspath(track)}: not a VDrift track (no objects/{LIST_FILE})")
    objects = os.path.join(folder, "objects")
    list_path = os.path.join(objects, LIST_FILE)
    pack_path = os.path.join(objects, PACK_FILE)
    if not os.path.isfile(pack_path):
        raise GamepakError(f"{pack_path}: missing: a track imported into needs its {PACK_FILE}")
    report = SceneImport(folder)
    from ..core.files import read_file

    old_text = read_file(list_path).decode("utf-8", "replace")
    entries = parse_list(old_text, list_path, report.warnings)
    data = read_file(source)
    nodes, issues = gltf.read_nodes(data, path=source)
    report.warnings += [f"{source}: {issue}" for issue in issues]

    # The exporter's node names for list.txt's objects, in list order.
    by_node_name: dict[str, ListEntry] = {}
    seen: dict[str, int] = {}
    for entry in entries:
        seen[entry.model] = seen.get(entry.model, 0) + 1
        by_node_name[entry.model if seen[entry.model] == 1 else f"{entry.model} #{seen[entry.model]}"] = entry

    with open_archive(pack_path) as pack:
        originals = {info.name: pack.read(info) for info in pack.infolist()}
    new_members: dict[str, bytes] = {}
    matched: dict[str, ListEntry] = {}
    added: list[ListEntry] = []
    for node in sorted(nodes, key=lambda found: found.number):
        mesh = gltf.merge(node.pieces, name=node.name)
        mesh.positions = y_up_to_z_up(mesh.positions)
        if len(mesh.normals):
            mesh.normals = y_up_to_z_up(mesh.normals)
        mesh.require_finite(f"a model imported into {PACK_FILE} ({node.name})")
        listed = by_node_name.get(node.name)
        if listed is not None:
            values = dict(listed.values)
            values.update(_extras_values(node.extras, FIELDS))
            matched[node.name] = ListEntry(listed.line, listed.model, listed.texture, values)
            original_bytes = originals.get(listed.model)
            if original_bytes is not None and listed.model not in new_members:
                original = models.loads(original_bytes, "joe", name=listed.model)
                shown = repair_mesh(original, listed.model, [], {})
                if shown is not None and _same_geometry(shown, mesh):
                    report.kept.append(node.name)
                    continue
            new_members[listed.model] = models.dumps(mesh.compacted().with_normals(), "joe")
            report.changed.append(node.name)
            continue
        model = _REPEAT_SUFFIX.sub("", node.name) or f"object{node.number}"
        if not model.lower().endswith(".joe"):
            model += ".joe"
        texture = _extras_texture(node.extras) or (node.images[0] if node.images else "")
        if not texture:
            report.warnings.append(f"{source}: node {node.name!r} has no texture: list.txt names none.png")
            texture = "none.png"
        values = dict(DEFAULT_VALUES)
        values.update(_extras_values(node.extras, FIELDS))
        added.append(ListEntry(0, model, texture, values))
        if model not in originals or model in new_members:
            new_members[model] = models.dumps(mesh.compacted().with_normals(), "joe")
        else:
            original = models.loads(originals[model], "joe", name=model)
            shown = repair_mesh(original, model, [], {})
            if shown is None or not _same_geometry(shown, mesh):
                report.warnings.append(
                    f"{source}: new object {node.name!r} reuses the model {model}, whose geometry differs"
                )
        report.added.append(node.name)
    # list.txt keeps its order; added objects come last, in the scene's order.
    final: list[ListEntry] = []
    dropped: set[str] = set()
    for name, entry in by_node_name.items():
        if name in matched:
            final.append(matched[name])
        elif delete:
            report.removed.append(name)
            dropped.add(entry.model)
        else:
            report.missing.append(name)
            final.append(entry)
    final += added
    new_text = old_text if _same_entries(entries, final) else list_text(final)
    # Only the models of removed objects leave the pack (members nothing named before stay).
    removable = sorted(dropped - {entry.model for entry in final} - set(new_members))
    if dry_run:
        return report
    if new_members:
        with edit(pack_path) as editor:
            for name, member in new_members.items():
                editor.add(name, member, replace=name in originals)
    if new_text != old_text:
        write_bytes(list_path, new_text.encode("utf-8"), overwrite=True)
    if removable:
        with edit(pack_path) as editor:
            for name in removable:
                editor.remove(name)
    return report


def _same_entries(old: list[ListEntry], new: list[ListEntry]) -> bool:
    return [(e.model, e.texture, e.values) for e in old] == [(e.model, e.texture, e.values) for e in new]


def _extras_values(extras: Any, fields: tuple[str, ...]) -> dict[str, float | int]:
    found: dict[str, float | int] = {}
    vdrift = extras.get("vdrift") if isinstance(extras, dict) else None
    if not isinstance(vdrift, dict):
        return found
    for name in fields[2:]:
        value = vdrift.get(name)
        if isinstance(value, bool):
            value = int(value)
        if isinstance(value, (int, float)):
            found[name] = value
    return found


def _extras_texture(extras: Any) -> str | None:
    vdrift = extras.get("vdrift") if isinstance(extras, dict) else None
    texture = vdrift.get("texture") if isinstance(vdrift, dict) else None
    return texture if isinstance(texture, str) and texture and not any(c.isspace() for c in texture) else None
