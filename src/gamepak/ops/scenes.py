"""`model import SCENE --into TRACK`: a track scene edited elsewhere (Blender) written back into
the track, so a track goes VDrift -> glTF -> Blender -> VDrift.

Objects are matched by node name (`Wall.017.joe`, a repeated one `Wall.017.joe #2`, as
`model export` names them). An object that draws what it drew (compared as VDrift draws it:
models/scene/compare.py) keeps its JOE bytes; a changed one is written as a new JOE model
(replacing its member of `objects.jpk`, its magic kept). Objects sharing one model that come
back different are never merged: the model is replaced only when every object using it changed
alike; otherwise each other shape becomes a new model (`road-2.joe`) and its objects' list.txt
lines name it. A node that list.txt lacks is a new object (its model added to the pack, shared
by new nodes drawing the same thing; its list.txt values from the node's `extras.vdrift` when it
has them, else the defaults below, its texture the material's image). Objects missing from the
scene stay unless `delete=True`.

list.txt is edited as bytes (models/scene/listfile.py): only the tokens that change are
rewritten, new objects appended, so every other byte stays whatever its encoding. An import that
changes nothing writes nothing (the files keep their times) and says "unchanged".

The pack is edited first (models added and replaced: each edit crash-safe), then list.txt is
replaced atomically, then, with `delete`, the members no object names any more are removed: a
kill between the steps leaves a track VDrift loads (at worst with unused members). Temporaries
are named and cleaned as every gamepak write's (core/atomic.py): a killed import's are removed
by the next import into the track.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.sizes import size_text
from ..errors import GamepakError, cannot_read

if TYPE_CHECKING:
    from ..models.gltf_read import NodeMeshes
    from ..models.mesh import Mesh
    from ..models.scene.compare import Corners
    from ..models.scene.listfile import ListFile

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
# The largest scene file an import reads (a track's scene is tens of megabytes).
MAX_SCENE_BYTES = 1 << 30


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


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
    # One line per change: which object, and what happened to its model or list.txt line.
    details: list[str] = field(default_factory=list)

    @property
    def unchanged(self) -> bool:
        """Whether the import leaves the track's files as they were."""
        return not (self.changed or self.added or self.removed)

    def summary(self) -> str:
        if self.unchanged:
            line = f"{self.track}: unchanged ({_plural(len(self.kept), 'object')} as they were)"
        else:
            parts = [f"{len(self.changed)} changed", f"{len(self.added)} added", f"{len(self.removed)} removed"]
            line = f"{self.track}: " + ", ".join(parts) + f", {len(self.kept)} unchanged"
        if self.missing:
            line += f"; {len(self.missing)} not in the scene kept (--delete removes them)"
        return line


def _read_regular(path: str, limit: int, what: str) -> bytes:
    """The bytes of the regular file `path` (never blocking on a FIFO or device), at most
    `limit`; a GamepakError naming it otherwise."""
    from ..core.files import open_regular

    fd, status = open_regular(path, path, "", GamepakError)
    with open(fd, "rb") as handle:
        if status.st_size > limit:
            hint = " (--allow-large reads more)" if what == "list" else ""
            raise GamepakError(
                f"{path}: {status.st_size} bytes, more than the {size_text(limit)} {what} gamepak reads{hint}"
            )
        try:
            return handle.read(limit + 1)[:limit]
        except OSError as exc:
            raise cannot_read(path, exc) from None


