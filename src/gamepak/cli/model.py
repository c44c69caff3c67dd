"""`gamepak model ...`: inspect, convert and preview JOE models (and OBJ/glTF/PLY ones).

Every command takes a model file, or `ARCHIVE MEMBER` for a model inside a pack.
"""

from __future__ import annotations

import argparse
import os
import posixpath

from ..errors import GamepakError, OutputExistsError, UsageError
from .common import (
    add_command,
    add_group,
    add_json_option,
    count,
    note,
    output_folder,
    summary,
    write_text,
)
from .json_output import print_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:
    from ..models.mesh import Mesh

OUTPUT_FORMATS = ["joe", "glb", "gltf", "obj", "ply"]
UP_HELP = (
    "up axis of the {what} file: y or z (default: Y for glTF and OBJ, Z for PLY and JOE, as Blender "
    "writes and reads them; models are turned so that VDrift's Z-up stays up)"
)


def _model_arguments(parser: argparse.ArgumentParser, up: str | None, scenes: bool = False) -> None:
    parser.add_argument(
        "model_path",
        metavar="MODEL",
        help="a model file, or an archive holding MEMBER"
        + (", or a VDrift track or car folder (the whole scene)" if scenes else ""),
    )
    parser.add_argument("member", nargs="?", metavar="MEMBER", help="the model's name inside the archive MODEL")
    if up is not None:
        parser.add_argument("--up", choices=("y", "z"), help=UP_HELP.format(what=up))


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    group = add_command(
        commands,
        "model",
        None,
        "Inspect, convert and preview JOE models (and Quake MDL models and BSP maps).",
        "Inspect, convert and preview VDrift JOE models (and OBJ, glTF, PLY); Quake MDL models and\n"
        "BSP maps: `info`, and `export` to glTF (.glb/.gltf).\n\n"
        "MODEL is a model file, or an archive followed by a MEMBER name inside it, e.g.\n"
        "`gamepak model export garage_objects.jpk joist.007.joe -o joist.glb`.",
    )
    sub = add_group(group, "model_command")

    info = add_command(
        sub, "info", run_info, "Show a model's counts, bounding box (Z up), texture coordinate range and any issues."
    )
    _model_arguments(info, "model", scenes=True)
    add_json_option(info, "the information as a JSON object")
    _scene_options(info)

    export = add_command(
        sub,
        "export",
        run_export,
        "Convert a model (or a VDrift track or car folder) to glTF 2.0, OBJ or PLY (frame 0).",
        "Convert a model to glTF 2.0, OBJ or PLY (frame 0).\n\n"
        "MODEL may also be a VDrift track folder (objects/list.txt + objects.jpk + textures) or car\n"
        "folder (its .car file): the whole scene is written as one .glb (textures inside), or .gltf\n"
        "or .obj (textures copied beside it), one node per object, one material per texture and flags.\n"
        "Missing models and textures are warnings, not failures.\n\n"
        "JOE models are Z up; .glb/.gltf and .obj files are written Y up and .ply files Z up (what\n"
        "Blender expects by default), so the model stands upright after import. --up changes the\n"
        "output's axis. A model holding NaN or infinite coordinates is refused, naming the value.",
    )
    _model_arguments(export, "output", scenes=True)
    export.add_argument("-o", "--output", required=True, help="file to write: .glb, .gltf, .obj, .ply (or .joe)")
    _scene_options(export)
    export.add_argument("--format", dest="format_name", choices=OUTPUT_FORMATS, help="output format (default: from -o)")
    export.add_argument(
        "--texture",
        help="texture image to name in the material (OBJ: an MTL file beside; .glb embeds it when the file exists)",
    )
    export.add_argument("--overwrite", action="store_true", help="replace output files that exist")
    export.add_argument(
        "--frame",
        type=int,
        metavar="N",
        help="MDL: only pose N (default: every pose, the others as glTF morph targets with an animation)",
    )
    export.add_argument(
        "--palette", metavar="FILE", help="MDL/BSP: a Quake palette.lmp (default: found beside, or built in)"
    )
    export.add_argument(
        "--scale", type=float, default=EXPORT_OPTIONS["scale"][1], help="MDL/BSP: units per Quake unit (default 1)"
    )

    imported = add_command(
        sub,
        "import",
        run_import,
        "Convert an OBJ, glTF (.glb/.gltf) or PLY model to a JOE model (-o FILE.joe), or a scene back into a track"
        " (--into DIR).",
        "Convert an OBJ, glTF (.glb/.gltf) or PLY model to a JOE model, written to -o FILE.joe.\n\n"
        "Polygons are cut into triangles in their own winding (concave ones too), values repeated\n"
        "in the file are merged, and faces without normals get flat ones. OBJ and glTF files are\n"
        "read as Y up, PLY as Z up (Blender's defaults), and turned to JOE's Z up; --up names the\n"
        "input's axis instead. Coordinates that are NaN or infinite are refused.\n\n"
        "With --into TRACK_DIR, a glTF scene (as `model export TRACK_DIR` wrote it, then edited, e.g.\n"
        "in Blender) goes back into the VDrift track: objects are matched by node name, unchanged ones\n"
        "keep their JOE bytes, changed ones replace their model in objects/objects.jpk, new nodes\n"
        "become new objects (list.txt values from the node's extras.vdrift, else defaults); objects\n"
        "missing from the scene stay unless --delete.",
    )
    _model_arguments(imported, "input")
    imported.add_argument("-o", "--output", help="the .joe file to write (required without --into)")
    imported.add_argument(
        "--into",
        nargs="+",
        metavar="TRACK_DIR|PACK",
        help="write a glTF scene back into this VDrift track; or an RFG mesh's vertices back into PACK MEMBER",
    )
    imported.add_argument(
        "--delete", action="store_true", help="with --into: remove the objects the scene no longer has"
    )
    imported.add_argument("--dry-run", action="store_true", help="with --into: say what would change, write nothing")
    _allow_large(imported)
    imported.add_argument("--overwrite", action="store_true", help="replace the output file if it exists")
    export.add_argument(
        "--lod",
        type=int,
        default=EXPORT_OPTIONS["lod"][1],
        metavar="N",
        help="RFG meshes: the LOD to export (default 0)",
    )
    export.add_argument("--lods", action="store_true", help="RFG meshes: every LOD, the others as separate nodes")
    export.add_argument(
        "--no-textures", action="store_true", help="RFG meshes: do not look for the textures among pegs"
    )
    export.add_argument("--rig", metavar="FILE", help="RFG character meshes: the .rig_pc naming the bones")
    imported.add_argument(
        "--asm", metavar="FILE", help="with --into PACK: an .asm_pc file beside the pack to keep in step"
    )

    render = add_command(
        sub,
        "render",
        run_render,
        "Draw a shaded three-quarter view of a model into a PNG (on the CPU, no display needed).",
    )
    _model_arguments(render, "model")
    render.add_argument("-o", "--output", required=True, help="PNG file to write")
    render.add_argument("--size", default=512, type=_image_size, help="image width and height (default: %(default)s)")
    render.add_argument("--overwrite", action="store_true", help="replace the output file if it exists")

    export_all_parser = add_command(
        sub,
        "export-all",
        run_export_all,
        "Convert every model in an archive into a folder.",
        "Convert every model in ARCHIVE into a folder, skipping members that are not models.\n"
        "Exits 1 when no member could be exported. Output axes as for `model export`.",
    )
    export_all_parser.add_argument("archive", metavar="ARCHIVE")
    export_all_parser.add_argument("-o", "--output", required=True, help="folder to write into (created if missing)")
    export_all_parser.add_argument(
        "--format", dest="format_name", choices=OUTPUT_FORMATS, default="glb", help="output format (default: glb)"
    )
    export_all_parser.add_argument("--overwrite", action="store_true", help="replace files that exist")
    export_all_parser.add_argument("--up", choices=("y", "z"), help=UP_HELP.format(what="output"))


