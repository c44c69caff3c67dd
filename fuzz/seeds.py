#!/usr/bin/env python3
"""Write the seed corpus of every fuzz harness: small files made by gamepak's own writers, plus
the real samples (and the packs, models and textures inside them) when ../shared/samples exists.

    python fuzz/seeds.py OUT_FOLDER [--samples FOLDER]

Each harness `fuzz_read_X.py` / `fuzz_rebuild_X.py` gets OUT_FOLDER/<harness>/ with the seeds of
format X. Existing files are kept (a corpus grows across runs); seeds are rewritten. The samples
are read from where they are and copied only into OUT_FOLDER, never into the repository.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _fuzzing import pack_bytes

HERE = Path(__file__).resolve().parent
DEFAULT_SAMPLES = HERE.parent.parent / "shared" / "samples"
# Larger samples make every execution slow (table.vpp_pc inflates 22 MB): the writers' small
# packs cover the same code paths.
MAX_SAMPLE_BYTES = 1 << 20
# Kinds whose harness does much per byte: the game's 726 KB localization file is exported and
# imported in four forms per input (a dozen executions a second instead of hundreds).
MAX_SAMPLE_BYTES_OF = {"locatext": 64 << 10}

MEMBERS = [
    ("maps/e1m1.bsp", b"IBSP" + bytes(range(60))),
    ("readme.txt", b"hello world\n" * 5),
    ("sound/b.wav", b"RIFF\x02\x00\x00\x00"),
    ("empty.bin", b""),
]
# (format, writer options) of each seed pack.
PACKS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "pak": [("pak", {}), ("pak", {"align": 16}), ("pak", {"directory": "start"})],
    "jpk": [("jpk", {}), ("jpk", {"name_field_size": 32})],
    "vpp": [("vpp", {"flags": flags}) for flags in range(4)] + [("vpp", {"flags": 3, "align": 16, "level": 9})],
    "zip": [("zip", {"compression": name}) for name in ("store", "deflate", "bzip2", "lzma")],
    "tar": [("tar", {}), ("tar.gz", {})],
    "j2me": [("j2me-table", {}), ("j2me-offsets", {}), ("j2me-end-offsets", {}), ("j2me-sized", {}), ("j2me-ids", {})],
}


def _members_for(format_name: str) -> list[tuple[str, bytes]]:
    if format_name.startswith("j2me"):
        return [(str(index), data) for index, (_, data) in enumerate(MEMBERS)]
    if format_name == "vpp":  # RFG names hold no folders
        return [(name.rsplit("/", 1)[-1], data) for name, data in MEMBERS]
    return MEMBERS


def pack_seeds(kind: str) -> Iterator[tuple[str, bytes]]:
    """Seeds for one archive format: each writer option set, with the usual members, one
    member and none."""
    for format_name, options in PACKS[kind]:
        label = "-".join([format_name, *(f"{key}{value}" for key, value in options.items())])
        members = _members_for(format_name.removesuffix(".gz"))
        yield f"{label}.bin", pack_bytes(format_name, options, members)
        yield f"{label}-one.bin", pack_bytes(format_name, options, members[:1])
        if not format_name.startswith("j2me-sized"):
            yield f"{label}-empty.bin", pack_bytes(format_name, options, [])


def joe_seeds() -> Iterator[tuple[str, bytes]]:
    """A quad and a triangle with normals and texture coordinates, in one and in two frames."""
    import numpy as np

    from gamepak.models import joe
    from gamepak.models.mesh import Mesh

    positions = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0.5, 0.5, 1]], np.float32)
    normals = np.array([[0, 0, 1], [0, 0, -1]], np.float32)
    texcoords = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    # (vertex, normal, texcoord) index per corner of each face
    corners = np.array(
        [[[0, 0, 0], [1, 0, 1], [2, 0, 2]], [[0, 0, 0], [2, 0, 2], [3, 0, 3]], [[1, 1, 1], [4, 1, 2], [2, 1, 3]]]
    )
    mesh = Mesh(positions, normals, texcoords, corners)
    yield "one-frame.joe", joe.write(mesh)
    mesh.extra_frames = [Mesh(positions * 2, normals, texcoords, corners)]
    yield "two-frames.joe", joe.write(mesh)


def model_seeds() -> Iterator[tuple[str, bytes]]:
    """The JOE seeds' meshes as each model format a stranger's file may come in; the first byte
    picks the reader in fuzz_read_model (glb 0, gltf 1, obj 2, ply 3)."""
    from gamepak import models

    for name, data in joe_seeds():
        mesh = models.loads(data, "joe", name=name)
        for selector, format_name in enumerate(("glb", "gltf", "obj", "ply")):
            yield f"{name}.{format_name}", bytes([selector]) + models.dumps(mesh, format_name)
    yield (
        "ascii.ply",
        bytes([3])
        + (
            b"ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
            b"element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n"
        ),
    )


def peg_seeds() -> Iterator[tuple[str, bytes]]:
    """Texture pairs (CPU file, then GPU file) in every pixel format the writer encodes."""
    import numpy as np

    from gamepak.errors import GamepakError
    from gamepak.formats.rfg.peg import Peg, PixelFormat

    pixels = np.random.default_rng(0).integers(0, 256, (8, 8, 4), dtype=np.uint8)
    for fmt in PixelFormat:
        peg = Peg.new("seed.cpeg_pc")
        try:
            peg.add_texture("first", pixels, fmt)
            peg.add_texture("second", pixels[:4, :4], fmt, mips=1)
        except GamepakError:
            continue  # a format the writer cannot encode
        cpu, gpu = peg.to_bytes()
        yield f"{fmt.label}.peg", cpu + gpu


def asm_seeds() -> Iterator[tuple[str, bytes]]:
    """A container table of two containers, one with a CPU+GPU primitive pair."""
    from gamepak.formats.rfg.asm import AsmContainer, AsmFile, AsmPrimitive

    textures = AsmContainer("effects", 2, 1, 6144, 900, [100, 800], [AsmPrimitive("fx.cpeg_pc", 1, 0, 0, 1, 100, 800)])
    empty = AsmContainer("empty", 0, 0, 2048, 0)
    yield "two-containers.asm_pc", AsmFile([textures, empty]).to_bytes()
    yield "none.asm_pc", AsmFile([]).to_bytes()


def gpatch_seeds() -> Iterator[tuple[str, bytes]]:
    """Patch files made against fuzz_read_gpatch's base pack: a replace (a delta or the bytes),
    an add, a remove, a rename, all of them in one patch, and a zone's object-level changes."""
    from fuzz_read_gpatch import BASE_MEMBERS, base_pack, layer

    import gamepak

    base = dict(BASE_MEMBERS)
    variants = {
        "replace": {**base, "readme.txt": b"hello there\n" * 20},
        "add": {**base, "maps/e1m2.bsp": b"IBSP new"},
        "remove": {name: data for name, data in base.items() if name != "sound/b.wav"},
        "rename": {("maps/start.bsp" if name == "maps/e1m1.bsp" else name): data for name, data in base.items()},
        "zone": {**base, "maps/a.layer_pc": layer(first_x=9.0)},
    }
    variants["all"] = {
        "maps/start.bsp": base["maps/e1m1.bsp"],
        "readme.txt": b"hello there\n" * 20,
        "maps/e1m2.bsp": b"IBSP new",
    }
    with tempfile.TemporaryDirectory() as folder:
        base_path = os.path.join(folder, "base.pak")
        base_pack(base_path)
        for label, members in variants.items():
            modded = os.path.join(folder, f"{label}.pak")
            with gamepak.create(modded, "pak") as writer:
                for name, data in members.items():
                    writer.add(name, data)
            out = os.path.join(folder, f"{label}.gpatch")
            gamepak.patch.make(base_path, modded, out, name=label)
            with open(out, "rb") as handle:
                yield f"{label}.gpatch", handle.read()


