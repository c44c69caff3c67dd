"""Budgets for what a content reader builds from a stranger's file (tables, strings, and the
other content kinds as they join): counts and sizes checked against the input before anything
is allocated, so that a small file cannot make a reader build gigabytes.

A reader asks `current()` for the budgets in force; `--allow-large` on the commands that read
content lifts them (`limits(allow_large=True)`), as it lifts a patch's decode budgets
(`ops.patch.limits`). Each limit is far above what the game's own files need:

    limit                           value       the game's largest
    table_elements                  500,000     69,847 (dlc01_anim_files.xtbl)
    table_bytes_per_element         12          22 bytes an element (anim_files.xtbl)
    locatext_entries                200,000     7,298 strings (locatexts_*.rfglocatext)
    zone_bytes                      64 MiB      a few MB (the largest territory cells)
    strings_bytes                   64 MiB      about 1 MB (locatexts_*.rfglocatext)
    scene_nodes                     110,000     1,660 nodes (pau's 1,659 objects and a root)

`scene_nodes` bounds the glTF nodes a scene import (`model import SCENE --into TRACK`) reads:
a node per object of list.txt, whose own budget is 100,000 objects, and room for grouping
nodes. A glTF of 300,000 nodes reusing one mesh is refused while its nodes are read.

`zone_bytes` is the one size limit of an RFG zone or layer, whoever reads it: `gamepak zone`
(`ops.zones`), the catalog's `zone_objects` rows, and a patch's zone changes (which replay on
the whole zone; `--allow-large` lifts it there, as a patch's other decode budgets).

`strings_bytes` is the one size limit of a strings file (an `.rfglocatext`, J2ME strings) read
whole for its strings by `gamepak text` (`read_strings_file`), the viewer (a file's preview and
its strings page) and the catalog's `strings` rows; with `allow_large` it is the cap of any file read whole
(`core.files.MAX_WHOLE_FILE_BYTES`). The viewer parses it in a memory-capped worker and the
server gets at most a page of its rows (a preview's first 1,000 strings, the strings page's
1,000 of them), so a file at the limit (61 MiB, 200,000 strings) costs the server 3-4 MiB.

The density rule (at least `table_bytes_per_element` bytes of XML an element) bounds a
table's tree to a small multiple of its bytes: a 32 MB table of 8 M `<A/>` elements is
refused before the parse, where ElementTree alone would take 0.7 GB.

    >>> with gamepak.core.content_limits.limits(allow_large=True):
    ...     gamepak.tables.open("huge.xtbl")
"""

from __future__ import annotations

import os
from _thread import allocate_lock  # `threading` would cost start-up time

TYPE_CHECKING = False
if TYPE_CHECKING:
    import contextvars

ALLOW_LARGE_ADVICE = "--allow-large lifts this"


