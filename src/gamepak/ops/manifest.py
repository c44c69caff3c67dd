"""The schema of `.gamepak-manifest.json`, checked before `create` trusts any value in it.

A manifest is written by `extract --manifest` and may have been edited (or forged) since. Every
field is checked for its type and range, and every size or position is bounded by what the
members and the recorded filler can account for, so a manifest cannot make `create` write a
1 TiB sparse file, fail inside `struct`, or read outside its folder. Errors name the field.

    {
      "gamepak_manifest": 1,                  # the schema version
      "format": "pak",                        # a format name (`gamepak formats`)
      "source": "pak0.pak",                   # the file it was extracted from (informative)
      "size": 1234,                           # that file's size in bytes
      "options": {"align": 4},                # writer options (checked by the format's writer)
      "members": [                            # in archive order
        {"name": "maps/e1m1.bsp",             # the stored name
         "path": "maps/e1m1.bsp",             # the file in the folder ('/' separated, relative)
         "size": 1000}
      ],
      "exact": {                              # byte-exact hints, used only while the sizes match
        "sizes": [1000], "offsets": [12], "file_size": 1234,
        "fill": [[offset, "base64"]], ...     # format-specific keys below
      }
    }
"""

from __future__ import annotations

import os

from ..core.jsontext import JSON_INDENT
from ..errors import GamepakError
from . import MANIFEST_NAME  # its home is the package (see there); imported from here too

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..core.archive import Archive, Entry

MANIFEST_VERSION = 1

# Headers, directories, names and alignment padding a format may add per member and in all, on
# top of the members' bytes and the recorded filler. Generous (a PAK aligned to 4 KiB with 56-byte
# names stays far below), yet a forged size of terabytes is refused.
SLACK_PER_MEMBER = 8 << 10
SLACK_FIXED = 1 << 20
# exact keys that are byte positions or sizes in the output file (each must lie inside it).
POSITION_KEYS = ("directory_offset", "directory_length", "name_field_size")
NAME_FIELD_LIMIT = 0xFFFFFFFF  # a JoePack header's uint32
POSITION_LISTS = ("offsets", "name_offsets")
INDEXED_MAPS = ("name_fields", "data_offsets")