def vcdiff_append(source: bytes, added: bytes) -> bytes:
    """A VCDIFF delta (RFC 3284's layout, xdelta3's Adler-32) turning `source` into `source +
    added`: one window, a COPY of the whole source and an ADD."""
    import zlib

    from gamepak.formats.vcdiff import encode_varint

    instructions = bytes([19]) + encode_varint(len(source)) + bytes([1]) + encode_varint(len(added))  # COPY, ADD
    addresses = encode_varint(0)
    target = source + added
    sections = encode_varint(len(added)) + encode_varint(len(instructions)) + encode_varint(len(addresses))
    body = encode_varint(len(target)) + b"\x00" + sections + zlib.adler32(target).to_bytes(4, "big")
    body += added + instructions + addresses
    window = bytes([1 | 4]) + encode_varint(len(source)) + encode_varint(0) + encode_varint(len(body)) + body
    return b"\xd6\xc3\xc4\x00\x00" + window


def mod_seeds() -> Iterator[tuple[str, bytes]]:
    """SyncFaction mods for fuzz_read_mod's game: loose archives with a delete list and options,
    a modinfo.xml with an edit, a replace and a user input, a hash list, an `.xdelta` of the
    game's exe, and one of them zipped."""
    import hashlib
    import io
    import zipfile

    from fuzz_read_mod import EXE

    from _fuzzing import frame

    loose = {
        "data/misc.vpp_pc/a.xtbl": b"<root><Table><x>2</x></Table></root>",
        "data/misc.vpp_pc/new.xtbl": b"<root>new</root>",
        "data/misc.vpp_pc/.delete.json": b'["b.xtbl"]',
        "data/misc.vpp_pc/.options.json": b'{"Mode": "Compressed"}',
        "readme.txt": b"a mod",
    }
    yield "loose", frame(loose)
    modinfo = (
        b'<Mod Name="seed"><Author>me</Author><Changes>'
        b'<Edit File="data\\misc.vpp\\a.xtbl" LIST_ACTION="REPLACE"><x><USER_INPUT>v</USER_INPUT></x></Edit>'
        b'<Replace File="data\\misc.vpp_pc\\b.xtbl" NewFile="files\\b.xtbl"/></Changes>'
        b'<UserInput><ListBox Name="v" DisplayName="V"><Option Name="one">1</Option><Option Name="two">2</Option>'
        b"</ListBox></UserInput></Mod>"
    )
    yield "modinfo", frame({"m/modinfo.xml": modinfo, "m/files/b.xtbl": b"<root>B</root>", "m/unused.txt": b"?"})
    hashes = {"data/misc.vpp_pc": hashlib.sha256(b"not the result").hexdigest().upper()}
    yield "hashes", frame({**loose, ".mod.hashes.json": json.dumps(hashes).encode()})
    yield "xdelta", frame({"rfg.xdelta": vcdiff_append(EXE, b"patched"), "data/rfg.txt": b"whole file"})
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in loose.items():
            archive.writestr(f"My Mod/{name}", data)
    yield "zipped.zip", buffer.getvalue()