def _scene_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--search",
        action="append",
        metavar="DIR",
        help="scenes: another folder to look for shared parts and textures in (repeatable; the data "
        "folder's carparts/ and trackparts/ are tried by default)",
    )
    parser.add_argument(
        "--paint",
        type=_colour,
        metavar="R,G,B",
        help="cars: the body colour where its texture's alpha lets it show, 0-1 each (default VDrift's 0,0.5,0.5)",
    )
    _allow_large(parser)


def _allow_large(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow-large",
        action="store_true",
        help="tracks: read a list.txt of more than 100,000 objects (the largest real track lists 2,301)",
    )


def _colour(value: str) -> tuple[float, float, float]:
    try:
        parts = tuple(float(part) for part in value.split(","))
    except ValueError:
        parts = ()
    if len(parts) != 3 or not all(0 <= part <= 1 for part in parts):
        raise argparse.ArgumentTypeError(f"{value!r} is not three numbers from 0 to 1 (R,G,B)")
    return parts  # type: ignore[return-value]


def _scene(args: argparse.Namespace) -> Any:
    """The scene of the folder MODEL, or None when MODEL is not a folder."""
    if args.member is not None or not os.path.isdir(args.model_path):
        return None
    from ..models import scene

    return scene.load(args.model_path, search=args.search, paint=args.paint, allow_large=args.allow_large)


