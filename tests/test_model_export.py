"""`ops.model_export.export_all` (`gamepak model export-all`): only the members it converts are
read whole, each converted model is written before the next is read, and every target is
checked before the first is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from quake_bytes import bsp_bytes

import gamepak.content as content
from gamepak import create
from gamepak.core.archive import Archive
from gamepak.errors import OutputExistsError
from gamepak.ops.model_export import NOT_A_MODEL, export_all

from streaming_helpers import forbid_whole_reads, noise
from web_fixtures import cube_joe


def _pack(path: Path) -> Path:
    with create(path) as writer:
        writer.add("big/music.ogg", noise(1, 2 << 20))
        writer.add("models/crate.joe", cube_joe())
        writer.add("big/video.bin", noise(2, 2 << 20))
        writer.add("maps/e1m1.bsp", bsp_bytes())
        writer.add("models/unnamed.dat", cube_joe())  # a JOE told by its counts, not its name
    return path


def test_only_the_models_are_read_and_each_is_written_before_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pack = _pack(tmp_path / "mixed.zip")
    forbid_whole_reads(monkeypatch, limit=64 << 10)  # the 2 MiB members are never read whole
    events: list[str] = []
    read = Archive.read

    def reading(archive: Archive, member: object) -> bytes:
        events.append("read " + getattr(member, "name", str(member)))
        return read(archive, member)  # type: ignore[arg-type]

    monkeypatch.setattr(Archive, "read", reading)
    import gamepak.models as models

    save = models.save

    def saving(mesh: object, path: str, *args: object, **kwargs: object) -> list[str]:
        events.append("write " + Path(path).name)
        return save(mesh, path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(models, "save", saving)
    written, skipped = export_all(str(pack), str(tmp_path / "out"), "glb", exporter_for=content.exporter_for)
    assert sorted(Path(path).relative_to(tmp_path / "out").as_posix() for path in written) == [
        "maps/e1m1.glb",
        "models/crate.glb",
        "models/unnamed.glb",
    ]
    assert sorted(skipped) == [("big/music.ogg", NOT_A_MODEL), ("big/video.bin", NOT_A_MODEL)]
    # One model at a time: read, written; then the next.
    meshes = [event for event in events if "crate" in event or "unnamed" in event]
    assert meshes == ["read models/crate.joe", "write crate.glb", "read models/unnamed.dat", "write unnamed.glb"]
    assert (tmp_path / "out" / "maps" / "e1m1.glb").read_bytes()[:4] == b"glTF"
    assert len((tmp_path / "out" / "maps" / "e1m1.glb").read_bytes()) > 500  # a map, not a stub


def test_every_target_is_checked_before_the_first_is_written(tmp_path: Path) -> None:
    pack = _pack(tmp_path / "mixed.zip")
    (tmp_path / "out" / "models").mkdir(parents=True)
    (tmp_path / "out" / "models" / "unnamed.glb").write_bytes(b"mine")
    with pytest.raises(OutputExistsError):
        export_all(str(pack), str(tmp_path / "out"), "glb", exporter_for=content.exporter_for)
    assert sorted(p.name for p in (tmp_path / "out").rglob("*") if p.is_file()) == ["unnamed.glb"]


def test_without_the_registry_quake_maps_are_not_models(tmp_path: Path) -> None:
    written, skipped = export_all(str(_pack(tmp_path / "mixed.zip")), str(tmp_path / "out"), "glb")
    assert ("maps/e1m1.bsp", NOT_A_MODEL) in skipped and len(written) == 2