def sample_seeds(samples: Path) -> Iterator[tuple[str, str, bytes]]:
    """(kind, name, bytes) of the real samples and of the packs, models and texture pairs they
    hold (one level deep)."""
    import gamepak
    from gamepak.errors import GamepakError

    kinds = {".pak": "pak", ".jpk": "jpk", ".vpp_pc": "vpp", ".str2_pc": "vpp", ".joe": "joe", ".asm_pc": "asm"}
    kinds.update({".wad": "wad", ".lmp": "qimage", ".wal": "qimage", ".spr": "qimage", ".mdl": "mdl", ".bsp": "bsp"})
    kinds.update({".rfglocatext": "locatext", ".xtbl": "xtbl"})
    for path in sorted(samples.rglob("*")):
        kind = kinds.get(path.suffix.lower())
        if kind is None or path.stat().st_size > MAX_SAMPLE_BYTES_OF.get(kind, MAX_SAMPLE_BYTES):
            continue
        data = path.read_bytes()
        yield kind, path.name, data
        if kind not in ("pak", "jpk", "vpp"):
            continue
        try:
            with gamepak.open(path) as archive:
                members = {entry.name: entry for entry in archive.infolist() if entry.size <= MAX_SAMPLE_BYTES}
                for name, entry in members.items():
                    inner = kinds.get(os.path.splitext(name)[1].lower())
                    if inner is not None and entry.size <= MAX_SAMPLE_BYTES_OF.get(inner, MAX_SAMPLE_BYTES):
                        yield inner, f"{path.name}-{name.replace('/', '_')}", archive.read(entry)
                for name, entry in members.items():
                    if name.lower().endswith(".cpeg_pc") and name[:-8] + ".gpeg_pc" in members:
                        gpu = archive.read(members[name[:-8] + ".gpeg_pc"])
                        yield "peg", f"{path.name}-{name}", archive.read(entry) + gpu
        except GamepakError as exc:
            print(f"seeds: skipping what {path} holds: {exc}", file=sys.stderr)


