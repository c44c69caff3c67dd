"""Which format fits a file (`detect`, `choose_format`) and a reader of it (`open_reader`).

Below `archive` and `opening`: `Archive.open_archive` opens a nested pack through here, so the
reading base never calls up to `opening` (whose `open` is this, typed as an `Archive`).
"""

from __future__ import annotations

import os

from ..errors import UnknownFormatError, UnsupportedFeatureError
from .registry import FORMATS, MAGIC_SPAN, format_for_path, get_format, other_command_for
from .source import Source

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from .source import PathOrFile


class Detection(tuple):  # type: ignore[type-arg]
    """A format that fits a file, and how sure the check is (0 < confidence <= 1).
    A plain tuple `(format, confidence, has_magic)` with named fields."""

    __slots__ = ()

    def __new__(cls, format: str, confidence: float, has_magic: bool) -> Detection:
        return tuple.__new__(cls, (format, confidence, has_magic))

    @property
    def format(self) -> str:
        return self[0]  # type: ignore[no-any-return]

    @property
    def confidence(self) -> float:
        return self[1]  # type: ignore[no-any-return]

    @property
    def has_magic(self) -> bool:
        return self[2]  # type: ignore[no-any-return]

    def __getnewargs__(self) -> tuple[str, float, bool]:  # type: ignore[override]
        # pickle (multiprocessing, Dask) rebuilds a tuple subclass from these arguments.
        return (self.format, self.confidence, self.has_magic)

    def __repr__(self) -> str:
        return f"Detection(format={self.format!r}, confidence={self.confidence}, has_magic={self.has_magic})"


def _file_label(file: PathOrFile) -> str:
    if isinstance(file, (str, os.PathLike)):
        return os.fspath(file)
    return str(getattr(file, "name", "<stream>"))


def detect(file: PathOrFile, *, name: str | None = None) -> list[Detection]:
    """Every format that fits `file`, most plausible first. Formats with a signature come
    before structural guesses; the file name's extension breaks ties. A format whose declared
    signatures the file lacks is passed over without importing its module."""
    return list(detections(file, name=name))


def detections(file: PathOrFile, *, name: str | None = None) -> Iterator[Detection]:
    """`detect`'s list, made as it is read: the formats without a signature (structural
    guesses, each sniffer in a module of its own) are asked only once every format with one
    has been read. A caller that takes the first detection it can use (a content row's pack
    format) so opens a `.vpp_pc` without importing the J2ME and JOE sniffers. The file stays
    open until the iterator is exhausted or dropped."""
    source = Source.open(file, name)
    try:
        by_extension = format_for_path(name or _file_label(file))
        head = source.pread(MAGIC_SPAN, 0)
        # Every detection with a signature sorts before every one without (`detect`'s order).
        for signed in (True, False):
            found = []
            for spec in FORMATS:
                if spec.has_magic != signed or not spec.may_hold(head):
                    continue
                confidence = float(spec.sniffer()(source))
                if confidence <= 0:
                    continue
                if by_extension is spec:
                    confidence = min(1.0, confidence + 0.05)
                found.append(Detection(spec.name, round(confidence, 3), spec.has_magic))
            found.sort(key=lambda d: d.confidence, reverse=True)
            yield from found
    finally:
        source.close()


def choose_format(file: PathOrFile, *, name: str | None = None) -> Detection:
    """The format to read `file` with, or `UnknownFormatError`/`AmbiguousFormatError`.

    Signature formats are tried first (the extension's format before the others) and a clear
    match ends the search, so opening a file does not load every format's module."""
    label = name or _file_label(file)
    by_extension = format_for_path(label)
    candidates = sorted(
        (spec for spec in FORMATS if spec.has_magic and spec.kind == "archive"),
        key=lambda spec: spec is not by_extension,
    )
    source = Source.open(file, name)
    try:
        head = source.pread(MAGIC_SPAN, 0)
        for spec in candidates:
            if not spec.may_hold(head):
                continue
            confidence = float(spec.sniffer()(source))
            if confidence >= 0.9:
                return Detection(spec.name, confidence, True)
    finally:
        source.close()
    found = detect(file, name=name)
    other = other_command_for(label)
    if other and (not found or not found[0].has_magic):
        # A Quake II .wal fits J2ME packs' loose structure by chance: its name says what it is.
        raise UnknownFormatError(f"{label}: {other}")
    if not found:
        raise UnknownFormatError(f"{label}: not a format gamepak knows (pass format=... to name one)").for_cli(
            f"{label}: not a format gamepak knows (--format names one; 'gamepak formats' lists them)"
        )
    best = found[0]
    if not best.has_magic and len(found) > 1 and found[1].confidence == best.confidence:
        from ..errors import AmbiguousFormatError  # here: rarely raised, made on first use

        tied = [d.format for d in found if d.confidence == best.confidence]
        several = f"{label}: fits several formats equally well ({', '.join(tied)})"
        raise AmbiguousFormatError(f"{several}; pass format=... to name one", tied).for_cli(
            f"{several}; --format names one"
        )
    return best


def open_reader(file: PathOrFile, format: str | None = None, *, name: str | None = None) -> Any:
    """A reader of `file` (an `Archive` of the format named, else of the one detected: its
    `detection` says which); `opening.open` documents what it raises."""
    if format is not None:
        spec = get_format(format)
        detection = None
    else:
        detection = choose_format(file, name=name)
        spec = get_format(detection.format)
    if spec.kind == "model":
        raise UnsupportedFeatureError(
            f"{name or _file_label(file)}: a {spec.description} is a model, not an archive "
            f"(use 'gamepak model' or gamepak.models)"
        )
    archive = spec.reader_class()(file, name=name)
    archive.detection = detection
    return archive
