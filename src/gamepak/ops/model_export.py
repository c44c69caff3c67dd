"""`export_all`: every model of a pack converted into a folder (`gamepak model export-all`).

A member is taken for a model by its name (`.joe`, `.mdl`, `.bsp`, `.obj`, ...), else by its
first bytes (a signature, or a JOE's counts that add up to its size, read through a stream);
only the models are read whole, one at a time, each written before the next is read, so the
memory held is one model's whatever the pack's size. Every target is checked before the first
file is written. Which models have their own exporter (Quake MDL and BSP, to glTF) the caller
says (`exporter_for`: the content registry's model rows with an `export` verb, which sits above
ops); the others are meshes `gamepak.models` reads and writes (JOE, OBJ, glTF, PLY).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import GamepakError, OutputExistsError

if TYPE_CHECKING:
    from ..core.archive import Archive, Entry

NOT_A_MODEL = "not a model"
# Bytes of a member read to tell whether it is a model when its name does not say.
HEAD_BYTES = 4096


# (member name, its first bytes or b"") -> a kind with its own `export` verb, or None.
ExporterFor = Callable[[str, bytes], Any]


def _model_of(archive: Archive, entry: Entry, exporter_for: ExporterFor) -> tuple[Any, str | None] | None:
    """(kind with its own exporter, or None; mesh format, or None) of a member, or None when it
    is not a model. Reads at most HEAD_BYTES of a member whose name does not say."""
    from .. import models

    own = exporter_for(entry.name, b"")
    if own is not None:
        return own, None
    named = models.format_for_name(entry.name)
    if named is not None:
        return None, named
    with archive.open(entry) as stream:
        head = stream.read(HEAD_BYTES)
        own = exporter_for(entry.name, head)
        if own is not None:
            return own, None
        # The head is the whole member when it is small; a larger JOE is told by its counts.
        found = models.format_for_data(head)
        if found is None and len(head) < entry.size:
            found = _joe_by_stream(stream, entry)
    return (None, found) if found is not None else None


def _joe_by_stream(stream: Any, entry: Entry) -> str | None:
    """ "joe" when a member's counts add up to its size (JOE has no reliable magic), read
    through its stream: only the header and frame table, not the member."""
    if not (hasattr(stream, "seekable") and stream.seekable()):
        return None
    from ..core.source import Source
    from ..models.joe import sniff

    try:
        stream.seek(0)
        return "joe" if sniff(Source.open(stream, entry.name), trailing=True) > 0 else None
    except (GamepakError, OSError, ValueError):
        return None


def export_all(
    archive: str,
    output: str,
    format_name: str = "glb",
    *,
    overwrite: bool = False,
    up: str | None = None,
    warn: Callable[[str], None] | None = None,
    exporter_for: ExporterFor | None = None,
) -> tuple[list[str], list[tuple[str, str]]]:
    """Convert every model member of `archive` into `output` (`format_name`: joe, glb, gltf,
    obj, ply); returns (files written, [(member, why skipped)]). A member that is not a model is
    skipped with the reason NOT_A_MODEL; one that cannot be converted, with the error. `warn`
    hears the warnings of the models read; `exporter_for(name, head)` names the kinds that
    export themselves (`gamepak.content.exporter_for`; None: meshes only)."""
    import warnings

    from .. import models
    from ..core.names import safe_parts
    from ..core.opening import open as open_archive

    extension = models.FORMATS[format_name][0]
    skipped: list[tuple[str, str]] = []
    written: list[str] = []
    with open_archive(archive) as opened:
        planned: list[tuple[Entry, Any, str | None, str]] = []
        unturned: dict[str, int] = {}  # members --up does not turn, by kind
        taken: set[str] = set()
        for entry in opened.infolist():
            found = _model_of(opened, entry, exporter_for or _meshes_only)
            if found is None:
                skipped.append((entry.name, NOT_A_MODEL))
                continue
            safe_parts(entry.name)  # a name that would leave the folder is refused before any write
            planned.append((entry, *found, _relative(entry.name, extension, taken)))
        targets = [os.path.join(output, relative) for *_, relative in planned]
        if not overwrite:
            for target in targets:
                if os.path.lexists(target):
                    raise OutputExistsError(target)
        for (entry, kind, source_format, _), target in zip(planned, targets):
            label = f"{archive}:{entry.name}"
            try:
                data = opened.read(entry)
                os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
                if kind is not None:
                    kind.call("export", data, label, target, options={"overwrite": overwrite})
                    written.append(target)
                    if up is not None:
                        unturned[kind.name] = unturned.get(kind.name, 0) + 1
                    continue
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    mesh = models.loads(data, source_format, name=os.path.basename(entry.name), path=label)
                del data  # the mesh holds what is needed; the next member is not read beside it
                if format_name != "joe":
                    mesh.require_finite(format_name)
                for warning in caught:
                    if warn is not None:
                        warn(f"warning: {warning.message}")
                written.extend(models.save(mesh, target, format_name, overwrite=overwrite, up=up))
            except GamepakError as exc:
                skipped.append((entry.name, str(exc)))
    if unturned and warn is not None:
        # Members with an export of their own (Quake models and maps) keep their own axes:
        # said, not silently ignored, since --up was asked for.
        kinds = ", ".join(f"{name} x{count}" for name, count in unturned.items())
        warn(f"warning: --up {up} is for the mesh formats; exported in their own axes: {kinds}")
    return written, skipped


def _meshes_only(name: str, head: bytes) -> None:
    return None


def _relative(name: str, extension: str, taken: set[str]) -> str:
    """The output path of member `name` (its extension replaced; kept when that would clash)."""
    from ..core.names import safe_parts

    parts = safe_parts(name)
    stem, old = os.path.splitext(parts[-1])
    relative = os.path.join(*parts[:-1], (stem if old else parts[-1]) + extension)
    if relative in taken:
        relative = os.path.join(*parts[:-1], parts[-1] + extension)
    taken.add(relative)
    return relative
