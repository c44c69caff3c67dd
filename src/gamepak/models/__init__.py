"""3D models: VDrift JOE v3, and conversion to and from OBJ, glTF 2.0 and PLY.

    >>> from gamepak import models
    >>> mesh = models.load("road_cone.joe")            # or bytes, or models.load_member(pack, name)
    >>> models.save(mesh, "road_cone.glb")             # format from the extension
    >>> models.save(models.load("edited.obj"), "road_cone.joe", overwrite=True)

Every format has one reader and one writer around the format-neutral `Mesh` (see `mesh.py`).
numpy, pygltflib and Pillow are imported only here and below, never by `import gamepak`.

Up axis: a `Mesh` is Z up, as VDrift's JOE models are. Each file format has a default up axis,
chosen to match Blender's importers and exporters so that a model goes back and forth without
turning: glTF (.glb/.gltf) and OBJ are Y up, PLY and JOE are Z up. `up="y"` or `up="z"` names
the file's up axis instead (e.g. an OBJ written Z up by another tool).

OBJ, PLY and glTF cannot hold NaN or infinite coordinates: writing a mesh that has one raises a
`ModelError` naming the file, the value and its byte offset (JOE keeps them as they are).
"""

from __future__ import annotations

import os

from ..errors import OutputExistsError, cannot_read

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..core.atomic import write_bytes as write_atomic
    from .mesh import Frame, Mesh, ModelError


# Loaded on first use: detection asks `joe_header` of every file it sees, which imports this
# package first, and the mesh model (dataclasses) would double a short command's start-up.
def __getattr__(name: str) -> object:
    value: object
    if name in ("Frame", "Mesh", "ModelError"):
        from . import mesh

        value = getattr(mesh, name)
    elif name == "write_atomic":
        from ..core.atomic import write_bytes as value
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_UP",
    "FORMATS",
    "Frame",
    "Mesh",
    "ModelError",
    "dumps",
    "format_for_data",
    "format_for_file",
    "format_for_name",
    "load",
    "load_member",
    "loads",
    "save",
    "write_atomic",
]

# Format name -> file extensions.
FORMATS: dict[str, tuple[str, ...]] = {
    "joe": (".joe",),
    "glb": (".glb",),
    "gltf": (".gltf",),
    "obj": (".obj",),
    "ply": (".ply",),
}
# The up axis a file of each format has unless told otherwise (Blender's defaults).
DEFAULT_UP: dict[str, str] = {"joe": "z", "glb": "y", "gltf": "y", "obj": "y", "ply": "z"}


def format_for_name(name: str) -> str | None:
    """The model format a file name's extension names, if any."""
    lowered = name.lower()
    for format_name, extensions in FORMATS.items():
        if lowered.endswith(extensions):
            return format_name
    return None


def format_for_data(data: bytes) -> str | None:
    """The model format the bytes themselves show (JOE by counts that add up to the size, or
    to less with the usual magic: bytes after the model are ignored by VDrift)."""
    from ..core.source import Source
    from .joe_header import sniff

    if data[:4] == b"glTF":
        return "glb"
    if data[:4] == b"ply\n" or data[:5] == b"ply\r\n":
        return "ply"
    import io

    if len(data) >= 16 and sniff(Source.open(io.BytesIO(data)), trailing=True) > 0:
        return "joe"
    head = data[:4096].lstrip()
    if head.startswith(b"{") and b'"asset"' in data[: 1 << 20]:
        return "gltf"
    if any(line.split(b" ", 1)[0] in (b"v", b"f", b"vn", b"vt") for line in head.splitlines()[:200]):
        return "obj"
    return None


def _up_axis(format_name: str, up: str | None) -> str:
    from .mesh import UP_AXES, ModelError

    chosen = up or DEFAULT_UP.get(format_name, "z")
    if chosen not in UP_AXES:
        raise ModelError(f"unknown up axis {up!r}; use one of {', '.join(UP_AXES)}")
    return chosen


def format_for_file(path: str | os.PathLike[str]) -> str | None:
    """The model format of the file at `path`: its extension's, else what its bytes show
    (reading only the start, and the JOE frame headers)."""
    from ..core.source import Source
    from .joe_header import sniff

    by_name = format_for_name(os.fspath(path))
    if by_name is not None:
        return by_name
    source = Source.open(path)
    try:
        if sniff(source, trailing=True) > 0:
            return "joe"
        head = source.pread(1 << 16, 0)
    finally:
        source.close()
    return format_for_data(head)


def loads(
    data: bytes, format: str | None = None, *, name: str = "", path: str | None = None, up: str | None = None
) -> Mesh:
    """Read a model from bytes. The format comes from `format`, else the name's extension,
    else the data. A file named .joe that is text gets a clear error. `up` is the file's up
    axis (default: the format's, see `DEFAULT_UP`); the mesh is always Z up."""
    from .mesh import ModelError

    format_name = format or format_for_name(path or name)
    if format_name is None:
        format_name = format_for_data(data)
    if format_name is None:
        label = path or name or "<bytes>"
        raise ModelError(f"{label}: not a model format gamepak knows (joe, glb, gltf, obj, ply)")
    if format_name not in FORMATS:
        raise ModelError(f"unknown model format {format_name!r}; known: {', '.join(FORMATS)}")
    up_axis = _up_axis(format_name, up)
    if format_name in ("glb", "gltf"):
        from . import gltf_read

        # glTF turns positions as it reads accessors (node transforms are applied in Y-up).
        return gltf_read.read(data, path=path, name=name, z_up=up_axis == "y")
    if format_name == "joe":
        from . import joe

        mesh = joe.read(data, path=path, name=name)
    elif format_name == "obj":
        from . import obj

        mesh = obj.read(data, path=path, name=name)
    else:
        from . import ply

        mesh = ply.read(data, path=path, name=name)
    return mesh.from_up_axis(up_axis)


