"""Gameloft J2ME sprites (BSPRITE) in packs: listed, exported to a folder per sprite and imported
back into the pack in one crash-safe edit (`ops.edit`). The format's own work (bytes, pixels,
the folder's files) is in `formats.j2me.sprite`; this module finds the sprites of a pack (or a
lone sprite file), lays out the folders and writes.

Export: `OUT/MEMBER/` per sprite (`OUT/NAME/` for a lone sprite file named NAME), as
`formats.j2me.sprite.files` describes. Import: every sprite of the pack whose folder is in the
input folder is rebuilt from it; a sprite whose bytes come out the same is left alone, and the
pack is edited once for all the others (nothing is written when anything is refused).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.names import safe_parts
from ..errors import CorruptArchiveError, GamepakError, UnsafePathError, cannot_read
from ..formats.j2me.sprite.summary import MAX_SPRITE_BYTES


@dataclass
class SpriteMember:
    """One sprite found: the member holding it (None: the file is the sprite), its bytes, and
    the name of its export folder."""

    member: str | None
    data: bytes
    folder: str
    # What the pack says of the member besides its bytes (a `j2me-ids` record's id).
    extra: dict[str, Any] = field(default_factory=dict)


def _is_lone_sprite(path: str) -> bool:
    from ..core.files import read_head
    from ..formats.j2me.sprite import is_sprite

    return is_sprite(read_head(path, 6))


def iter_sprites(
    path: str | os.PathLike[str], members: list[str] | None = None, *, format: str | None = None
) -> Iterator[SpriteMember]:
    """The sprites of a pack (only `members`, when given: each must be a sprite), or the file
    itself when it is one."""
    from ..formats.j2me.sprite import is_sprite

    label = os.fspath(path)
    if format is None and _is_lone_sprite(label):
        if members:
            raise GamepakError(f"{label}: a lone sprite file has no members (given: {', '.join(members)})")
        with open(label, "rb") as handle:
            data = handle.read(MAX_SPRITE_BYTES + 1)
        yield SpriteMember(None, data, os.path.splitext(os.path.basename(label))[0] or "sprite")
        return
    from ..core.opening import open as open_archive

    with open_archive(label, format) as pack:
        wanted = set(members or [])
        found = set()
        for entry in pack.infolist():
            if wanted and entry.name not in wanted:
                continue
            head = b""
            if entry.size <= MAX_SPRITE_BYTES:
                with pack.open(entry) as stream:
                    head = stream.read(6)
            if not is_sprite(head):
                if wanted:
                    raise GamepakError(f"{label}: member {entry.name!r} is not a sprite (no BSPRITE v3 header)")
                continue
            found.add(entry.name)
            ids = getattr(pack, "ids", None)
            extra = {"record_id": ids[entry.index]} if isinstance(ids, list) else {}
            yield SpriteMember(entry.name, pack.read(entry), entry.name, extra)
        missing = wanted - found
        if missing:
            raise GamepakError(f"{label}: no member called {', '.join(sorted(missing))}")


def _read(path: str, found: SpriteMember) -> Any:
    from ..formats.j2me.sprite import read_sprite

    return read_sprite(found.data, path, found.member)


def list_sprites(
    path: str | os.PathLike[str], members: list[str] | None = None, *, format: str | None = None
) -> list[dict[str, Any]]:
    """One row per sprite: `name` (the member; None for a lone sprite file), `size`, modules,
    frames, anims, palettes, colours, encoding, pixel format."""
    from ..formats.j2me.sprite.summary import summary_row

    label = os.fspath(path)
    return [
        {"name": found.member, **summary_row(_read(label, found), len(found.data))}
        for found in iter_sprites(label, members, format=format)
    ]


def sprite_line(row: dict[str, Any]) -> str:
    """A `sprite ls` line."""
    member = row["name"] if row["name"] is not None else "-"
    return (
        f"{member:>4}  {row['modules']:4} modules {row['frames']:4} frames {row['anims']:3} anims  "
        f"{row['palettes']} x {row['colours']} colours {row['pixel_format'] or '-'}  {row['encoding'] or '-'}  "
        f"{row['size']} bytes"
    )


def export_sprites(
    path: str | os.PathLike[str],
    output: str | os.PathLike[str],
    members: list[str] | None = None,
    *,
    palette: int = 0,
    format: str | None = None,
    overwrite: bool = False,
) -> list[str]:
    """Write every sprite of `path` (or `members`) under `output`, one folder each; the files
    appear all at once or not at all. Sprites are drawn with `palette` where they have it
    (palette 0 where they do not: their JSON says which); no sprite having it is an error.
    Returns the files written."""
    from ..formats.j2me.sprite.files import export_files
    from .made_files import write_files

    label = os.fspath(path)
    files: list[tuple[str, bytes]] = []
    most_palettes = 0
    for found in iter_sprites(label, members, format=format):
        sprite = _read(label, found)
        if not sprite.modules:
            continue
        most_palettes = max(most_palettes, len(sprite.palettes))
        try:
            made = export_files(sprite, palette if palette < len(sprite.palettes) else 0, extra=found.extra)
        except GamepakError as exc:
            where = f"{label}: member {found.member!r}" if found.member is not None else label
            raise GamepakError(f"{where}: {exc}") from None
        files += [(f"{found.folder}/{name}", data) for name, data in made.items()]
    if not files:
        raise GamepakError(f"{label}: no sprite with modules to export")
    if palette >= most_palettes:
        raise GamepakError(f"{label}: palette {palette}: no sprite has it (they have at most {most_palettes})")
    return write_files(output, files, overwrite=overwrite)


@dataclass
class SpriteImport:
    """What `import_sprites` did: the sprites changed (their member, or the file), how many
    folders came back unchanged, and folders of the input that name no sprite of the pack."""

    changed: list[str] = field(default_factory=list)
    unchanged: int = 0
    unknown: list[str] = field(default_factory=list)


def _folder_reader(root: str, folder: str) -> Any:
    def read(name: str) -> bytes:
        try:
            parts = safe_parts(name)
        except UnsafePathError as exc:
            raise GamepakError(f"{os.path.join(root, folder)}: file name {name!r}: {exc}") from None
        full = os.path.join(root, folder, *parts)
        try:
            with open(full, "rb") as handle:
                return handle.read(MAX_SPRITE_BYTES * 64)
        except OSError as exc:
            raise cannot_read(full, exc) from None

    return read


def import_sprites(
    path: str | os.PathLike[str],
    folder: str | os.PathLike[str],
    *,
    nearest: bool = False,
    dry_run: bool = False,
    format: str | None = None,
) -> SpriteImport:
    """Rebuild each sprite of `path` whose folder is in `folder` (as `export_sprites` wrote it)
    and write the changed ones back in one crash-safe edit of the pack. Everything is checked
    before anything is written; an unchanged folder changes nothing."""
    from ..formats.j2me.sprite import read_sprite
    from ..formats.j2me.sprite.files import JSON_NAME, import_files

    label = os.fspath(path)
    root = os.fspath(folder)
    if not os.path.isdir(root):
        raise GamepakError(f"{root}: not a folder")
    result = SpriteImport()
    replacements: list[tuple[str | None, bytes]] = []
    seen = set()
    for found in iter_sprites(label, format=format):
        if not os.path.isfile(os.path.join(root, found.folder, JSON_NAME)):
            continue
        seen.add(found.folder)
        original = _read(label, found)
        sprite = import_files(
            original, _folder_reader(root, found.folder), where=os.path.join(root, found.folder), nearest=nearest
        )
        data = sprite.to_bytes()
        if data == found.data:
            result.unchanged += 1
            continue
        try:
            sprite.check_limits()
            # What is written must read back (a version or flags the layout does not have).
            read_sprite(data)
        except CorruptArchiveError as exc:
            raise GamepakError(f"{os.path.join(root, found.folder)}: would not read back: {exc.reason}") from None
        except GamepakError as exc:
            raise GamepakError(f"{os.path.join(root, found.folder)}: {exc}") from None
        replacements.append((found.member, data))
        result.changed.append(found.member if found.member is not None else label)
    result.unknown = sorted(
        name for name in os.listdir(root) if name not in seen and os.path.isfile(os.path.join(root, name, JSON_NAME))
    )
    if not seen:
        raise GamepakError(f"{root}: no folder holds a {JSON_NAME} of a sprite of {label}")
    if not replacements:
        return result
    if replacements[0][0] is None:
        if not dry_run:
            from ..core.atomic import write_bytes

            write_bytes(label, replacements[0][1], overwrite=True)
        return result
    from .content_files import pack_edit

    with pack_edit(label, format, dry_run=dry_run) as pack:
        for member, data in replacements:
            assert member is not None
            pack.replace(member, data)
    return result


# -- the `texture` verbs (this module is the content registry's `sprite` texture source) ----------


def list_textures(source: str | os.PathLike[str], **options: Any) -> list[dict[str, Any]]:
    """`texture ls` of a pack holding sprites: one row per module (peg: the member)."""
    label = os.fspath(source)
    rows = []
    for found in iter_sprites(label):
        sprite = _read(label, found)
        for index, (width, height) in enumerate(sprite.modules):
            rows.append(
                {
                    "peg": found.member,
                    "name": f"module {index:03d}",
                    "width": width,
                    "height": height,
                    "format": f"{sprite.encoding_name} {sprite.pixel_format_name}",
                }
            )
    return rows


def ls_line(row: dict[str, Any]) -> str:
    """A `texture ls` line of a sprite's module."""
    return f"{row['width']:>5}x{row['height']:<5} {row['format']:<12} {row['peg']}/{row['name']}"


