"""`gamepak model ...`: inspect, convert and preview JOE models (and OBJ/glTF/PLY ones).

Every command takes a model file, or `ARCHIVE MEMBER` for a model inside a pack.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any

import click

from ..errors import GamepakError, OutputExistsError

if TYPE_CHECKING:
    from ..models.mesh import Mesh

OUTPUT_FORMATS = ["joe", "glb", "gltf", "obj", "ply"]
UP_HELP = (
    "Up axis of the {what} file: y or z (default: Y for glTF and OBJ, Z for PLY and JOE, as Blender "
    "writes and reads them; models are turned so that VDrift's Z-up stays up)."
)


NOT_A_MODEL = "not a model"


def _up_option(what: str) -> Any:
    return click.option("--up", type=click.Choice(["y", "z"]), help=UP_HELP.format(what=what))


def _note(message: str) -> None:
    click.echo(f"gamepak: {message}", err=True)


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
        raise click.UsageError(
            f"cannot tell the format of {output!r}: use .joe, .glb, .gltf, .obj or .ply, or --format"
        )
    return chosen


@click.group("model")
def model() -> None:
    """Inspect, convert and preview VDrift JOE models (and OBJ, glTF, PLY).

    MODEL is a model file, or an archive followed by a MEMBER name inside it, e.g.
    `gamepak model export garage_objects.jpk joist.007.joe -o joist.glb`.
    """


@model.command("info")
@click.argument("model_path", metavar="MODEL", type=click.Path(dir_okay=False))
@click.argument("member", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the information as a JSON object.")
@_up_option("model")
def info_command(model_path: str, member: str | None, as_json: bool, up: str | None) -> None:
    """Show a model's counts, bounding box (Z up), texture coordinate range and any issues."""
    import warnings

    with warnings.catch_warnings(record=True):
        # Issues are part of the report; no need to say them twice.
        warnings.simplefilter("always")
        mesh = _load(model_path, member, up)
    details: dict[str, Any] = {"file": model_path}
    if member is not None:
        details["member"] = member
    details.update(mesh.summary())
    if as_json:
        sys.stdout.write(json.dumps(details, indent=1) + "\n")
        return
    for key, value in details.items():
        if key == "issues":
            click.echo(f"issues: {len(value) if value else 'none'}")
            for issue in value:
                click.echo(f"  - {issue}")
        elif isinstance(value, dict):
            click.echo(f"{key}: " + ", ".join(f"{k} {_vector(v)}" for k, v in value.items()))
        else:
            click.echo(f"{key}: {value if value is not None else '-'}")


def _vector(values: Any) -> str:
    if isinstance(values, list):
        return "(" + ", ".join(f"{value:.6g}" for value in values) + ")"
    return str(values)


@model.command("export")
@click.argument("model_path", metavar="MODEL", type=click.Path(dir_okay=False))
@click.argument("member", required=False)
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False),
    help="File to write: .glb, .gltf, .obj, .ply (or .joe).",
)
@click.option("--format", "format_name", type=click.Choice(OUTPUT_FORMATS), help="Output format (default: from -o).")
@click.option(
    "--texture",
    help="Texture image to name in the material (OBJ: an MTL file beside; .glb embeds it when the file exists).",
)
@click.option("--overwrite", is_flag=True, help="Replace output files that exist.")
@_up_option("output")
def export_command(
    model_path: str,
    member: str | None,
    output: str,
    format_name: str | None,
    texture: str | None,
    overwrite: bool,
    up: str | None,
) -> None:
    """Convert a model to glTF 2.0, OBJ or PLY (frame 0).

    JOE models are Z up; .glb/.gltf and .obj files are written Y up and .ply files Z up (what
    Blender expects by default), so the model stands upright after import. --up changes the
    output's axis. A model holding NaN or infinite coordinates is refused, naming the value.
    """
    from .. import models

    chosen = _output_format(output, format_name)
    mesh = _load(model_path, member)
    if mesh.frame_count > 1 and chosen != "joe":
        _note(f"{_label(model_path, member)}: {mesh.frame_count} frames; exporting frame 0")
    written = models.save(mesh, output, chosen, overwrite=overwrite, texture=texture, up=up)
    _note(f"wrote {', '.join(written)} ({mesh.face_count} faces)")


