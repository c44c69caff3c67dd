"""Reading an RFG mesh pair (CPU + GPU file) into `RfgMesh`. Layout: `layout.py`.

Every count and offset is checked against the file it points into before anything is read or
allocated from it; a bad one raises `MeshFormatError` naming the file, the offset and the field.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any

from ...core.stored_names import NAME_MAX
from ..mesh import ModelError
from .layout import (
    BLOCK,
    CONFIG,
    CONFIG_OFFSET,
    CYLINDER,
    FIELD_7,
    FIELD_8,
    FIELD_9,
    FIELD_10,
    FIELD_11,
    GPU_HEADER,
    KINDS,
    LOD_COUNT,
    LOD_LIST,
    MATERIAL,
    MATERIAL_COUNT,
    MATERIAL_ENTRY_SIZE,
    MATERIAL_LIST,
    MATERIAL_MAP,
    SPHERE,
    SUBMESH,
    TAG_SIZE,
    TEXTURE_DESC,
    TEXTURE_NAMES,
    TOPOLOGY_LIST,
    TOPOLOGY_STRIP,
    VERTEX_FORMATS,
    align,
    crc_name,
)
from .records import Config, Cylinder, Material, RenderBlock, RfgMesh, Sphere, Submesh, TextureSlot, vertex_dtype

if TYPE_CHECKING:
    import numpy as np


class MeshFormatError(ModelError):
    """A mesh file whose bytes contradict the format: carries the file, offset and field."""

    def __init__(self, label: str, offset: int | None, field_name: str, problem: str) -> None:
        self.label, self.offset, self.field_name, self.problem = label, offset, field_name, problem
        where = f" at offset {offset} (0x{offset:x})" if offset is not None and offset >= 0 else ""
        super().__init__(f"{label}{where}: {field_name}: {problem}")


class _Bytes:
    """One file's bytes with bounded reads that fail naming the file, offset and field."""

    def __init__(self, data: bytes, label: str) -> None:
        self.data = data
        self.label = label

    def fail(self, offset: int | None, field_name: str, problem: str) -> MeshFormatError:
        return MeshFormatError(self.label, offset, field_name, problem)

    def need(self, offset: int, size: int, field_name: str) -> None:
        if offset < 0 or size < 0 or offset + size > len(self.data):
            raise self.fail(offset, field_name, f"{size} bytes past the end of the file ({len(self.data)} bytes)")

    def unpack(self, record: struct.Struct, offset: int, field_name: str) -> tuple[Any, ...]:
        self.need(offset, record.size, field_name)
        return record.unpack_from(self.data, offset)

    def u32(self, offset: int, field_name: str) -> int:
        return int(self.unpack(_U32, offset, field_name)[0])

    def cstring(self, offset: int, field_name: str, limit: int) -> str:
        """The NUL-terminated name at `offset`, at most `limit` bytes long: names at
        neighbouring offsets are suffixes of one another, so an unbounded one would let a
        small file make names of quadratic size."""
        self.need(offset, 1, field_name)
        end = self.data.find(b"\0", offset, offset + limit + 1)
        if end < 0:
            if self.data.find(b"\0", offset) < 0:
                raise self.fail(offset, field_name, "name runs to the end of the file without a NUL")
            raise self.fail(offset, field_name, f"name longer than {limit} bytes (a file name's most)")
        return self.data[offset:end].decode("latin-1")


_U32 = struct.Struct("<I")


def kind_of(signature: int) -> str | None:
    """The mesh kind a CPU file's first u32 names, None when none."""
    for kind, (found, *_) in KINDS.items():
        if found == signature:
            return kind
    return None


