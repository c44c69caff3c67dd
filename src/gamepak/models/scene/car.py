"""A VDrift car folder read as a scene (placeholder until the car reader lands)."""

from __future__ import annotations

import os

from .common import Scene, SceneError


def find_car_file(folder: str) -> str | None:
    """The `.car` definition in `folder` (`<folder name>.car` first), or None."""
    try:
        names = sorted(name for name in os.listdir(folder) if name.lower().endswith(".car"))
    except OSError:
        return None
    if not names:
        return None
    preferred = os.path.basename(os.path.normpath(folder)) + ".car"
    return os.path.join(folder, preferred if preferred in names else names[0])


def read_car(folder: str, *, search: list[str] | None = None, paint: tuple[float, float, float] | None = None) -> Scene:
    raise SceneError(f"{folder}: cars are not supported yet")