class ContentLimits:
    """The budgets in force (see the module's docstring); never changed once made (`limits`
    makes another). A plain class: `dataclasses` imports `inspect`, a tenth of the start-up
    of `gamepak text import` and `table check`, which read these."""

    __slots__ = (
        "allow_large",
        "locatext_entries",
        "scene_nodes",
        "strings_bytes",
        "table_bytes_per_element",
        "table_elements",
        "zone_bytes",
    )

    def __init__(
        self,
        table_elements: int = 500_000,
        table_bytes_per_element: int = 12,
        locatext_entries: int = 200_000,
        zone_bytes: int = 64 << 20,
        allow_large: bool = False,
        scene_nodes: int = 110_000,
        strings_bytes: int = 64 << 20,
    ) -> None:
        self.table_elements = table_elements
        self.table_bytes_per_element = table_bytes_per_element
        self.locatext_entries = locatext_entries
        self.zone_bytes = zone_bytes
        self.allow_large = allow_large
        self.scene_nodes = scene_nodes
        self.strings_bytes = strings_bytes

    def replace(self, **changes: int | bool) -> ContentLimits:
        """These budgets with `changes` (TypeError naming an unknown one)."""
        values = {name: getattr(self, name) for name in self.__slots__}
        unknown = set(changes) - set(values)
        if unknown:
            raise TypeError(f"no content limit named {', '.join(sorted(unknown))}")
        values.update(changes)
        return ContentLimits(**values)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"ContentLimits({shown})"

    def table_element_budget(self, size: int) -> int | None:
        """How many elements a table of `size` bytes may hold (None: no limit)."""
        if self.allow_large:
            return None
        return min(self.table_elements, max(1024, size // self.table_bytes_per_element))

    def locatext_entry_budget(self) -> int | None:
        """How many strings an `.rfglocatext` may hold (None: no limit)."""
        return None if self.allow_large else self.locatext_entries

    def strings_byte_budget(self) -> int:
        """The most bytes of a strings file read whole for its strings: `strings_bytes`, or with
        `allow_large` the most any file is read whole (a member may inflate past what it declares,
        so a number is always kept)."""
        if self.allow_large:
            from .files import MAX_WHOLE_FILE_BYTES

            return MAX_WHOLE_FILE_BYTES
        return self.strings_bytes

    def scene_node_budget(self, allow_large: bool = False) -> int | None:
        """How many glTF nodes a scene import may read (None: no limit); `allow_large` is the
        command's own `--allow-large` where it is not given through `limits`."""
        return None if self.allow_large or allow_large else self.scene_nodes


def strings_file_too_large(label: str, size: int) -> str | None:
    """Why a strings file (an `.rfglocatext`, J2ME strings; loose or a member) of `size` bytes
    is not read whole for its strings (past `strings_byte_budget`), or None when it may be."""
    budget = current().strings_byte_budget()
    if size <= budget:
        return None
    advice = "" if current().allow_large else f"; {ALLOW_LARGE_ADVICE}"
    return f"{label}: {size} bytes, more than the {budget} a strings file is read with{advice}"


def read_strings_file(path: str | os.PathLike[str]) -> bytes:
    """A strings file read whole for its strings (`gamepak text`): at most `strings_byte_budget`
    bytes, a larger one refused before it is read (GamepakError naming it)."""
    from ..errors import GamepakError
    from .files import read_file

    name = os.fspath(path)
    try:
        size = os.stat(name).st_size
    except OSError:
        size = 0  # (read_file names what is wrong with it)
    too_large = strings_file_too_large(name, size)
    if too_large is not None:
        raise GamepakError(too_large)
    return read_file(name, limit=current().strings_byte_budget())


_DEFAULT = ContentLimits()  # never changed: shared safely
# The budgets of each thread and asyncio task, made by the first `limits` that changes one: until
# then every reader is under `_DEFAULT`. `contextvars` (an extension module) and `contextlib`
# (eighteen classes) were a twentieth of `gamepak text import` (4 M instructions), whose
# `limits(allow_large=False)` changes nothing.
_CURRENT: contextvars.ContextVar[ContentLimits] | None = None
_MAKING = allocate_lock()  # two threads making it at once share one


def current() -> ContentLimits:
    """The budgets in force here."""
    variable = _CURRENT
    return _DEFAULT if variable is None else variable.get()


def _variable() -> contextvars.ContextVar[ContentLimits]:
    global _CURRENT
    with _MAKING:
        if _CURRENT is None:
            import contextvars

            _CURRENT = contextvars.ContextVar("gamepak_content_limits", default=_DEFAULT)
    return _CURRENT


class limits:  # a context manager, named as the function it was
    """Budgets changed for the code inside: `with limits(allow_large=True)`, `limits(table_elements=10)`,
    `limits(zone_bytes=100)` (TypeError naming an unknown budget); `as` gives the budgets in
    force inside. Budgets equal to those in force already (the CLI without `--allow-large`)
    are left as they are."""

    __slots__ = ("_changes", "_token")

    def __init__(self, **changes: int | bool) -> None:
        self._changes = changes
        self._token: contextvars.Token[ContentLimits] | None = None

    def __enter__(self) -> ContentLimits:
        budgets = current()
        changed = budgets.replace(**self._changes)
        if all(getattr(budgets, name) == value for name, value in self._changes.items()):
            return budgets  # every budget as it is already: nothing to set
        self._token = _variable().set(changed)
        return changed

    def __exit__(self, *exc_info: object) -> None:
        token, self._token = self._token, None
        if token is not None:
            _variable().reset(token)
