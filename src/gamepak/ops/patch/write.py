"""Writing a patch file (`container` reads it): the manifest, then each blob, atomically."""

from __future__ import annotations

import os

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
    import time
    import zipfile

    from ...core.atomic import write_via_temporary

    manifest = {"format": FORMAT_NAME, "version": FORMAT_VERSION}
    for field in METADATA_FIELDS:
        manifest[field] = metadata.get(field)
    manifest["links"] = list(metadata.get("links") or [])
    manifest["operations"] = [operation.to_dict() for operation in operations]

    deltas = _delta_blobs(operations)

    def fill(fd: int) -> None:
        with os.fdopen(os.dup(fd), "wb") as handle, zipfile.ZipFile(handle, "w") as zip_file:
            zip_file.writestr(MANIFEST_NAME, json.dumps(manifest, indent=1), zipfile.ZIP_DEFLATED)
            for name, data in blobs.items():
                # Deltas are zstd frames already; raw members are deflated when that pays.
                if isinstance(data, bytes):
                    stored = not deflate or name in deltas or not compresses(data)
                    zip_file.writestr(name, data, zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED)
                    continue
                chunks = iter(data.chunks())
                first = next(chunks, b"")
                stored = not deflate or name in deltas or not compresses(first)
                # As writestr makes it; the declared size picks ZIP64 where it needs it.
                info = zipfile.ZipInfo(name, time.localtime(time.time())[:6])
                info.compress_type = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
                info.file_size, info.external_attr = data.size, 0o600 << 16
                with zip_file.open(info, "w") as entry:
                    entry.write(first)
                    for chunk in chunks:
                        entry.write(chunk)

    write_via_temporary(path, fill, overwrite=overwrite)


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
