"""A VDrift track folder read as a scene, from what its text files say (`track`): `objects/list.txt`
names each object's JOE model (a member of `objects/objects.jpk`, else a loose file) and texture;
the JOE vertices are already in world coordinates, so every object is one node with no transform.
The objects share materials (texture, flags, `cull faces`) and `surfaces.txt`'s types; track.txt's
start positions are marker nodes.

Textures are file names used literally (`objects/<name>`, then the data folder's `carparts/` and
`trackparts/`); VDrift runs on case-sensitive systems, so a name that matches a file only
ignoring case is used with a warning naming both. Missing models and textures are warnings,
never a failed scene.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from . import ini
from .common import (
    CLAMP_TO_EDGE,
    REPEAT,
    FileFinder,
    Scene,
    SceneError,
    SceneImage,
    SceneMaterial,
    SceneNode,
    load_image,
    outside_what,
    own_file,
    repair_meshes,
    shared_folders,
)
from .track import (
    LIST_FILE,
    MAX_LARGE_LIST_BYTES,
    MAX_LIST_BYTES,
    PACK_FILE,
    ListEntry,
    about_name,
    find_track_folder,
    parse_list,
    start_positions,
    surface_types,
)

if TYPE_CHECKING:
    from ..mesh import Mesh


def read_track(
    folder: str, *, search: list[str] | None = None, confine: str | None = None, allow_large: bool = False
) -> Scene:
    """The scene of the track in `folder` (or its `objects/` folder). `search`: more folders to
    look for textures in after the track's own; `confine`: a real path no file read may leave."""
    import warnings as python_warnings

    from ...core.opening import open as open_archive
    from ...errors import GamepakError
    from ..joe_batch import read_many

    track = find_track_folder(folder)
    if track is None:
        raise SceneError(f"{folder}: not a VDrift track (no objects/{LIST_FILE})")
    objects = os.path.join(track, "objects")
    list_path = os.path.join(objects, LIST_FILE)
    if not own_file(list_path, track, confine):
        raise SceneError(f"{list_path}: leads outside {outside_what(list_path, confine)}")
    warnings: list[str] = []
    counts: dict[str, int] = {}
    limit = MAX_LARGE_LIST_BYTES if allow_large else MAX_LIST_BYTES
    entries = parse_list(ini.read_text(list_path, limit, allow_large), list_path, warnings, allow_large=allow_large)

    settings_path = os.path.join(track, "track.txt")
    settings = (
        ini.read(settings_path) if os.path.isfile(settings_path) and own_file(settings_path, track, confine) else None
    )
    cull_faces = settings.flag("", "cull faces", True) if settings else True
    surfaces_path = os.path.join(track, "surfaces.txt")
    surface_names = surface_types(surfaces_path) if own_file(surfaces_path, track, confine) else {}

    pack_path = os.path.join(objects, PACK_FILE)
    pack = open_archive(pack_path) if os.path.isfile(pack_path) and own_file(pack_path, track, confine) else None
    try:
        members = {entry.name: entry for entry in pack.infolist()} if pack else {}
        folded = {name.lower(): name for name in reversed(list(members))}
        loose = FileFinder([objects], warnings, confine)
        textures = FileFinder([objects, *shared_folders(track, search)], warnings, confine)
        images: dict[str, SceneImage] = {}
        image_for: dict[str, str | None] = {}
        meshes: dict[str, Mesh | None] = {}
        root = SceneNode(
            about_name(track, confine), extras={"vdrift": {"track": os.path.basename(os.path.abspath(track))}}
        )
        if settings:
            root.extras["vdrift"]["track.txt"] = dict(settings.sections.get("", {}))
        skybox = SceneNode("skybox")
        taken: dict[str, int] = {}
        shared: dict[tuple[str, int], tuple[SceneMaterial, dict[str, Any]]] = {}
        # Every model once, all read and repaired in one pass (thousands of small meshes).
        wanted = _model_bytes(entries, list_path, pack, members, folded, loose, warnings, counts)
        read: list[tuple[str, Mesh, str]] = []
        with python_warnings.catch_warnings():
            python_warnings.simplefilter("ignore")
            found = read_many([data for _, data, _ in wanted], [label for *_, label in wanted], [n for n, *_ in wanted])
        for (name, _, label), outcome in zip(wanted, found):
            if isinstance(outcome, GamepakError):
                warnings.append(f"{outcome}: left out")
                counts["objects_left_out"] = counts.get("objects_left_out", 0) + 1
            else:
                read.append((name, outcome, label))
        repaired = repair_meshes([(mesh, label) for _, mesh, label in read], warnings, counts)
        meshes.update((entry.model, None) for entry in entries)
        meshes.update((name, fixed) for (name, _, _), fixed in zip(read, repaired))
        for entry in entries:
            mesh = meshes[entry.model]
            if mesh is None:
                continue
            label = f"{list_path}:{entry.line}: {entry.model}"
            if entry.texture not in image_for:
                image_for[entry.texture] = _image(entry.texture, label, textures, images, warnings)
            image_key = image_for[entry.texture]
            values = entry.values
            # Objects with the same texture and values share their material and extras (never
            # changed once made): thousands of objects often differ only in their model.
            shared_key = (entry.texture, id(values))
            made = shared.get(shared_key)
            if made is None:
                extras: dict[str, Any] = {"vdrift": {"texture": entry.texture, **values}}
                surface = surface_names.get(int(values["surface"]))
                if surface is not None:
                    extras["vdrift"]["surface_type"] = surface
                material = _material(values, images.get(image_key) if image_key else None, image_key, cull_faces)
                made = shared[shared_key] = (material, extras)
            node = SceneNode(_unique_name(entry.model, taken), mesh=mesh, material=made[0], extras=made[1])
            (skybox.children if values["skybox"] else root.children).append(node)
        if skybox.children:
            root.children.append(skybox)
        starts = start_positions(settings)
        if starts:
            root.children.append(SceneNode("start positions", children=starts))
    finally:
        if pack is not None:
            pack.close()
    counts["objects_listed"] = len(entries)
    return Scene(kind="track", source=track, root=root, images=images, warnings=warnings, counts=counts)


