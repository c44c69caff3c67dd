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


def counts(kind: str, data: bytes, label: str, partner: Callable[[], bytes] | None = None) -> dict[str, Any] | None:
    """The models columns of a model's bytes by its kind's `stats` verb: format, vertices,
    triangles, frames, and any the kind adds (an RFG mesh's LODs, its texture); None: not a
    model the catalog counts (a glTF among JOE files); GamepakError when they do not parse.
    `partner` reads the other file of a two-file kind."""
    from ..content import get

    found = get(kind).call("stats", data, label, options={"partner": partner})
    if found is None:
        return None
    if isinstance(found, dict):
        return {"format": kind, **found}
    return {"format": kind, "vertices": int(found[0]), "triangles": int(found[1]), "frames": int(found[2])}


def _empty() -> dict[str, list[Any]]:
    return {key: [] for key in COLUMNS}


def _add(columns: dict[str, list[Any]], model: str, numbers: dict[str, Any], scene: Any) -> None:
    """One models row: `numbers` (from `counts`), the scene that places the model (its texture
    unless the kind names one), and the columns only some kinds have (null in other rows)."""
    before = len(columns["model"])
    name, scene_kind, texture = scene or (None, None, None)
    row = {"model": model, "scene": name, "scene_kind": scene_kind, "texture": texture, **numbers}
    for key, value in row.items():
        columns.setdefault(key, [None] * before).append(value)
    for values in columns.values():
        if len(values) == before:
            values.append(None)


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
    from ..content import get

    columns = _empty()
    scene = track_scene(archive.filename if isinstance(archive.filename, str) else None)
    by_key: dict[str, Entry] | None = None
    for entry in entries:
        kind = model_format(entry.name)
        if kind is None:
            continue
        partner: Entry | None = None
        size = entry.size
        if get(kind).has("partner"):
            # A two-file kind (an RFG mesh): one row per pair, named by its first file; the
            # second is found among the same members, ignoring case as the game does.
            if by_key is None:
                by_key = {other.name.lower(): other for other in entries}
            partner = by_key.get(get(kind).call("partner", entry.name).lower())
            if partner is None:
                continue
            size += partner.size
        if size > MAX_MODEL_BYTES:
            error(f"{size} bytes is too large for a model (at most {MAX_MODEL_BYTES} are read)", entry.name)
            continue
        try:
            read = (lambda other=partner: archive.read(other)) if partner is not None else None
            numbers = counts(kind, archive.read(entry), f"{archive.filename}:{entry.name}", read)
        except (GamepakError, OSError) as exc:
            error(exc, entry.name)
            continue
        if numbers is not None:
            _add(columns, entry.name, numbers, scene.get(entry.name))
    return len(columns["model"]), columns


def file_model_columns(path: str, name: str, kind: str, data: bytes) -> tuple[int, dict[str, list[Any]]]:
    """(1, columns) of a loose model file (GamepakError when it does not parse)."""
    columns = _empty()
    numbers = counts(kind, data, path, _partner_beside(path, kind))
    if numbers is None:
        return 0, columns
    _add(columns, name, numbers, car_scene(path))
    return 1, columns


def _partner_beside(path: str, kind: str) -> Callable[[], bytes] | None:
    """A function reading the other file of a two-file kind (`partner` verb) lying beside the
    loose file `path` (names compared ignoring case, as the game does); it raises GamepakError
    when there is none. None for a kind of one file."""
    from ..content import get

    row = get(kind)
    if not row.has("partner"):
        return None
    folder = os.path.dirname(path) or "."
    wanted = row.call("partner", os.path.basename(path))

    def read() -> bytes:
        from ..core.files import read_file

        found = next((name for name in os.listdir(folder) if name.lower() == wanted.lower()), None)
        if found is None:
            raise GamepakError(f"{path}: its partner {wanted} is not beside it")
        return read_file(os.path.join(folder, found), limit=MAX_MODEL_BYTES)

    return read