def import_scene(
    scene_path: str | os.PathLike[str],
    track: str | os.PathLike[str],
    *,
    delete: bool = False,
    dry_run: bool = False,
    allow_large: bool = False,
) -> SceneImport:
    """Write the objects of the glTF scene at `scene_path` back into the VDrift track `track`
    (see the module's docstring); `dry_run` reports without writing; `allow_large` reads a
    list.txt of more than `track.MAX_LIST_OBJECTS` objects."""
    from ..core.atomic import remove_stale_temporaries, write_bytes
    from ..models import gltf_read as gltf
    from ..models.scene.compare import Exported, imported_corners, unchanged
    from ..models.scene.listfile import ListEdit, format_value, read_list_file
    from ..models.scene.track import (
        FIELDS,
        LIST_FILE,
        MAX_LARGE_LIST_BYTES,
        MAX_LIST_BYTES,
        PACK_FILE,
        check_list_size,
        count_tokens,
        find_track_folder,
    )
    from .content_files import pack_edit

    source = os.fspath(scene_path)
    folder = find_track_folder(os.fspath(track))
    if folder is None:
        raise GamepakError(f"{os.fspath(track)}: not a VDrift track (no objects/{LIST_FILE})")
    objects = os.path.join(folder, "objects")
    list_path = os.path.join(objects, LIST_FILE)
    pack_path = os.path.join(objects, PACK_FILE)
    if not os.path.isfile(pack_path):
        raise GamepakError(f"{pack_path}: missing: a track imported into needs its {PACK_FILE}")
    if not dry_run:
        # What a killed import left (`.objects.jpk.gamepak-PID-N.tmp`, `.list.txt...`) goes now,
        # whether or not this import writes anything.
        remove_stale_temporaries(objects, force=True)
    report = SceneImport(folder)
    list_data = _read_regular(list_path, MAX_LARGE_LIST_BYTES if allow_large else MAX_LIST_BYTES, "list")
    check_list_size(count_tokens(list_data), list_path, allow_large)
    listing = read_list_file(list_data, list_path)
    report.warnings += listing.warnings
    data = _read_regular(source, MAX_SCENE_BYTES, "scene")
    from ..core.content_limits import current

    nodes, issues = gltf.read_nodes(data, path=source, max_nodes=current().scene_node_budget(allow_large))
    del data
    report.warnings += [f"{source}: {issue}" for issue in issues]

    members, shown, magics = _track_models(pack_path, listing, report.warnings)
    export = Exported(list(shown.values()))
    model_number = {name: number for number, name in enumerate(shown)}
    exported_cache: dict[str, Corners] = {}

    def exported(model: str) -> Corners:
        if model not in exported_cache:
            exported_cache[model] = export.corners(model_number[model])
        return exported_cache[model]

    # The exporter's node names for list.txt's objects (those it wrote), in list order.
    slot_of: dict[str, int] = {}
    taken: dict[str, int] = {}
    for slot, entry in enumerate(listing.slots):
        if entry is None or entry.model not in shown:
            continue
        taken[entry.model] = taken.get(entry.model, 0) + 1
        slot_of[entry.model if taken[entry.model] == 1 else f"{entry.model} #{taken[entry.model]}"] = slot
    name_of = {slot: name for name, slot in slot_of.items()}

    corners_of: dict[int, Corners] = {}

    def corners(node: NodeMeshes) -> Corners:
        key = id(node.pieces)
        if key not in corners_of:
            corners_of[key] = imported_corners(node.pieces)
        return corners_of[key]

    matched: dict[int, NodeMeshes] = {}
    new_nodes: list[NodeMeshes] = []
    for node in sorted(nodes, key=lambda found: found.number):
        named = slot_of.get(node.name)
        if named is not None and named not in matched:
            matched[named] = node
        else:
            new_nodes.append(node)
    slots = sorted(matched)
    same: dict[int, bool] = {}
    for slot in slots:
        # A node as the export stored it is the same without decoding it (the common case).
        model = listing.slots[slot].model  # type: ignore[union-attr]
        stored = matched[slot].stored()
        if stored is not None and stored == export.stored(model_number[model]):
            same[slot] = True
    compared = [slot for slot in slots if slot not in same]
    pairs = [(exported(listing.slots[slot].model), corners(matched[slot])) for slot in compared]  # type: ignore[union-attr]
    same.update(zip(compared, unchanged(pairs)))

    changes = ListEdit(listing)
    new_members: dict[str, bytes] = {}
    listed_models = {listing.words[listing.slot_span(slot)[0]] for slot in range(len(listing.slots))}
    names_in_use = set(members) | listed_models

    def new_model_name(model: str) -> str:
        stem, extension = os.path.splitext(model)
        number = 2
        while f"{stem}-{number}{extension}" in names_in_use:
            number += 1
        names_in_use.add(f"{stem}-{number}{extension}")
        return f"{stem}-{number}{extension}"

    def model_bytes(node: NodeMeshes, magic: bytes | None) -> bytes:
        from .. import models

        mesh = _z_up_mesh(node)
        if magic is not None:
            mesh.magic = magic
        return models.dumps(mesh.compacted().with_normals(), "joe")

    # Objects of list.txt the scene has: geometry, per model (instances never merged).
    by_model: dict[str, list[int]] = {}
    for slot, entry in enumerate(listing.slots):
        if entry is not None and slot in name_of:
            by_model.setdefault(entry.model, []).append(slot)
    changed_slots: set[int] = set()
    for model, model_slots in by_model.items():
        edited = [slot for slot in model_slots if slot in matched and not same[slot]]
        if not edited:
            continue
        # Objects that keep the model as it is: unchanged ones, and those the scene lacks (kept
        # unless --delete).
        keeping = [
            slot for slot in model_slots if (slot in matched and same[slot]) or (slot not in matched and not delete)
        ]
        shapes: list[tuple[Corners, list[int]]] = []
        for slot in edited:
            here = corners(matched[slot])
            for shape, shape_slots in shapes:
                if unchanged([(shape, here)])[0]:
                    shape_slots.append(slot)
                    break
            else:
                shapes.append((here, [slot]))
        for number, (_, shape_slots) in enumerate(shapes):
            first = matched[shape_slots[0]]
            changed_slots.update(shape_slots)
            if number == 0 and not keeping:
                new_members[model] = model_bytes(first, magics.get(model))
                report.details.append(
                    f"changed: {', '.join(name_of[slot] for slot in shape_slots)} (model {model} replaced)"
                )
                continue
            name = new_model_name(model)
            new_members[name] = model_bytes(first, magics.get(model))
            for slot in shape_slots:
                changes.replace_token(listing.slot_span(slot)[0], name, f"model of node {name_of[slot]!r}")
            others = [name_of[slot] for slot in model_slots if slot not in shape_slots]
            report.details.append(
                f"changed: {', '.join(name_of[slot] for slot in shape_slots)} now drawn by the new model {name} "
                f"({model} kept for {', '.join(others)}, which differ{'s' if len(others) == 1 else ''})"
            )
    # list.txt values and textures the scene's extras changed.
    for slot in slots:
        entry = listing.slots[slot]
        assert entry is not None
        node = matched[slot]
        first_token = listing.slot_span(slot)[0]
        edited_values = []
        given = _extras_values(node.extras, FIELDS)
        for position, field_name in enumerate(FIELDS[2:], 2):
            value = given.get(field_name)
            if value is None or value == entry.values.get(field_name) or position >= listing.header:
                continue
            changes.replace_token(
                first_token + position, format_value(field_name, value), f"{field_name} of {node.name!r}"
            )
            edited_values.append(field_name)
        texture = _extras_texture(node.extras)
        if texture is not None and texture != entry.texture:
            _check_token(texture, f"node {node.name!r}: texture", source)
            changes.replace_token(first_token + 1, texture, f"texture of node {node.name!r}")
            edited_values.append("texture")
        if edited_values:
            report.details.append(f"changed: {node.name} (list.txt {', '.join(edited_values)})")
            changed_slots.add(slot)
    for slot in slots:
        (report.changed if slot in changed_slots else report.kept).append(name_of[slot])

    # Nodes list.txt lacks: new objects; nodes drawing one shape under one model name share it.
    new_shapes: dict[str, list[tuple[Corners, str]]] = {}
    model_of_pieces: dict[int, str] = {}
    new_values: dict[tuple[tuple[str, float | int], ...], dict[str, float | int]] = {}
    untextured: list[str] = []
    for node in new_nodes:
        model = _REPEAT_SUFFIX.sub("", node.name) or node.mesh_name or f"object{node.number}"
        if not model.lower().endswith(".joe"):
            model += ".joe"
        _check_token(model, f"node {node.name!r}: model name {model!r}", source)
        texture = _extras_texture(node.extras) or (node.images[0] if node.images else "")
        if not texture:
            untextured.append(node.name)
            texture = "none.png"
        _check_token(texture, f"node {node.name!r}: texture {texture!r}", source)
        # Nodes drawing one glTF mesh in one place share its model, whatever their names: the
        # cost grows with the scene's geometry, not with the nodes that reuse it.
        chosen = model_of_pieces.get(id(node.pieces))
        here = corners(node)
        for shape, name in [] if chosen is not None else new_shapes.get(model, []):
            if unchanged([(shape, here)])[0]:
                chosen = name
                break
        if chosen is None and model in shown and model not in new_members and unchanged([(exported(model), here)])[0]:
            chosen = model  # the track's own model, drawn once more
        unused = model in members and model not in listed_models and model not in new_members
        if chosen is None and unused and _member_draws(pack_path, model, here):
            chosen = model  # a member no object named (left by an import killed before list.txt)
        if chosen is None:
            # A member no object names may be replaced; a name in use never is.
            chosen = model if model not in names_in_use or unused else new_model_name(model)
            names_in_use.add(chosen)
            new_members[chosen] = model_bytes(node, None)
            new_shapes.setdefault(model, []).append((here, chosen))
        model_of_pieces[id(node.pieces)] = chosen
        given = _extras_values(node.extras, FIELDS)
        values_key = tuple(given.items())
        values = new_values.get(values_key)
        if values is None:
            # New objects with the same values share one dict (never changed once made).
            values = new_values[values_key] = {**DEFAULT_VALUES, **given}
        changes.append(chosen, texture, values)
        report.added.append(node.name)
        report.details.append(f"added: {node.name} (model {chosen}{', new' if chosen in new_members else ''})")

    if len(untextured) == 1:
        report.warnings.append(f"{source}: node {untextured[0]!r} has no texture: list.txt names none.png")
    elif untextured:
        # One line, not one per node: 300,000 nodes reusing one untextured mesh made 300,000.
        report.warnings.append(
            f"{source}: {len(untextured):,} nodes have no texture (node {untextured[0]!r}, {untextured[1]!r}"
            f"{', ...' if len(untextured) > 2 else ''}): list.txt names none.png"
        )
    # Objects the scene lacks: kept, or with --delete removed with the models nothing else names.
    for slot, name in name_of.items():
        if slot in matched:
            continue
        if delete:
            changes.remove_slot(slot)
            report.removed.append(name)
            report.details.append(f"removed: {name}")
        else:
            report.missing.append(name)
    removable: list[str] = []
    if delete and report.removed:
        still_named = {
            listing.words[first] if first not in changes.replaced else changes.replaced[first].decode(listing.encoding)
            for slot in range(len(listing.slots))
            if slot not in changes.removed
            for first in (listing.slot_span(slot)[0],)
        }
        still_named |= {model for model, _, _ in changes.appended}
        dropped = {listing.slots[slot].model for slot in changes.removed if listing.slots[slot] is not None}  # type: ignore[union-attr]
        removable = sorted(name for name in dropped - still_named - set(new_members) if name in members)
    new_list = changes.result()
    if report.unchanged:
        return report
    # A dry run plans the pack's edits as the real run makes them (no lock, nothing written),
    # so a name objects.jpk cannot store is refused there as it would be here.
    if new_members or (dry_run and removable):
        with pack_edit(pack_path, dry_run=dry_run) as editor:
            for name, member in new_members.items():
                editor.add(name, member, replace=name in members)
            if dry_run:  # the real run removes them once list.txt no longer names them
                for name in removable:
                    editor.remove(name)
    if dry_run:
        return report
    if new_list != listing.data:
        write_bytes(list_path, new_list, overwrite=True)
    if removable:
        with pack_edit(pack_path) as editor:
            for name in removable:
                editor.remove(name)
    return report