def _image_size(value: str) -> int:
    number = int(value)
    if not 16 <= number <= 8192:
        raise argparse.ArgumentTypeError(f"{value} is not between 16 and 8192")
    return number


def _load(model: str, member: str | None, up: str | None = None) -> Mesh:
    """The model in file `model`, or member `member` of the pack `model`."""
    from .. import models

    if member is not None:
        return models.load_member(model, member, up=up)
    format_name = None
    if os.path.isfile(model):
        format_name = models.format_for_file(model)
        if format_name is None:
            from ..core.opening import detect

            found = [d for d in detect(model) if d.format != "joe"]
            if found:
                raise GamepakError(f"{model}: is a {found[0].format} pack: name the model inside it (ARCHIVE MEMBER)")
    return models.load(model, format_name, up=up)


def _label(model: str, member: str | None) -> str:
    return f"{model}:{member}" if member else model


def _output_format(output: str, format_name: str | None) -> str:
    from .. import models

    chosen = format_name or models.format_for_name(output)
    if chosen is None:
        raise UsageError(f"cannot tell the format of {output!r}: use .joe, .glb, .gltf, .obj or .ply, or --format")
    return chosen


def _kind(args: argparse.Namespace) -> Any:
    """The model kind (content registry) that takes MODEL (or its MEMBER); a folder is a scene
    (the scene family's row: an option is then refused naming scenes, not the JOE row that
    `for_path` falls back to for a name no model row claims)."""
    from ..content import for_path, get

    if args.member is None and os.path.isdir(args.model_path):
        return get("scene")
    return for_path("model", args.model_path, args.member)


def _opened(kind: Any, args: argparse.Namespace) -> tuple[bytes, str, dict[str, Any]]:
    """(bytes, label, options) of MODEL [MEMBER] for `kind`'s verbs: read by the kind's own
    `open` verb when it has one (a mesh pair), else the file or member itself. A kind stored as
    two files (its `partner` verb names the other, beside it) gets a function reading that
    one in `options["partner"]`."""
    options = dict(vars(args))
    if kind.has("open"):
        data, label, found = kind.call("open", args.model_path, args.member)
        return data, label, {**options, **found}
    if kind.has("partner"):
        own = args.member if args.member is not None else args.model_path
        partner = posixpath.join(posixpath.dirname(own), kind.call("partner", posixpath.basename(own)))
        if args.member is None:
            partner = os.path.join(os.path.dirname(args.model_path), os.path.basename(partner))
        options["partner"] = lambda: _model_bytes(args.model_path if args.member else partner, args.member and partner)
    return _model_bytes(args.model_path, args.member), _label(args.model_path, args.member), options


def _content_model(args: argparse.Namespace, kind: Any) -> tuple[Any, bytes, str, dict[str, Any]] | None:
    """(model kind, bytes, label, options) when MODEL (or MEMBER) is a model kind of the content
    registry with its own verbs (Quake MDL and BSP, RFG meshes, ...), else None (the mesh formats
    of `gamepak.models`: JOE, OBJ, glTF, PLY)."""
    if not kind.has("export"):
        return None
    return (kind, *_opened(kind, args))


