"""Catalog whole collections of packs into a Parquet dataset, on one machine or a Dask cluster.

    >>> from gamepak.catalog import build_catalog, diff_catalogs, ScanOptions
    >>> summary = build_catalog(["/games/rfg"], "rfg.catalog", scheduler="processes")
    >>> diff_catalogs("rfg-1.0.catalog", "rfg-1.1.catalog").changed

Tables (see schema.py for the typed columns): `members` (one row per member, nested packs
included, with a content hash), `archives` (one row per pack, with its header fields and
`Archive.check()` findings) and `errors` (every file or member that could not be read).
pyarrow and Dask are imported by this package only, never by `import gamepak`.
"""

from __future__ import annotations

from .detect import GUESS_POLICIES
from .diff import CatalogDiff, diff_catalogs
from .hashing import ALGORITHMS
from .rows import ScanOptions
from .run import SCHEDULERS, Summary, build_catalog

__all__ = [
    "ALGORITHMS",
    "GUESS_POLICIES",
    "SCHEDULERS",
    "CatalogDiff",
    "ScanOptions",
    "Summary",
    "build_catalog",
    "diff_catalogs",
]
