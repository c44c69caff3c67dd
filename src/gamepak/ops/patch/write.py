"""Writing a patch file (`container` reads it): the manifest, then each blob, atomically."""

from __future__ import annotations

import os

from ...core.jsontext import JSON_INDENT
from .container import FORMAT_NAME, FORMAT_VERSION, MANIFEST_NAME, METADATA_FIELDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import Any, Protocol

    from .container import Operation
else:
    Protocol = object


class StreamedBlob(Protocol):
    """A blob `write_patch` copies into its entry a chunk at a time: `size` bytes, `chunks()`."""

    size: int

    def chunks(self) -> Iterator[bytes]: ...


def write_patch(
    path: str,
    operations: list[Operation],
    blobs: Mapping[str, bytes | StreamedBlob],
    metadata: dict[str, Any],
    *,
    overwrite: bool = False,
    deflate: bool = True,
) -> None:
    """Write a patch file atomically: the manifest, then each blob (raw blobs deflated unless
    `deflate=False`: undo records favour speed; a `StreamedBlob` is never held whole)."""
    import json
    import zipfile

    from ...core.atomic import write_via_temporary

    manifest = {"format": FORMAT_NAME, "version": FORMAT_VERSION}
    for field in METADATA_FIELDS:
        manifest[field] = metadata.get(field)
    manifest["links"] = list(metadata.get("links") or [])
    manifest["operations"] = [operation.to_dict() for operation in operations]

    deltas = _delta_blobs(operations)

    stamp = entry_time()

    def entry(name: str, stored: bool, size: int) -> zipfile.ZipInfo:
        info = zipfile.ZipInfo(name, stamp)
        info.compress_type = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
        # The declared size picks ZIP64 where a streamed entry needs it.
        info.file_size, info.external_attr = size, 0o600 << 16
        return info

    def fill(fd: int) -> None:
        with os.fdopen(os.dup(fd), "wb") as handle, zipfile.ZipFile(handle, "w") as zip_file:
            text = json.dumps(manifest, indent=JSON_INDENT).encode("utf-8")
            zip_file.writestr(entry(MANIFEST_NAME, False, len(text)), text)
            for name, data in blobs.items():
                # Deltas are zstd frames already; raw members are deflated when that pays.
                if isinstance(data, bytes):
                    stored = not deflate or name in deltas or not compresses(data)
                    zip_file.writestr(entry(name, stored, len(data)), data)
                    continue
                chunks = iter(data.chunks())
                first = next(chunks, b"")
                stored = not deflate or name in deltas or not compresses(first)
                with zip_file.open(entry(name, stored, data.size), "w") as entry_file:
                    entry_file.write(first)
                    for chunk in chunks:
                        entry_file.write(chunk)

    write_via_temporary(path, fill, overwrite=overwrite)


# Zip's earliest time: every entry of a patch carries it, so the same changes make the same
# file whenever they are made (a mod's checksum stays put); SOURCE_DATE_EPOCH, where set, wins.
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


def entry_time() -> tuple[int, int, int, int, int, int]:
    """The time a patch's zip entries carry: SOURCE_DATE_EPOCH (UTC) when set and valid, else
    `ZIP_EPOCH`."""
    import time

    seconds = os.environ.get("SOURCE_DATE_EPOCH", "")
    if seconds.isdigit() and len(seconds) <= 12:
        stamp = time.gmtime(int(seconds))
        if 1980 <= stamp.tm_year <= 2107:  # what a zip entry's date can hold
            return (stamp.tm_year, stamp.tm_mon, stamp.tm_mday, stamp.tm_hour, stamp.tm_min, stamp.tm_sec)
    return ZIP_EPOCH


def _delta_blobs(operations: list[Operation]) -> set[str]:
    return {operation.blob for operation in operations if operation.encoding == "zstd-delta" and operation.blob}


# Blobs are deflated unless a sample of their start shrinks by less than this: already
# compressed data (textures, sounds, new random bytes) costs deflate seconds per 100 MB to save
# nothing, and is stored as it is.
SAMPLE_BYTES = 256 << 10
WORTH_DEFLATING = 0.97


def compresses(data: bytes) -> bool:
    """Whether deflating `data` (judged on its first `SAMPLE_BYTES`) saves enough to pay."""
    import zlib

    sample = data[:SAMPLE_BYTES]
    if len(sample) < 4096:
        return True  # too little to judge, and cheap either way
    return len(zlib.compress(sample, 1)) < len(sample) * WORTH_DEFLATING