def _model_bytes(path: str, member: str | None) -> bytes:
    """The bytes of a model file, or of the member `member` of the pack `path`."""
    if member is None:
        from ..core.files import read_file

        return read_file(path)
    from ..core.nested import resolve
    from ..core.opening import open as open_archive

    with open_archive(path) as opened:
        holder, entry = resolve(opened, member)
        return holder.read(entry)


def run_info(args: argparse.Namespace) -> None:
    import warnings

    kind = _kind(args)
    if kind.has("open"):  # a kind that finds its files itself (a mesh pair), before any scene
        _info(args, kind, *_opened(kind, args))
        return
    found = _scene(args)
    if found is not None:
        summary = found.summary()
        if args.as_json:
            print_json(summary)
            return
        lines = [f"{key}: {value}" for key, value in summary.items() if key != "warnings"]
        lines.append(f"warnings: {len(summary['warnings']) or 'none'}")
        lines.extend(f"  - {warning}" for warning in summary["warnings"])
        write_text("\n".join(lines) + "\n")
        return
    found_kind = _content_model(args, kind)
    if found_kind is not None:
        _info(args, *found_kind)
        return
    from .. import models

    with warnings.catch_warnings(record=True):
        # Issues are part of the report; no need to say them twice.
        warnings.simplefilter("always")
        if args.member is None and os.path.isfile(args.model_path) and models.format_for_file(args.model_path) == "joe":
            # Checked a window at a time: what info prints never needs the whole model held.
            summary = models.summarize(args.model_path, "joe", up=args.up)
        else:
            summary = _load(args.model_path, args.member, args.up).summary()
    details: dict[str, Any] = {"file": args.model_path}
    if args.member is not None:
        details["member"] = args.member
    details.update(summary)
    if args.as_json:
        print_json(details)
        return
    lines = []
    for key, value in details.items():
        if key == "issues":
            lines.append(f"issues: {len(value) if value else 'none'}")
            lines.extend(f"  - {issue}" for issue in value)
        elif isinstance(value, dict):
            lines.append(f"{key}: " + ", ".join(f"{k} {_vector(v)}" for k, v in value.items()))
        else:
            lines.append(f"{key}: {value if value is not None else '-'}")
    write_text("\n".join(lines) + "\n")


def _info(args: argparse.Namespace, kind: Any, data: bytes, label: str, options: dict[str, Any]) -> None:
    """`model info` of a content kind: its `info` verb, as JSON or as its `text` verb says."""
    shown = {
        "file": args.model_path,
        **({"member": args.member} if args.member else {}),
        **kind.call("info", data, label, options=options),
    }
    if args.as_json:
        print_json(shown)
    elif kind.has("text"):
        write_text(kind.call("text", shown))
    else:
        write_text("".join(f"{key}: {value}\n" for key, value in shown.items()))


def _exported(done: Any, default: str) -> None:
    """What an `export` verb wrote: ([written], [warnings]) said as notes, or (None) `default`."""
    if done is None:
        summary(f"wrote {default}")
        return
    written, warnings = done
    for warning in warnings:
        note(f"warning: {warning}")
    note(f"wrote {', '.join(written)}")


def _vector(values: Any) -> str:
    if isinstance(values, list):
        return "(" + ", ".join(f"{value:.6g}" for value in values) + ")"
    return str(values)


# The `model export` options only some model kinds take (options key -> flag, default): given
# for a kind whose verb does not take them (its row's `Verb.options`), they are refused.
EXPORT_OPTIONS: dict[str, tuple[str, object]] = {
    "frame": ("--frame", None),
    "palette": ("--palette", None),
    "scale": ("--scale", 1.0),
    "lod": ("--lod", 0),
    "lods": ("--lods", False),
    "no_textures": ("--no-textures", False),
    "rig": ("--rig", None),
}
# The mesh formats' own options (`models.save`, what exports a kind with no `export` verb of its
# own: JOE, OBJ, glTF, PLY): refused for a kind whose own verb exports it, and for a scene.
MESH_OPTIONS: dict[str, tuple[str, object]] = {
    "texture": ("--texture", None),
    "up": ("--up", None),
}
MESH_FORMATS = "the mesh formats (JOE, OBJ, glTF, PLY)"


