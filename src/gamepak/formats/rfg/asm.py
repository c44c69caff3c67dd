"""Red Faction Guerrilla `.asm_pc` v5: the game's table of contents for `.str2_pc` containers.

Little-endian. The game takes a `.str2_pc`'s contents from these tables rather than from the
`.str2_pc`'s own header, so every edit of a `.str2_pc` needs its container's entry updated.

| field                       | type               | notes                                          |
|-----------------------------|--------------------|------------------------------------------------|
| signature                   | u32                | 0xBEEFFEED                                     |
| version                     | u16                | 5                                              |
| container count             | u16                |                                                |
| per container:              |                    |                                                |
|   name length, name         | u16, bytes         | the `.str2_pc` file name without extension, no NUL |
|   type                      | u8                 |                                                |
|   flags                     | u16                |                                                |
|   primitive count           | u16                |                                                |
|   data offset               | u32                | the `.str2_pc`'s data block offset (6144 typically) |
|   size count                | u32                |                                                |
|   compressed size           | u32                | the `.str2_pc`'s header CompressedDataSize      |
|   sizes                     | size count × u32   | the `.str2_pc` members' sizes, in order         |
|   primitives                | primitive count ×  |                                                |
| per primitive:              |                    |                                                |
|   name length, name         | u16, bytes         | the member holding its header (CPU) data        |
|   type, allocator, flags, split-extension index | 4 × u8 |                                     |
|   header size               | u32                | that member's size                             |
|   data size                 | u32                | the size of the member after it holding its GPU data, or 0 |

A primitive with GPU data owns two consecutive members (e.g. `x.cpeg_pc` then `x.gpeg_pc`, same
stem); so the primitives' non-zero header and data sizes, in order, equal the sizes list.

As a gamepak format an `.asm_pc` is a table with no members: `gamepak info` shows its containers
and primitives; `AsmFile` parses and writes it byte for byte.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ...core.archive import Archive, Entry, Problem, decode_name, encode_name
from ...core.registry import made_on_first_use
from ...core.source import Source
from ...errors import CorruptArchiveError, FormatLimitError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ...core.archive import PendingMember
    from ...core.writer import ArchiveWriter, Output

SIGNATURE = 0xBEEFFEED
VERSION = 5
HEADER = struct.Struct("<IHH")
NAME_LENGTH = struct.Struct("<H")
# type, flags, primitive count, data offset, size count, compressed size
CONTAINER = struct.Struct("<BHHIII")
# type, allocator, flags, split-extension index, header size, data size
PRIMITIVE = struct.Struct("<BBBBII")
# An .asm_pc is a small table; anything this large is not one.
MAX_FILE = 64 << 20


class AsmMismatchError(FormatLimitError):
    """A `.str2_pc` and the `.asm_pc` container describing it cannot be matched up."""


@dataclass
class AsmPrimitive:
    """One primitive of a container."""

    name: str
    type: int = 0
    allocator: int = 0
    flags: int = 0
    split_ext_index: int = 0
    header_size: int = 0
    data_size: int = 0

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class AsmContainer:
    """One container: a `.str2_pc` and the primitives inside it."""

    name: str
    type: int = 0
    flags: int = 0
    data_offset: int = 0
    compressed_size: int = 0
    sizes: list[int] = field(default_factory=list)
    primitives: list[AsmPrimitive] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "flags": self.flags,
            "primitive_count": len(self.primitives),
            "data_offset": self.data_offset,
            "compressed_size": self.compressed_size,
            "sizes": list(self.sizes),
            "primitives": [primitive.to_dict() for primitive in self.primitives],
        }


@dataclass
class AsmFile:
    """A parsed `.asm_pc`."""

    containers: list[AsmContainer] = field(default_factory=list)
    version: int = VERSION
    trailing: bytes = b""  # bytes after the last container, kept for byte-exact rewrites

    @classmethod
    def parse(cls, data: bytes, name: str = "<asm_pc>") -> AsmFile:
        """Parse `data`; a CorruptArchiveError names `name` and the offset of what is wrong."""
        view = memoryview(data)
        position = 0

        def need(size: int, what: str) -> int:
            nonlocal position
            if position + size > len(view):
                raise CorruptArchiveError(
                    f"{what} ({size} bytes) runs past the end of the file ({len(view)} bytes)",
                    path=name,
                    offset=position,
                )
            start = position
            position += size
            return start

        def text(what: str) -> str:
            (length,) = NAME_LENGTH.unpack_from(view, need(2, f"{what} name length"))
            start = need(length, f"{what} name")
            return decode_name(bytes(view[start : start + length]))

        signature, version, count = HEADER.unpack_from(view, need(HEADER.size, "header"))
        if signature != SIGNATURE:
            raise CorruptArchiveError(
                f"not an .asm_pc (signature 0x{signature:08x}, expected 0x{SIGNATURE:08x})", path=name, offset=0
            )
        if version != VERSION:
            raise CorruptArchiveError(f".asm_pc version {version}; only version 5 is known", path=name, offset=4)
        containers = []
        for _ in range(count):
            container_name = text("container")
            kind, flags, primitive_count, data_offset, size_count, compressed_size = CONTAINER.unpack_from(
                view, need(CONTAINER.size, f"container {container_name!r}")
            )
            # Checked against the file before the list is built.
            start = need(4 * size_count, f"container {container_name!r}: {size_count} sizes")
            sizes = list(struct.unpack_from(f"<{size_count}I", view, start))
            primitives = []
            for _ in range(primitive_count):
                primitive_name = text("primitive")
                values = PRIMITIVE.unpack_from(view, need(PRIMITIVE.size, f"primitive {primitive_name!r}"))
                primitives.append(AsmPrimitive(primitive_name, *values))
            containers.append(
                AsmContainer(container_name, kind, flags, data_offset, compressed_size, sizes, primitives)
            )
        return cls(containers, version, bytes(view[position:]))

    def to_bytes(self) -> bytes:
        """The file's bytes."""
        parts = [HEADER.pack(SIGNATURE, self.version, _u16(len(self.containers), "container count"))]
        for container in self.containers:
            parts.append(_text(container.name))
            parts.append(
                CONTAINER.pack(
                    container.type,
                    container.flags,
                    _u16(len(container.primitives), f"container {container.name!r}: primitive count"),
                    container.data_offset,
                    len(container.sizes),
                    container.compressed_size,
                )
            )
            parts.append(struct.pack(f"<{len(container.sizes)}I", *container.sizes))
            for primitive in container.primitives:
                parts.append(_text(primitive.name))
                parts.append(
                    PRIMITIVE.pack(
                        primitive.type,
                        primitive.allocator,
                        primitive.flags,
                        primitive.split_ext_index,
                        primitive.header_size,
                        primitive.data_size,
                    )
                )
        parts.append(self.trailing)
        return b"".join(parts)

    def container(self, name: str) -> AsmContainer | None:
        """The container called `name` (ignoring case, as the game does), if any."""
        wanted = name.lower()
        for container in self.containers:
            if container.name.lower() == wanted:
                return container
        return None


