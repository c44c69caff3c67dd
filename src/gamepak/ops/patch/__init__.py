"""Mods as member-level patches: `make`, `check`, `apply` (several at once), `revert`.

    >>> gamepak.patch.make("table.vpp_pc", "table-modded.vpp_pc", "fix.gpatch", name="fix")
    >>> gamepak.patch.apply("game/data", ["fix.gpatch", "other.gpatch"])
    >>> gamepak.patch.revert("game/data")

container: the patch file format (write: writing one); make: comparing packs and folders;
target: the target's state as the plan reads it, and the plan (below apply, limits, undo);
digests: the hashes; apply: the plan (checks, conflicts) and the per-pack rewrite (scratch:
where new members wait, in memory within a budget, else in scratch files); undo: the undo record
(per-file originals) and the session every write runs in; revert: the undo record played back;
install: `apply` over all three.
"""

from __future__ import annotations

from .apply import Plan, plan
from .container import FORMAT_VERSION, Operation, Patch, PatchError
from .install import apply, check
from .make import make
from .revert import revert

__all__ = ["FORMAT_VERSION", "Operation", "Patch", "PatchError", "Plan", "apply", "check", "make", "plan", "revert"]
