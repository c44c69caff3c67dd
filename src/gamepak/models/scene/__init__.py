"""Whole VDrift tracks and cars as scenes: every object of a track's `list.txt` (or every part
of a car) with its model, texture and flags, written as one glTF scene.

    >>> from gamepak.models import scene
    >>> track = scene.load("data/tracks/garage")            # a track folder or its objects/
    >>> track.summary()["objects"], track.warnings
    >>> scene.save(track, "garage.glb")                      # .glb, or .gltf with images beside

Readers: `track` (list.txt + objects.jpk + textures) and `car` (the `.car` definition). Both build
a `Scene` (common.py); `gltf` writes it. Missing models and textures are warnings in
`Scene.warnings`, never a failed scene.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable

from .common import Scene, SceneError, SceneImage, SceneMaterial, SceneNode

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .gltf import Part

__all__ = ["Scene", "SceneError", "SceneImage", "SceneMaterial", "SceneNode", "is_scene", "load", "save"]

SCENE_FORMATS = ("glb", "gltf", "obj")


def is_scene(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is a folder gamepak reads as a scene (a VDrift track or car)."""
    from .car import find_car_file
    from .track import find_track_folder

    folder = os.fspath(path)
    return os.path.isdir(folder) and (find_track_folder(folder) is not None or find_car_file(folder) is not None)


def load(
    path: str | os.PathLike[str],
    *,
    search: list[str] | None = None,
    paint: tuple[float, float, float] | None = None,
    confine: str | None = None,
    allow_large: bool = False,
) -> Scene:
    """The scene of the VDrift track or car folder `path`. `search`: more folders to look for
    shared parts and textures in (after the folder itself; VDrift's `carparts/` and
    `trackparts/` are tried by default). `paint`: a car's body colour (RGB 0-1). `confine`: a
    real path no file read may leave, links followed (the web viewer's root). `allow_large`:
    read a track's list.txt past `track.MAX_LIST_OBJECTS` objects."""
    from ...core.collector import collector_paused
    from .car import find_car_file, read_car
    from .track import find_track_folder
    from .track_scene import read_track

    folder = os.fspath(path)
    if not os.path.isdir(folder):
        raise SceneError(f"{folder}: not a folder")
    # Thousands of meshes, nodes and list entries, none in a cycle: no collections on the way.
    with collector_paused():
        if find_track_folder(folder) is not None:
            return read_track(folder, search=search, confine=confine, allow_large=allow_large)
        if find_car_file(folder) is not None:
            return read_car(folder, search=search, paint=paint, confine=confine)
    raise SceneError(f"{folder}: neither a VDrift track (objects/list.txt) nor a car (a .car file)")


def save(scene: Scene, path: str | os.PathLike[str], *, overwrite: bool = False) -> list[str]:
    """Write `scene` to `path` (.glb with the images inside; .gltf, or .obj with its .mtl, with
    the images copied beside it), each file atomically, after checking that none exists (unless
    `overwrite`). Returns the files written."""
    from ...core.atomic import write_via_temporary
    from ...errors import OutputExistsError
    from . import gltf

    target = os.fspath(path)
    extension = os.path.splitext(target)[1].lower()
    if extension not in (".glb", ".gltf", ".obj"):
        raise SceneError(f"{target}: a scene is written as .glb, .gltf or .obj")
    folder = os.path.dirname(target) or "."
    # Every file to write and how to make its bytes (in parts), checked before the first is written.
    planned: dict[str, Callable[[], list[Part]]] = {}
    if extension == ".glb":
        planned[target] = lambda: gltf.glb_parts(scene)
    else:
        names = gltf.image_file_names(scene)
        for key, name in names.items():
            planned[os.path.join(folder, name)] = functools.partial(_image_part, scene.images[key])
        if extension == ".gltf":
            uris = {key: _uri(name) for key, name in names.items()}
            planned[target] = lambda: [gltf.write(scene, binary=False, image_uris=uris)]
        else:
            from . import obj

            library = os.path.splitext(target)[0] + ".mtl"
            made = functools.cache(
                lambda: obj.write(scene, material_library=os.path.basename(library), image_files=names)
            )
            planned[library] = lambda: [made()[1]]
            planned[target] = lambda: [made()[0]]
    if not overwrite:
        for name in planned:
            if os.path.lexists(name):
                raise OutputExistsError(name)
    # The .glb holds every image: its pages are allocated while the rest is being built.
    images_size = sum(image.size for image in scene.images.values()) if extension == ".glb" else 0
    written = []
    for name, make in planned.items():
        size_hint = images_size if name == target else 0
        write_via_temporary(name, functools.partial(_make_and_write, make, size_hint), overwrite=overwrite)
        written.append(name)
    return written


def _image_part(image: SceneImage) -> list[Part]:
    return [image]


# Below this many bytes, allocating a file's space ahead is not worth a thread.
PREALLOCATE_FROM = 8 << 20


def _make_and_write(make: Callable[[], list[Part]], size_hint: int, fd: int) -> None:
    """Make the parts and write them to `fd`. A file of at least `size_hint` bytes (tens of
    megabytes of textures) has that much space allocated by a second thread while the parts
    are made: on tmpfs, filling fresh pages costs as much as copying into them."""
    thread = None
    if size_hint >= PREALLOCATE_FROM and hasattr(os, "posix_fallocate"):
        import threading

        thread = threading.Thread(target=_preallocate, args=(fd, size_hint), daemon=True)
        thread.start()
    from ...core.collector import collector_paused

    try:
        with collector_paused():  # thousands of accessor, mesh and node entries, no cycles
            parts = make()
    finally:
        if thread is not None:
            thread.join()
    _write_parts(parts, fd)


def _preallocate(fd: int, size: int) -> None:
    try:  # noqa: SIM105 - contextlib costs start-up time
        os.posix_fallocate(fd, 0, size)
    except OSError:
        pass  # a file system without it: the writes allocate as they go


def _write_parts(parts: list[Part], fd: int) -> None:
    """Write the parts one after another; an image file is copied by the kernel (no copy in
    memory), checked to be the size it had when the scene was read."""
    from ...core.atomic import write_all
    from ...core.writer import copy_range
    from .gltf import part_bytes

    position = 0
    for part in parts:
        if isinstance(part, SceneImage) and part.encoded is None:
            with part.open_file() as handle:  # the file read, at the size it had
                copy_range(handle.fileno(), 0, fd, position, part.size)
            os.lseek(fd, position + part.size, os.SEEK_SET)
            position += part.size
        else:
            data = part_bytes(part)  # nodes' JSON made here, one chunk at a time
            write_all(fd, data)
            position += len(data)


def _uri(name: str) -> str:
    from urllib.parse import quote

    return quote(name)
