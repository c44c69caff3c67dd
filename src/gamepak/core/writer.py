"""The `ArchiveWriter` base every format's writer subclasses and the `Output` it fills (the
`PendingMember`s it queues are `core.entry`'s, imported from here as before).

A writer implements `_check_name()` and `_write()`. Everything else (options, duplicate and
name checks, inputs read as snapshots, atomic output, in-place appends) lives here once for all
formats; the reading side is `core.archive`.
"""

from __future__ import annotations

import os

# The rarely raised errors (FormatLimitError, InvalidOptionError, OutputExistsError) are made on
# first use (`gamepak.errors`): imported where they are raised.
from ..errors import GamepakError
from .archive import Archive, Entry, PendingMember
from .stored_names import refuse_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, ClassVar

    Validator = Callable[[Any], Any]


class Output:
    """The file a writer fills: sequential buffered writes, positioned patches, and kernel-side
    copies from member files."""

    _BUFFER_LIMIT = 1 << 20

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = bytearray()
        self._position = 0  # where the next write lands

    def tell(self) -> int:
        return self._position

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if len(data) >= self._BUFFER_LIMIT:
            # Written where it is: buffering a large member held as bytes would copy it whole.
            self.flush()
            pwrite_all(self.fd, data, self._position)
            self._position += len(data)
            return
        self._buffer += data
        self._position += len(data)
        if len(self._buffer) >= self._BUFFER_LIMIT:
            self.flush()

    def pad_to(self, position: int, fill: bytes = b"\0") -> None:
        """Write filler bytes up to `position` (a no-op if already there)."""
        if position > self._position:
            self.write(fill * (position - self._position) if len(fill) == 1 else fill[: position - self._position])

    def seek(self, position: int) -> None:
        """Continue writing at `position` (which may leave a hole, read back as zeros)."""
        self.flush()
        self._position = position

    def pwrite(self, data: bytes, position: int) -> None:
        """Write at `position` without moving the sequential write position."""
        self.flush()
        pwrite_all(self.fd, data, position)

    def truncate(self, size: int) -> None:
        """Make the file exactly `size` bytes long (zero-extended or cut)."""
        self.flush()
        os.ftruncate(self.fd, size)

    def flush(self) -> None:
        if self._buffer:
            pwrite_all(self.fd, self._buffer, self._position - len(self._buffer))
            self._buffer.clear()

    def write_member(self, member: PendingMember) -> None:
        """Append a member's bytes; a file on disk, or a member stored plainly in an archive on
        disk, is copied by the kernel where possible."""
        if member.data is None and member.size >= (64 << 10):
            if member.origin is None:
                self.flush()
                with member.input_file() as input_file:
                    copy_range(input_file.fileno(), 0, self.fd, self._position, member.size)
                    input_file.finish(member.size)
                self._position += member.size
                member.consumed()
                return
            archive, entry = member.origin
            raw = archive._raw_range(entry)
            source = archive._source
            if raw is not None and source.fd is not None and raw.size == member.size:
                archive._check_range(entry)
                self.flush()
                copy_range(source.fd, source.base + raw.offset, self.fd, self._position, raw.size)
                self._position += raw.size
                member.consumed()
                return
        for chunk in member.chunks():
            self.write(chunk)


def whole_member(member: PendingMember) -> bytes:
    """A queued member's whole content, for a writer that transforms small members whole
    (deflates them, sums them): what `b"".join(member.chunks())` gives, and the member reported
    written as `chunks()` reports it, but a member that is bytes or a plain byte range of an
    open pack is read in one call, without a generator and its loop (a zip of 20 small members
    from a PAK: ~0.3 M instructions). The caller bounds the size (no more is held than that)."""
    data = member.data
    if data is None:
        if member.origin is None:
            return b"".join(member.chunks())
        archive, entry = member.origin
        raw = archive._raw_range(entry)
        if raw is None:
            return b"".join(member.chunks())
        archive._check_range(entry)
        data = archive._source.pread(raw.size, raw.offset)
    member.consumed()
    return data