def _u16(value: int, what: str) -> int:
    if value > 0xFFFF:
        raise FormatLimitError(f"{what} is {value}; an .asm_pc holds at most 65535")
    return value


def _text(name: str) -> bytes:
    raw = encode_name(name)
    return NAME_LENGTH.pack(_u16(len(raw), f"name {name!r} length")) + raw


# -- containers against the .str2_pc they describe --------------------------------------------
@dataclass
class Str2Summary:
    """What a container records about a `.str2_pc`: read from the `.str2_pc` itself."""

    name: str
    data_offset: int
    compressed_size: int
    members: list[tuple[str, int]]


def container_name(str2_name: str) -> str:
    """The container name of a `.str2_pc` member: its file name without folder or extension."""
    return os.path.splitext(str2_name.replace("\\", "/").rsplit("/", 1)[-1])[0]


def summarize_str2(reader: Any, name: str) -> Str2Summary:
    """What a container must agree with in an open `.str2_pc` reader (`packfile.Reader`): its
    header, entries and names (not its data). The caller opens it, so this module, which the
    packfile's checker uses, does not import the packfile back."""
    return Str2Summary(
        container_name(name),
        reader.data_start,
        reader.compressed_size_field,
        [(entry.name, entry.size) for entry in reader.infolist()],
    )


def _stem(name: str) -> str:
    return name.lower().rsplit(".", 1)[0]


def match_primitives(container: AsmContainer, summary: Str2Summary) -> list[tuple[int, int | None]]:
    """For each primitive, the index of its header member and of its GPU-data member (or None),
    in the `.str2_pc`'s order; an AsmMismatchError names what cannot be matched."""
    members = summary.members
    names = [name.lower() for name, _ in members]
    primitives = container.primitives
    matched: list[tuple[int, int | None]] = []
    index = 0
    for number, primitive in enumerate(primitives):
        if index >= len(members) or names[index] != primitive.name.lower():
            found = names[index] if index < len(members) else "nothing"
            raise AsmMismatchError(
                f"container {container.name!r}: primitive {primitive.name!r} has no member at position "
                f"{index} of {summary.name}.str2_pc (found {found})"
            )
        following = primitives[number + 1].name.lower() if number + 1 < len(primitives) else None
        gpu = index + 1
        owns_next = (
            gpu < len(members)
            and names[gpu] != following
            and (_stem(names[gpu]) == _stem(primitive.name) or primitive.data_size != 0)
        )
        matched.append((index, gpu if owns_next else None))
        index = gpu + 1 if owns_next else gpu
    if index < len(members):
        raise AsmMismatchError(
            f"container {container.name!r}: member {members[index][0]!r} of {summary.name}.str2_pc has "
            "no primitive in the .asm_pc"
        )
    return matched


def primitive_sizes(container: AsmContainer) -> list[int]:
    """The primitives' non-zero header and data sizes, in order."""
    sizes: list[int] = []
    for primitive in container.primitives:
        sizes.extend(size for size in (primitive.header_size, primitive.data_size) if size)
    return sizes


