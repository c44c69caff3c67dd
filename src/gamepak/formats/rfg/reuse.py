"""Stored compressed bytes reused: members queued from an open packfile (`add_member`,
`PendingMember.origin`) are not recompressed where their stored bytes can be copied.

- flags 1: each member is its own zlib stream, copied unchanged from a flags-1 source.
- flags 3: the stream is one deflate stream with a sync flush after each member, which leaves
  the stream byte-aligned with every earlier block complete. The chunks of the unchanged members
  before the first changed one (same source, same order, same offsets) are copied unchanged; the
  rest continues the same stream with a raw deflate compressor primed with the last 32 KiB of
  the copied output as its dictionary (back-references into the prefix are what the decoder's
  window holds), never finished, as the game's streams. The prefix is byte-exact and the stream
  stays one valid stream.
  After a changed member the stream falls back in step with the source: a sync-flushed chunk
  depends only on the 32 KiB of output before it, so the chunk of an unchanged member is copied
  too once at least 32 KiB of unchanged members (same source members, in order, with the same
  padding) precede it in both streams. Only the changed members and the 32 KiB after each are
  recompressed.

Which chunk of a flags-3 stream is copied and which compressed is decided member by member, so
the whole stream is written here (`write_solid_stream`); the writer supplies the compressor
with its zlib options and decides where each member sits.
"""

from __future__ import annotations

import zlib

from ...core.writer import copy_range
from ...errors import CorruptArchiveError
from .packfile import Reader

# `typing` and `collections.abc` cost milliseconds at import.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ...core.archive import Entry
    from ...core.writer import Output, PendingMember

    # (raw window bits, dictionary) -> a raw deflate compressor with that window primed with the
    # dictionary; with None (and no dictionary) the writer's own zlib stream from its start.
    NewCompressor = Callable[[int | None, bytes], Any]

_COPY_STEP = 1 << 20


def write_solid_stream(
    out: Output,
    members: list[PendingMember],
    targets: list[int],
    stored_sizes: list[int],
    new_compressor: NewCompressor,
    window_option: int,
) -> int:
    """Write the flags-3 stream of `members` (at `targets` in the plain data, each followed by
    a sync flush): chunks copied from their source where that is safe, the rest compressed.
    Appends each member's chunk size to `stored_sizes`; returns their total."""
    compressor: Any = None
    reused = 0
    window_bits = window_option
    prefix = _solid_prefix(members, targets)
    if prefix is None:
        compressor = new_compressor(None, b"")
    else:
        # The unchanged members at the start keep their chunks, consecutive in the source: one
        # copy. The stream's header is then the source's: what follows may refer back only as
        # far as the window it declares.
        source, reused = prefix
        entries = source.infolist()[:reused]
        sizes = [entry.stored_size or 0 for entry in entries]
        stored_sizes.extend(sizes)
        copy_stored(out, source, source.chunk_start(entries[0]), sum(sizes), entries[0].name)
        for member in members[:reused]:
            member.consumed()
        window_bits = min(_source_window_bits(source), window_option)
        if reused < len(members):
            end = targets[reused]
            start = max(0, end - (1 << window_bits))
            compressor = new_compressor(window_bits, source.plain_range(start, end) if end > start else b"")
    compressed_total = sum(stored_sizes)
    in_step = _InStep.find(members, targets, window_bits)
    run: list[Entry] = []  # source chunks to copy, consecutive: copied in one go
    for index in range(reused, len(members)):
        member = members[index]
        target = targets[index]
        if in_step is not None and in_step.copyable(index):
            entry = in_step.entry(index)
            if run and entry.index != run[-1].index + 1:
                in_step.copy(out, run)
            run.append(entry)
            stored_sizes.append(entry.stored_size or 0)
            compressed_total += stored_sizes[-1]
            member.consumed()
            compressor = None
            continue
        if run:
            assert in_step is not None
            in_step.copy(out, run)
        if compressor is None:
            # After copied chunks: continue from the source's output there (the copy
            # condition makes the last 32 KiB before `target` the source's own).
            assert in_step is not None
            window_bits = in_step.window_bits
            history = in_step.history(index, 1 << window_bits)
            compressor = new_compressor(window_bits, history)
        if index == 0 and target:
            # Leading padding only happens with recorded offsets: it belongs to no chunk.
            out.write(compressor.compress(bytes(target)))
        before = out.tell()
        for chunk in member.chunks():
            out.write(compressor.compress(chunk))
        end = target + member.size
        if index + 1 < len(members) and targets[index + 1] > end:
            out.write(compressor.compress(bytes(targets[index + 1] - end)))
        # zlib skips a sync flush that directly follows another (an empty member read from
        # a file gives no chunk to compress): a call with no input first makes every chunk
        # end with its own sync mark, whether the member came as bytes or as a path.
        out.write(compressor.compress(b""))
        out.write(compressor.flush(zlib.Z_SYNC_FLUSH))
        stored_sizes.append(out.tell() - before)
        compressed_total += stored_sizes[-1]
    if run:
        assert in_step is not None
        in_step.copy(out, run)
    return compressed_total