def read_mesh(cpu: bytes, gpu: bytes, *, label: str = "<csmesh_pc>", gpu_label: str = "<gsmesh_pc>") -> RfgMesh:
    """Parse a mesh pair. `label`/`gpu_label` name the files in messages (a pack path)."""
    import numpy as np

    source = _Bytes(cpu, label)
    signature = source.u32(0, "signature")
    kind = kind_of(signature)
    if kind is None:
        raise source.fail(0, "signature", f"0x{signature:08X} is not an RFG mesh (0xC0FFEE11 or 0xFAC351A9)")
    _, old_version, new_version, field_count = KINDS[kind]
    version = source.u32(4, "version")
    if version not in (old_version, new_version):
        raise source.fail(
            4, "version", f"{version} is not a known {kind} mesh version ({old_version} or {new_version})"
        )
    remaster = version == new_version
    width = 8 if remaster else 4
    header = [source.u32(8 + number * width, f"header field {number}") for number in range(field_count)]
    warnings: list[str] = []

    config = _read_config(source, header[CONFIG_OFFSET])
    vertex_format = VERTEX_FORMATS.get(config.vertex_format)
    if vertex_format is None:
        raise source.fail(
            config.offset + 0x1D, "vertex format", f"{config.vertex_format} is not a mesh vertex format (0-3, 30-46)"
        )
    uv_sets = config.uv_sets if vertex_format.uv_sets is None else vertex_format.uv_sets
    if vertex_format.uv_sets is not None and config.uv_sets != vertex_format.uv_sets:
        warnings.append(f"config says {config.uv_sets} UV sets, format {vertex_format.name} holds {uv_sets}")
    if uv_sets > 8:
        raise source.fail(config.offset + 0x1E, "UV set count", f"{uv_sets} (at most 8 expected)")
    if vertex_format.stride(uv_sets) != config.stride:
        raise source.fail(
            config.offset + 0x1C,
            "vertex stride",
            f"{config.stride}, but format {vertex_format.name} with {uv_sets} UV sets takes "
            f"{vertex_format.stride(uv_sets)}",
        )
    if config.index_size not in (2, 4):
        raise source.fail(config.offset + 0x2C, "index size", f"{config.index_size} (2 or 4 expected)")
    if config.topology not in (TOPOLOGY_STRIP, TOPOLOGY_LIST):
        raise source.fail(config.offset + 0x2D, "topology", f"{config.topology} (0 strip or 1 list expected)")
    if config.second_stride:
        warnings.append(f"second vertex stream of stride {config.second_stride} ignored")
    index_at, vertex_at, _ = gpu_layout(config)
    if (config.index_offset, config.vertex_offset) != (index_at, vertex_at):
        # Some files carry wrong values (RFGM and RfgToolsPlusPlus recompute them, as here).
        warnings.append(
            f"stored GPU buffer offsets {config.index_offset}/{config.vertex_offset} differ from the computed "
            f"{index_at}/{vertex_at} (the computed ones are used)"
        )

    submeshes = _read_submeshes(source, config)
    blocks_total = sum(submesh.block_count for submesh in submeshes)
    if blocks_total != config.block_count:
        warnings.append(f"config says {config.block_count} render blocks, the submeshes {blocks_total}")
    materials = _read_materials(source, header, warnings)
    lod_count = header[LOD_COUNT]
    source.need(header[LOD_LIST], 4 * lod_count, "LOD count")
    lod_ids = list(struct.unpack_from(f"<{lod_count}i", cpu, header[LOD_LIST]))
    levels: dict[int, int] = {}
    for number, submesh_id in enumerate(lod_ids):
        if not 0 <= submesh_id < len(submeshes):
            raise source.fail(
                header[LOD_LIST] + 4 * number,
                f"LOD {number} submesh id",
                f"{submesh_id} past {len(submeshes)} submeshes",
            )
        # Each level is a submesh of its own (spec section 6); a submesh named by many levels
        # would be drawn (and exported with --lods) once per level.
        if submesh_id in levels:
            raise source.fail(
                header[LOD_LIST] + 4 * number,
                f"LOD {number} submesh id",
                f"{submesh_id} is LOD {levels[submesh_id]}'s already",
            )
        levels[submesh_id] = number
    for block_number, block in enumerate(sub_block for submesh in submeshes for sub_block in submesh.blocks):
        if materials and block.material >= len(materials):
            raise source.fail(
                block.offset, f"render block {block_number} material", f"{block.material} past {len(materials)}"
            )

    bones: list[int] = []
    spheres: list[Sphere] = []
    cylinders: list[Cylinder] = []
    tag_count = 0
    if kind == "character":
        bones, spheres, cylinders = _read_character(source, header, width)
    elif header[FIELD_7]:
        tag_count = source.u32(header[FIELD_7], "tag list count")
        source.need(header[FIELD_7] + 4, TAG_SIZE * tag_count, "tag list")

    indices, vertices, gpu_hash = _read_gpu(_Bytes(gpu, gpu_label), config, vertex_dtype(vertex_format, uv_sets))
    if gpu_hash != config.hash:
        raise MeshFormatError(
            gpu_label,
            0,
            "hash",
            f"0x{gpu_hash:08X} differs from the CPU file's 0x{config.hash:08X}: the GPU file is not this mesh's",
        )
    mesh = RfgMesh(
        kind,
        version,
        remaster,
        header,
        config,
        submeshes,
        materials,
        lod_ids,
        bones,
        spheres,
        cylinders,
        tag_count,
        vertex_format,
        uv_sets,
        indices.astype(np.int64),
        vertices,
        gpu_hash,
        label,
        gpu_label,
        warnings,
    )
    _check_blocks(mesh, source)
    return mesh


def _read_config(source: _Bytes, offset: int) -> Config:
    config = Config(offset, *source.unpack(CONFIG, offset, "mesh config"))
    if config.submesh_offset < CONFIG.size:
        raise source.fail(offset + 0x14, "submesh offset", f"{config.submesh_offset} lies inside the config")
    return config


