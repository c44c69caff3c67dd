"""The content registry: one row per kind of content (textures, models, scenes, strings, tables,
zones), as `core/registry.py` is for archives. Every surface reads these rows: the `texture`,
`model`, `text` and `table` verbs pick the row that takes a file and call its functions; the
viewer picks the preview of a file from them (loose or packed alike); the catalog fills its
`textures`, `models`, `strings` and `zone_objects` tables (a family may have a table of its
own) and the `archives.kind` of a loose content file from them; the
member types the catalog and the viewer show come from them; the README's table of content
kinds is `readme_table()`. No surface tests a row's name.

This module sits above formats/, models/ and ops/ (it names their modules) and below the
surfaces (cli/, web/, catalog/); it imports none of the modules it names until a row is used
(`Verb.function()` loads it), so `import gamepak.content` costs nothing.

A row (`ContentKind`) says:
- how to recognise the kind: `extensions` (loose files and members), `signatures` (bytes at
  offset 0), `lump_kinds` (WAD lumps, which have no extension), `packs` (the pack formats a
  verb given a pack looks inside), and an optional `claims` verb for what names and bytes
  cannot tell (an RFG pack holding `.rfglocatext` files);
- what it does: `verbs`, a name -> `Verb` map (the classes are in `spec.py`). Each verb of a
  family has one call signature (`FAMILIES[...].verbs` documents it); the kind's own options
  (an RFG peg's `--order`, a Quake image's `--palette`) reach it as one options mapping, of
  which `Verb.options` names the keys its function takes: `ContentKind.call(verb, *arguments, options=..., **common)`;
- what the catalog records (`family.catalog`: its table; `family.archive_kind`: the
  `archives.kind` of a loose file) and the member type labels (`types`: extension -> label);
- what the viewer shows (`family.preview`: the template, filled by the row's `gallery`/`png`,
  `glb`/`counts` or `strings` verbs; a kind with a page of its own names it, `preview`, and
  fills it with its `preview` verb).

Adding a content kind is one module plus one row (RFG meshes, J2ME sprites and RFG zones were):
1. Write the module (a format module under formats/ or models/, e.g. `models/rfg/mesh.py`) with
   one function per verb of its family, in the family's call signature (`FAMILIES[...].verbs`
   spells each one out). For a model: `counts(data, label)` (the viewer's caption),
   `glb(data, label, *, <options>)` (the viewer's 3D view), `info(data, label)` (`model info`),
   `export(data, label, output, *, <options>)` (`model export`, `model export-all`),
   `stats(data, label)` (the catalog's models rows). For a texture: `gallery`, `png`, `rows`,
   and `ls`/`line`/`export`/`import` for `gamepak texture` (and `exported(written)` when its
   export writes more than one file a texture: a sprite's summary counts sprites, modules,
   frames). For strings: `strings`, `export`, `import`. A kind with a check of its own inside
   packs (RFG tables, zones) adds `verify(archive, options=)`: `gamepak verify` runs it over
   every pack of its `packs` (listed
   too in `cli/reading.PACK_CHECKS`, the start-up index tests/test_startup.py holds to the
   rows). The command refuses an option the verb's `Verb.options` does not
   list (`texture --resize` for sprites). A kind stored as two files (RFG meshes: `.csmesh_pc` + `.gsmesh_pc`, as pegs)
   adds `partner(name) -> the other file's name`: its verbs then get `partner`, a function
   reading that file (the viewer and the catalog read it beside the file or inside the same
   pack; `model` beside MODEL or MEMBER); `partner_extensions` lets the viewer and `model`
   take the second file too (shown through the first; the catalog counts the pair once). A
   kind that finds its files itself (a mesh given by its base name in nested packs) adds
   `open(path, member)`, and the `model` verbs get what it returns. Options of its own reach
   it by keyword, as `Verb.options` lists.
2. Add one `ContentKind(...)` to its family's module in `rows/` (`rows/models.py` for a model)
   and put it in `_ORDER` below (`KINDS` is made of it), in the order it is tried: its name,
   its family, description, `extensions`,
   `signatures` (and `types`: the member type labels the catalog and the viewer show), and its
   verbs as `Verb("module:function", (option keys it takes))`. A kind with no name or
   signature (J2ME sprites inside `.f` packs) lists the pack formats it lives in (`packs`) and
   a cheap `probe(name, head, holder)` verb; `texture` given such a pack finds the row by them.
That is all: `gamepak texture|model|text|table`, `gamepak serve` (loose and packed alike),
`gamepak catalog` (its table's rows and `archives.kind`) and the README's table follow. Then
run `python -m gamepak.content` and paste its table into README.md's "Content kinds", and give
the kind a sample in tests/test_content_registry.py's `SAMPLES`: that test walks every row
through every surface and fails for a row without one. tests/content_kind_example.py is such a
kind (a two-file model), added by one row in `test_a_new_kind_is_one_module_and_one_row`.
A kind of a new family (a command of its own) also adds a module to `rows/` with its `Family`, the
family to `_FAMILY_ROWS` and `_HOMES` (`FAMILIES` is made of them) and its cli/ module.
"""

