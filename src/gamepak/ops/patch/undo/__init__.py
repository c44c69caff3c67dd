"""The undo record beside a patched target, and the sessions every write runs in (`revert`, above
`apply` and this package, is `ops/patch/revert.py`).

record: the record's layout, and record.json read and written; session: the session every
write runs in (each file's state before kept, committed or rolled back); restore: `recover`
after a kill, and originals given back; reverse: an apply's undo patches (the
member-level reverse of each patch) and its session begun and finished.

What it guarantees. Every write gamepak makes to a file of the target (an apply, a member-level
revert) runs in a `Session`: before the first byte of a file changes, its old inode is linked
into the record and the record names that link and the journal its in-place edits keep, so the
session can give the file its state before exactly: after a failure (a hash check, a full disk,
a delta that fails half-way) in the process, and after a kill -9 in the next `apply`, `check` or
`revert` (`recover`). A committed session extends each file's way back to its original (the
first gamepak write's link or journals), so the original stays reachable from whatever gamepak
last wrote. When no applied patch touches a file any more and the file is still what gamepak
last left (inode, size, modification time), `revert` gives it its original bytes directly
(sha256-equal) instead of replaying members; a file changed by another program since is
reverted member by member with a warning. Restoring is idempotent step by step (each journal
written back is struck from the record), so a kill during a revert is finished by the next
command.
"""

from __future__ import annotations

from .record import RECORD_FORMAT, RECORD_VERSION, Record
from .restore import recover
from .reverse import begin_apply, finish_apply
from .session import Session

__all__ = ["RECORD_FORMAT", "RECORD_VERSION", "Record", "Session", "begin_apply", "finish_apply", "recover"]