def _track_models(
    pack_path: str, listing: ListFile, warnings: list[str]
) -> tuple[set[str], dict[str, Mesh], dict[str, bytes | None]]:
    """(the pack's member names, each model list.txt names as the scene export drew it (read
    and repaired as the track reader does), each model's JOE magic)."""
    import warnings as python_warnings

    from ..core.opening import open as open_archive
    from ..models.joe_batch import read_many
    from ..models.scene.common import repair_meshes

    with open_archive(pack_path) as pack:
        infos = {info.name: info for info in pack.infolist()}
        folded = {name.lower(): name for name in reversed(list(infos))}
        wanted: list[tuple[str, Any]] = []
        seen: set[str] = set()
        for entry in listing.slots:
            if entry is None or entry.model in seen:
                continue
            seen.add(entry.model)
            member = infos.get(entry.model) or infos.get(folded.get(entry.model.lower(), ""))
            if member is not None:
                wanted.append((entry.model, member))
        datas = pack.read_many([member for _, member in wanted]) if wanted else []
    names = [name for name, _ in wanted]
    with python_warnings.catch_warnings():
        python_warnings.simplefilter("ignore")
        found = read_many(datas, [f"{pack_path}:{name}" for name in names], names)
    read = [(name, mesh) for name, mesh in zip(names, found) if not isinstance(mesh, GamepakError)]
    repaired = repair_meshes([(mesh, name) for name, mesh in read], [], {})
    shown = {name: mesh for (name, _), mesh in zip(read, repaired) if mesh is not None}
    magics = {name: mesh.magic for name, mesh in read}
    return set(infos), shown, magics


