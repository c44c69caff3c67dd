"""`gamepak model ...`: inspect, convert and preview JOE models (and OBJ/glTF/PLY ones).

Every command takes a model file, or `ARCHIVE MEMBER` for a model inside a pack.
"""

from __future__ import annotations

import argparse
import os

from ..errors import GamepakError, OutputExistsError, UsageError
from .common import add_command, add_group, add_json_option, note, print_json, write_text

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


NOT_A_MODEL = "not a model"


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
    export.add_argument("--scale", type=float, default=1.0, help="MDL/BSP: units per Quake unit (default 1)")

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
    imported.add_argument("--into", metavar="TRACK_DIR", help="write a glTF scene back into this VDrift track")
    imported.add_argument(
        "--delete", action="store_true", help="with --into: remove the objects the scene no longer has"
    )
    imported.add_argument("--dry-run", action="store_true", help="with --into: say what would change, write nothing")
    _allow_large(imported)
    imported.add_argument("--overwrite", action="store_true", help="replace the output file if it exists")

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


def _quake_model(args: argparse.Namespace) -> tuple[str, bytes, str] | None:
    """(kind, bytes, label) when MODEL (or MEMBER) is a Quake MDL or BSP (the content
    registry decides), else None."""
    from ..core.content import model_kind_for

    name = args.member or args.model_path
    spec = model_kind_for(name)
    if spec is None or spec.name not in ("mdl", "bsp"):
        return None
    label = _label(args.model_path, args.member)
    if args.member is None:
        from ..models.quake import read_file

        return spec.name, read_file(args.model_path), label
    from ..core.nested import resolve
    from ..core.opening import open as open_archive

    with open_archive(args.model_path) as opened:
        holder, entry = resolve(opened, args.member)
        return spec.name, holder.read(entry), label


def run_info(args: argparse.Namespace) -> None:
    import warnings

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
    quake = _quake_model(args)
    if quake is not None:
        from ..models.quake import summary as quake_summary

        shown = {"file": args.model_path, **({"member": args.member} if args.member else {}), **quake_summary(*quake)}
        if args.as_json:
            print_json(shown)
        else:
            write_text("".join(f"{key}: {value}\n" for key, value in shown.items()))
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


def _vector(values: Any) -> str:
    if isinstance(values, list):
        return "(" + ", ".join(f"{value:.6g}" for value in values) + ")"
    return str(values)


def run_export(args: argparse.Namespace) -> None:
    from .. import models

    if args.output is not None and not args.overwrite and os.path.lexists(args.output):
        # Said before a whole track is read, not after.
        from ..errors import OutputExistsError

        raise OutputExistsError(args.output)
    found = _scene(args)
    if found is not None:
        _export_scene(found, args)
        return
    quake = _quake_model(args)
    if quake is not None:
        from ..models.quake import export_file

        export_file(
            *quake, args.output, frame=args.frame, palette=args.palette, scale=args.scale, overwrite=args.overwrite
        )
        note(f"wrote {args.output}")
        return
    chosen = _output_format(args.output, args.format_name)
    mesh = _load(args.model_path, args.member)
    if mesh.frame_count > 1 and chosen != "joe":
        note(f"{_label(args.model_path, args.member)}: {mesh.frame_count} frames; exporting frame 0")
    written = models.save(mesh, args.output, chosen, overwrite=args.overwrite, texture=args.texture, up=args.up)
    note(f"wrote {', '.join(written)} ({_faces(mesh.face_count)})")


def _export_scene(found: Any, args: argparse.Namespace) -> None:
    from ..models import scene

    chosen = args.format_name or _output_format(args.output, None)
    if chosen not in scene.SCENE_FORMATS:
        raise UsageError(f"a scene is written as .glb, .gltf or .obj, not {chosen}")
    for warning in found.warnings:
        note(f"warning: {warning}")
    written = scene.save(found, args.output, overwrite=args.overwrite)
    summary = found.summary()
    left_out = summary.get("objects_left_out", 0)
    note(
        f"wrote {', '.join(written) if len(written) <= 3 else f'{args.output} and {len(written) - 1} images'} "
        f"({summary['objects']} objects, {summary['textures']} textures, {_faces(summary['triangles'])}"
        + (f"; {left_out} left out" if left_out else "")
        + (f"; {len(found.warnings)} warnings" if found.warnings else "")
        + ")"
    )


def _faces(number: int) -> str:
    return f"{number} face{'' if number == 1 else 's'}"


# The most changes `model import --into` names one by one.
DETAIL_LINES = 200