def _model_bytes(
    entries: list[ListEntry],
    list_path: str,
    pack: Any,
    members: dict[str, Any],
    folded: dict[str, str],
    loose: FileFinder,
    warnings: list[str],
    counts: dict[str, int],
) -> list[tuple[str, bytes, str]]:
    """(model name, its bytes, label) of every model the list names, each once: from the pack
    (one read for all), else a loose file in objects/; a model found nowhere is a warning."""
    in_pack: list[tuple[str, Any, str]] = []
    loose_found: list[tuple[str, bytes, str]] = []
    seen: set[str] = set()
    for entry in entries:
        name = entry.model
        if name in seen:
            continue
        seen.add(name)
        label = f"{list_path}:{entry.line}: {name}"
        member = members.get(name) if pack is not None else None
        if member is None and pack is not None and name.lower() in folded:
            actual = folded[name.lower()]
            warnings.append(
                f"{label}: not in {PACK_FILE}, but {actual!r} is (names differ in case; VDrift would not "
                "find it): used it"
            )
            member = members[actual]
        if member is not None:
            in_pack.append((name, member, label))
            continue
        path = loose.find(name, f"{label}: model")
        if path is not None:
            from ...core.files import read_file

            try:  # a FIFO or device is refused, never opened to block
                loose_found.append((name, read_file(path, error=SceneError), label))
            except SceneError as exc:
                warnings.append(f"{label}: model {path} cannot be read ({exc}): left out")
                counts["objects_left_out"] = counts.get("objects_left_out", 0) + 1
            continue
        warnings.append(f"{label}: model not in {PACK_FILE} nor a file in objects/: left out")
        counts["objects_left_out"] = counts.get("objects_left_out", 0) + 1
    datas = pack.read_many([member for _, member, _ in in_pack]) if in_pack else []
    return [(name, data, label) for (name, _, label), data in zip(in_pack, datas)] + loose_found


def _image(name: str, label: str, finder: FileFinder, images: dict[str, SceneImage], warnings: list[str]) -> str | None:
    path = finder.find(name, f"{label}: texture")
    if path is None:
        warnings.append(f"{label}: texture {name!r} not found in objects/, carparts/ or trackparts/: drawn without it")
        return None
    key = os.path.normcase(os.path.abspath(path))
    if key not in images:
        image = load_image(name, path, warnings)
        if image is None:
            return None
        images[key] = image
    return key


def _material(
    values: dict[str, float | int], image: SceneImage | None, image_key: str | None, cull_faces: bool
) -> SceneMaterial:
    blend = values["transparent_blend"]
    clamp = values["clamptexture"]
    if blend == 1:
        alpha_mode = "BLEND"
    elif image is not None and image.has_alpha:
        # VDrift alpha-tests its opaque pass at 0.5 (fences, trees).
        alpha_mode = "MASK"
    else:
        alpha_mode = "OPAQUE"
    return SceneMaterial(
        image=image_key,
        alpha_mode=alpha_mode,
        double_sided=blend == 2 or not cull_faces,
        unlit=bool(values["nolighting"] or values["skybox"]),
        wrap_s=CLAMP_TO_EDGE if clamp in (1, 2) else REPEAT,
        wrap_t=CLAMP_TO_EDGE if clamp in (1, 3) else REPEAT,
        mipmap=bool(values["mipmap"]),
    )


def _unique_name(name: str, taken: dict[str, int]) -> str:
    taken[name] = taken.get(name, 0) + 1
    return name if taken[name] == 1 else f"{name} #{taken[name]}"