from __future__ import annotations

import os

from ..core.registry import load_module
from .spec import ContentKind, Family, Verb

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["FAMILIES", "KINDS", "ContentKind", "Family", "Verb", "for_path", "get", "kinds", "of_member", "verifiers"]

# The families, by (row module in `rows/`, name there); `FAMILIES` is {family name: Family}.
_FAMILY_ROWS = (
    ("textures", "TEXTURE"),
    ("models", "MODEL"),
    ("models", "SCENE"),
    ("text", "STRINGS"),
    ("zones", "ZONE"),
    ("tables", "TABLE"),
)
# The module each family's rows live in: `kinds(family)` imports that one only (`text import`
# needs the strings rows, not the models'; tests/test_content_rows.py holds this to the rows).
_HOMES = {
    "texture": "textures",
    "model": "models",
    "scene": "models",
    "strings": "text",
    "zone": "zones",
    "table": "tables",
}

# The one ordered table, as (row module, name there): the order `of_member` and `for_path` try
# the rows in (a signature or a claim before a fallback) and the README's table's order.
# `KINDS` is these rows.
_ORDER = (
    ("textures", "PEG"),
    ("models", "JOE"),
    ("models", "RFG_MESH"),
    ("models", "MDL"),
    ("models", "BSP"),
    ("textures", "QUAKE_IMAGE"),
    ("textures", "SPRITE"),
    ("models", "SCENE_FOLDER"),
    ("text", "RFGLOCATEXT"),
    ("text", "J2ME_STRINGS"),
    # Tables before zones: `verify` reports a pack's table findings before its zones'.
    ("tables", "XTBL"),
    ("zones", "RFG_ZONE"),
)

# Made when first asked for (`__getattr__`); a test or a plug-in may set them.
FAMILIES: dict[str, Family]
KINDS: tuple[ContentKind, ...]


def _row(module: str, name: str) -> Any:
    """The row (or family) `name` of the row module `module`, imported on first use."""
    return getattr(load_module(f"{__name__}.rows.{module}"), name)


def __getattr__(name: str) -> Any:
    """`KINDS` and `FAMILIES`, made (every row module imported) when first read."""
    if name == "KINDS":
        value: Any = tuple(_row(module, row) for module, row in _ORDER)
    elif name == "FAMILIES":
        value = {family.name: family for family in (_row(module, row) for module, row in _FAMILY_ROWS)}
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def _kinds() -> tuple[ContentKind, ...]:
    """`KINDS` (as set, or made now)."""
    table = globals().get("KINDS")
    return table if table is not None else __getattr__("KINDS")  # type: ignore[no-any-return]


_BY_FAMILY: dict[str, tuple[ContentKind, ...]] = {}


def kinds(family: str | None = None) -> tuple[ContentKind, ...]:
    """The rows, in order (of one family when named: until the whole table is made, only that
    family's row module is imported)."""
    if family is None:
        return _kinds()
    found = _BY_FAMILY.get(family)
    if found is None:  # asked once per member by the catalog: made once
        table = globals().get("KINDS")
        if table is None and family in _HOMES:
            home = _HOMES[family]
            rows = (_row(module, row) for module, row in _ORDER if module == home)
            found = tuple(kind for kind in rows if kind.family.name == family)
        else:
            found = tuple(kind for kind in table or _kinds() if kind.family.name == family)
        _BY_FAMILY[family] = found
    return found


