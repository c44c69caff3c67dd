"""Opening packs: which format fits a file (`detect`, `choose_format`), a reader for it (`open`),
and a writer for a new one (`create`). Operations and surfaces open files through here, never
through the package's front door."""

from __future__ import annotations

import os

from .registry import format_for_path, get_format

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, BinaryIO

    from .archive import Archive
    from .detection import Detection, choose_format, detect  # noqa: F401 - the public names
    from .source import PathOrFile
    from .writer import ArchiveWriter


def open(file: PathOrFile, format: str | None = None, *, name: str | None = None) -> Archive:
    """Open an archive from a path or a seekable binary file object (e.g. a member of another
    archive, or an fsspec file).

    `format`: a format name from `gamepak.FORMATS` (see `gamepak formats`); without it the format
    is detected and `archive.detection` says which was chosen. `name`: the file name used in
    messages and for detection by extension when `file` is a file object.

    Raises `UnknownFormatError` (no format fits, or `format` is not a known name),
    `AmbiguousFormatError` (several structural formats fit equally well: pass `format`),
    `CorruptArchiveError` (the data contradicts the format; it names the file and offset),
    `UnsupportedFeatureError` (e.g. a model, not an archive) and `GamepakError` for unreadable files.
    """
    from .detection import open_reader

    archive: Archive = open_reader(file, format, name=name)
    return archive


def __getattr__(name: str) -> object:
    # Detection's names load `core.detection` when first asked for: `create` needs none of it.
    if name in ("Detection", "choose_format", "detect", "open_reader"):
        from . import detection

        return getattr(detection, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def create(
    path: str | os.PathLike[str], format: str | None = None, *, overwrite: bool = False, **options: Any
) -> ArchiveWriter:
    """A writer for a new archive at `path`; the format comes from the extension unless named.

    Use it as a context manager, or call `close()`: the file appears only when complete.
    `options` are the format's writer options (`gamepak formats` lists them), and
    `allow_duplicates=True` lets a format that can hold two members of one name do so.
    Raises UnknownFormatError, NotAnArchiveError (a model format), InvalidOptionError (an option
    the format lacks or a value it cannot take) and OutputExistsError (unless `overwrite`).
    """
    if format is None:
        spec = format_for_path(os.fspath(path))
        if spec is None:
            from ..errors import UnnamedFormatError  # here: rarely raised, made on first use

            unnamed = f"{os.fspath(path)}: cannot tell the format from the name"
            raise UnnamedFormatError(f"{unnamed}; pass format=... to name one").for_cli(
                f"{unnamed}; --format names one"
            )
    else:
        spec = get_format(format)
    if spec.kind == "model":
        from ..errors import NotAnArchiveError

        raise NotAnArchiveError(
            f"{os.fspath(path)}: a {spec.description} is a single model, not an archive of members; "
            "make one with 'gamepak model import' (gamepak.models in Python)"
        )
    writer: ArchiveWriter = spec.writer_class()(path, overwrite=overwrite, **options)
    return writer


def open_stream(data: bytes, format: str | None = None, *, name: str = "<bytes>") -> Archive:
    """Open an archive held in memory."""
    import io

    stream: BinaryIO = io.BytesIO(data)
    return open(stream, format, name=name)