def _member_draws(pack_path: str, name: str, corners: Corners) -> bool:
    """Whether the pack's member `name` (a JOE model) draws `corners`."""
    from ..core.opening import open as open_archive
    from ..models import loads as models_loads
    from ..models.scene.common import repair_mesh
    from ..models.scene.compare import Exported, unchanged

    with open_archive(pack_path) as pack:
        data = pack.read(name)
    try:
        mesh = repair_mesh(models_loads(data, "joe", name=name), name, [], {})
    except GamepakError:
        return False
    return mesh is not None and unchanged([(Exported([mesh]).corners(0), corners)])[0]


def _z_up_mesh(node: NodeMeshes) -> Mesh:
    from ..models import gltf_read as gltf
    from ..models.mesh import y_up_to_z_up

    mesh = gltf.merge(node.pieces, name=node.name)
    mesh.positions = y_up_to_z_up(mesh.positions)
    if len(mesh.normals):
        mesh.normals = y_up_to_z_up(mesh.normals)
    mesh.require_finite(f"a model imported into objects.jpk ({node.name})")
    return mesh


def _check_token(name: str, what: str, source: str) -> None:
    """A GamepakError naming the node when `name` cannot be one list.txt token."""
    from ..models.scene.listfile import token_problem

    problem = token_problem(name)
    if problem is not None:
        raise GamepakError(f"{source}: {what} cannot be written into list.txt: {problem}; rename the node")


def _extras_values(extras: Any, fields: tuple[str, ...]) -> dict[str, float | int]:
    import math

    found: dict[str, float | int] = {}
    vdrift = extras.get("vdrift") if isinstance(extras, dict) else None
    if not isinstance(vdrift, dict):
        return found
    for name in fields[2:]:
        value = vdrift.get(name)
        if isinstance(value, bool):
            value = int(value)
        if isinstance(value, (int, float)) and math.isfinite(value):
            found[name] = value
    return found


def _extras_texture(extras: Any) -> str | None:
    vdrift = extras.get("vdrift") if isinstance(extras, dict) else None
    texture = vdrift.get("texture") if isinstance(vdrift, dict) else None
    return texture if isinstance(texture, str) and texture else None
