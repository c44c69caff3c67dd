"""The undo record beside a patched target, the sessions every write runs in, and `revert`."""

from __future__ import annotations

from .record import (
    RECORD_FORMAT,
    RECORD_VERSION,
    Record,
    Session,
    begin_apply,
    finish_apply,
    recover,
    revert,
)

__all__ = ["RECORD_FORMAT", "RECORD_VERSION", "Record", "Session", "begin_apply", "finish_apply", "recover", "revert"]
