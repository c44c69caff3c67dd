"""The ordered table of formats: name, extensions, and where its reader, writer and sniffer live.

Format modules are imported only when a format is used, so `import gamepak` stays light.
Adding a format means adding its module and one row here.
"""

from __future__ import annotations

import os
import sys

from ..errors import UnknownFormatError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any


def load_module(name: str) -> ModuleType:
    """The module called `name`, imported on first use."""
    # `__import__` returns the top package and leaves the module itself in sys.modules.
    # `importlib` would cost start-up time (it imports `warnings`); a fromlist such as
    # ["_"] returns the module too, but looks for a submodule `_` on the disk at every call
    # (~55 us each; a pack opens through here several times).
    module = sys.modules.get(name)
    if module is None or getattr(getattr(module, "__spec__", None), "_initializing", False):
        # Not imported yet, or being imported by another thread (a server's requests open packs
        # at once): `__import__` waits for that import to finish; the module as found in
        # sys.modules meanwhile is partly initialized (no `sniff` yet).
        __import__(name)
        module = sys.modules[name]
    return module


def made_on_first_use(namespace: dict[str, Any], makers: dict[str, Any]) -> Any:
    """A module `__getattr__` (PEP 562) that makes each name of `makers` on first use by calling
    its maker, and keeps it in the module (`namespace`, the module's `globals()`).

    A format module's writer class is made this way: its base, `core.writer.ArchiveWriter`, and
    the writer's helpers (`core.layout`, the option checkers) are about a tenth of a short command's
    start-up, and reading a pack (`ls`, `cat`, `verify`, ...) needs none of them. The class
    stays in its format's module (one module per format) and is named as before
    (`module.Writer`, `from module import Writer`, pickling by name)."""
    from _thread import allocate_lock  # `threading` would cost start-up time

    lock = allocate_lock()  # two threads asking at once get the same class

    def __getattr__(name: str) -> Any:
        maker = makers.get(name)
        if maker is None:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        with lock:
            if name not in namespace:
                value = maker()
                if isinstance(value, type):
                    value.__qualname__ = name  # made inside the maker: named as a module-level class
                namespace[name] = value
        return namespace[name]

    return __getattr__


class FormatSpec:
    """One format: its name, what it is, and the names of its pieces in its module.

    `has_magic`: formats with a signature always win over structural guesses.
    `magic`: where that signature sits, as (offset, bytes) pairs: the sniffer accepts only files
    that hold one of them (a quick test before asking it; empty: always ask), or, when
    `magic_required` is False, files that start with zero bytes only (tar: an empty archive is
    two zero blocks, with no signature).
    `sniff_module`: the module holding the sniffer when it is not `module`: a light one, as
    detection asks every format without a signature about every file.
    `kind`: "archive" opens with gamepak.open(); "model" is handled by gamepak.models; "table"
    opens with gamepak.open() as an archive without members (never taken for a nested pack).
    `name_rule`: the module's function `(name)` that refuses what the format's writer refuses
    in `_check_name` (the writer calls it too), or `(name, options)` with `name_rule_options`
    when the rule reads writer options (a JoePack's `name_field_size`): an editor checks new
    names with it (and `core.stored_names.refuse_name`) without making a writer (its modules,
    and the pack's layout options, were a twentieth of an `add --dry-run`). None: names are
    checked by a writer.
    `flat_names`: the writer's `flat_names` (names hold no folders), for the same checks.
    """

    __slots__ = (
        "aliases",
        "description",
        "extensions",
        "flat_names",
        "has_magic",
        "kind",
        "magic",
        "magic_required",
        "module",
        "name",
        "name_rule",
        "name_rule_options",
        "reader",
        "sniff",
        "sniff_module",
        "writer",
    )

    def __init__(
        self,
        name: str,
        description: str,
        module: str,
        extensions: tuple[str, ...] = (),
        *,
        reader: str = "Reader",
        writer: str = "Writer",
        sniff: str = "sniff",
        has_magic: bool = True,
        kind: str = "archive",
        aliases: tuple[str, ...] = (),
        magic: tuple[tuple[int, bytes], ...] = (),
        magic_required: bool = True,
        sniff_module: str | None = None,
        name_rule: str | None = None,
        name_rule_options: bool = False,
        flat_names: bool = False,
    ) -> None:
        self.name = name
        self.description = description
        self.module = module
        self.extensions = extensions
        self.reader = reader
        self.writer = writer
        self.sniff = sniff
        self.has_magic = has_magic
        self.kind = kind
        self.aliases = aliases
        self.magic = magic
        self.magic_required = magic_required
        self.sniff_module = sniff_module
        self.name_rule = name_rule
        self.name_rule_options = name_rule_options
        self.flat_names = flat_names

    def __repr__(self) -> str:
        return f"<FormatSpec {self.name}>"

    def load(self) -> ModuleType:
        return load_module(self.module)

    def reader_class(self) -> Any:
        return getattr(self.load(), self.reader)

    def writer_class(self) -> Any:
        return getattr(self.load(), self.writer)

    def sniffer(self) -> Any:
        return getattr(load_module(self.sniff_module or self.module), self.sniff)

    def may_hold(self, head: bytes) -> bool:
        """Whether a file starting with `head` (at least MAGIC_SPAN bytes, or the whole file) can
        be this format: False only when the format declares the signatures every file of it
        holds and `head` holds none (nor, with `magic_required` False, starts with zero bytes
        only), so that detection passes over it without importing its module."""
        if not self.magic:
            return True
        if any(head.startswith(signature, offset) for offset, signature in self.magic):
            return True
        # Asking tar's sniffer about every file without a signature was ~1.5% of `detect`.
        return not self.magic_required and not any(head)


