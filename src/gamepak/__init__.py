"""gamepak: open, list, extract, create, verify and convert game asset packs and models.

    >>> import gamepak
    >>> with gamepak.open("pak0.pak") as pak:
    ...     pak.namelist()
    >>> with gamepak.create("mod.pak", "pak") as writer:
    ...     writer.add("maps/e1m1.bsp", "build/e1m1.bsp")

Nothing heavy is imported here: format modules load when a format is used.
"""

from __future__ import annotations

from .core.archive import Archive, ArchiveWriter, Entry
from .core.opening import Detection, choose_format, create, detect, open, open_stream
from .core.registry import FORMATS, FormatSpec, format_for_path, get_format
from .core.source import Source
from .errors import (
    AmbiguousFormatError,
    CorruptArchiveError,
    FormatLimitError,
    GamepakError,
    InvalidOptionError,
    MemberNotFoundError,
    NotAnArchiveError,
    OutputExistsError,
    UnknownFormatError,
    UnsafePathError,
    UnsupportedFeatureError,
)

# None of the operations imports anything heavy at load time.
from .ops.convert import convert
from .ops.diff import diff
from .ops.edit import edit
from .version import __version__ as __version__

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
    # `gamepak.patch` loads on first use: `import gamepak` stays light.
    if name == "patch":
        import importlib

        return importlib.import_module(".ops.patch", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