def run_export(args: argparse.Namespace) -> None:
    from .. import models
    from .kind_options import refuse_untaken

    if args.output is not None and not args.overwrite and os.path.lexists(args.output):
        # Said before a whole track is read, not after.
        from ..errors import OutputExistsError

        raise OutputExistsError(args.output)
    kind = _kind(args)
    if args.member is None and kind.has("export_pack") and not kind.named_by(args.model_path):
        # A pack the kind lives in (an RFG pack's meshes): every one of them into a folder.
        refuse_untaken(args, kind, "export_pack", EXPORT_OPTIONS)
        refuse_untaken(args, kind, "export_pack", MESH_OPTIONS, taken_by=MESH_FORMATS)
        written, warnings = kind.call("export_pack", args.model_path, args.output, options=vars(args))
        for warning in warnings:
            note(f"warning: {warning}")
        note(f"wrote {len(written)} files to {args.output}")
        return
    # Scenes and the mesh formats (JOE, OBJ, glTF, PLY) have no `export` verb: they take none.
    refuse_untaken(args, kind, "export", EXPORT_OPTIONS)
    if kind.has("export"):
        refuse_untaken(args, kind, "export", MESH_OPTIONS, taken_by=MESH_FORMATS)
    if kind.name == "scene":  # said before the scene is read
        refuse_untaken(args, kind, "export", MESH_OPTIONS, taken_by=MESH_FORMATS)
    if kind.has("open"):  # a kind that finds its files itself (a mesh pair), before any scene
        data, label, options = _opened(kind, args)
        _exported(kind.call("export", data, label, args.output, options=options), args.output)
        return
    output_folder(args.output)
    found = _scene(args)
    if found is not None:
        _export_scene(found, args)
        return
    found_kind = _content_model(args, kind)
    if found_kind is not None:
        _, data, label, options = found_kind
        _exported(kind.call("export", data, label, args.output, options=options), args.output)
        return
    chosen = _output_format(args.output, args.format_name)
    mesh = _load(args.model_path, args.member)
    if mesh.frame_count > 1 and chosen != "joe":
        note(f"{_label(args.model_path, args.member)}: {mesh.frame_count} frames; exporting frame 0")
    written = models.save(mesh, args.output, chosen, overwrite=args.overwrite, texture=args.texture, up=args.up)
    summary(f"wrote {', '.join(written)} ({count(mesh.face_count, 'face')})")


def _export_scene(found: Any, args: argparse.Namespace) -> None:
    from ..models import scene

    chosen = args.format_name or _output_format(args.output, None)
    if chosen not in scene.SCENE_FORMATS:
        raise UsageError(f"a scene is written as .glb, .gltf or .obj, not {chosen}")
    for warning in found.warnings:
        note(f"warning: {warning}")
    written = scene.save(found, args.output, overwrite=args.overwrite)
    shown = found.summary()
    left_out = shown.get("objects_left_out", 0)
    files = ", ".join(written) if len(written) <= 3 else f"{args.output} and {count(len(written) - 1, 'image')}"
    summary(
        f"wrote {files} "
        f"({count(shown['objects'], 'object')}, {count(shown['textures'], 'texture')}, "
        f"{count(shown['triangles'], 'face')}"
        + (f"; {left_out} left out" if left_out else "")
        + (f"; {count(len(found.warnings), 'warning')}" if found.warnings else "")
        + ")"
    )


# The most changes `model import --into` names one by one.
DETAIL_LINES = 200