def get(name: str) -> ContentKind:
    """The row called `name`."""
    for kind in _kinds():
        if kind.name == name:
            return kind
    from ..errors import UsageError

    raise UsageError(f"unknown content kind {name!r}; known: {', '.join(kind.name for kind in _kinds())}")


def verifiers(format_name: str) -> list[ContentKind]:
    """The rows whose `verify` verb `gamepak verify` runs over an open pack of `format_name`
    (the rows whose `packs` hold it), in the registry's order."""
    return [kind for kind in _kinds() if kind.has("verify") and format_name in kind.packs]


def _read_head(path: str, size: int = 64) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read(size)
    except OSError:
        return b""  # the handler that reads it names the problem


def of_member(
    name: str,
    head: bytes = b"",
    *,
    lump: str | None = None,
    holder: str | None = None,
    family: str | None = None,
    probe: bool = True,
    partners: bool = False,
) -> list[ContentKind]:
    """The kinds a file or member called `name`, whose first bytes are `head`, may be, in the
    registry's order (a WAD lump: by its `lump` kind; `holder`: the format of the pack holding
    it). A kind matches by signature or by name; a kind with neither (J2ME strings) is asked
    through its `probe` verb, inside its packs or when no other kind matched (not at all
    without `probe`: a caller that first asks other tables, as the viewer asks for images).
    With `partners`, the second file of a two-file kind (a mesh's GPU file) is the kind too
    (the viewer shows it through its first file; the catalog counts the pair once)."""
    rows = kinds(family)
    if lump is not None:
        return [kind for kind in rows if lump in kind.lump_kinds]
    lowered = name.lower()  # asked for every member a catalog meets: kept cheap
    index = _index(family, rows)
    named = index.named(lowered)
    if partners or (head and head.startswith(index.signatures)):
        found = [
            kind
            for kind in rows
            if kind in named or (head and kind.signed_by(head)) or (partners and kind.partner_named_by(lowered))
        ]
    else:
        found = list(named)
    for kind in rows if probe else ():
        wanted = "probe" in kind.verbs and kind not in found and (not found or holder in kind.packs)
        if wanted and kind.call("probe", name, head, holder):
            found.append(kind)
    return found


class _RowIndex:
    """What `of_member` asks of a family's rows for every member a catalog meets (3% of its CPU
    when each row was asked in turn), found once: the rows a name's last suffix (`.joe`) says, and
    every row's signatures together (most heads start with none of them).

    A name ends with an extension that is a dot and no other (every one today) exactly when its
    own suffix from its last dot is that extension; a family with another kind of extension is
    looked up name by name (`by_suffix` None)."""

    # Suffixes remembered at most: odd names (`file.0012`) must not grow it without end.
    SUFFIXES_KEPT = 1024

    def __init__(self, rows: tuple[ContentKind, ...]) -> None:
        self.rows = rows
        one_dot = all(extension.rfind(".") == 0 for kind in rows for extension in kind.extensions)
        self.by_suffix: dict[str, tuple[ContentKind, ...]] | None = {} if one_dot else None
        self.signatures = tuple(signature for kind in rows for signature in kind.signatures)

    def named(self, lowered: str) -> tuple[ContentKind, ...]:
        """The rows, in order, whose extensions the lower-cased name ends with."""
        by_suffix = self.by_suffix
        if by_suffix is None:
            return tuple(kind for kind in self.rows if kind.extensions and lowered.endswith(kind.extensions))
        suffix = lowered[lowered.rfind(".") :] if "." in lowered else ""
        found = by_suffix.get(suffix)
        if found is None:
            found = tuple(kind for kind in self.rows if kind.extensions and suffix.endswith(kind.extensions))
            if len(by_suffix) < self.SUFFIXES_KEPT:
                by_suffix[suffix] = found
        return found


_INDEXES: dict[str | None, _RowIndex] = {}


def _index(family: str | None, rows: tuple[ContentKind, ...]) -> _RowIndex:
    """The family's `_RowIndex`, made again when its rows are not those it was made of (a test
    or a plug-in that swaps the table is heard)."""
    index = _INDEXES.get(family)
    if index is None or index.rows is not rows:
        index = _INDEXES[family] = _RowIndex(rows)
    return index


