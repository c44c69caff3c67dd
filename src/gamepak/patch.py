"""`gamepak.patch`: the library face of mods as patches (see gamepak.ops.patch)."""

from __future__ import annotations

from .ops.patch import FORMAT_VERSION, Operation, Patch, PatchError, Plan, apply, check, make, plan, revert

__all__ = ["FORMAT_VERSION", "Operation", "Patch", "PatchError", "Plan", "apply", "check", "make", "plan", "revert"]