def image_seeds() -> Iterator[tuple[str, bytes]]:
    """Images a modder imports: PNG (RGB and RGBA), an RLE TGA, a BMP, and DDS files gamepak
    and other tools write (a peg texture's own, one with padding after its chain)."""
    import io

    import numpy as np
    from PIL import Image

    from gamepak.formats.rfg.peg import Peg, PixelFormat

    pixels = np.random.default_rng(1).integers(0, 256, (8, 8, 4), dtype=np.uint8)
    for name, mode, fmt, options in (
        ("rgba.png", "RGBA", "PNG", {}),
        ("rgb.png", "RGB", "PNG", {}),
        ("rle.tga", "RGBA", "TGA", {"compression": "tga_rle"}),
        ("plain.bmp", "RGB", "BMP", {}),
    ):
        out = io.BytesIO()
        Image.fromarray(pixels[:, :, : len(mode)], mode).save(out, fmt, **options)
        yield name, out.getvalue()
    peg = Peg.new("seed.cpeg_pc")
    peg.add_texture("dxt", pixels, PixelFormat.DXT1)
    peg.add_texture("rgba", pixels, PixelFormat.A8R8G8B8, mips=1)
    dds = peg.to_dds("dxt")
    yield "dxt1.dds", dds
    yield "dxt1-padded.dds", dds + bytes(8)
    yield "8888.dds", peg.to_dds("rgba")


def content_seeds() -> dict[str, list[tuple[str, bytes]]]:
    """The content harnesses' seeds by kind (content_seeds.py)."""
    import content_seeds as content

    makers = {
        "wad": content.wad_seeds,
        "qimage": content.qimage_seeds,
        "mdl": content.mdl_seeds,
        "bsp": content.bsp_seeds,
        "locatext": content.locatext_seeds,
        "translation": content.translation_seeds,
        "xtbl": content.xtbl_seeds,
        "sheet": content.sheet_seeds,
        "scene": content.scene_seeds,
        "zone": content.zone_seeds,
        "sprite": content.sprite_seeds,
        "rfgmesh": content.rfgmesh_seeds,
    }
    return {kind: list(make()) for kind, make in makers.items()}


def harness_kinds() -> dict[str, str]:
    """Each harness's name and the format its seeds are: fuzz_read_pak -> pak (`all`: every
    archive format)."""
    return {path.stem: path.stem.split("_", 2)[2] for path in sorted(HERE.glob("fuzz_*.py"))}


def write_seeds(out: Path, samples: Path | None) -> dict[str, int]:
    """Write every harness's seeds under `out`; returns how many each got."""
    by_kind: dict[str, list[tuple[str, bytes]]] = {kind: list(pack_seeds(kind)) for kind in PACKS}
    by_kind["joe"] = list(joe_seeds())
    by_kind["model"] = list(model_seeds())
    by_kind["peg"] = list(peg_seeds())
    by_kind["asm"] = list(asm_seeds())
    by_kind["gpatch"] = list(gpatch_seeds())
    by_kind["mod"] = list(mod_seeds())
    by_kind["image"] = list(image_seeds())
    by_kind.update(content_seeds())
    if samples is not None and samples.is_dir():
        for kind, name, data in sample_seeds(samples):
            by_kind[kind].append((f"sample-{name}", data))
    # Harnesses over every archive format (detection, extraction) take all their seeds.
    by_kind["all"] = [(f"{kind}-{name}", data) for kind in PACKS for name, data in by_kind[kind]]
    counts = {}
    for harness, kind in harness_kinds().items():
        folder = out / harness
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in by_kind[kind]:
            # The content's hash keeps two seeds of one name apart.
            digest = hashlib.sha1(data).hexdigest()[:8]
            (folder / f"seed-{name}-{digest}").write_bytes(data)
        counts[harness] = len(by_kind[kind])
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("out", type=Path, help="the corpus folder (one subfolder per harness)")
    parser.add_argument("--samples", type=Path, default=DEFAULT_SAMPLES, help="the real samples (default: %(default)s)")
    args = parser.parse_args(argv)
    samples = args.samples if args.samples.is_dir() else None
    if samples is None:
        print(f"seeds: {args.samples} is absent: seeds from gamepak's writers only", file=sys.stderr)
    counts = write_seeds(args.out, samples)
    print(f"seeds: {sum(counts.values())} seed files for {len(counts)} harnesses in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
