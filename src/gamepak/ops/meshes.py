"""RFG meshes in packs: find a mesh pair (either file names it), read it, find its textures
among pegs, export it, and write edited vertices back (`model info/export/import`).

The format logic is in `gamepak.models.rfg`; this module only finds members and files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import GamepakError, MemberNotFoundError, OutputExistsError, UsageError, cannot_read

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from ..core.archive import Archive, Entry
    from ..models.rfg import RfgMesh


@dataclass
class MeshPair:
    """Where a mesh pair was found: the pack (None for loose files), the CPU and GPU member
    paths (nested paths with "/"; file paths when loose), and the pair's bytes."""

    pack: str | None
    cpu_path: str
    gpu_path: str
    cpu: bytes
    gpu: bytes

    @property
    def name(self) -> str:
        """The mesh's name: the CPU file's stem."""
        base = self.cpu_path.rsplit("/", 1)[-1]
        return os.path.splitext(os.path.basename(base))[0]

    def label(self, gpu: bool = False) -> str:
        path = self.gpu_path if gpu else self.cpu_path
        return f"{self.pack}/{path}" if self.pack else path

    def read(self) -> RfgMesh:
        from ..models.rfg import read_mesh

        return read_mesh(self.cpu, self.gpu, label=self.label(), gpu_label=self.label(gpu=True))


def _find_in(names: Iterable[str], wanted: str) -> str | None:
    lowered = wanted.lower()
    for name in names:
        if name.lower() == lowered:
            return name
    return None


def load_pair(path: str | os.PathLike[str], member: str | None = None) -> MeshPair:
    """The mesh pair named by `member` (either file) inside the pack `path`, or the loose file
    `path` (either file, its partner beside it). A member given by its base name alone is
    looked for in nested packs too."""
    from ..models.rfg import pair_names

    path = os.fspath(path)
    if member is None:
        cpu_name, gpu_name = pair_names(os.path.basename(path))
        folder = os.path.dirname(path) or "."
        listed = os.listdir(folder)
        found = [_find_in(listed, cpu_name), _find_in(listed, gpu_name)]
        for wanted, name in zip((cpu_name, gpu_name), found):
            if name is None:
                raise GamepakError(f"{path}: its partner {wanted} is not beside it")
        from ..core.files import read_file

        halves = [read_file(os.path.join(folder, name)) for name in found]  # type: ignore[arg-type]
        return MeshPair(None, os.path.join(folder, found[0]), os.path.join(folder, found[1]), *halves)  # type: ignore[arg-type]
    from ..core.opening import open as open_archive

    with open_archive(path) as opened:
        member_path = _member_path(opened, member)
        prefix, _, base = member_path.rpartition("/")
        cpu_name, gpu_name = pair_names(base)
        holder_names = _names_beside(opened, prefix)
        cpu = _find_in(holder_names, cpu_name)
        gpu = _find_in(holder_names, gpu_name)
        for wanted, present in ((cpu_name, cpu), (gpu_name, gpu)):
            if present is None:
                raise GamepakError(f"{path}: {member_path}: its partner {wanted} is not in the same pack")
        joined = [f"{prefix}/{name}" if prefix else name for name in (cpu, gpu)]
        from ..core.nested import resolve

        data = []
        for name in joined:
            holder, entry = resolve(opened, name)  # type: ignore[arg-type]
            data.append(holder.read(entry))
        return MeshPair(path, joined[0], joined[1], data[0], data[1])  # type: ignore[arg-type]