def _read_submeshes(source: _Bytes, config: Config) -> list[Submesh]:
    start = config.offset + config.submesh_offset
    source.need(start, SUBMESH.size * config.submesh_count, "submesh count")
    submeshes = []
    for number in range(config.submesh_count):
        at = start + SUBMESH.size * number
        values = SUBMESH.unpack_from(source.data, at)
        submeshes.append(
            Submesh(at, values[0], tuple(values[1:4]), tuple(values[4:7]), tuple(values[7:10]), values[10])
        )
    at = start + SUBMESH.size * config.submesh_count
    total = sum(submesh.block_count for submesh in submeshes)
    source.need(at, BLOCK.size * total, "render block count")
    drawn = 0
    for submesh in submeshes:
        for _ in range(submesh.block_count):
            block = RenderBlock(at, *BLOCK.unpack_from(source.data, at))
            # The game's blocks draw parts of the index buffer one after another. Blocks drawing
            # more indices than it holds overlap, and each would be converted, checked and
            # exported again: a small file would draw as a huge one.
            drawn += block.index_count
            if drawn > config.index_count:
                raise source.fail(
                    at + 8,
                    f"render block {sum(len(s.blocks) for s in submeshes)} index count",
                    f"the blocks draw {drawn} indices up to here, more than the {config.index_count} of the "
                    "index buffer (blocks overlap)",
                )
            submesh.blocks.append(block)
            at += BLOCK.size
    end_hash = source.u32(at, "config end hash")
    if end_hash != config.hash:
        raise source.fail(at, "config end hash", f"0x{end_hash:08X} differs from the begin hash 0x{config.hash:08X}")
    if at + 4 - config.offset != config.size:
        raise source.fail(
            config.offset + 8, "config size", f"{config.size}, but the config holds {at + 4 - config.offset}"
        )
    return submeshes


def _read_materials(source: _Bytes, header: list[int], warnings: list[str]) -> list[Material]:
    count = header[MATERIAL_COUNT]
    source.need(header[MATERIAL_LIST], MATERIAL_ENTRY_SIZE * count, "material count")
    map_count = source.u32(header[MATERIAL_MAP] + 4, "material map count")
    if map_count != count:
        warnings.append(f"material map says {map_count} materials, the header {count}")
    materials = []
    names: dict[int, str] = {}
    for number in range(count):
        at = source.u32(header[MATERIAL_LIST] + MATERIAL_ENTRY_SIZE * number, f"material {number} offset")
        materials.append(_read_material(source, at, header[TEXTURE_NAMES], number, names))
    # The game lays its materials out one after another. Records that overlap (or one listed
    # twice) would let one record's textures be counted again per entry of the list: a small
    # file that shows, checks and exports as a huge one.
    placed = sorted(range(count), key=lambda number: materials[number].offset)
    for before, after in zip(placed, placed[1:]):
        first, second = materials[before], materials[after]
        if second.offset < first.offset + first.size:
            raise source.fail(
                header[MATERIAL_LIST] + MATERIAL_ENTRY_SIZE * after,
                f"material {after} offset",
                f"{second.offset} lies inside material {before} ({first.offset}, {first.size} bytes)",
            )
    return materials


def _read_material(source: _Bytes, at: int, names_at: int, number: int, names: dict[int, str]) -> Material:
    what = f"material {number}"
    size, shader, name, flags, texture_count, constant_count, slots, _ = source.unpack(MATERIAL, at, what)
    source.need(at, size, f"{what} size")
    textures_at = at + MATERIAL.size
    constants_at = textures_at + TEXTURE_DESC.size * texture_count
    values_at = at + align(constants_at + 4 * constant_count - at)
    end = at + align(values_at + 16 * slots - at)
    if end > at + size:
        raise source.fail(at, f"{what} size", f"{size}, but its textures and constants take {end - at}")
    textures = []
    for slot in range(texture_count):
        name_offset, slot_crc, index = TEXTURE_DESC.unpack_from(source.data, textures_at + TEXTURE_DESC.size * slot)
        texture_name = names.get(names_at + name_offset)
        if texture_name is None:
            texture_name = source.cstring(names_at + name_offset, f"{what} texture {slot} name", NAME_MAX)
            names[names_at + name_offset] = texture_name
        textures.append(TextureSlot(texture_name, slot_crc, index, name_offset))
    constants = {}
    for constant in range(constant_count):
        crc = _U32.unpack_from(source.data, constants_at + 4 * constant)[0]
        if constant < slots:
            constants[crc_name(crc)] = struct.unpack_from("<4f", source.data, values_at + 16 * constant)
    return Material(at, size, shader, name, flags, textures, constants)


