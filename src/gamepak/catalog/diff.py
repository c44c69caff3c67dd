"""What changed between two catalogs: members added, removed, changed (by content hash) and
moved between packs.

A member is identified by the pack that holds it (`nested_path`: the archive's path relative to
the folder scanned, then the nested packs) and its name, so catalogs of two releases installed in
different folders compare. Duplicate names in one pack are paired in archive order. A member
that disappears from one pack and appears, with the same name and content, in another is
*moved*, not removed and added.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from ..errors import GamepakError

_COLUMNS = ["nested_path", "name", "size", "hash", "hash_algorithm"]


@dataclass
class CatalogDiff:
    """The differences; each list holds plain dicts (what `--json` prints)."""

    added: list[dict[str, Any]] = field(default_factory=list)
    removed: list[dict[str, Any]] = field(default_factory=list)
    changed: list[dict[str, Any]] = field(default_factory=list)
    moved: list[dict[str, Any]] = field(default_factory=list)
    # Packs whose bytes changed while their members did not (trailing bytes, header fields,
    # another layout): `{"pack", "old_size", "new_size", "fields"}`.
    repacked: list[dict[str, Any]] = field(default_factory=list)

    @property
    def equal(self) -> bool:
        return not (self.added or self.removed or self.changed or self.moved or self.repacked)

    def to_dict(self) -> dict[str, Any]:
        return {
            "added": self.added,
            "removed": self.removed,
            "changed": self.changed,
            "moved": self.moved,
            "repacked": self.repacked,
        }


def _load(catalog: str) -> tuple[dict[tuple[str, str], list[tuple[int, str | None]]], str | None]:
    from .schema import read_table

    folder = catalog
    if os.path.basename(os.path.normpath(catalog)) == "members":
        folder = os.path.dirname(os.path.normpath(catalog))
    if not os.path.isdir(os.path.join(folder, "members")):
        raise GamepakError(f"{catalog}: not a gamepak catalog (no members table)")
    table = read_table(folder, "members", _COLUMNS)
    members: dict[tuple[str, str], list[tuple[int, str | None]]] = defaultdict(list)
    algorithms = set(table.column("hash_algorithm").unique().to_pylist())
    for nested_path, name, size, digest in zip(
        table.column("nested_path").to_pylist(),
        table.column("name").to_pylist(),
        table.column("size").to_pylist(),
        table.column("hash").to_pylist(),
    ):
        members[(nested_path, name)].append((size, digest))
    if len(algorithms) > 1:
        raise GamepakError(f"{catalog}: mixes hash algorithms ({', '.join(sorted(algorithms))})")
    return members, next(iter(algorithms), None)


def diff_catalogs(old: str, new: str) -> CatalogDiff:
    """Compare the members of two catalog folders."""
    old_members, old_algorithm = _load(old)
    new_members, new_algorithm = _load(new)
    if old_algorithm and new_algorithm and old_algorithm != new_algorithm:
        raise GamepakError(
            f"the catalogs use different hashes ({old_algorithm}, {new_algorithm}); catalog both with the same --hash"
        )
    result = CatalogDiff()
    gone: list[dict[str, Any]] = []
    arrived: list[dict[str, Any]] = []
    for key in sorted(set(old_members) | set(new_members)):
        before = old_members.get(key, [])
        after = new_members.get(key, [])
        pack, name = key
        for (old_size, old_hash), (new_size, new_hash) in zip(before, after):
            if old_size != new_size or old_hash != new_hash:
                result.changed.append(
                    {
                        "pack": pack,
                        "name": name,
                        "old_size": old_size,
                        "new_size": new_size,
                        "old_hash": old_hash,
                        "new_hash": new_hash,
                    }
                )
        for size, digest in before[len(after) :]:
            gone.append({"pack": pack, "name": name, "size": size, "hash": digest})
        for size, digest in after[len(before) :]:
            arrived.append({"pack": pack, "name": name, "size": size, "hash": digest})
    # Pair disappearances and arrivals of the same name and content: moves between packs.
    waiting: dict[tuple[str, int, str | None], list[dict[str, Any]]] = defaultdict(list)
    for member in gone:
        waiting[(member["name"], member["size"], member["hash"])].append(member)
    for member in arrived:
        candidates = waiting.get((member["name"], member["size"], member["hash"]))
        if candidates and member["hash"] is not None:
            source = candidates.pop(0)
            result.moved.append(
                {
                    "name": member["name"],
                    "from": source["pack"],
                    "to": member["pack"],
                    "size": member["size"],
                    "hash": member["hash"],
                }
            )
        else:
            result.added.append(member)
    result.removed = [member for group in waiting.values() for member in group]
    result.removed.sort(key=lambda m: (m["pack"], m["name"]))
    touched = {m["pack"] for m in result.added + result.removed + result.changed}
    touched |= {m["from"] for m in result.moved} | {m["to"] for m in result.moved}
    result.repacked = _repacked(_archives(old), _archives(new), touched)
    return result


def _archives(catalog: str) -> dict[str, tuple[int, str | None, str | None]]:
    """Each pack's (size, sha256, header JSON) by its nested path."""
    from .schema import read_table

    folder = catalog
    if os.path.basename(os.path.normpath(catalog)) == "members":
        folder = os.path.dirname(os.path.normpath(catalog))
    table = read_table(folder, "archives", ["nested_path", "size", "sha256", "header"])
    return {
        path: (size, digest, header)
        for path, size, digest, header in zip(
            table.column("nested_path").to_pylist(),
            table.column("size").to_pylist(),
            table.column("sha256").to_pylist(),
            table.column("header").to_pylist(),
        )
    }


def _repacked(
    old: dict[str, tuple[int, str | None, str | None]],
    new: dict[str, tuple[int, str | None, str | None]],
    touched: set[str],
) -> list[dict[str, Any]]:
    """Packs in both catalogs whose size, hash or header fields differ although none of their
    members was added, removed, changed or moved."""
    import json

    found = []
    for path in sorted(set(old) & set(new) - touched):
        (old_size, old_hash, old_header), (new_size, new_hash, new_header) = old[path], new[path]
        hashes_differ = old_hash is not None and new_hash is not None and old_hash != new_hash
        if old_size == new_size and not hashes_differ and old_header == new_header:
            continue
        before = json.loads(old_header) if old_header else {}
        after = json.loads(new_header) if new_header else {}
        fields = sorted(key for key in set(before) | set(after) if before.get(key) != after.get(key))
        found.append({"pack": path, "old_size": old_size, "new_size": new_size, "fields": fields})
    return found
