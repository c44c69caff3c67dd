"""Which pack of a folder a one-pack patch fits: `patch apply data/ fix.gpatch` where fix.gpatch
was made from two packs (its operations name members, not files)."""

from __future__ import annotations

import os

from ...errors import GamepakError


def packs_fitting(folder: str, patch_paths: list[str]) -> list[str] | None:
    """The packs under `folder` that hold every member the patches change as the patches'
    base had it (same sha256), in sorted order; None when a patch is not a one-pack patch file
    (a folder patch, a mod folder or zip: those apply to the folder itself).

    Only files with a pack's extension are opened, and a pack is left at its first member that
    is missing or differs, so a game folder of large packs is not read whole."""
    from ...core.registry import format_for_path
    from .container import Patch
    from .target import Target

    operations = []
    for path in patch_paths:
        if not os.path.isfile(path):
            return None
        try:
            with Patch.open(path) as patch:
                if not patch.operations or any(operation.file != "" for operation in patch.operations):
                    return None
                operations += patch.operations
        except GamepakError:
            return None
    based = [operation for operation in operations if operation.base_sha256 and operation.member]
    candidates = []
    for root, folders, files in os.walk(folder):
        folders[:] = sorted(name for name in folders if not name.endswith(".gamepak-undo"))
        for name in sorted(files):
            path = os.path.join(root, name)
            spec = format_for_path(path)
            if spec is None or spec.kind != "archive":
                continue
            state = Target(path)
            try:
                if all(state.sha256(operation) == operation.base_sha256 for operation in based):
                    candidates.append(path)
            except GamepakError:
                pass  # a pack that cannot be read is not the one
            finally:
                state.close()
    return candidates