FORMATS: tuple[FormatSpec, ...] = (
    FormatSpec(
        "pak",
        "Quake / Quake II PAK",
        "gamepak.formats.quake_pak",
        (".pak",),
        magic=((0, b"PACK"),),
        name_rule="check_name",
    ),
    FormatSpec(
        "wad",
        "Quake WAD2 / Half-Life WAD3 texture archive",
        "gamepak.formats.quake.wad",
        (".wad",),
        magic=((0, b"WAD2"), (0, b"WAD3")),
        name_rule="check_name",
        flat_names=True,
    ),
    # A map: `info` lists its lumps, textures and entities; `model export` builds its geometry.
    FormatSpec(
        "bsp",
        "Quake BSP29 / BSP2 map",
        "gamepak.formats.quake.bsp",
        (".bsp",),
        kind="table",
        magic=((0, b"\x1d\x00\x00\x00"), (0, b"BSP2"), (0, b"2PSB")),
    ),
    FormatSpec(
        "jpk",
        "VDrift JoePack v1",
        "gamepak.formats.joepack",
        (".jpk",),
        magic=((0, b"JPK01.00"),),
        name_rule="check_name",
        name_rule_options=True,  # the name field's size
    ),
    FormatSpec(
        "vpp",
        "Red Faction Guerrilla packfile v3",
        "gamepak.formats.rfg",
        (".vpp_pc", ".str2_pc"),
        magic=((0, b"\xce\x0a\x89\x51"),),
        name_rule="check_name",
        flat_names=True,
    ),
    # A table of contents with no members: `info` and `verify` open it; nested walks skip it.
    FormatSpec(
        "asm",
        "Red Faction Guerrilla .asm_pc container table v5",
        "gamepak.formats.rfg.asm",
        (".asm_pc",),
        kind="table",
        magic=((0, b"\xed\xfe\xef\xbe"),),
    ),
    # Strings by hash, one language per file: `info`/`verify` open it; `gamepak text` translates it.
    FormatSpec(
        "rfglocatext",
        "Red Faction Guerrilla localization strings v3",
        "gamepak.formats.rfg.locatext.view",
        (".rfglocatext",),
        kind="table",
        magic=((0, b"\x73\x7f\x4c\xa8"),),
    ),
    FormatSpec(
        "zip",
        "ZIP archive",
        "gamepak.formats.zip",
        (".zip", ".pk3", ".kpf"),
        magic=((0, b"PK\x03\x04"), (0, b"PK\x05\x06")),
        name_rule="check_name",
    ),
    FormatSpec(
        "tar",
        "tar archive (plain, or gzip, bzip2, xz or zstd compressed)",
        "gamepak.formats.tar",
        (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tbz", ".tar.xz", ".txz", ".tar.zst", ".tzst"),
        magic=((257, b"ustar"), (0, b"\x1f\x8b"), (0, b"BZh"), (0, b"\xfd7zXZ\x00"), (0, b"\x28\xb5\x2f\xfd")),
        magic_required=False,  # an empty archive is zero blocks only (a weak guess, 0.5)
        name_rule="check_name",
    ),
    FormatSpec(
        "joe",
        "VDrift JOE v3 model",
        "gamepak.models.joe",
        (".joe",),
        has_magic=False,
        kind="model",
        # Not a signature (real files carry IDP2 or zeros there): the version field every JOE v3
        # holds, which lets detection pass over other files without importing gamepak.models.
        magic=((4, b"\x03\x00\x00\x00"),),
        sniff_module="gamepak.models.joe_header",  # the reader brings the mesh model
    ),
    # The J2ME layouts have no signature: only a full structural check can tell them apart.
    FormatSpec(
        "j2me-table",
        "Gameloft J2ME pack: count byte, offset/size pairs",
        "gamepak.formats.j2me",
        reader="TableReader",
        writer="TableWriter",
        sniff="sniff_table",
        has_magic=False,
        name_rule="member_index",
    ),
    FormatSpec(
        "j2me-offsets",
        "Gameloft J2ME pack: int16 count, start offsets",
        "gamepak.formats.j2me",
        reader="OffsetsReader",
        writer="OffsetsWriter",
        sniff="sniff_offsets",
        has_magic=False,
        name_rule="member_index",
    ),
    FormatSpec(
        "j2me-end-offsets",
        "Gameloft J2ME pack: int32 count, end offsets",
        "gamepak.formats.j2me",
        reader="EndOffsetsReader",
        writer="EndOffsetsWriter",
        sniff="sniff_end_offsets",
        has_magic=False,
        name_rule="member_index",
    ),
    FormatSpec(
        "j2me-sized",
        "Gameloft J2ME pack: uint16 size + data, repeated",
        "gamepak.formats.j2me",
        reader="SizedReader",
        writer="SizedWriter",
        sniff="sniff_sized",
        has_magic=False,
        name_rule="member_index",
    ),
    FormatSpec(
        "j2me-ids",
        "Gameloft J2ME pack: uint16 count, records of uint16 id, uint32 size, data (demoSpr.bin)",
        "gamepak.formats.j2me",
        reader="IdsReader",
        writer="IdsWriter",
        sniff="sniff_ids",
        has_magic=False,
        name_rule="member_index",
    ),
)

# How many first bytes of a file `FormatSpec.may_hold` looks at: every declared signature's end.
MAGIC_SPAN = max(offset + len(signature) for spec in FORMATS for offset, signature in spec.magic)

# Files gamepak reads with a command of their own, not as packs: extension -> what to run (the
# "not a format gamepak knows" error says it instead). tests/test_content_registry.py checks
# that each content kind's extensions (the content registry's rows) are here or a format.
_PEG_CPU = "an RFG texture set (peg), not a pack: `gamepak texture ls` lists it, `texture export` writes its images"
OTHER_COMMANDS = {
    ".cpeg_pc": _PEG_CPU,
    ".cvbm_pc": _PEG_CPU,
    ".gpeg_pc": "the pixels of an RFG texture set: give its CPU file (.cpeg_pc) to `gamepak texture`",
    ".gvbm_pc": "the pixels of an RFG texture set: give its CPU file (.cvbm_pc) to `gamepak texture`",
    ".lmp": "a Quake picture or palette, not a pack: `gamepak texture export` writes it as PNG",
    ".wal": "a Quake II texture, not a pack: `gamepak texture export` writes it as PNG",
    ".spr": "a Quake sprite, not a pack: `gamepak texture export` writes its frames as PNG",
    ".mdl": "a Quake model, not a pack: `gamepak model info` / `model export` read it",
    # Either file of an RFG mesh pair (the other file is found beside it or in the same pack).
    **dict.fromkeys(
        (".csmesh_pc", ".gsmesh_pc", ".ccmesh_pc", ".gcmesh_pc"),
        "half of an RFG mesh pair, not a pack: `gamepak model info` / `model export` read it",
    ),
    **dict.fromkeys(
        (".rfgzone_pc", ".layer_pc"),
        "an RFG zone, not a pack: `gamepak zone ls` lists its objects, `zone export` writes them as JSON",
    ),
}


def other_command_for(path: str) -> str | None:
    """What to run for a file gamepak reads with another command (a texture set), if it is one."""
    return OTHER_COMMANDS.get(os.path.splitext(path)[1].lower())


def get_format(name: str) -> FormatSpec:
    """The format called `name` (or one of its aliases)."""
    wanted = name.lower()
    for spec in FORMATS:
        if wanted == spec.name or wanted in spec.aliases:
            return spec
    raise UnknownFormatError(f"unknown format {name!r}; known formats: {', '.join(spec.name for spec in FORMATS)}")


def format_for_path(path: str) -> FormatSpec | None:
    """The format a file name's extension suggests, if any."""
    lowered = path.lower()
    for spec in FORMATS:
        if any(lowered.endswith(extension) for extension in spec.extensions):
            return spec
    return None