def run_import(args: argparse.Namespace) -> None:
    from .. import models

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
            note("would change " + report.summary())
        else:
            note(report.summary())
        # Every change named, up to a screenful (a scene can add hundreds of thousands).
        for line in report.details[:DETAIL_LINES]:
            note(("would be " if args.dry_run else "") + line)
        if len(report.details) > DETAIL_LINES:
            note(f"... and {len(report.details) - DETAIL_LINES} more")
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
    models.save(mesh, args.output, chosen, overwrite=args.overwrite)
    vertices = len(mesh.positions)
    note(f"wrote {args.output} ({_faces(mesh.face_count)}, {vertices} vertex{'' if vertices == 1 else 'es'})")


def run_render(args: argparse.Namespace) -> None:
    from .. import models
    from ..models.render import render_png

    if not args.overwrite and os.path.lexists(args.output):
        raise OutputExistsError(args.output)
    mesh = _load(args.model_path, args.member, args.up)
    models.write_atomic(args.output, render_png(mesh, args.size), overwrite=args.overwrite)
    note(f"wrote {args.output} ({args.size}x{args.size})")


def run_export_all(args: argparse.Namespace) -> None:
    archive, output = args.archive, args.output
    converted, skipped = export_all(archive, output, args.format_name, overwrite=args.overwrite, up=args.up)
    not_models = [name for name, reason in skipped if reason == NOT_A_MODEL]
    for name, reason in skipped:
        if reason != NOT_A_MODEL:
            note(f"skipped {name}: {reason}")
    if not_models:
        shown = ", ".join(not_models[:3]) + (f" and {len(not_models) - 3} more" if len(not_models) > 3 else "")
        what = "member that is not a model" if len(not_models) == 1 else "members that are not models"
        note(f"skipped {len(not_models)} {what}: {shown}")
    if not converted:
        raise GamepakError(f"{archive}: no model exported ({len(skipped)} members skipped)")
    note(
        f"wrote {len(converted)} model{'s' if len(converted) != 1 else ''} to {output}"
        + (f", skipped {len(skipped)}" if skipped else "")
    )


def export_all(
    archive: str, output: str, format_name: str = "glb", *, overwrite: bool = False, up: str | None = None
) -> tuple[list[str], list[tuple[str, str]]]:
    """Convert every model member of `archive` into `output`; returns (files written,
    [(member, why skipped)]). Every target is checked before the first file is written."""
    import warnings

    from .. import models
    from ..core.content import model_kind_for
    from ..core.opening import open as open_archive

    extension = models.FORMATS[format_name][0]
    planned: list[tuple[str, Mesh | bytes, str]] = []
    skipped: list[tuple[str, str]] = []
    taken: set[str] = set()
    with open_archive(archive) as opened:
        for entry, data in ((entry, opened.read(entry)) for entry in opened.infolist()):
            quake = model_kind_for(entry.name, data[:4])
            if quake is not None and quake.name in ("mdl", "bsp") and format_name in ("glb", "gltf"):
                try:
                    built: Mesh | bytes = quake.load().export_bytes(
                        quake.name, data, f"{archive}:{entry.name}", archive, binary=format_name == "glb"
                    )
                except GamepakError as exc:
                    skipped.append((entry.name, str(exc)))
                    continue
                planned.append((entry.name, built, _relative(entry.name, extension, taken)))
                continue
            source_format = models.format_for_name(entry.name) or models.format_for_data(data)
            if source_format is None:
                skipped.append((entry.name, NOT_A_MODEL))
                continue
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    mesh = models.loads(
                        data, source_format, name=os.path.basename(entry.name), path=f"{archive}:{entry.name}"
                    )
                if format_name != "joe":
                    # Checked before anything is written, like the targets below.
                    mesh.require_finite(format_name)
            except GamepakError as exc:
                skipped.append((entry.name, str(exc)))
                continue
            for warning in caught:
                note(f"warning: {warning.message}")
            planned.append((entry.name, mesh, _relative(entry.name, extension, taken)))
    targets = [os.path.join(output, relative) for _, _, relative in planned]
    if not overwrite:
        for target in targets:
            if os.path.lexists(target):
                raise OutputExistsError(target)
    written = []
    for (_, made, _), target in zip(planned, targets):
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        if isinstance(made, bytes):  # a Quake model or map, already glTF
            models.write_atomic(target, made, overwrite=overwrite)
            written.append(target)
        else:
            written.extend(models.save(made, target, format_name, overwrite=overwrite, up=up))
    return written, skipped


def _relative(name: str, extension: str, taken: set[str]) -> str:
    """The output path of member `name` (its extension replaced; kept when that would clash)."""
    from ..core.names import safe_parts

    parts = safe_parts(name)
    stem = parts[-1][: -len(os.path.splitext(parts[-1])[1])] if os.path.splitext(parts[-1])[1] else parts[-1]
    relative = os.path.join(*parts[:-1], stem + extension)
    if relative in taken:
        relative = os.path.join(*parts[:-1], parts[-1] + extension)
    taken.add(relative)
    return relative