def _source_window_bits(source: Reader) -> int:
    """The window a flags-3 source's zlib header declares (15 when it says nothing usable)."""
    header = source._source.pread(2, source.data_start)
    return (header[0] >> 4) + 8 if len(header) == 2 and header[0] & 0x0F == 8 else 15


# The end of a sync flush: an empty stored block's lengths, after which the stream is
# byte-aligned with every earlier block complete.
_SYNC_MARK = b"\0\0\xff\xff"


class _InStep:
    """Which chunks of a flags-3 source can be copied after a changed member (see the module's
    docstring)."""

    def __init__(self, source: Reader, members: list[PendingMember], targets: list[int], window_bits: int) -> None:
        self.source = source
        self.window_bits = window_bits
        self._members = members
        self._targets = targets
        self._entries = source.infolist()
        self._marked: dict[int, bool] = {}

    @classmethod
    def find(cls, members: list[PendingMember], targets: list[int], window_bits: int) -> _InStep | None:
        """The flags-3 source with trusted chunk sizes most members come from, if the new
        stream's window holds what its chunks may refer back to."""
        counts: dict[int, tuple[Reader, int]] = {}
        for member in members:
            if member.origin is not None and isinstance(member.origin[0], Reader):
                reader = member.origin[0]
                counts[id(reader)] = (reader, counts.get(id(reader), (reader, 0))[1] + 1)
        if not counts:
            return None
        source = max(counts.values(), key=lambda pair: pair[1])[0]
        if source.flags != 3 or not source.solid_stream()[1] or _source_window_bits(source) > window_bits:
            return None
        return cls(source, members, targets, window_bits)

    def entry(self, index: int) -> Entry:
        origin = self._members[index].origin
        assert origin is not None
        return origin[1]

    def _new_span(self, index: int) -> int:
        """The output the new chunk of member `index` holds: the member and the padding after it."""
        targets = self._targets
        end = targets[index + 1] if index + 1 < len(targets) else targets[index] + self._members[index].size
        return end - targets[index]

    def _source_span(self, number: int) -> int:
        entries = self._entries
        entry = entries[number]
        end = entries[number + 1].offset if number + 1 < len(entries) else entry.offset + entry.size
        return end - entry.offset

    def _same(self, index: int, number: int) -> bool:
        """Whether new member `index` is source member `number`, with the same padding after it."""
        origin = self._members[index].origin
        return (
            origin is not None
            and origin[0] is self.source
            and origin[1].index == number
            and self._new_span(index) == self._source_span(number)
        )

    def _sync_ended(self, number: int) -> bool:
        """Whether source chunk `number` ends with a sync flush."""
        found = self._marked.get(number)
        if found is None:
            entry = self._entries[number]
            stored = entry.stored_size or 0
            end = self.source.chunk_start(entry) + stored
            found = stored >= len(_SYNC_MARK) and self.source._source.pread(4, end - 4) == _SYNC_MARK
            self._marked[number] = found
        return found

    def copyable(self, index: int) -> bool:
        """Whether the source chunk of member `index` can be copied: the same member with the
        same padding, a chunk between sync flushes, and the window before it the same output
        in both streams (unchanged members reaching 32 KiB back, or both streams' start)."""
        if index == 0:
            return False
        number = self.entry(index).index if self._members[index].origin is not None else -1
        if number <= 0 or not self._same(index, number):
            return False
        if not (self._sync_ended(number - 1) and self._sync_ended(number)):
            return False
        window = 1 << self.window_bits
        covered = 0
        back, back_number = index, number
        while covered < window:
            if back == 0 or back_number == 0:
                return back == 0 and back_number == 0 and self._targets[0] == 0 == self._entries[0].offset
            back, back_number = back - 1, back_number - 1
            if not self._same(back, back_number):
                return False
            covered += self._new_span(back)
        return True

    def copy(self, out: Output, run: list[Entry]) -> None:
        """Copy the chunks of `run` (consecutive source members) and empty it."""
        start = self.source.chunk_start(run[0])
        copy_stored(out, self.source, start, sum(entry.stored_size or 0 for entry in run), run[0].name)
        run.clear()

    def history(self, index: int, window: int) -> bytes:
        """The output before member `index` after copied chunks: the source's own there."""
        previous = self.entry(index - 1)
        end = previous.offset + self._source_span(previous.index)
        return self.source.plain_range(max(0, end - window), end)


