"""VDrift's ini dialect (`.car`, `track.txt`, `surfaces.txt`), read as VDrift reads it.

    [wheel.fl.tire]            a section; dots nest (the `tire` child of `fl` of `wheel`)
    key = value                keys may hold spaces (`start position 0`); before any section: the root
    # or ;                     starts a comment anywhere on a line
    a, b, c                    a list: comma-separated, each item trimmed
    1 / true / on              true; anything else false

Sections are kept flat, by their full dotted name; `children(name)` lists the sub-sections in
sorted order (VDrift keeps them in a sorted map: the wheels come fl, fr, rl, rr).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field

from ...core.sizes import size_text
from ...errors import cannot_read
from .common import SceneError, open_regular

_COMMENT = re.compile(r"[#;]")


@dataclass
class Ini:
    """A parsed ini file: section name ('' for the root) -> key -> raw value."""

    path: str
    sections: dict[str, dict[str, str]] = field(default_factory=dict)
    # (section, key) -> line number, so a bad value can be reported where it was written.
    lines: dict[tuple[str, str], int] = field(default_factory=dict)

    def get(self, section: str, key: str, default: str | None = None) -> str | None:
        return self.sections.get(section, {}).get(key, default)

    def where(self, section: str, key: str) -> str:
        """`path:line` of a key, for messages."""
        line = self.lines.get((section, key))
        return f"{self.path}:{line}" if line else self.path

    def floats(self, section: str, key: str, count: int | None = None) -> list[float] | None:
        """A comma-separated list of numbers, or None when the key is absent; a value that is
        not a list of `count` numbers raises `SceneError` naming the file and line."""
        raw = self.get(section, key)
        if raw is None:
            return None
        try:
            values = [float(item) for item in raw.split(",")]
        except ValueError:
            raise SceneError(
                f"{self.where(section, key)}: [{section}] {key} = {raw!r} is not a list of numbers"
            ) from None
        if not all(map(math.isfinite, values)):
            raise SceneError(
                f"{self.where(section, key)}: [{section}] {key} = {raw!r} holds a value that is not finite"
            )
        if count is not None and len(values) != count:
            raise SceneError(
                f"{self.where(section, key)}: [{section}] {key} = {raw!r} holds {len(values)} numbers, not {count}"
            )
        return values

    def flag(self, section: str, key: str, default: bool = False) -> bool:
        raw = self.get(section, key)
        if raw is None:
            return default
        return raw.strip().lower() in ("1", "true", "on")

    def children(self, section: str) -> list[str]:
        """The direct sub-sections of `section`, by their last name part, sorted."""
        prefix = section + "."
        return sorted({name[len(prefix) :].split(".", 1)[0] for name in self.sections if name.startswith(prefix)})


def parse(text: str, path: str) -> Ini:
    """Parse ini `text` (from file `path`, named in messages). Lines that are neither a section
    nor `key = value` are ignored, as VDrift ignores them."""
    ini = Ini(path)
    section = ""
    ini.sections[section] = {}
    for number, raw_line in enumerate(text.splitlines(), 1):
        line = _COMMENT.split(raw_line, 1)[0].strip()
        if not line:
            continue
        if line.startswith("["):
            section = line.strip("[] \t")
            ini.sections.setdefault(section, {})
            continue
        key, equals, value = line.partition("=")
        if not equals:
            continue
        key = key.strip()
        ini.sections[section][key] = value.strip()
        ini.lines[(section, key)] = number
    return ini


def read_text(path: str, limit: int = 1 << 24, allow_large: bool = False) -> str:
    """The text of a VDrift data file (UTF-8, with latin-1 as the fallback: old tracks were made
    on Windows), of at most `limit` bytes; a SceneError naming the file when it is larger (never
    read in part: a list cut short would lose objects silently) or cannot be read."""
    try:
        with open_regular(path) as handle:
            # Sized before reading: a file past the limit is refused without reading it (and
            # one that grew since is caught by reading one byte more).
            too_large = os.fstat(handle.fileno()).st_size > limit
            data = b"" if too_large else handle.read(limit + 1)
            too_large = too_large or len(data) > limit
    except OSError as exc:
        raise cannot_read(path, exc, error=SceneError) from None
    if too_large:
        hint = "" if allow_large else " (--allow-large reads more)"
        raise SceneError(f"{path}: larger than the {size_text(limit)} gamepak reads of it{hint}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def read(path: str) -> Ini:
    """Read and parse the ini file at `path`."""
    return parse(read_text(path), path)