@model.command("import")
@click.argument("model_path", metavar="MODEL", type=click.Path(dir_okay=False))
@click.argument("member", required=False)
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The .joe file to write.")
@click.option("--overwrite", is_flag=True, help="Replace the output file if it exists.")
@_up_option("input")
def import_command(model_path: str, member: str | None, output: str, overwrite: bool, up: str | None) -> None:
    """Convert an OBJ, glTF (.glb/.gltf) or PLY model to a JOE model.

    Polygons are cut into triangles in their own winding (concave ones too), values repeated
    in the file are merged, and faces without normals get flat ones. OBJ and glTF files are
    read as Y up, PLY as Z up (Blender's defaults), and turned to JOE's Z up; --up names the
    input's axis instead.
    """
    from .. import models

    chosen = _output_format(output, None)
    mesh = _load(model_path, member, up)
    if chosen == "joe":
        mesh = mesh.with_normals()
    models.save(mesh, output, chosen, overwrite=overwrite)
    _note(f"wrote {output} ({mesh.face_count} faces, {len(mesh.positions)} vertices)")


@model.command("render")
@click.argument("model_path", metavar="MODEL", type=click.Path(dir_okay=False))
@click.argument("member", required=False)
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="PNG file to write.")
@click.option("--size", default=512, show_default=True, type=click.IntRange(16, 8192), help="Image width and height.")
@click.option("--overwrite", is_flag=True, help="Replace the output file if it exists.")
@_up_option("model")
def render_command(
    model_path: str, member: str | None, output: str, size: int, overwrite: bool, up: str | None
) -> None:
    """Draw a shaded three-quarter view of a model into a PNG (on the CPU, no display needed)."""
    from .. import models
    from ..models.render import render_png

    if not overwrite and os.path.lexists(output):
        raise OutputExistsError(output)
    mesh = _load(model_path, member, up)
    models.write_atomic(output, render_png(mesh, size), overwrite=overwrite)
    _note(f"wrote {output} ({size}x{size})")


@model.command("export-all")
@click.argument("archive", type=click.Path(dir_okay=False))
@click.option(
    "-o", "--output", required=True, type=click.Path(file_okay=False), help="Folder to write into (created if missing)."
)
@click.option("--format", "format_name", type=click.Choice(OUTPUT_FORMATS), default="glb", show_default=True)
@click.option("--overwrite", is_flag=True, help="Replace files that exist.")
@_up_option("output")
def export_all_command(archive: str, output: str, format_name: str, overwrite: bool, up: str | None) -> None:
    """Convert every model in ARCHIVE into a folder, skipping members that are not models.

    Exits 1 when no member could be exported. Output axes as for `model export`.
    """
    converted, skipped = export_all(archive, output, format_name, overwrite=overwrite, up=up)
    not_models = [name for name, reason in skipped if reason == NOT_A_MODEL]
    for name, reason in skipped:
        if reason != NOT_A_MODEL:
            _note(f"skipped {name}: {reason}")
    if not_models:
        shown = ", ".join(not_models[:3]) + (f" and {len(not_models) - 3} more" if len(not_models) > 3 else "")
        what = "member that is not a model" if len(not_models) == 1 else "members that are not models"
        _note(f"skipped {len(not_models)} {what}: {shown}")
    if not converted:
        raise GamepakError(f"{archive}: no model exported ({len(skipped)} members skipped)")
    _note(
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
    from ..core.names import safe_parts
    from ..core.opening import open as open_archive

    extension = models.FORMATS[format_name][0]
    planned: list[tuple[str, Mesh, str]] = []
    skipped: list[tuple[str, str]] = []
    taken: set[str] = set()
    with open_archive(archive) as opened:
        for entry, data in ((entry, opened.read(entry)) for entry in opened.infolist()):
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
                _note(f"warning: {warning.message}")
            parts = safe_parts(entry.name)
            stem = parts[-1][: -len(os.path.splitext(parts[-1])[1])] if os.path.splitext(parts[-1])[1] else parts[-1]
            relative = os.path.join(*parts[:-1], stem + extension)
            if relative in taken:
                relative = os.path.join(*parts[:-1], parts[-1] + extension)
            taken.add(relative)
            planned.append((entry.name, mesh, relative))
    targets = [os.path.join(output, relative) for _, _, relative in planned]
    if not overwrite:
        for target in targets:
            if os.path.lexists(target):
                raise OutputExistsError(target)
    written = []
    for (_, mesh, _), target in zip(planned, targets):
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        written.extend(models.save(mesh, target, format_name, overwrite=overwrite, up=up))
    return written, skipped
