"""`gamepak model info/export/import` for Red Faction Guerrilla meshes (`.csmesh_pc`/`.gsmesh_pc`,
`.ccmesh_pc`/`.gcmesh_pc`): the handlers `cli.model` hands a mesh to."""

from __future__ import annotations

import argparse
import os

from ..errors import UsageError
from .common import note, print_json, write_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def add_options(export: argparse.ArgumentParser, imported: argparse.ArgumentParser) -> None:
    """The mesh options of `model export` and `model import`."""
    export.add_argument("--lod", type=int, default=0, metavar="N", help="RFG meshes: the LOD to export (default 0)")
    export.add_argument("--lods", action="store_true", help="RFG meshes: every LOD, the others as separate nodes")
    export.add_argument(
        "--no-textures", action="store_true", help="RFG meshes: do not look for the textures among pegs"
    )
    export.add_argument("--rig", metavar="FILE", help="RFG character meshes: the .rig_pc naming the bones")
    imported.add_argument(
        "--asm", metavar="FILE", help="with --into PACK: an .asm_pc file beside the pack to keep in step"
    )


def is_mesh(args: argparse.Namespace) -> bool:
    """Whether MODEL (or MEMBER) names an RFG mesh file, or MODEL is a pack to export from."""
    from ..ops.meshes import is_mesh_member

    return is_mesh_member(args.member or args.model_path)


def neutral(args: argparse.Namespace) -> Any:
    """LOD 0 of the mesh MODEL/MEMBER as a neutral `Mesh` (for `model render`)."""
    from ..models.rfg.export import neutral_mesh
    from ..ops.meshes import load_pair

    pair = load_pair(args.model_path, args.member)
    return neutral_mesh(pair.read(), pair.name)


def run_info(args: argparse.Namespace) -> None:
    from ..ops.meshes import load_pair

    pair = load_pair(args.model_path, args.member)
    mesh = pair.read()
    details: dict[str, Any] = {"file": args.model_path}
    if args.member is not None:
        details["member"] = pair.cpu_path
    details["gpu_file"] = pair.gpu_path.rsplit("/", 1)[-1] if pair.pack else os.path.basename(pair.gpu_path)
    details.update(mesh.summary())
    if args.as_json:
        print_json(details)
        return
    lines = []
    for key, value in details.items():
        if key == "materials":
            lines.append(f"materials: {len(value)}")
            for number, material in enumerate(value):
                slots = ", ".join(f"{slot}={name}" for slot, name in material["textures"].items())
                lines.append(f"  {number}: {material['shader']} (flags {material['flags']}): {slots or 'no textures'}")
        elif key == "warnings":
            lines.append(f"warnings: {len(value) or 'none'}")
            lines.extend(f"  - {warning}" for warning in value)
        elif key == "bounds" and value:
            lines.append("bounds: min " + _vector(value["min"]) + ", max " + _vector(value["max"]) + " (file axes)")
        elif isinstance(value, list):
            lines.append(f"{key}: {', '.join(map(str, value)) or '-'}")
        else:
            lines.append(f"{key}: {value}")
    write_text("\n".join(lines) + "\n")


def _vector(values: list[float]) -> str:
    return "(" + ", ".join(f"{value:.6g}" for value in values) + ")"


def _format(output: str, chosen: str | None) -> str:
    if chosen is not None:
        return chosen
    lowered = output.lower()
    for suffix, name in ((".glb", "glb"), (".gltf", "gltf"), (".obj", "obj")):
        if lowered.endswith(suffix):
            return name
    raise UsageError(f"cannot tell the format of {output!r}: an RFG mesh is written as .glb, .gltf or .obj")


def run_export(args: argparse.Namespace) -> None:
    from ..ops.meshes import export_pack, export_pair, load_pair

    search = list(args.search or [])
    if args.member is None and not is_mesh(args):
        chosen = args.format_name or "glb"
        if chosen not in ("glb", "gltf", "obj"):
            raise UsageError(f"an RFG mesh is written as glb, gltf or obj, not {chosen}")
        written, warnings = export_pack(
            args.model_path, args.output, format_name=chosen, search=search, overwrite=args.overwrite
        )
        for warning in warnings:
            note(f"warning: {warning}")
        note(f"wrote {len(written)} files to {args.output}")
        return
    chosen = _format(args.output, args.format_name)
    pair = load_pair(args.model_path, args.member)
    written, warnings = export_pair(
        pair,
        args.output,
        format_name=chosen,
        lod=args.lod,
        all_lods=args.lods,
        search=search,
        overwrite=args.overwrite,
        textures=not args.no_textures,
        rig=args.rig,
    )
    for warning in warnings:
        note(f"warning: {warning}")
    note(f"wrote {', '.join(written)}")


def run_import(args: argparse.Namespace) -> None:
    from ..ops.meshes import import_into

    if args.member is None:
        raise UsageError("model import MODEL --into PACK needs the mesh's MEMBER: MODEL MEMBER --into PACK")
    report = import_into(args.model_path, args.into, args.member, asm=args.asm, dry_run=args.dry_run)
    for warning in report.warnings:
        note(f"warning: {warning}")
    note(("would change " if args.dry_run else "") + report.summary())