class ManifestError(GamepakError):
    """A manifest field of the wrong type or out of range."""

    def __init__(self, path: str, field: str, problem: str) -> None:
        self.field = field
        super().__init__(f"{path}: manifest field {field}: {problem}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _count(path: str, field: str, value: Any, bound: int | None = None) -> int:
    if not _is_int(value):
        raise ManifestError(path, field, f"must be a whole number, not {type(value).__name__} {value!r}"[:200])
    if value < 0:
        raise ManifestError(path, field, f"must not be negative ({value})")
    if bound is not None and value > bound:
        raise ManifestError(path, field, f"{value} is larger than the members and filler can account for ({bound})")
    return int(value)


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def validate_manifest(document: Any, path: str | os.PathLike[str]) -> dict[str, Any]:
    """`document` if it follows the schema above, else ManifestError naming the field."""
    from ..core.layout import decode_blob
    from ..core.names import safe_parts
    from ..core.registry import get_format

    where = os.fspath(path)
    if not isinstance(document, dict) or document.get("gamepak_manifest") != MANIFEST_VERSION:
        raise GamepakError(f"{where}: not a gamepak manifest of version {MANIFEST_VERSION}")
    format_name = document.get("format")
    if not isinstance(format_name, str):
        raise ManifestError(where, "format", "must be a format name")
    try:
        get_format(format_name)
    except GamepakError as exc:
        raise ManifestError(where, "format", str(exc)) from None
    for field in ("source",):
        if field in document and not isinstance(document[field], str):
            raise ManifestError(where, field, "must be text")
    options = document.get("options", {})
    if not isinstance(options, dict) or not all(_scalar(value) for value in options.values()):
        raise ManifestError(where, "options", "must be an object of plain values (text, numbers, yes/no, null)")

    members = document.get("members")
    if not isinstance(members, list):
        raise ManifestError(where, "members", "must be a list")
    for index, member in enumerate(members):
        field = f"members[{index}]"
        if not isinstance(member, dict):
            raise ManifestError(where, field, "must be an object with name, path and size")
        if not isinstance(member.get("name"), str) or not member["name"]:
            raise ManifestError(where, f"{field}.name", "must be non-empty text")
        if not isinstance(member.get("path"), str):
            raise ManifestError(where, f"{field}.path", "must be text")
        safe_parts(member["path"])  # a hostile manifest must not make create read outside
        if "size" in member:
            _count(where, f"{field}.size", member["size"])

    exact = document.get("exact", {})
    if not isinstance(exact, dict):
        raise ManifestError(where, "exact", "must be an object")
    sizes = exact.get("sizes", [member.get("size", 0) for member in members])
    if not isinstance(sizes, list):
        raise ManifestError(where, "exact.sizes", "must be a list of sizes")
    total = sum(_count(where, f"exact.sizes[{index}]", size) for index, size in enumerate(sizes))
    fill = exact.get("fill", [])
    if not isinstance(fill, list):
        raise ManifestError(where, "exact.fill", "must be a list of [offset, base64] runs")
    fill_runs = []
    for index, run in enumerate(fill):
        field = f"exact.fill[{index}]"
        if not (isinstance(run, list) and len(run) == 2 and isinstance(run[1], str)):
            raise ManifestError(where, field, "must be [offset, base64 text]")
        fill_runs.append((_count(where, f"{field}[0]", run[0]), len(decode_blob(run[1]))))
    bound = total + sum(length for _, length in fill_runs) + SLACK_FIXED + SLACK_PER_MEMBER * len(sizes)
    file_size = _count(where, "exact.file_size", exact.get("file_size", 0), bound)
    if "size" in document:
        _count(where, "size", document["size"], bound)
    limit = file_size if "file_size" in exact else bound
    for index, (offset, length) in enumerate(fill_runs):
        if offset + length > limit:
            raise ManifestError(where, f"exact.fill[{index}]", f"ends at {offset + length}, past the file ({limit})")
    for key in POSITION_KEYS:
        if key in exact and exact[key] is not None:
            # A name field takes bytes only per member: without members, a JoePack's field size
            # is just a header number.
            bound = limit if sizes or key != "name_field_size" else NAME_FIELD_LIMIT
            _count(where, f"exact.{key}", exact[key], bound)
    for key in POSITION_LISTS:
        values = exact.get(key)
        if values is None:
            continue
        if not isinstance(values, list) or not len(sizes) <= len(values) <= len(sizes) + 1:
            raise ManifestError(where, f"exact.{key}", f"must be a list of {len(sizes)} positions (one per member)")
        for index, value in enumerate(values):
            _count(where, f"exact.{key}[{index}]", value, limit)
    for key in INDEXED_MAPS:
        table = exact.get(key)
        if table is None:
            continue
        if not isinstance(table, dict):
            raise ManifestError(where, f"exact.{key}", "must be an object keyed by member index")
        for index_text, value in table.items():
            if not (index_text.isascii() and index_text.isdigit() and int(index_text) < len(sizes)):
                raise ManifestError(where, f"exact.{key}", f"key {index_text!r} is not a member index")
            if key == "name_fields":
                if not isinstance(value, str):
                    raise ManifestError(where, f"exact.{key}.{index_text}", "must be base64 text")
                decode_blob(value)
            else:
                _count(where, f"exact.{key}.{index_text}", value, 0xFFFFFFFF)
    header = exact.get("header")
    if header is not None:
        if not isinstance(header, dict):
            raise ManifestError(where, "exact.header", "must be an object of header fields")
        for field, value in header.items():
            _count(where, f"exact.header.{field}", value, 0xFFFFFFFF)
    crc32 = exact.get("crc32")
    if crc32 is not None and (not isinstance(crc32, list) or len(crc32) != len(sizes)):
        raise ManifestError(where, "exact.crc32", f"must be a list of {len(sizes)} checksums")
    for index, value in enumerate(crc32 or []):
        _count(where, f"exact.crc32[{index}]", value, 0xFFFFFFFF)
    terminator = exact.get("terminator")
    if terminator is not None:
        _count(where, "exact.terminator", terminator, 0xFF)
    return document


def manifest_bytes(archive: Archive, entries: list[Entry], targets: list[list[str]]) -> bytes:
    layout = archive.layout()
    document = {
        "gamepak_manifest": MANIFEST_VERSION,
        "format": archive.format_name,
        "source": os.path.basename(archive.filename),
        "size": archive.size,
        "options": layout.get("options", {}),
        "members": [
            {"name": entry.name, "path": "/".join(parts), "size": entry.size}
            for entry, parts in zip(entries, targets, strict=False)
        ],
        "exact": layout.get("exact", {}),
    }
    import json

    return json.dumps(document, indent=JSON_INDENT, ensure_ascii=True).encode()


def write_manifest(archive: Archive, entries: list[Entry], targets: list[list[str]], root: str) -> str:
    """Write the manifest that lets `create` rebuild `archive` from the extracted folder."""
    from ..core.atomic import write_bytes

    path = os.path.join(root, MANIFEST_NAME)
    write_bytes(path, manifest_bytes(archive, entries, targets), overwrite=True)
    return path


def read_manifest(folder: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The manifest of an extracted folder, or None when it has none. Every field is checked
    against the schema (`gamepak.ops.manifest`): a wrong type or an absurd size is an error naming
    the field."""
    path = os.path.join(folder, MANIFEST_NAME)
    if not os.path.exists(path):
        return None  # before any import: `create` asks this of every folder it packs
    import json

    from ..core.files import read_file

    data = read_file(path, what="the manifest")
    try:
        document = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise GamepakError(f"{path}: unreadable manifest: {exc}") from exc
    return validate_manifest(document, path)