def _read_character(source: _Bytes, header: list[int], width: int) -> tuple[list[int], list[Sphere], list[Cylinder]]:
    """Bones, spheres and cylinders; `width`: the header's field width (4, or 8 in the remaster)."""
    bone_count = struct.unpack("<i", struct.pack("<I", header[FIELD_7]))[0]
    if bone_count < 0:
        raise source.fail(8 + FIELD_7 * width, "bone count", f"{bone_count} is negative")
    source.need(header[FIELD_8], 4 * bone_count, "bone count")
    bones = list(struct.unpack_from(f"<{bone_count}I", source.data, header[FIELD_8]))
    sphere_count, cylinder_count = struct.unpack("<hh", struct.pack("<I", header[FIELD_9]))
    if sphere_count < 0 or cylinder_count < 0:
        raise source.fail(8 + FIELD_9 * width, "sphere/cylinder count", f"{sphere_count}/{cylinder_count} is negative")
    source.need(header[FIELD_10], SPHERE.size * sphere_count, "sphere count")
    source.need(header[FIELD_11], CYLINDER.size * cylinder_count, "cylinder count")
    spheres = []
    for number in range(sphere_count):
        values = SPHERE.unpack_from(source.data, header[FIELD_10] + SPHERE.size * number)
        spheres.append(Sphere(values[0], values[1], tuple(values[2:5]), values[5]))
    cylinders = []
    for number in range(cylinder_count):
        values = CYLINDER.unpack_from(source.data, header[FIELD_11] + CYLINDER.size * number)
        cylinders.append(Cylinder(values[0], values[1], tuple(values[2:5]), tuple(values[5:8]), values[8], values[9]))
    return bones, spheres, cylinders


def gpu_layout(config: Config) -> tuple[int, int, int]:
    """(index buffer offset, vertex buffer offset, GPU file size) as the sources compute them:
    indices at 16, vertices at the next multiple of 16, a u32 hash after them."""
    index_end = GPU_HEADER + config.index_count * config.index_size
    vertex_at = align(index_end)
    return GPU_HEADER, vertex_at, vertex_at + config.vertex_count * config.stride + 4


def _read_gpu(gpu: _Bytes, config: Config, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray, int]:
    import numpy as np

    # Counts are checked against the file before any array is made from them.
    index_bytes = config.index_count * config.index_size
    gpu.need(GPU_HEADER, index_bytes, "index count")
    gpu.need(GPU_HEADER, config.vertex_count * config.stride, "vertex count")
    index_at, vertex_at, size = gpu_layout(config)
    if len(gpu.data) != size or config.gpu_size != size:
        raise gpu.fail(
            None,
            "size",
            f"{len(gpu.data)} bytes, but the CPU file's counts take {size} (its config says {config.gpu_size})"
            + (f"; a second stream of stride {config.second_stride} is not supported" if config.second_stride else ""),
        )
    begin = gpu.u32(0, "hash")
    end = gpu.u32(size - 4, "end hash")
    if end != begin:
        raise gpu.fail(size - 4, "end hash", f"0x{end:08X} differs from the begin hash 0x{begin:08X}")
    index_type = "<u2" if config.index_size == 2 else "<u4"
    indices = np.frombuffer(gpu.data, index_type, config.index_count, index_at)
    vertices = np.frombuffer(gpu.data, dtype, config.vertex_count, vertex_at)
    return indices, vertices, begin


def _check_blocks(mesh: RfgMesh, source: _Bytes) -> None:
    """Every block inside the index buffer and every index it draws inside the vertex buffer."""
    import numpy as np

    config = mesh.config
    # Only a strip is cut by the restart index (geometry.strip_triangles); in a triangle list it
    # is a vertex number like any other, and past the vertices.
    restart = (0xFFFF if config.index_size == 2 else 0xFFFFFFFF) if config.topology == TOPOLOGY_STRIP else -1
    for number, block in enumerate(mesh.blocks):
        if block.first_index + block.index_count > config.index_count:
            raise source.fail(
                block.offset + 4,
                f"render block {number}",
                f"indices {block.first_index}..{block.first_index + block.index_count} run past the "
                f"{config.index_count} of the index buffer",
            )
        drawn = mesh.indices[block.first_index : block.first_index + block.index_count]
        used = drawn[drawn != restart]
        if used.size and int(used.max()) >= config.vertex_count:
            position = block.first_index + int(np.flatnonzero((drawn != restart) & (drawn >= config.vertex_count))[0])
            raise MeshFormatError(
                mesh.gpu_label,
                GPU_HEADER + position * config.index_size,
                f"index {position}",
                f"{int(mesh.indices[position])} past the {config.vertex_count} vertices (render block {number})",
            )