def _model_name(path: str) -> str:
    base = os.path.basename(path)
    stem, extension = os.path.splitext(base)
    return stem if extension.lower() in {e for group in FORMATS.values() for e in group} else base


def load(source: str | os.PathLike[str] | bytes, format: str | None = None, *, up: str | None = None) -> Mesh:
    """Read a model from a path or from bytes (`up`: the file's up axis, see `loads`)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return loads(bytes(source), format, up=up)
    from ..core.files import read_file_owned

    path = os.fspath(source)
    # Read into the buffer the JOE reader keeps (its arrays are views into it): the file costs
    # its size once, not once as bytes and again as the reader's copy.
    data = read_file_owned(path)
    return loads(data, format, name=_model_name(path), path=path, up=up)  # type: ignore[arg-type]  # a bytearray


def summarize(source: str | os.PathLike[str], format: str | None = None, *, up: str | None = None) -> dict[str, Any]:
    """What `gamepak model info` shows of the model file at `source` (`Mesh.summary()`: counts,
    bounds of frame 0, issues of every frame). A JOE file is checked a window at a time
    without being held (`joe.scan_file`: memory about the window, not the file); other formats
    are loaded."""
    path = os.fspath(source)
    format_name = format or format_for_file(path)
    if format_name != "joe":
        return load(path, format_name, up=up).summary()
    from . import joe

    try:
        mesh = joe.scan_file(path, name=_model_name(path))
    except OSError as exc:
        raise cannot_read(path, exc) from None
    return mesh.from_up_axis(_up_axis("joe", up)).summary()


def load_member(
    archive: str | os.PathLike[str], member: str, format: str | None = None, *, up: str | None = None
) -> Mesh:
    """Read the model `member` (a name, or OUTER/INNER in nested packs) of a pack."""
    from ..core.nested import resolve
    from ..core.opening import open as open_archive

    with open_archive(archive) as opened:
        holder, entry = resolve(opened, member)
        data = holder.read(entry)
    label = f"{os.fspath(archive)}:{member}"
    return loads(
        data, format or format_for_name(member) or format_for_data(data), name=_model_name(member), path=label, up=up
    )


def dumps(
    mesh: Mesh,
    format: str,
    *,
    texture: str | None = None,
    texture_data: bytes | None = None,
    material_library: str | None = None,
    up: str | None = None,
) -> bytes:
    """The bytes of `mesh` in `format` (joe, glb, gltf, obj, ply); `up` is the file's up axis
    (default: the format's, see `DEFAULT_UP`). OBJ, PLY and glTF refuse NaN or infinite
    values (`ModelError` naming the value and where it was read)."""
    from .mesh import ModelError

    if format not in FORMATS:
        raise ModelError(f"unknown model format {format!r}; known: {', '.join(FORMATS)}")
    up_axis = _up_axis(format, up)
    if format in ("glb", "gltf"):
        from . import gltf

        return gltf.write(
            mesh,
            binary=format == "glb",
            texture=texture,
            texture_data=texture_data if format == "glb" else None,
            z_up=up_axis == "y",
        )
    if format == "joe":
        from . import joe

        return joe.write(mesh.to_up_axis(up_axis))
    if format == "obj":
        from . import obj

        return obj.write(mesh.to_up_axis(up_axis), material_library=material_library)
    from . import ply

    return ply.write(mesh.to_up_axis(up_axis))


def save(
    mesh: Mesh,
    path: str | os.PathLike[str],
    format: str | None = None,
    *,
    overwrite: bool = False,
    texture: str | None = None,
    up: str | None = None,
) -> list[str]:
    """Write `mesh` to `path` atomically; returns the files written. OBJ also gets an MTL file
    beside it when `texture` is given. `texture` for glTF is a URI relative to the model; a
    .glb embeds the image when `texture` names a PNG/JPEG file that exists. `up`: the file's
    up axis (default: the format's)."""
    from ..core.atomic import write_bytes as write_atomic
    from .mesh import ModelError

    target = os.fspath(path)
    format_name = format or format_for_name(target)
    if format_name is None:
        raise ModelError(f"{target}: cannot tell the model format from the name (use .joe, .glb, .gltf, .obj or .ply)")
    if format_name == "obj" and texture:
        from . import obj

        mtl_path = os.path.splitext(target)[0] + ".mtl"
        for existing in (target, mtl_path):
            if not overwrite and os.path.lexists(existing):
                raise OutputExistsError(existing)
        data = dumps(mesh, "obj", material_library=os.path.basename(mtl_path), up=up)
        write_atomic(mtl_path, obj.write_material(texture), overwrite=overwrite)
        write_atomic(target, data, overwrite=overwrite)
        return [target, mtl_path]
    texture_data = None
    if format_name == "glb" and texture:
        texture_path = texture if os.path.isabs(texture) else os.path.join(os.path.dirname(target) or ".", texture)
        for candidate in (texture, texture_path):
            if os.path.isfile(candidate):
                from ..core.files import read_file

                texture_data = read_file(candidate)
                break
    data = dumps(mesh, format_name, texture=texture, texture_data=texture_data, up=up)
    write_atomic(target, data, overwrite=overwrite)
    return [target]
