"""The catalog's `models` table: every 3D model of the collection (VDrift JOE, Quake MDL and
BSP; loose files and members of packs) with its counts, and for VDrift models the scene it
belongs to and its texture, so a collection's models can be queried like its members.

Columns: the file (`archive_path`, `nested_path`), the model (its member name, or the file's
name), its format, vertices, triangles, frames, and `scene`/`scene_kind`/`texture`: a track
whose `objects/list.txt` names the model (a member of the `objects.jpk` beside it; the texture
list.txt gives it), or a car whose `.car` file places a JOE lying in its folder (the texture
the section names). Null where no scene claims the model.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import GamepakError

if TYPE_CHECKING:
    from ..core.archive import Archive, Entry

# A model larger than this is not read (the games' largest are a few MB).
MAX_MODEL_BYTES = 64 << 20
COLUMNS = ("model", "format", "vertices", "triangles", "frames", "scene", "scene_kind", "texture")


def model_format(name: str) -> str | None:
    """The model kind (content registry) a file or member name says, when the catalog counts
    it (its row has a `stats` verb), or None."""
    from ..content import of_member

    for kind in of_member(name, family="model", probe=False):
        if kind.has("stats"):
            return kind.name
    return None


def counts(kind: str, data: bytes, label: str) -> tuple[int, int, int] | None:
    """(vertices, triangles, frames) of a model's bytes by its kind's `stats` verb (None: not a
    model the catalog counts, a glTF among JOE files); GamepakError when they do not parse."""
    from ..content import get

    found = get(kind).call("stats", data, label)
    return None if found is None else (int(found[0]), int(found[1]), int(found[2]))


def _empty() -> dict[str, list[Any]]:
    return {key: [] for key in COLUMNS}


def _add(columns: dict[str, list[Any]], model: str, kind: str, numbers: tuple[int, int, int], scene: Any) -> None:
    columns["model"].append(model)
    columns["format"].append(kind)
    for key, value in zip(("vertices", "triangles", "frames"), numbers):
        columns[key].append(value)
    name, scene_kind, texture = scene or (None, None, None)
    columns["scene"].append(name)
    columns["scene_kind"].append(scene_kind)
    columns["texture"].append(texture)


def track_scene(pack_path: str | None) -> dict[str, tuple[str, str, str]]:
    """model name -> (track, "track", texture) for a track's `objects/objects.jpk` on disk
    (read from the `list.txt` beside it); empty for any other pack."""
    if pack_path is None or os.path.basename(pack_path).lower() != "objects.jpk":
        return {}
    objects = os.path.dirname(pack_path)
    list_path = os.path.join(objects, "list.txt")
    if not os.path.isfile(list_path):
        return {}
    from ..core.files import read_file
    from ..models.scene.track import parse_list

    try:
        text = read_file(list_path, limit=1 << 24).decode("utf-8", "replace")
        entries = parse_list(text, list_path, [])
    except (OSError, GamepakError):
        return {}
    track = os.path.basename(os.path.dirname(os.path.abspath(objects)))
    found: dict[str, tuple[str, str, str]] = {}
    for entry in entries:
        found.setdefault(entry.model, (track, "track", entry.texture))
    return found


def car_scene(model_path: str) -> tuple[str, str, str | None] | None:
    """(car, "car", texture) when a `.car` file beside the JOE file at `model_path` places it."""
    from ..models.scene import ini
    from ..models.scene.car import find_car_file

    folder, name = os.path.split(model_path)
    car_file = find_car_file(folder or ".")
    if car_file is None:
        return None
    try:
        definition = ini.read(car_file)
    except GamepakError:
        return None
    for values in definition.sections.values():
        if values.get("mesh", "").strip() == name:
            texture = (values.get("texture") or "").split(",")[0].strip() or None
            return os.path.basename(os.path.abspath(folder or ".")), "car", texture
    return None


def member_model_columns(
    archive: Archive, entries: list[Entry], error: Callable[[BaseException | str, str], None]
) -> tuple[int, dict[str, list[Any]]]:
    """(row count, columns) of the model members of `entries`; one that cannot be read or
    parsed is reported through `error(problem, member)`."""
    columns = _empty()
    scene = track_scene(archive.filename if isinstance(archive.filename, str) else None)
    for entry in entries:
        kind = model_format(entry.name)
        if kind is None:
            continue
        if entry.size > MAX_MODEL_BYTES:
            error(f"{entry.size} bytes is too large for a model (at most {MAX_MODEL_BYTES} are read)", entry.name)
            continue
        try:
            numbers = counts(kind, archive.read(entry), f"{archive.filename}:{entry.name}")
        except (GamepakError, OSError) as exc:
            error(exc, entry.name)
            continue
        if numbers is not None:
            _add(columns, entry.name, kind, numbers, scene.get(entry.name))
    _add_rfg_meshes(archive, entries, columns, error)
    return len(columns["model"]), columns


def _add_rfg_meshes(
    archive: Archive,
    entries: list[Entry],
    columns: dict[str, list[Any]],
    error: Callable[[BaseException | str, str], None],
) -> None:
    """Rows of the RFG mesh pairs among `entries` (one per pair, named by its CPU file)."""
    from ..models.rfg.content import catalog_pairs, catalog_row

    by_name = {entry.name: entry for entry in entries}
    pairs = catalog_pairs(list(by_name))
    if not pairs:
        return
    rfg_keys = ("lods", "materials", "bones", "textures")
    for key in rfg_keys:  # the other models' rows have none of these
        columns.setdefault(key, [None] * len(columns["model"]))
    for cpu_name, gpu_name in pairs:
        cpu, gpu = by_name[cpu_name], by_name[gpu_name]
        if cpu.size + gpu.size > MAX_MODEL_BYTES:
            error(
                f"{cpu.size + gpu.size} bytes is too large for a model (at most {MAX_MODEL_BYTES} are read)", cpu_name
            )
            continue
        try:
            row = catalog_row(archive.read(cpu), archive.read(gpu), f"{archive.filename}/{cpu_name}")
        except (GamepakError, OSError) as exc:
            error(exc, cpu_name)
            continue
        if row is None:
            continue
        _add(columns, cpu_name, row["kind"], (row["vertices"], row["triangles"], 1), (None, None, row["diffuse"]))
        for key in rfg_keys:
            value = row[key]
            columns[key].append("; ".join(value) if isinstance(value, list) else value)


def file_model_columns(path: str, name: str, kind: str, data: bytes) -> tuple[int, dict[str, list[Any]]]:
    """(1, columns) of a loose model file (GamepakError when it does not parse)."""
    columns = _empty()
    numbers = counts(kind, data, path)
    if numbers is None:
        return 0, columns
    _add(columns, name, kind, numbers, car_scene(path))
    return 1, columns