def stored_stream(member: PendingMember) -> tuple[Reader, int, int, str] | None:
    """(source, offset, length, name) of a member's own zlib stream in a flags-1 source, which a
    flags-1 pack copies unchanged (flags-3 streams are shared: `write_solid_stream`)."""
    if member.origin is None:
        return None
    source, entry = member.origin
    if not isinstance(source, Reader) or source.flags != 1:
        return None
    source.check_ratio(entry)
    return source, entry.offset, entry.stored_size or 0, entry.name


def _solid_prefix(members: list[PendingMember], targets: list[int]) -> tuple[Reader, int] | None:
    """The flags-3 source and how many leading members can keep its compressed chunks: the
    source's own first members, in order, at the same offsets, each chunk followed by the same
    padding, from a stream whose chunk sizes are trusted."""
    first = members[0].origin
    if first is None or not isinstance(first[0], Reader) or first[0].flags != 3:
        return None
    source = first[0]
    if not source.solid_stream()[1] or targets[0] != 0:
        return None
    source_entries = source.infolist()
    count = 0
    while count < min(len(members), len(source_entries)):
        origin = members[count].origin
        if origin is None or origin[0] is not source or origin[1].index != count:
            break
        if targets[count] != source_entries[count].offset or members[count].size != source_entries[count].size:
            break
        count += 1
    # A chunk holds the padding after its member: it fits only where the next member sits where
    # it sat in the source (or both packs end there).
    while count:
        index = count - 1
        source_next = source_entries[index + 1].offset if index + 1 < len(source_entries) else None
        new_next = targets[index + 1] if index + 1 < len(members) else None
        if source_next == new_next:
            break
        count -= 1
    return (source, count) if count else None


def copy_stored(out: Output, source: Reader, offset: int, length: int, name: str) -> None:
    """Copy `length` stored bytes at `offset` of the source pack into the output."""
    if source._source.fd is not None:
        if offset + length > source.size:
            raise CorruptArchiveError(
                f"stored data ({length} bytes) runs past the end of the file ({source.size} bytes)",
                path=source.filename,
                offset=offset,
                member=name,
            )
        out.flush()
        copy_range(source._source.fd, source._source.base + offset, out.fd, out.tell(), length)
        out.seek(out.tell() + length)
        return
    copied = 0
    while copied < length:
        piece = source._source.read_exact(min(_COPY_STEP, length - copied), offset + copied, f"member {name!r}")
        out.write(piece)
        copied += len(piece)