def export_textures(
    source: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    names: list[str] | tuple[str, ...] = (),
    overwrite: bool = False,
    **options: Any,
) -> list[str]:
    """`texture export` of a pack holding sprites: what `sprite export` writes (the modules as
    indexed PNGs, with the frames, anims and sprite.json that `texture import` reads back);
    `names` are members."""
    return export_sprites(source, output, list(names) or None, overwrite=overwrite)


def exported(written: Sequence[str]) -> str:
    """What `texture export` of sprites wrote, counted as the sprite's files are laid out
    (`formats.j2me.sprite.files`): "2 sprites (4 modules, 2 frames, 2 animations)", not the
    files, which are not textures."""
    from ..formats.j2me.sprite.files import JSON_NAME

    folders = Counter(os.path.basename(os.path.dirname(path)) for path in written)
    sprites = sum(os.path.basename(path) == JSON_NAME for path in written)
    parts = [
        f"{folders[folder]} {noun}{'' if folders[folder] == 1 else 's'}"
        for folder, noun in (("modules", "module"), ("frames", "frame"), ("anims", "animation"))
    ]
    return f"{sprites} sprite{'' if sprites == 1 else 's'} ({', '.join(parts)})"


def import_textures(
    target: str | os.PathLike[str], folder: str | os.PathLike[str], *, dry_run: bool = False, **options: Any
) -> list[str]:
    """`texture import` of a folder `texture export` wrote for a pack holding sprites: the
    sprites changed."""
    return import_sprites(target, folder, dry_run=dry_run).changed