def run_import(args: argparse.Namespace) -> None:
    from .. import models

    if args.into is not None:
        # `--into PACK MEMBER` (RFG meshes) or `--into TRACK_DIR`.
        if len(args.into) > 2 or (len(args.into) == 2 and args.member is not None):
            raise UsageError("--into takes a track folder, or a pack and the mesh member in it")
        if len(args.into) == 2:
            args.member = args.into[1]
        args.into = args.into[0]
    if args.into is not None and os.path.isfile(args.into):
        # A model written back into a pack by the kind of the member it replaces (an RFG mesh).
        from ..content import for_path
        from .kind_options import refuse_untaken

        kind = for_path("model", args.into, args.member)
        if not kind.has("import"):
            raise UsageError(f"{args.into}: no model kind of it is written back by --into PACK MEMBER")
        # --delete is a scene's (objects the scene no longer has): a mesh import has none to remove.
        refuse_untaken(args, kind, "import", {"delete": ("--delete", False)})
        report = kind.call("import", args.model_path, args.into, args.member, options=vars(args))
        for warning in report.warnings:
            note(f"warning: {warning}")
        note(("would change " if args.dry_run else "") + report.summary())
        return
    if args.into is not None:
        if args.member is not None or args.output is not None:
            raise UsageError("--into takes a scene file alone (no MEMBER, no -o)")
        from ..ops.scenes import import_scene

        report = import_scene(
            args.model_path, args.into, delete=args.delete, dry_run=args.dry_run, allow_large=args.allow_large
        )
        for warning in report.warnings:
            note(f"warning: {warning}")
        if args.dry_run and not report.unchanged:
            summary("would change " + report.summary())
        else:
            summary(report.summary())
        # Every change named, up to a screenful (a scene can add hundreds of thousands).
        # A dry run's plan is what was asked for: said even with -q.
        said = note if args.dry_run else summary
        for line in report.details[:DETAIL_LINES]:
            said(("would be " if args.dry_run else "") + line)
        if len(report.details) > DETAIL_LINES:
            said(f"... and {len(report.details) - DETAIL_LINES} more")
        return
    if args.output is None:
        raise UsageError("model import needs -o FILE.joe (or --into TRACK_DIR for a scene)")
    if args.delete or args.dry_run:
        raise UsageError("--delete and --dry-run go with --into")

    chosen = _output_format(args.output, None)
    mesh = _load(args.model_path, args.member, args.up)
    # A JOE keeps what it holds (the game's own files carry some NaNs), but a model made here
    # must not carry one: every exporter would then refuse it.
    mesh.require_finite("a model imported into JOE")
    if chosen == "joe":
        mesh = mesh.with_normals()
    output_folder(args.output)
    models.save(mesh, args.output, chosen, overwrite=args.overwrite)
    vertices = len(mesh.positions)
    summary(f"wrote {args.output} ({count(mesh.face_count, 'face')}, {vertices} vertex{'' if vertices == 1 else 'es'})")


def run_render(args: argparse.Namespace) -> None:
    from .. import models
    from ..models.render import render_png

    if not args.overwrite and os.path.lexists(args.output):
        raise OutputExistsError(args.output)
    kind = _kind(args)
    if kind.has("mesh"):
        data, label, options = _opened(kind, args)
        mesh = kind.call("mesh", data, label, options=options)
    else:
        mesh = _load(args.model_path, args.member, args.up)
    output_folder(args.output)
    models.write_atomic(args.output, render_png(mesh, args.size), overwrite=args.overwrite)
    summary(f"wrote {args.output} ({args.size}x{args.size})")


def run_export_all(args: argparse.Namespace) -> None:
    from ..content import exporter_for
    from ..ops.model_export import NOT_A_MODEL, export_all

    archive, output = args.archive, args.output
    converted, skipped = export_all(
        archive, output, args.format_name, overwrite=args.overwrite, up=args.up, warn=note, exporter_for=exporter_for
    )
    not_models = [name for name, reason in skipped if reason == NOT_A_MODEL]
    for name, reason in skipped:
        if reason != NOT_A_MODEL:
            note(f"skipped {name}: {reason}")
    if not_models:
        shown = ", ".join(not_models[:3]) + (f" and {len(not_models) - 3} more" if len(not_models) > 3 else "")
        what = "member that is not a model" if len(not_models) == 1 else "members that are not models"
        summary(f"skipped {len(not_models)} {what}: {shown}")
    if not converted:
        raise GamepakError(f"{archive}: no model exported ({count(len(skipped), 'member')} skipped)")
    summary(f"wrote {count(len(converted), 'model')} to {output}" + (f", skipped {len(skipped)}" if skipped else ""))
