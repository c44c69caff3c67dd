"""Where a catalog's tables and parts live on disk (no pyarrow here: the client of a run
plans without it)."""

from __future__ import annotations

import os

TABLES = ("members", "archives", "errors", "textures", "strings", "models", "zone_objects")


def part_path(out: str, table: str, part_id: str) -> str:
    """Where a unit of work's part of `table` goes."""
    return os.path.join(out, table, f"part-{part_id}.parquet")
