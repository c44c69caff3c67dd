"""Finding names under what `gamepak serve` shows (`search_site`), and the case-blind glob a
listing's filter shares: a walk over folders and packs (nested ones included) that stops after a
number of hits or seconds, or, when ROOT keeps a catalog of itself, a read of the catalog's
member table instead (complete and quick on a large tree).

Apart from `web.site`, which resolves and lists places for every page: only the search page and
a filtered listing load this (the catalog a site keeps is found by `web.site`, at its start).
"""

from __future__ import annotations

import fnmatch
import os
import re
import time
from collections.abc import Callable

from ..errors import GamepakError
from .site import Row

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from .site import Site

Matcher = Callable[[str], bool]


def name_matcher(pattern: str) -> Matcher:
    """A case-blind glob; a pattern without wildcards matches names containing it."""
    lowered = pattern.lower()
    if not any(c in lowered for c in "*?["):
        return lambda name: lowered in name.lower()
    regex = re.compile(fnmatch.translate(lowered))
    return lambda name: regex.match(name.lower()) is not None


def search_site(
    site: Site, pattern: str, *, limit: int = 1000, seconds: float = 5.0
) -> tuple[list[tuple[str, Row]], str]:
    """(path, row) for names matching the glob `pattern` (case ignored) anywhere under the site's
    ROOT, nested packs included, and a note on how the search was made. Uses the catalog the site
    keeps when it has one; otherwise walks, stopping after `limit` hits or `seconds`."""
    matcher = name_matcher(pattern)
    if site.catalog is not None:
        return _search_catalog(site.root, site.catalog, matcher, limit)
    found: list[tuple[str, Row]] = []
    deadline = time.monotonic() + seconds
    for path, row in _walk(site):
        if matcher(row.name):
            found.append((path, row))
            if len(found) >= limit:
                return found, f"the first {limit} matches"
        if time.monotonic() > deadline:
            return found, f"stopped after {seconds:g} s: build a catalog (gamepak catalog) to search everything"
    return found, "every folder and pack searched"


def _walk(site: Site) -> Iterator[tuple[str, Row]]:
    stack: list[list[str]] = [[]]
    while stack:
        segments = stack.pop()
        try:
            # One pack held at a time: a walk over thousands keeps only the cache's open.
            with site.session():
                place = site.resolve(segments)
                rows = site.classify(place, site.rows(place))  # nested packs are searched too
        except (GamepakError, OSError):
            continue
        for row in sorted(rows, key=lambda r: r.name):
            path = segments + [row.name]
            yield "/".join(path), row
            if row.is_folder or (place.node is None and row.type.startswith("pack")):
                stack.append(path)


def _search_catalog(root: str, catalog: str, matcher: Matcher, limit: int) -> tuple[list[tuple[str, Row]], str]:
    import pyarrow.dataset as ds

    try:
        table = ds.dataset(os.path.join(catalog, "members"), format="parquet").to_table(
            columns=["archive_path", "nested_path", "depth", "name", "size", "stored_size", "member_type"]
        )
    except Exception as exc:  # pyarrow's own errors: a damaged or foreign folder
        raise GamepakError(f"{catalog}: not a readable catalog: {exc}") from None
    found: list[tuple[str, Row]] = []
    columns = table.to_pydict()
    for archive_path, nested, depth, name, size, stored, kind in zip(
        columns["archive_path"],
        columns["nested_path"],
        columns["depth"],
        columns["name"],
        columns["size"],
        columns["stored_size"],
        columns["member_type"],
    ):
        if not matcher(name.rsplit("/", 1)[-1]) and not matcher(name):
            continue
        # archive_path is the pack file as the catalog found it; nested_path ends with the
        # `depth` packs nested inside it.
        relative = os.path.relpath(os.path.realpath(archive_path), root).replace(os.sep, "/")
        if relative.startswith("../") or relative == "..":
            continue
        inner = nested.split("/")[len(nested.split("/")) - depth :] if depth else []
        path = "/".join([relative, *inner, name])
        found.append((path, Row(name, False, size, stored, kind)))
        if len(found) >= limit:
            return found, f"the first {limit} matches in the catalog"
    return found, f"every member in the catalog {os.path.basename(catalog)}"