def stale_fields(container: AsmContainer, summary: Str2Summary) -> list[str]:
    """How the container disagrees with the `.str2_pc` (empty when it is up to date)."""
    found = []
    if container.compressed_size != summary.compressed_size:
        found.append(
            f"compressed size {container.compressed_size}, {summary.name}.str2_pc has {summary.compressed_size}"
        )
    if container.data_offset != summary.data_offset:
        found.append(f"data offset {container.data_offset}, {summary.name}.str2_pc has {summary.data_offset}")
    sizes = [size for _, size in summary.members]
    if container.sizes != sizes:
        found.append(f"{len(container.sizes)} sizes {container.sizes}, the members' are {sizes}")
    if primitive_sizes(container) != [size for size in sizes if size]:
        found.append(
            f"{len(container.primitives)} primitives with sizes {primitive_sizes(container)}, the members' are {sizes}"
        )
    try:
        match_primitives(container, summary)
    except AsmMismatchError as exc:
        found.append(str(exc).removeprefix(f"container {container.name!r}: "))
    return found


def update_container(container: AsmContainer, summary: Str2Summary) -> list[str]:
    """Bring the container up to date with the `.str2_pc`; returns what changed. Matching
    happens only when something is stale, so an up-to-date container is never touched."""
    if not stale_fields(container, summary):
        return []
    matched = match_primitives(container, summary)
    changes = []
    if container.compressed_size != summary.compressed_size:
        changes.append(f"compressed size {container.compressed_size} -> {summary.compressed_size}")
        container.compressed_size = summary.compressed_size
    if container.data_offset != summary.data_offset:
        changes.append(f"data offset {container.data_offset} -> {summary.data_offset}")
        container.data_offset = summary.data_offset
    sizes = [size for _, size in summary.members]
    if container.sizes != sizes:
        changes.append(f"sizes {container.sizes} -> {sizes}")
        container.sizes = sizes
    for primitive, (cpu, gpu) in zip(container.primitives, matched):
        header_size = summary.members[cpu][1]
        data_size = summary.members[gpu][1] if gpu is not None else 0
        if (primitive.header_size, primitive.data_size) != (header_size, data_size):
            changes.append(
                f"primitive {primitive.name!r} sizes {primitive.header_size}/{primitive.data_size} -> "
                f"{header_size}/{data_size}"
            )
            primitive.header_size, primitive.data_size = header_size, data_size
    return [f"container {container.name!r}: {change}" for change in changes]


# -- the registry's view: a table with no members ----------------------------------------------
def sniff(source: Source) -> float:
    """1.0 for the .asm_pc signature with version 5."""
    head = source.pread(HEADER.size, 0)
    if len(head) < HEADER.size:
        return 0.0
    signature, version, _ = HEADER.unpack(head)
    if signature != SIGNATURE:
        return 0.0
    return 1.0 if version == VERSION else 0.5


class Reader(Archive):
    """An `.asm_pc` opened for `info` and `verify`: a table of containers, with no members."""

    format_name = "asm"

    def _load(self) -> None:
        if self._source.size > MAX_FILE:
            raise self.corrupt(f"{self._source.size} bytes is too large for an .asm_pc", 0)
        data = self._source.read_exact(self._source.size, 0, ".asm_pc")
        self.table = AsmFile.parse(data, self.filename)
        self._names = []
        self._entries = []

    def header_fields(self) -> dict[str, Any]:
        return {
            "version": self.table.version,
            "container_count": len(self.table.containers),
            "containers": [container.to_dict() for container in self.table.containers],
        }

    def _check(self) -> list[Problem]:
        problems = []
        for container in self.table.containers:
            if [size for size in container.sizes if size] != primitive_sizes(container):
                problems.append(
                    Problem(
                        f"container {container.name!r}: the primitives' sizes {primitive_sizes(container)} "
                        f"differ from its size list {container.sizes}",
                        severity="warning",
                    )
                )
        if self.table.trailing:
            problems.append(Problem(f"{len(self.table.trailing)} bytes after the last container", severity="warning"))
        return problems

    def _member_data(self, entries: list[Entry]) -> Any:
        return iter(())


def _make_writer() -> type[ArchiveWriter]:
    """The `.asm_pc` writer's class, made when something writes (`made_on_first_use`): reading
    a table imports nothing of the writing side."""
    from ...core.writer import ArchiveWriter

    class Writer(ArchiveWriter):
        """Writes an empty `.asm_pc` (no containers). Containers describe `.str2_pc` packs: gamepak
        fills them in when it writes the `.vpp_pc` holding both (or with the vpp writer's `asm`
        option)."""

        format_name = "asm"
        option_defaults: ClassVar[dict[str, Any]] = {}

        def _check_name(self, name: str) -> None:
            raise FormatLimitError(
                f"an .asm_pc holds container tables, not members ({name!r}); write the .vpp_pc that holds "
                "it and its .str2_pc packs, and gamepak updates its containers"
            )

        def _write(self, out: Output, members: list[PendingMember]) -> None:
            out.write(AsmFile().to_bytes())

    return Writer


__getattr__ = made_on_first_use(globals(), {"Writer": _make_writer})