def _portable_pwrite() -> Callable[[int, bytes | bytearray | memoryview, int], int]:
    """`os.pwrite`'s stand-in where the system lacks it (Windows), imported only there, as
    `core.source` does for `os.pread`: a module less (~0.4 M instructions) in every write elsewhere."""
    from .portable import pwrite

    return pwrite


def pwrite_all(fd: int, data: bytes | bytearray | memoryview, position: int) -> None:
    write_at = getattr(os, "pwrite", None) or _portable_pwrite()
    view = memoryview(data)
    while view:
        written = write_at(fd, view, position)
        view = view[written:]
        position += written


def copy_range(src_fd: int, src_offset: int, dst_fd: int, dst_offset: int, size: int) -> None:
    """Copy `size` bytes between files by offset: copy_file_range, else pread/pwrite."""
    remaining = size
    use_kernel = hasattr(os, "copy_file_range")
    while remaining:
        copied = 0
        if use_kernel:
            try:
                copied = os.copy_file_range(src_fd, dst_fd, min(remaining, 1 << 30), src_offset, dst_offset)
            except OSError:
                use_kernel = False  # EXDEV across filesystems, ENOSYS, EINVAL on special files
        if not use_kernel:
            from .portable import pread  # os.pread, or its stand-in on Windows

            chunk = pread(src_fd, min(remaining, 1 << 20), src_offset)
            copied = len(chunk)
            pwrite_all(dst_fd, chunk, dst_offset)
        if copied == 0:
            raise GamepakError(f"source ended {remaining} bytes early while copying")
        remaining -= copied
        src_offset += copied
        dst_offset += copied


