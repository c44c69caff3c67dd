"""gamepak: open, list, extract, create, verify and convert game asset packs and models.

    >>> import gamepak
    >>> with gamepak.open("pak0.pak") as pak:
    ...     pak.namelist()
    >>> with gamepak.create("mod.pak", "pak") as writer:
    ...     writer.add("maps/e1m1.bsp", "build/e1m1.bsp")

Nothing heavy is imported here: format modules load when a format is used.
"""

from __future__ import annotations

from .core.registry import FORMATS, FormatSpec, format_for_path, get_format
from .errors import (
    CorruptArchiveError,
    GamepakError,
    MemberNotFoundError,
    UnknownFormatError,
    UnsafePathError,
    UnsupportedFeatureError,
)

# The archive core and the operations load on first use (`gamepak.open`, `gamepak.edit`,
# `gamepak.patch`...): every command starts with this module, and `--help` needs none of them.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from .core.archive import Archive, Entry
    from .core.opening import Detection, choose_format, create, detect, open, open_stream
    from .core.source import Source
    from .core.writer import ArchiveWriter
    from .errors import (
        AmbiguousFormatError,
        FormatLimitError,
        InvalidOptionError,
        NotAnArchiveError,
        OutputExistsError,
    )
    from .ops import patch as patch
    from .ops import tables as tables
    from .ops import zones as zones
    from .ops.convert import convert
    from .ops.diff import diff
    from .ops.edit import edit
    from .version import __version__ as __version__
_LAZY = {
    "Archive": ".core.archive",
    "ArchiveWriter": ".core.writer",
    "Entry": ".core.archive",
    "Detection": ".core.opening",
    "choose_format": ".core.opening",
    "create": ".core.opening",
    "detect": ".core.opening",
    "open": ".core.opening",
    "open_stream": ".core.opening",
    "Source": ".core.source",
    # A module less for every command, which asks for the version only with --version.
    "__version__": ".version",
    "convert": ".ops.convert",
    "diff": ".ops.diff",
    "edit": ".ops.edit",
    # The errors `gamepak.errors` makes on first use (rarely raised).
    "AmbiguousFormatError": ".errors",
    "FormatLimitError": ".errors",
    "InvalidOptionError": ".errors",
    "NotAnArchiveError": ".errors",
    "OutputExistsError": ".errors",
}


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, "patch", "tables", "zones"})


__all__ = [
    "FORMATS",
    "AmbiguousFormatError",
    "Archive",
    "ArchiveWriter",
    "CorruptArchiveError",
    "Detection",
    "Entry",
    "FormatLimitError",
    "FormatSpec",
    "GamepakError",
    "InvalidOptionError",
    "MemberNotFoundError",
    "NotAnArchiveError",
    "OutputExistsError",
    "Source",
    "UnknownFormatError",
    "UnsafePathError",
    "UnsupportedFeatureError",
    "choose_format",
    "convert",
    "create",
    "detect",
    "diff",
    "edit",
    "format_for_path",
    "get_format",
    "open",
    "open_stream",
]


def __getattr__(name: str) -> object:
    if name == "patch":
        module = __import__("gamepak.ops.patch", fromlist=["make"])
        globals()["patch"] = module
        return module
    if name == "tables":  # RFG .xtbl tables: gamepak.tables.open(source)
        module = __import__("gamepak.ops.tables", fromlist=["open"])
        globals()["tables"] = module
        return module
    if name == "zones":  # RFG zones and layers: gamepak.zones.open(source)
        module = __import__("gamepak.ops.zones", fromlist=["open"])
        globals()["zones"] = module
        return module
    if name in _LAZY:
        function = getattr(__import__(f"gamepak{_LAZY[name]}", fromlist=[name]), name)
        globals()[name] = function
        return function
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
