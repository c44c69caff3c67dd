"""The content registry's house: one module per family under `gamepak/content/rows/`, every row
defined there in the one ordered `KINDS` table (a row written but left out of it would reach no
surface), and the lookups in `gamepak.content` alone."""

from __future__ import annotations

import importlib
import pkgutil

import gamepak.content as content
import gamepak.content.rows as rows
from gamepak.content.spec import ContentKind, Family


def _row_modules() -> dict[str, object]:
    return {
        info.name: importlib.import_module(f"{rows.__name__}.{info.name}")
        for info in pkgutil.iter_modules(rows.__path__)
    }


def test_every_row_of_the_family_modules_is_in_kinds_once() -> None:
    defined = [
        value for module in _row_modules().values() for value in vars(module).values() if isinstance(value, ContentKind)
    ]
    assert sorted(kind.name for kind in defined) == sorted(kind.name for kind in content.KINDS)
    assert len({kind.name for kind in content.KINDS}) == len(content.KINDS)
    assert all(any(kind is row for row in content.KINDS) for kind in defined)


def test_each_family_lives_in_one_module_with_its_rows() -> None:
    homes: dict[str, str] = {}
    for name, module in _row_modules().items():
        for value in vars(module).values():
            if isinstance(value, Family):
                assert value.name not in homes, f"family {value.name} defined twice"
                homes[value.name] = name
    assert set(homes) == set(content.FAMILIES)
    for module_name, module in _row_modules().items():
        for value in vars(module).values():
            if isinstance(value, ContentKind):
                assert homes[value.family.name] == module_name, f"{value.name} is not in its family's module"


def test_the_lookups_are_the_package_s_own() -> None:
    """`kinds`, `get`, `of_member` and `for_path` read `gamepak.content.KINDS` (a test or a
    plug-in that swaps the table is heard) and no row module defines a lookup."""
    for name in ("kinds", "get", "of_member", "for_path", "exporter_for", "member_types", "readme_table"):
        assert getattr(content, name).__module__ == "gamepak.content"
    for module in _row_modules().values():
        assert not [
            value
            for value in vars(module).values()
            if callable(value) and getattr(value, "__module__", "") == module.__name__
        ]
