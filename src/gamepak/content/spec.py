"""The shapes of the content registry's rows (`gamepak.content`): a `Verb` (a function named by
module and name, imported on first use, and the option keys it takes), a `Family` (what the
kinds of one family share: command, catalog table, archives kind, preview, verb signatures) and
a `ContentKind` (one row). The rows themselves are in `gamepak/content/rows/` (one module per
family), ordered in `gamepak/content/__init__.py`.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: `collections.abc` was 0.4 M instructions of `text import`
    from collections.abc import Callable, Mapping
    from typing import Any


# The `verify` verb, one signature for every family that has it: a pack-level check `gamepak
# verify PACK` runs for each row whose `packs` holds the pack's format.
VERIFY = (
    "verify(archive, options=) -> [Problem]: `gamepak verify`'s findings for an open pack of the"
    " row's `packs` (options: base, the original pack, open, from `verify --base`; source, the path given)"
)


class Verb:
    """One verb of a kind: the function `module:function` and the option keys it takes from
    the options mapping the caller gives (`leading`: arguments put before the caller's)."""

    __slots__ = ("function_name", "leading", "module", "options")

    def __init__(self, target: str, options: tuple[str, ...] = (), *, leading: tuple[Any, ...] = ()) -> None:
        self.module, _, self.function_name = target.partition(":")
        self.options = options
        self.leading = leading

    def __repr__(self) -> str:
        return f"<Verb {self.module}:{self.function_name}>"

    def function(self) -> Any:
        """The function itself (its module imported now, on first use)."""
        from ..core.registry import load_module

        return getattr(load_module(self.module), self.function_name)

    def __call__(self, *arguments: Any, options: Mapping[str, Any] | None = None, **common: Any) -> Any:
        chosen = {key: options[key] for key in self.options if options is not None and key in options}
        return self.function()(*self.leading, *arguments, **common, **chosen)

    def bound(self) -> Callable[..., Any]:
        """The function, looked up once, with the leading arguments put first: for a caller
        that runs the verb once per row (`texture ls`'s line of each of a million skins)."""
        function = self.function()
        if not self.leading:
            return function  # type: ignore[no-any-return]
        leading = self.leading
        return lambda *arguments, **keywords: function(*leading, *arguments, **keywords)


class Family:
    """What the kinds of one family share: the CLI command that takes them, the catalog table
    their rows go to, the `archives.kind` of a loose file of theirs, the viewer's preview
    template, and the verbs (with their one call signature each)."""

    __slots__ = ("archive_kind", "catalog", "command", "commands", "name", "preview", "verbs")

    def __init__(
        self,
        name: str,
        command: str,
        catalog: str | None,
        archive_kind: str | None,
        preview: str | None,
        verbs: dict[str, str],
        commands: tuple[str, ...] = (),
    ) -> None:
        self.name = name
        self.command = command
        self.commands = commands
        self.catalog = catalog
        self.archive_kind = archive_kind
        self.preview = preview
        self.verbs = verbs


class ContentKind:
    """One kind of content (see the module docstring)."""

    __slots__ = (
        "claims",
        "description",
        "extensions",
        "fallback",
        "family",
        "lump_kinds",
        "max_bytes",
        "name",
        "packs",
        "partner_extensions",
        "preview",
        "signatures",
        "types",
        "verbs",
    )

    def __init__(
        self,
        name: str,
        family: Family,
        description: str,
        *,
        extensions: tuple[str, ...] = (),
        partner_extensions: tuple[str, ...] = (),
        signatures: tuple[bytes, ...] = (),
        lump_kinds: tuple[str, ...] = (),
        packs: tuple[str, ...] = (),
        types: dict[str | bytes, str] | None = None,
        verbs: dict[str, Verb] | None = None,
        claims: Verb | None = None,
        fallback: bool = False,
        preview: str | None = None,
        max_bytes: int | None = None,
    ) -> None:
        self.name = name
        self.family = family
        self.description = description
        self.extensions = extensions
        self.partner_extensions = partner_extensions
        self.signatures = signatures
        self.lump_kinds = lump_kinds
        self.packs = packs
        self.types = types or {}
        self.verbs = verbs or {}
        self.claims = claims
        self.fallback = fallback
        # The viewer's template for this kind (its family's unless it has one of its own: a
        # sprite's sheets, frames and animations), filled by the kind's own `preview` verb.
        self.preview = preview or family.preview
        # The largest file of the kind a surface reads when it looks at every member of a pack
        # the kind lives in (known by its bytes alone): larger ones are not taken for it.
        self.max_bytes = max_bytes

    def __repr__(self) -> str:
        return f"<ContentKind {self.name}>"

    def has(self, verb: str) -> bool:
        return verb in self.verbs

    def call(self, verb: str, *arguments: Any, options: Mapping[str, Any] | None = None, **common: Any) -> Any:
        """Run this kind's `verb` (its family's call signature), handing it the options it takes."""
        return self.verbs[verb](*arguments, options=options, **common)

    def bound(self, verb: str) -> Callable[..., Any]:
        """This kind's `verb` as a function, looked up once (`Verb.bound`; no options taken)."""
        return self.verbs[verb].bound()

    def named_by(self, name: str) -> bool:
        """Whether a file or member name carries one of this kind's extensions (or, for a kind
        stored as two files, its partner's: a verb given either file takes the kind)."""
        named = self.extensions + self.partner_extensions
        return name.lower().endswith(named) if named else False

    def partner_named_by(self, name: str) -> bool:
        """Whether `name` is the second file of a two-file kind (a mesh's GPU file): surfaces
        that show a file read the kind through its first file, those that count count it once."""
        return name.lower().endswith(self.partner_extensions) if self.partner_extensions else False

    def signed_by(self, head: bytes) -> bool:
        return any(head.startswith(signature) for signature in self.signatures)

    def type_of(self, name: str) -> str | None:
        """The member type label of a file of this kind called `name`."""
        lowered = name.lower()
        for extension, label in self.types.items():
            if isinstance(extension, str) and lowered.endswith(extension):
                return label
        return next(iter(self.types.values()), None)