class ArchiveWriter:
    """Builds an archive. Create one with `gamepak.create()`; `add()` members, then `close()`.

    The output is written to a temporary file beside the target and renamed into place only
    when complete; an exception inside a `with` block leaves nothing behind.
    """

    format_name: ClassVar[str] = ""
    # Writer options this format accepts, with their defaults (documented by `gamepak formats`).
    option_defaults: ClassVar[dict[str, Any]] = {}
    # Per option, a function that returns the normalised value or raises ValueError("why");
    # every value given is checked when the writer is made, before anything is read or written.
    option_validators: ClassVar[dict[str, Callable[[Any], Any]]] = {}
    # Whether the format can hold two members of one name (added only with allow_duplicates).
    allows_duplicates: ClassVar[bool] = True
    # False for formats whose members have no names (they are numbered: `0.png`, `1`...).
    stores_names: ClassVar[bool] = True
    # True where the game looks member names up ignoring case: `A.TXT` and `a.txt` are then one
    # name, a duplicate.
    case_insensitive_names: ClassVar[bool] = False
    # True for formats whose names hold no folders (no '/').
    flat_names: ClassVar[bool] = False

    def __init__(
        self, path: str | os.PathLike[str], *, overwrite: bool = False, allow_duplicates: bool = False, **options: Any
    ) -> None:
        self.path = os.fspath(path)
        self.overwrite = overwrite
        self.allow_duplicates = allow_duplicates
        unknown = set(options) - set(self.option_defaults) - {"layout"}
        if unknown:
            from ..errors import InvalidOptionError  # rarely raised: made on first use

            raise InvalidOptionError(
                f"format {self.format_name!r} has no option {', '.join(sorted(unknown))}; "
                f"it takes: {', '.join(sorted(self.option_defaults)) or 'none'}",
                sorted(unknown)[0],
            )
        self.options: dict[str, Any] = {**self.option_defaults, **self._validated(options)}
        # The options the caller named (not defaults): a writer copying stored bytes as they are
        # must not do so when the caller asked for another compression.
        self.named_options = set(options) - {"layout"}
        # The pack an editor is rebuilding with this writer (None for a new pack).
        self.edit_of: Archive | None = None
        self._refuse_unused(options)
        self.layout: dict[str, Any] = options.get("layout") or {}
        self.members: list[PendingMember] = []
        self._names_taken: dict[str, str] = {}  # name key -> the first name queued under it
        # Called with each member as the archive is written (the CLI's progress bar).
        self.progress: Callable[[PendingMember], object] | None = None
        self._closed = False
        if not overwrite and os.path.lexists(self.path):
            from ..errors import OutputExistsError  # rarely raised: made on first use

            raise OutputExistsError(self.path)

    def _validated(self, options: dict[str, Any]) -> dict[str, Any]:
        """The options with each value checked (and normalised) by its validator."""
        checked = {}
        for key, value in options.items():
            validator = self.option_validators.get(key)
            if key == "layout" or validator is None:
                checked[key] = value
                continue
            try:
                checked[key] = validator(value)
            except (ValueError, TypeError) as exc:
                given = "" if value is None else value
                from ..errors import InvalidOptionError  # rarely raised: made on first use

                raise InvalidOptionError(f"{self.format_name} option {key}={given}: {exc}", key) from None
        return checked

    def _unused_options(self) -> dict[str, str]:
        """Options (of `self.options`, defaults filled in) that would have no effect on this
        output, each with the reason; formats whose options depend on each other override it."""
        return {}

    def _refuse_unused(self, given: dict[str, Any]) -> None:
        """Refuse an option the caller set (to a value, not empty) that the output would ignore:
        an option is never accepted and then silently dropped."""
        unused = self._unused_options()
        for key in sorted(given):
            if key in unused and given[key] is not None:
                why = f"{self.format_name} option {key}={given[key]} has no effect: {unused[key]}"
                from ..errors import InvalidOptionError  # rarely raised: made on first use

                raise InvalidOptionError(why, key)

    def _check_name(self, name: str) -> None:
        """Refuse a name the format cannot store (raise FormatLimitError)."""

    def _write(self, out: Output, members: list[PendingMember]) -> None:
        """Write the whole archive."""
        raise NotImplementedError

    def add(self, name: str, data_or_path: bytes | bytearray | memoryview | str | os.PathLike[str]) -> None:
        """Queue a member: its bytes, or the path of a regular file read when the archive is
        written (it must still have the size and modification time it has now)."""
        if self._closed:
            raise GamepakError("the writer is closed")
        key = self._check_any_name(name)
        if isinstance(data_or_path, (bytes, bytearray, memoryview)):
            data = bytes(data_or_path)
            self._queue(PendingMember(name, data, None, len(data)), key)
        else:
            self._queue(PendingMember.from_file(name, os.fspath(data_or_path)), key)

    def add_pending(self, member: PendingMember) -> None:
        """Queue a member prepared elsewhere (an editor's): its name is checked as `add` checks
        it, and a file keeps the size and time it was queued with."""
        if self._closed:
            raise GamepakError("the writer is closed")
        self._queue(member, self._check_any_name(member.name))

    def _queue(self, member: PendingMember, key: str | None = None) -> None:
        """Queue `member`; `key`: its name's key when the caller has it (`_check_any_name`'s)."""
        self.members.append(member)
        self._names_taken.setdefault(self._name_key(member.name) if key is None else key, member.name)

    def _name_key(self, name: str) -> str:
        """What makes two names the same member for the format's readers (case ignored where
        the game looks names up ignoring it)."""
        return name.lower() if self.case_insensitive_names else name

    def add_member(self, name: str, archive: Archive, member: str | Entry) -> None:
        """Queue a member of an open archive under `name`; a writer of the same format may copy
        its stored bytes unchanged. The archive must stay open until the writer is closed."""
        if self._closed:
            raise GamepakError("the writer is closed")
        key = self._check_any_name(name)
        entry = archive._entry(member)
        self._queue(PendingMember(name, None, None, entry.size, (archive, entry)), key)

    def _check_any_name(self, name: str) -> str:
        """`check_name`, then refuse a name taken twice (unless allowed and possible); returns
        the name's key (`_name_key`)."""
        self.check_name(name)
        key = self._name_key(name)
        taken = self._names_taken.get(key)
        if taken is not None:
            same = "" if taken == name else f" (as {taken!r}: {self.format_name}'s game looks names up ignoring case)"
            if not self.allows_duplicates:
                from ..errors import FormatLimitError  # rarely raised: made on first use

                raise FormatLimitError(f"member name {name!r} is taken{same}: {self.format_name} cannot hold two")
            if not self.allow_duplicates:
                from ..errors import FormatLimitError  # rarely raised: made on first use

                raise FormatLimitError(
                    f"member name {name!r} is added twice{same} "
                    "(allow_duplicates=True / --allow-duplicates to keep both)"
                )
        return key

    def check_name(self, name: str) -> None:
        """Refuse a name any writer refuses (empty, NUL, '..' parts, absolute, backslash; '/' in
        a flat format) or this format cannot store (`_check_name`), without queueing anything."""
        refuse_name(name, self.format_name, self.flat_names)
        self._check_name(name)

    def close(self) -> None:
        """Write the archive and move it into place."""
        if self._closed:
            return
        self._closed = True
        from .atomic import write_via_temporary

        def fill(fd: int) -> None:
            out = Output(fd)
            for member in self.members:
                member.on_written = self.progress
            self._write(out, self.members)
            out.flush()

        write_via_temporary(self.path, fill, overwrite=self.overwrite)

    def abort(self) -> None:
        """Give up: nothing is written."""
        self._closed = True

    def __enter__(self) -> ArchiveWriter:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


