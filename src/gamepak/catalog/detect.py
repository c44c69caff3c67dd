"""Deciding what a file or a member is: the format a file is read as (`choose`, also used by the
client when it plans a run) and the pack a member's first bytes are (`nested_signature`).

Which files are archives:
1. a format with a signature that recognises the bytes (magic + a header that fits) wins;
2. a file whose extension names a format (`.pak`, `.jpk`, `.vpp_pc`, `.str2_pc`, `.joe`), or whose
   magic matches with an inconsistent header, is read as that format; when that fails the file is
   an `errors` row: this is how truncated and corrupt packs are caught;
3. files with neither are tried by the structural checks (J2ME packs, JOE models: no magic).
   `guess="strict"` (the default) takes a structural fit only when it is convincing (confidence
   >= 0.45: a JOE whose counts add up to the file size, a J2ME pack whose members tile its
   payload exactly) and unambiguous; `"loose"` takes any consistent fit (many small unrelated
   files fit some J2ME layout by chance); `"off"` takes none. Everything else is not an archive
   and is skipped silently (counted).
Nested packs are recognised by signature only, as everywhere in gamepak (see gamepak.core.nested).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.opening import Detection, detect
from ..core.registry import FORMATS, format_for_path, get_format
from ..core.source import Source
from ..errors import AmbiguousFormatError, GamepakError

# Structural fits at or above this confidence are convincing (see the module docstring).
STRICT_CONFIDENCE = 0.45
GUESS_POLICIES = ("strict", "loose", "off")


def choose(handle: Any, label: str, guess: str) -> tuple[Detection, str] | None:
    """(the format to read the file as, how it was chosen) or None when it is not an archive.
    Raises AmbiguousFormatError when structural fits tie."""
    by_extension = format_for_path(label)
    source = Source.open(handle, label)
    try:
        signed = sorted((s for s in FORMATS if s.has_magic), key=lambda s: s is not by_extension)
        for spec in signed:
            confidence = float(spec.sniffer()(source))
            if confidence >= 0.9:
                return Detection(spec.name, confidence, True), "signature"
    finally:
        source.close()
    found = detect(handle, name=label)
    if by_extension is not None:
        named = next((d for d in found if d.format == by_extension.name), None)
        return named or Detection(by_extension.name, 0.0, by_extension.has_magic), "extension"
    magic = [d for d in found if d.has_magic]
    if magic:
        return magic[0], "signature"
    if guess == "off":
        return None
    fits = [d for d in found if guess == "loose" or d.confidence >= STRICT_CONFIDENCE]
    if not fits:
        return None
    if len(fits) > 1 and fits[1].confidence == fits[0].confidence:
        tied = [d.format for d in fits if d.confidence == fits[0].confidence]
        raise AmbiguousFormatError(f"{label}: fits several layouts equally well ({', '.join(tied)})", tied)
    return fits[0], "structure"


def archive_kind(format_name: str, name: str) -> str:
    """The `archives.kind` of a file read as `format_name`: `archive` for a pack; for a file
    that is no pack (a map, a model, a localization file), its content kind's family's
    (`model`, `texture`, `strings`: the content registry), else the format's own (`table`:
    `.asm_pc`)."""
    spec = get_format(format_name)
    if spec.kind == "archive":
        return "archive"
    from ..content import of_member

    kinds = [row.family.archive_kind for row in of_member(name.rsplit("/", 1)[-1], probe=False)]
    return next((kind for kind in kinds if kind is not None), spec.kind)


# The formats a nested pack can be, in the registry's order: (name, sniffer); their signatures
# by offset, then by the signature's first `width` bytes: offset -> (width, prefix -> [(signature,
# position in that list)]); and the formats that declare none (asked always).
_archive_sniffers: list[tuple[str, Callable[[Source], float]]] = []
_archive_magic: dict[int, tuple[int, dict[bytes, list[tuple[bytes, int]]]]] = {}
_always_asked: list[int] = []


def _load_archive_sniffers() -> None:
    by_offset: dict[int, list[tuple[bytes, int]]] = {}
    for spec in FORMATS:
        if spec.has_magic and spec.kind == "archive":
            position = len(_archive_sniffers)
            _archive_sniffers.append((spec.name, spec.sniffer()))
            for offset, signature in spec.magic:
                by_offset.setdefault(offset, []).append((signature, position))
            if not spec.magic:
                _always_asked.append(position)
    for offset, signatures in by_offset.items():
        width = min(len(signature) for signature, _ in signatures)
        table: dict[bytes, list[tuple[bytes, int]]] = {}
        for signature, position in signatures:
            table.setdefault(signature[:width], []).append((signature, position))
        _archive_magic[offset] = (width, table)


class _HeadSource(Source):
    """The first bytes of a member, seen as a source of the member's full size: enough for the
    signature sniffers, which read only a header (a slice here, no lock or file object)."""

    def __init__(self, head: bytes, size: int, label: str) -> None:
        super().__init__(name=label, size=size)
        self._head = head

    def pread(self, size: int, offset: int) -> bytes:
        if offset < 0 or size < 0:
            raise GamepakError(f"{self.name}: negative offset or size")
        return self._head[offset : offset + max(0, min(size, self.size - offset))]


def nested_signature(head: bytes, size: int, label: str) -> str | None:
    """The signature format whose sniffer accepts a member from its first bytes and size. Only
    formats whose declared magic (FormatSpec.magic) the head holds are asked: most members
    hold none, and asking every sniffer cost more than hashing a small member."""
    if size < 4 or not head:
        return None
    if not _archive_sniffers:
        _load_archive_sniffers()
    candidates = []
    for offset, (width, table) in _archive_magic.items():
        for signature, position in table.get(head[offset : offset + width], ()):
            if head.startswith(signature, offset):
                candidates.append(position)
    if not candidates and not _always_asked:
        return None
    probe = _HeadSource(head, size, label)
    for position in sorted({*candidates, *_always_asked}):
        name, sniff = _archive_sniffers[position]
        try:
            if sniff(probe) >= 0.9:
                return name
        except GamepakError:
            continue
    return None
