"""`patch make --as pak|syncfaction` copy the modded side's members and files into the mod as
streams: memory stays bounded whatever the number and size of the changes, the mod is the bytes
it was when members were held whole, and a failure part-way leaves nothing (nor a stray
temporary) behind."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gamepak.core.atomic import is_temporary_name
from gamepak.errors import GamepakError
from gamepak.ops.patch import export as export_module

from conftest import pack_members as contents
from conftest import write_pack as build
from streaming_helpers import KIB, MIB, forbid_whole_reads, noise, peak_while


@pytest.fixture
def no_whole_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any member read whole past 1 KiB fails the test (`Archive.read`: what the export used)."""
    forbid_whole_reads(monkeypatch)


def _changed_paks(root: Path, count: int, size: int) -> tuple[Path, Path, dict[str, bytes]]:
    """Two PAKs: half of `count` members of `size` bytes replaced by new noise, the other half
    added, one removed; and the members the override pak must hold, in order."""
    base = {f"maps/m{index}.bin": noise(index, size) for index in range(count // 2)}
    base["gone.cfg"] = b"x"
    modded = {name: noise(100 + index, size) for index, name in enumerate(base) if name != "gone.cfg"}
    modded.update({f"sound/new{index}.wav": noise(200 + index, size) for index in range(count - count // 2)})
    return build(root / "base.pak", base), build(root / "mod.pak", modded), modded


@pytest.mark.usefixtures("no_whole_reads")
def test_an_override_pak_of_large_members_is_copied_as_streams(tmp_path: Path) -> None:
    """Eight 2 MiB members replaced or added: the export's traced peak stays a fraction of their
    16 MiB (every member was read whole and held until the pak was written)."""
    count, size = 8, 2 * MIB
    base, modded, want = _changed_paks(tmp_path / "in", count, size)
    out = tmp_path / "pak1.pak"
    peak = peak_while(lambda: export_module.export(base, modded, out, "pak"))
    # Measured 1.4 MiB (16.4 MiB before).
    assert peak < count * size // 4, f"peak {peak / MIB:.1f} MiB"
    # The same bytes as a pak written from the members held whole, in the same order.
    expected = build(tmp_path / "expected.pak", want)
    assert out.read_bytes() == expected.read_bytes()


def _game_folders(root: Path, count: int, size: int) -> tuple[Path, Path]:
    """Two game folders: data/misc.vpp_pc (members replaced and added, one removed, one in a
    nested .str2_pc changed) and plain files (replaced and added)."""
    zone_base = build(root / "zb.str2_pc", {"a.bin": noise(1, 64 * KIB), "b.bin": b"b"}).read_bytes()
    zone_mod = build(root / "zm.str2_pc", {"a.bin": noise(2, size), "b.bin": b"b"}).read_bytes()
    half = count // 2
    base_members = {f"m{index}.bin": noise(index, size) for index in range(half)}
    base_members.update({"gone.xtbl": b"<g/>", "zone.str2_pc": zone_base})
    mod_members = {f"m{index}.bin": noise(100 + index, size) for index in range(half)}
    mod_members.update({f"new{index}.bin": noise(200 + index, size) for index in range(half)})
    mod_members["zone.str2_pc"] = zone_mod
    build(root / "base" / "data" / "misc.vpp_pc", base_members)
    build(root / "mod" / "data" / "misc.vpp_pc", mod_members)
    for side, seeds in (("base", range(half)), ("mod", range(300, 300 + count))):
        for number, seed in enumerate(seeds):
            (root / side / "data" / f"f{number}.bin").write_bytes(noise(seed, size))
    return root / "base", root / "mod"


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()
    }


@pytest.mark.usefixtures("no_whole_reads")
def test_a_syncfaction_mod_of_large_members_and_files_is_copied_as_streams(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Eight 2 MiB members and eight 2 MiB plain files replaced or added (and a nested pack
    shipped whole): the traced peak stays a fraction of their 32 MiB."""
    count, size = 8, 2 * MIB
    base, modded = _game_folders(tmp_path / "in", count, size)
    out = tmp_path / "mymod"
    peak = peak_while(lambda: export_module.export(base, modded, out, "syncfaction"))
    # Measured 4.5 MiB (34.5 MiB before), most of it the comparison's (the nested pack).
    assert peak < 2 * count * size // 4, f"peak {peak / MIB:.1f} MiB"
    monkeypatch.undo()  # members may be read whole again: to check the mod's bytes
    members = contents(modded / "data" / "misc.vpp_pc")
    want = {f"data/misc.vpp_pc/{name}": data for name, data in members.items()}
    want["data/misc.vpp_pc/.delete.json"] = json.dumps(["gone.xtbl"], indent=2).encode()
    want.update({f"data/f{number}.bin": (modded / "data" / f"f{number}.bin").read_bytes() for number in range(count)})
    assert _tree(out) == want
    assert [name for name in os.listdir(tmp_path) if is_temporary_name(name)] == []


def test_a_file_changing_while_the_mod_is_written_leaves_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """All or nothing: a modded file that changes after it was compared fails the export, and
    neither a half mod folder nor a temporary stays; an existing mod (--overwrite) is kept."""
    base, modded = _game_folders(tmp_path / "in", 2, 256 * KIB)
    out = tmp_path / "mymod"
    out.mkdir()
    (out / "keep.txt").write_bytes(b"old mod")
    real = export_module.differences

    def then_grow(*args: object, **options: object) -> object:
        found = real(*args, **options)  # type: ignore[arg-type]
        with open(modded / "data" / "f1.bin", "ab") as handle:
            handle.write(b"more")
        return found

    monkeypatch.setattr(export_module, "differences", then_grow)
    with pytest.raises(GamepakError, match="f1.bin"):
        export_module.export(base, modded, out, "syncfaction", overwrite=True)
    assert _tree(out) == {"keep.txt": b"old mod"}
    assert [name for name in os.listdir(tmp_path) if is_temporary_name(name)] == []
    pak_out = tmp_path / "pak1.pak"
    with pytest.raises(GamepakError, match="f1.bin"):
        export_module.export(base, modded, pak_out, "pak")
    assert not pak_out.exists() and [name for name in os.listdir(tmp_path) if is_temporary_name(name)] == []