def for_path(family: str, path: str | os.PathLike[str], member: str | None = None) -> ContentKind:
    """The row of `family` that takes the file (or the pack's `member`) at `path` for a verb:
    a row that claims it (`claims`), else one its name or first bytes show, else one whose
    `packs` holds the format the file is read as (for a missing file: its name says), else the
    family's fallback row (refused, a GamepakError naming the kinds expected, when that row's
    `probe` says the file is not one)."""
    name = os.fspath(path)
    rows = kinds(family)
    for kind in rows:
        if kind.claims is not None and kind.claims(name, member):
            return kind
    target = member if member is not None else name
    for kind in rows:
        if kind.named_by(target):
            return kind
    if member is None and os.path.isfile(name):
        head = _read_head(name)
        for kind in rows:
            if kind.signatures and kind.signed_by(head):
                return kind
        from ..core.detection import detections

        try:
            # Read as they are made: a pack its signature decides asks no structural sniffer.
            for detection in detections(name):
                for kind in rows:
                    if detection.format in kind.packs:
                        return kind
        except Exception:  # an unreadable file is reported by the handler itself
            pass
    elif member is None and not os.path.lexists(name):
        # Nothing to read: the pack format its name says (`model export missing.vpp_pc` is
        # refused by the verb of the kind that exports such packs, naming the file).
        from ..core.registry import format_for_path

        spec = format_for_path(name)
        named_format = spec.name if spec is not None else None
        for kind in rows:
            if named_format in kind.packs:
                return kind
    fallback = next((kind for kind in rows if kind.fallback), rows[0])
    # A kind with no name or signature is asked whether the file may be one (a plain text file
    # is no J2ME strings): a file nothing takes is refused, naming what was expected.
    probed = member is None and fallback.has("probe") and os.path.isfile(name)
    if probed and not fallback.call("probe", name, _read_head(name, 1024), None):
        from ..errors import GamepakError

        expected = " nor ".join(kind.description for kind in rows)
        raise GamepakError(f"{name}: not a {family} file gamepak reads: neither {expected}")
    return fallback


def exporter_for(name: str, head: bytes = b"") -> ContentKind | None:
    """The model kind with its own `export` verb (a Quake MDL or BSP) a member called `name`
    (first bytes `head`) is, or None: what `ops.model_export.export_all` converts itself."""
    # A kind that finds its own files (`open`: a mesh pair) is not converted from a member's
    # bytes alone: `model export PACK` (its `export_pack`) writes those.
    return next(
        (
            kind
            for kind in of_member(name, head, family="model", probe=False)
            if kind.has("export") and not kind.has("open")
        ),
        None,
    )


def member_types() -> tuple[dict[bytes, str], dict[str, str]]:
    """(signature -> member type, extension -> member type) of every row: what the catalog's
    `member_type` and the viewer's listings call a content file."""
    signatures: dict[bytes, str] = {}
    extensions: dict[str, str] = {}
    for kind in _kinds():
        for extension, label in kind.types.items():
            if isinstance(extension, str):
                extensions.setdefault(extension, label)
        named = [label for key, label in kind.types.items() if isinstance(key, str)]
        for signature in kind.signatures:
            chosen = kind.types.get(signature) or (named[0] if named else None)
            if chosen is not None:
                signatures.setdefault(signature, chosen)
    return signatures, extensions


def readme_table() -> str:
    """The README's table of content kinds, made from the rows (`python -m gamepak.content`)."""
    lines = [
        "| kind | what | files | commands | catalog | `archives.kind` | viewer |",
        "|---|---|---|---|---|---|---|",
    ]
    for kind in _kinds():
        family = kind.family
        own = ("add", "rm", "import")  # verbs only some kinds of a family have
        # `model export-all` converts members from their bytes: not a kind that finds its own files.
        shared = [command for command in family.commands if not (command == "export-all" and kind.has("open"))]
        verbs = [*shared, *(verb for verb in own if verb in kind.verbs and verb not in family.commands)]
        commands = ", ".join(f"`{family.command} {verb}`" for verb in verbs)
        files = ", ".join(f"`{extension}`" for extension in kind.extensions) or "(by content)"
        if kind.partner_extensions:
            files += " (+ " + ", ".join(f"`{extension}`" for extension in kind.partner_extensions) + ")"
        lines.append(
            f"| `{kind.name}` | {kind.description} | {files} | {commands} | {family.catalog or '-'} | "
            f"{f'`{family.archive_kind}`' if family.archive_kind else '-'} | {kind.preview} |"
        )
    return "\n".join(lines) + "\n"
