"""Options one content kind takes and another does not (`texture --resize`, `model --frame`):
given to a kind whose verb does not take them (its row's `Verb.options`), the command refuses
them in one line naming the option and the kind, rather than ignoring them."""

from __future__ import annotations

from collections.abc import Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any


def refuse_untaken(
    args: argparse.Namespace,
    kind: Any,
    verb: str,
    flags: Mapping[str, tuple[str, object]],
    *,
    taken_by: str | None = None,
) -> None:
    """Raise a UsageError for the first option of `flags` (options key -> (the flag as typed,
    its default)) given in `args` that `kind`'s `verb` does not take, naming the kinds that do
    (`taken_by`: who takes them when no row's verb does, e.g. the command's own path for kinds
    without the verb). An option left at its default (or not given) changes nothing and passes."""
    from ..content import kinds
    from ..errors import UsageError

    taken = kind.verbs[verb].options if kind.has(verb) else ()
    for key, (flag, default) in flags.items():
        value = getattr(args, key, default)
        # Identity for None/False: `--frame 0` is given, though 0 == False.
        if key in taken or value is None or value is False or value == default or value == []:
            continue
        command = kind.family.command
        takers = [row.description for row in kinds() if row.family.command == command and _takes(row, verb, key)]
        if not takers and taken_by:
            takers = [taken_by]
        if not takers:  # e.g. `model export PACK --lod 1`: no kind's whole-pack export takes it
            raise UsageError(f"{flag} is not taken by `{command}` for {kind.description} here")
        raise UsageError(f"{flag} is for {' and '.join(takers)}, not {kind.description}")


def _takes(row: Any, verb: str, key: str) -> bool:
    return row.has(verb) and key in row.verbs[verb].options