# -- the building blocks of `ArchiveWriter.option_validators` ----------------------------------
# Each builder returns a validator: a function that takes the value a user gave (from Python, a
# manifest, or the CLI's `-O KEY=VALUE`, where numbers arrive as ints, `yes`/`no` as booleans and
# an empty value as None) and returns the normalised value, or raises ValueError saying what the
# option takes. The writer turns that into an InvalidOptionError naming the option. Every format
# takes the same spellings: numbers as text too (`"9"`, `"0x10"`), booleans as yes/no,
# true/false, on/off or 1/0. Here rather than in a module of their own: every writer's class
# needs them when it is made (a module import is about 0.3 M instructions of a command).


def whole_number(minimum: int | None = None, maximum: int | None = None, *, allow_none: bool = False) -> Validator:
    """An int in [minimum, maximum] (either bound optional); None only with `allow_none`."""
    if minimum is not None and maximum is not None:
        wanted = f"a whole number from {minimum} to {maximum}"
    elif minimum is not None:
        wanted = f"a whole number of at least {minimum}"
    else:
        wanted = "a whole number"
    if allow_none:
        wanted += " (or empty for the default)"

    def validate(value: Any) -> Any:
        if value is None and allow_none:
            return None
        if isinstance(value, str):
            try:
                value = int(value.strip(), 0)
            except ValueError:
                raise ValueError(f"takes {wanted}, not {_shown(value)}") from None
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"takes {wanted}, not {_shown(value)}")
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            raise ValueError(f"takes {wanted}")
        return value

    return validate


def one_of(*choices: Any) -> Validator:
    """One of `choices` (strings compare ignoring case)."""

    def validate(value: Any) -> Any:
        for choice in choices:
            if value == choice and type(value) is type(choice):
                return choice
            if isinstance(value, str) and isinstance(choice, str) and value.lower() == choice.lower():
                return choice
        listed = ", ".join(_shown(choice) for choice in choices)
        raise ValueError(f"takes one of {listed}, not {_shown(value)}")

    return validate


def boolean(*, allow_none: bool = False) -> Validator:
    """True or False (yes/no, true/false, on/off or 1/0)."""

    def validate(value: Any) -> Any:
        if value is None and allow_none:
            return None
        if isinstance(value, bool):
            return value
        if value in (0, 1) and isinstance(value, int):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in _SPELLED:
            return _SPELLED[value.strip().lower()]
        raise ValueError(f"takes yes or no (true/false), not {_shown(value)}")

    return validate


_SPELLED = {"yes": True, "true": True, "on": True, "1": True, "no": False, "false": False, "off": False, "0": False}


def _shown(value: Any) -> str:
    if value is None:
        return "an empty value"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)
