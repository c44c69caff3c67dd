"""What `texture export` of a WAD writes beside the pictures so that `texture build` gives the
same WAD back byte for byte (`.gamepak-textures.json`)."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

TEXTURE_MANIFEST_NAME = ".gamepak-textures.json"


def read_texture_manifest(folder: str) -> dict[str, Any] | None:
    """The texture manifest of an exported folder, or None when it has none."""
    if not os.path.exists(os.path.join(folder, TEXTURE_MANIFEST_NAME)):
        return None
    raise NotImplementedError


def rebuild_from_manifest(
    folder: str,
    manifest: dict[str, Any],
    output: str | os.PathLike[str],
    palette: bytes,
    *,
    overwrite: bool = False,
    progress: Callable[[str], object] | None = None,
) -> list[Any]:
    """The WAD `manifest` describes, from the pictures of `folder`."""
    raise NotImplementedError