def _member_path(opened: Archive, member: str) -> str:
    """The full member path of `member`: as given, or a unique nested member of that base name."""
    from ..core.nested import resolve, walk

    try:
        resolve(opened, member)
        return member
    except MemberNotFoundError:
        pass
    lowered = member.lower()
    matches = [name for name, _, _ in walk(opened) if name.lower() == lowered or name.lower().endswith("/" + lowered)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise GamepakError(f"{opened.filename}: {member!r} is in several nested packs: {', '.join(matches[:4])}")
    raise MemberNotFoundError(member, opened.filename)


def _names_beside(opened: Archive, prefix: str) -> list[str]:
    """The member names of the pack at nested path `prefix` ("" for the top one)."""
    if not prefix:
        return list(opened.namelist())
    from ..core.nested import walk

    start = prefix + "/"
    return [
        name[len(start) :] for name, _, _ in walk(opened) if name.startswith(start) and "/" not in name[len(start) :]
    ]


def iter_pairs(path: str | os.PathLike[str]) -> Iterator[MeshPair]:
    """Every mesh pair in a pack (nested packs included), by its CPU file: the pack is opened
    and walked once, each pair read from the pack holding it."""
    from ..core.nested import walk
    from ..core.opening import open as open_archive
    from ..models.rfg.content import pairs_among

    with open_archive(path) as opened:
        holders: dict[str, tuple[Archive, dict[str, Entry]]] = {}
        for name, entry, holder in walk(opened):
            prefix = name[: len(name) - len(entry.name)]
            holders.setdefault(prefix, (holder, {}))[1][entry.name] = entry
        for prefix, (holder, entries) in holders.items():
            for cpu_name, gpu_name in pairs_among(list(entries)):
                yield MeshPair(
                    os.fspath(path),
                    prefix + cpu_name,
                    prefix + gpu_name,
                    holder.read(entries[cpu_name]),
                    holder.read(entries[gpu_name]),
                )


# ------------------------------------------------------------------------------------ export


def find_rig(pair: MeshPair, rig: str | None = None) -> tuple[Any, list[str]]:
    """The rig of a character mesh: the file `rig`, else `<mesh>.rig_pc` in the mesh's pack
    (nested packs too) or beside a loose mesh; (Rig or None, warnings)."""
    from ..models.rfg.rig import read_rig

    wanted = f"{pair.name}.rig_pc".lower()
    try:
        from ..core.files import read_file

        if rig is not None:
            return read_rig(read_file(rig), rig), []
        if pair.pack is None:
            folder = os.path.dirname(pair.cpu_path) or "."
            found = _find_in(os.listdir(folder), wanted)
            if found is None:
                return None, []
            return read_rig(read_file(os.path.join(folder, found)), os.path.join(folder, found)), []
        from ..core.nested import resolve, walk
        from ..core.opening import open as open_archive

        with open_archive(pair.pack) as opened:
            for name, _, _ in walk(opened):
                if name.rsplit("/", 1)[-1].lower() == wanted:
                    holder, entry = resolve(opened, name)
                    return read_rig(holder.read(entry), f"{pair.pack}/{name}"), []
    except OSError as exc:
        raise cannot_read(rig or pair.label(), exc) from None
    except GamepakError as exc:
        if rig is not None:
            raise
        return None, [f"rig not used: {exc}"]
    return None, []


def export_pair(
    pair: MeshPair,
    output: str,
    *,
    format_name: str,
    lod: int = 0,
    all_lods: bool = False,
    search: list[str] | None = None,
    overwrite: bool = False,
    textures: bool = True,
    rig: str | None = None,
) -> tuple[list[str], list[str]]:
    """Write one mesh to `output` (.glb/.gltf/.obj); returns (files written, warnings)."""
    from .. import models
    from ..models.rfg.export import export_gltf, neutral_mesh
    from ..models.rfg.textures import TextureSearch, find_textures

    mesh = pair.read()
    warnings = list(f"{pair.label()}: {warning}" for warning in mesh.warnings)
    found = (
        find_textures(
            mesh.texture_names(),
            pack=pair.pack,
            beside=pair.cpu_path,
            search=search,
            container=pair.cpu_path.rpartition("/")[0] + "/" if "/" in pair.cpu_path and pair.pack else "",
        )
        if textures
        else TextureSearch()
    )
    warnings += found.warnings
    if not overwrite and os.path.lexists(output):
        raise OutputExistsError(output)
    if format_name in ("glb", "gltf"):
        skeleton = None
        if mesh.kind == "character":
            skeleton, rig_warnings = find_rig(pair, rig)
            warnings += rig_warnings
            if skeleton is None:
                warnings.append(
                    f"{pair.label()}: no rig found ({pair.name}.rig_pc; --rig FILE): joints named bone_<id>"
                )
        data = export_gltf(
            mesh,
            pair.name,
            binary=format_name == "glb",
            lod=lod,
            all_lods=all_lods,
            textures=found.found,
            rig=skeleton,
        )
        models.write_atomic(output, data, overwrite=overwrite)
        return [output], warnings
    if format_name != "obj":
        raise GamepakError(f"an RFG mesh is exported as .glb, .gltf or .obj, not {format_name}")
    neutral = neutral_mesh(mesh, pair.name, lod=lod)
    written = []
    texture = None
    diffuse = next((m.texture_for("Diffuse_Map") for m in mesh.materials if m.texture_for("Diffuse_Map")), None)
    if diffuse is not None and diffuse.lower() in found.found:
        texture = os.path.splitext(os.path.basename(output))[0] + "_" + os.path.splitext(diffuse)[0] + ".png"
        image_path = os.path.join(os.path.dirname(output) or ".", texture)
        if not overwrite and os.path.lexists(image_path):
            raise OutputExistsError(image_path)
        models.write_atomic(image_path, found.found[diffuse.lower()], overwrite=overwrite)
        written.append(image_path)
    written[:0] = models.save(neutral, output, "obj", overwrite=overwrite, texture=texture)
    return written, warnings


def export_pack(
    pack: str, folder: str, *, format_name: str, search: list[str] | None = None, overwrite: bool = False
) -> tuple[list[str], list[str]]:
    """Every mesh of `pack` into `folder`, as `<container>/<mesh>.<format>` for a mesh in a
    nested pack (names checked: nothing lands outside `folder`); (files written, warnings). A
    mesh that does not read is a warning; a pack without meshes an error."""
    from ..core.names import safe_parts
    from ..models.rfg import MeshFormatError

    written: list[str] = []
    warnings: list[str] = []
    count = 0
    for pair in iter_pairs(pack):  # one pair in memory at a time
        count += 1
        parts = safe_parts(pair.cpu_path)
        target = os.path.join(folder, *parts[:-1], f"{pair.name}.{format_name}")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        try:
            files, found = export_pair(pair, target, format_name=format_name, search=search, overwrite=overwrite)
        except MeshFormatError as exc:
            warnings.append(f"skipped: {exc}")
            continue
        written += files
        warnings += found
    if not count:
        raise GamepakError(f"{pack}: holds no RFG mesh (.csmesh_pc/.ccmesh_pc)")
    return written, warnings


# ------------------------------------------------------------------------------------ import


@dataclass
class MeshImport:
    """What `model import --into PACK MEMBER` changed (or would change, with `dry_run`)."""

    pack: str
    member: str
    changed_vertices: list[int] = field(default_factory=list)
    boxes_changed: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    written: bool = False

    def summary(self) -> str:
        count = len(self.changed_vertices)
        if not count:
            return f"{self.pack}: {self.member}: no vertex changed; nothing written"
        shown = ", ".join(map(str, self.changed_vertices[:8])) + (" ..." if count > 8 else "")
        boxes = f"; submesh box {', '.join(map(str, self.boxes_changed))} grown" if self.boxes_changed else ""
        return f"{self.pack}: {self.member}: {count} vertex{'es' if count != 1 else ''} changed ({shown}){boxes}"


def import_into(model: str, pack: str, member: str, *, asm: str | None = None, dry_run: bool = False) -> MeshImport:
    """Write the positions, normals and UVs of the glTF `model` back into the mesh `member`
    (either file) of `pack`: one crash-safe edit of the pack (`asm`: a separate `.asm_pc` kept
    in step); nothing is written when no vertex changed or anything is refused."""
    from ..models.rfg.writeback import write_back

    pair = load_pair(pack, member)
    mesh = pair.read()
    from ..core.files import read_file

    data = read_file(model)
    folder = os.path.dirname(os.path.abspath(model))
    result = write_back(mesh, pair.name, data, pair.gpu, pair.cpu, label=model, folder=folder)
    report = MeshImport(pack, pair.cpu_path, result.changed_vertices, result.boxes_changed, result.warnings)
    if result.gpu == pair.gpu and result.cpu == pair.cpu:
        return report
    from .textures import _edit

    with _edit(pack, asm, dry_run) as editor:  # a dry run's only plans: it refuses as the real one
        if result.gpu != pair.gpu:
            editor.replace(pair.gpu_path, result.gpu)
        if result.cpu != pair.cpu:
            editor.replace(pair.cpu_path, result.cpu)
    report.written = not dry_run
    return report


# ------------------------------------------------------------------ the content registry's verbs
# The `model` command's verbs of the `rfg-mesh` row (gamepak.content), in the model family's
# call signatures: `open` finds the pair, the others get what it found as the `pair` option.


def open_pair(path: str, member: str | None) -> tuple[bytes, str, dict[str, Any]]:
    """(CPU bytes, label, {"pair", "partner"}) of the mesh MODEL [MEMBER] names (either file)."""
    pair = load_pair(path, member)
    return pair.cpu, pair.label(), {"pair": pair, "partner": lambda: pair.gpu}


def info(data: bytes, label: str, *, pair: MeshPair) -> dict[str, Any]:
    """`model info` of a mesh: where its two files are, then its summary."""
    details: dict[str, Any] = {}
    if pair.pack:
        details["member"] = pair.cpu_path
    details["gpu_file"] = pair.gpu_path.rsplit("/", 1)[-1] if pair.pack else os.path.basename(pair.gpu_path)
    details.update(pair.read().summary())
    return details


def neutral(data: bytes, label: str, *, pair: MeshPair) -> Any:
    """LOD 0 of a mesh as a neutral `Mesh` (`model render`)."""
    from ..models.rfg.export import neutral_mesh

    return neutral_mesh(pair.read(), pair.name)


def _format(output: str, chosen: str | None) -> str:
    if chosen is not None:
        return chosen
    lowered = output.lower()
    for suffix, name in ((".glb", "glb"), (".gltf", "gltf"), (".obj", "obj")):
        if lowered.endswith(suffix):
            return name
    raise UsageError(f"cannot tell the format of {output!r}: an RFG mesh is written as .glb, .gltf or .obj")


def export(
    data: bytes,
    label: str,
    output: str,
    *,
    pair: MeshPair,
    format_name: str | None = None,
    lod: int = 0,
    lods: bool = False,
    search: list[str] | None = None,
    overwrite: bool = False,
    no_textures: bool = False,
    rig: str | None = None,
) -> tuple[list[str], list[str]]:
    """`model export` of a mesh (`export_pair`); (files written, warnings)."""
    return export_pair(
        pair,
        output,
        format_name=_format(output, format_name),
        lod=lod,
        all_lods=lods,
        search=list(search or []),
        overwrite=overwrite,
        textures=not no_textures,
        rig=rig,
    )


def export_every(
    path: str, output: str, *, format_name: str | None = None, search: list[str] | None = None, overwrite: bool = False
) -> tuple[list[str], list[str]]:
    """`model export PACK -o FOLDER`: every mesh of the pack (`export_pack`)."""
    chosen = format_name or "glb"
    if chosen not in ("glb", "gltf", "obj"):
        raise UsageError(f"an RFG mesh is written as glb, gltf or obj, not {chosen}")
    return export_pack(path, output, format_name=chosen, search=list(search or []), overwrite=overwrite)


def import_model(
    model: str, pack: str, member: str | None, *, asm: str | None = None, dry_run: bool = False
) -> MeshImport:
    """`model import MODEL --into PACK MEMBER`: `import_into`."""
    if member is None:
        raise UsageError("model import MODEL --into PACK needs the mesh's MEMBER: MODEL MEMBER --into PACK")
    return import_into(model, pack, member, asm=asm, dry_run=dry_run)
