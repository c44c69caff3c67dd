"""`patch make --as modinfo`: the differences between a base and a modded copy of Red Faction
Guerrilla written as a SyncFaction `modinfo.xml` mod whose tables merge with other mods.

A changed `.xtbl` member becomes `<Edit>` blocks that carry only what changed (tables.xtbl's
model, compared row by row on the table's key):

    <Edit File="data\\table.vpp_pc\\weapons.xtbl" LIST_ACTION="COMBINE_BY_FIELD:Name">
      <Weapon><Name>pistol</Name><Magazine_Size>20</Magazine_Size></Weapon>   changed fields
    </Edit>
    <Edit File="..." LIST_ACTION="ADD"> <Weapon>...the whole row...</Weapon> </Edit>   added rows

a changed repeated field (List, Grid, Flags) goes whole with `LIST_ACTION="REPLACE"` on it.
What an edit cannot say (a removed row, a field emptied or removed, a table whose rows have no
unique key, a table that cannot be read, any other member or file) ships the modded member
whole as `<Replace File=".." NewFile="files\\..">`, each said in `not_expressed`. Removed
members and files cannot be expressed at all (SyncFaction has no delete) and are reported.
Two mods made this way from different rows of one table apply together and give both changes.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from ..made_files import replace_folder
from .container import PatchError

if TYPE_CHECKING:
    from collections.abc import Callable

    from ...formats.rfg.xtbl.table import Table


def xml_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def xml_attribute(text: str) -> str:
    return xml_text(text).replace('"', "&quot;")


def table_edits(base: Table, modded: Table) -> tuple[list[str], list[str], str | None]:
    """(changed rows, added rows) as XML text, or a reason the change needs a <Replace>."""
    from ...formats.rfg.xtbl.cells import ROW_NUMBER

    key = base.key
    if key == ROW_NUMBER:
        return [], [], "its rows have no unique key for COMBINE_BY_FIELD"
    if modded.key != key and not _unique(modded, key):
        return [], [], f"the modded rows' {key} values are not unique"
    base_rows = {row.key: row for row in base.rows}
    modded_rows = {row.get(key): row for row in modded.rows}
    if any(name not in modded_rows for name in base_rows):
        gone = next(name for name in base_rows if name not in modded_rows)
        return [], [], f"row {gone} is removed (an <Edit> cannot remove rows)"
    changed: list[str] = []
    added: list[str] = []
    for name, row in modded_rows.items():
        old = base_rows.get(name)
        if old is None:
            added.append(_row_xml(modded, row.cells, list(row.cells)))
            continue
        columns = [
            c for c in row.cells if row.cells[c] != old.get(c) and not _same_json(modded, c, row.cells[c], old.get(c))
        ]
        emptied = [c for c in old.cells if c not in row.cells or (not row.cells[c] and old.cells[c])]
        if emptied:
            return [], [], f"row {name}: {emptied[0]} is emptied or removed (an <Edit> cannot)"
        if columns:
            changed.append(_row_xml(modded, row.cells, [key, *columns]))
    return changed, added, None


def _unique(table: Table, column: str) -> bool:
    values = [row.get(column) for row in table.rows]
    return all(values) and len(set(values)) == len(values)


def _same_json(table: Table, column: str, new: str, old: str) -> bool:
    if not table.is_json(column):
        return False
    try:
        return bool(json.loads(new or "[]") == json.loads(old or "[]"))
    except ValueError:
        return False


def _row_xml(table: Table, cells: dict[str, str], columns: list[str]) -> str:
    """`<Row>` holding `columns` of `cells`: dotted columns nested, JSON columns as items."""
    tree: dict[str, Any] = {}
    for column in columns:
        parts = column.split(".")
        node = tree
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = ("json", column) if table.is_json(column) else ("text", cells.get(column, ""))
    return _node_xml(table, table.name, tree, cells, "")


def _node_xml(table: Table, tag: str, node: Any, cells: dict[str, str], attributes: str) -> str:
    if isinstance(node, tuple):
        kind, value = node
        if kind == "text":
            return f"<{tag}{attributes}>{xml_text(value)}</{tag}>"
        field = table.schema.field(value)
        items = json.loads(cells[value] or "[]")
        return f'<{tag} LIST_ACTION="REPLACE">{_items_xml(items, field.item_tag if field else None)}</{tag}>'
    inner = "".join(_node_xml(table, name, child, cells, "") for name, child in node.items())
    return f"<{tag}{attributes}>{inner}</{tag}>"


def _items_xml(value: Any, item_tag: str | None) -> str:
    if isinstance(value, list):
        return "".join(_item_xml(item, item_tag) for item in value)
    if isinstance(value, dict):
        return "".join(f"<{name}>{_items_xml(inner, None)}</{name}>" for name, inner in value.items())
    return xml_text(value if isinstance(value, str) else json.dumps(value))


def _item_xml(item: Any, item_tag: str | None) -> str:
    if isinstance(item, dict) and len(item) == 1:
        ((name, inner),) = item.items()
        if name.startswith("<") and name.endswith(">"):
            tag = name[1:-1]
            return f"<{tag}>{_items_xml(inner, None)}</{tag}>"
    if item_tag is None:
        raise PatchError(f"an item without its tag: {item!r}")
    return f"<{item_tag}>{_items_xml(item, None)}</{item_tag}>"


def as_modinfo(
    base: str,
    modded: str,
    operations: list,
    result: Any,
    overwrite: bool,
    read: Callable[[str, str, str | None], bytes],
) -> None:
    """Write the mod folder `result.output` (an `export.Export`): modinfo.xml, and files/ for
    what needs a <Replace>; `read(copy, file, member)` gives a file's or member's bytes."""
    from ...formats.rfg.xtbl import Table, TableError

    if os.path.exists(result.output) and not overwrite:
        from ...errors import OutputExistsError

        raise OutputExistsError(result.output)
    # Game paths: data\<pack>\<member>; two packs compare as data\<pack's name>.
    if os.path.isdir(base):
        prefix = "" if os.path.isdir(os.path.join(base, "data")) else "data/"
    else:
        prefix = "data/"
    changes: list[str] = []
    files: dict[str, bytes] = {}

    def game_path(operation: Any) -> str:
        file = operation.file if operation.file else os.path.basename(base)
        path = prefix + file + ("/" + operation.member if operation.member is not None else "")
        return path.replace("/", "\\")

    def replace(operation: Any, why: str) -> None:
        path = game_path(operation)
        new_file = "files\\" + path
        files[new_file.replace("\\", "/")] = read(modded, operation.file, operation.member)
        changes.append(f'<Replace File="{xml_attribute(path)}" NewFile="{xml_attribute(new_file)}"/>')
        result.not_expressed.append(f"{operation.where}: shipped whole as <Replace>: {why}")

    for operation in operations:
        member = operation.member
        if operation.op == "remove" or operation.op == "rename":
            result.not_expressed.append(f"{operation.where}: {operation.op}d, but a modinfo.xml mod cannot delete")
            if operation.op == "rename":
                assert operation.new_member is not None
                operation.member = operation.new_member
                replace(operation, "renamed (the old name stays)")
            continue
        if operation.op == "add":
            replace(operation, "a new member")
            continue
        if member is None or not member.lower().endswith(".xtbl"):
            replace(operation, "not a table")
            continue
        old_bytes = read(base, operation.file, member)
        new_bytes = read(modded, operation.file, member)
        try:
            old_table, new_table = Table(old_bytes, member), Table(new_bytes, member)
        except TableError as exc:
            replace(operation, f"cannot be read as a table ({exc})")
            continue
        changed, added, why = table_edits(old_table, new_table)
        if why is not None:
            replace(operation, why)
            continue
        path = xml_attribute(game_path(operation))
        if changed:
            rows = "".join(f"\n\t\t\t{row}" for row in changed)
            action = f"COMBINE_BY_FIELD:{old_table.key}"
            changes.append(f'<Edit File="{path}" LIST_ACTION="{xml_attribute(action)}">{rows}\n\t\t</Edit>')
        if added:
            rows = "".join(f"\n\t\t\t{row}" for row in added)
            changes.append(f'<Edit File="{path}" LIST_ACTION="ADD">{rows}\n\t\t</Edit>')
    if not changes:
        raise PatchError(f"{result.output}: nothing was added or changed: the mod would be empty")
    name = os.path.basename(os.path.abspath(result.output))
    body = "".join(f"\n\t\t{change}" for change in changes)
    modinfo = (
        f'<Mod Name="{xml_attribute(name)}">\n'
        f"\t<Author>gamepak</Author>\n"
        "\t<Description>Made by gamepak patch make --as modinfo</Description>\n"
        f"\t<Changes>{body}\n\t</Changes>\n</Mod>\n"
    )
    files["modinfo.xml"] = modinfo.encode("utf-8")
    replace_folder(result.output, files)
    result.written = sorted(files)
