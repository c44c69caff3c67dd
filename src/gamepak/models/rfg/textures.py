"""Finding a mesh's textures: its materials name peg entries (`Repair_tool_d.tga`), never the
peg, so pegs are searched (spec section 5): the mesh's own pack (nested packs included), the
packs in its folder, then folders the user names (their packs and loose pegs). Names match
case-insensitively, the high-resolution variant (`_low_` -> `_`) first; `missing.tga` is a
placeholder and never looked for. A name not found is a warning, not an error."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ...errors import GamepakError

PACK_SUFFIXES = (".vpp_pc", ".str2_pc")
PEG_SUFFIXES = (".cpeg_pc", ".cvbm_pc")
PLACEHOLDER_TEXTURES = frozenset({"missing.tga"})


@dataclass
class TextureSearch:
    """PNG bytes of the textures found and where each came from (keys: the names lower-cased),
    and a warning per texture not found."""

    found: dict[str, bytes] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def peg_sources(pack: str | None, beside: str, search: list[str]) -> Iterator[str]:
    """Where to look, in order: the pack, the packs in its folder (for a loose mesh: packs and
    pegs in the mesh's folder), then the `search` folders' packs and pegs."""
    if pack is not None:
        yield pack
    folder = os.path.dirname(pack if pack is not None else beside) or "."
    own = os.path.realpath(pack) if pack is not None else None
    for folder_name in [folder, *search]:
        try:
            listed = sorted(os.listdir(folder_name))
        except OSError as exc:
            if folder_name in search:
                raise GamepakError(f"{folder_name}: cannot list the folder (--search): {exc.strerror}") from None
            continue
        loose_pegs = folder_name in search or pack is None
        for name in listed:
            full = os.path.join(folder_name, name)
            lowered = name.lower()
            if own is not None and os.path.realpath(full) == own:
                continue
            if (lowered.endswith(PACK_SUFFIXES) or (loose_pegs and lowered.endswith(PEG_SUFFIXES))) and os.path.isfile(
                full
            ):
                yield full


def find_textures(
    names: list[str],
    *,
    pack: str | None = None,
    beside: str = ".",
    search: list[str] | None = None,
    container: str = "",
) -> TextureSearch:
    """The textures `names` as PNG bytes, looked for among the pegs of `pack` (the mesh's pack,
    None for a loose mesh at `beside`), the packs beside it and the `search` folders. Inside
    `pack`, a peg in `container` (the nested pack holding the mesh, `zone.str2_pc/`) wins over
    one elsewhere in the pack."""
    from ...formats.rfg.peg.sources import iter_pegs

    result = TextureSearch()
    wanted = {name.lower(): name for name in names if name.lower() not in PLACEHOLDER_TEXTURES}
    for source in peg_sources(pack, beside, list(search or [])):
        if not wanted:
            break
        own_pack = source == pack and bool(container)
        # Found elsewhere in the mesh's own pack: kept until its container is searched through.
        provisional: set[str] = set()
        try:
            # One peg at a time (a pack's pegs are read in batches), stopping once all are found.
            for peg_path, peg in iter_pegs(source):
                preferred = not own_pack or peg_path.lower().startswith(container.lower())
                taken = _take(result, wanted, source, peg_path, peg, replace=provisional if preferred else set())
                if own_pack and not preferred:
                    provisional |= taken
                else:
                    provisional -= taken
                if not wanted and not provisional:
                    break
        except GamepakError as exc:
            result.warnings.append(f"{source}: skipped while looking for textures: {exc}")
    for name in wanted.values():
        result.warnings.append(f"texture {name} not found in any peg (add a folder with --search)")
    return result


def _take(
    result: TextureSearch, wanted: dict[str, str], source: str, peg_path: str, peg: Any, *, replace: set[str]
) -> set[str]:
    """Move the wanted textures `peg` holds (and the `replace` ones, found before) into
    `result` as PNG; returns the keys (lower-cased names) taken."""
    import io

    entries = {texture.name.lower(): texture.name for texture in peg.textures}
    where = source if source.endswith(peg_path) else f"{source}/{peg_path}"
    taken = set()
    for key in [*wanted, *replace]:
        for candidate in (key.replace("_low_", "_"), key):
            if candidate in entries:
                buffer = io.BytesIO()
                peg.read_pil(entries[candidate]).save(buffer, format="PNG")
                result.found[key] = buffer.getvalue()
                result.sources[key] = where
                wanted.pop(key, None)
                taken.add(key)
                break
    return taken
