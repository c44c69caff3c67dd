"""What the packfile's checks and layout probe read of an open packfile (`packfile.Reader`).

`check`, `conventions` and `rebuild` sit below `packfile` (which calls them for `verify` and
`layout()`), so they name the reader by this protocol, never by importing `packfile`.
"""

from __future__ import annotations

from typing import Protocol

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any, BinaryIO

    from ...core.archive import Archive, Entry, MemberData, Problem
    from ...core.source import Source
    from .inflate import Inflater, Segment


class PackfileView(Protocol):
    """An open packfile: its header fields, records, names and streams (`packfile.Reader`)."""

    # The header's fields, as stored.
    short_name_field: bytes
    path_name_field: bytes
    flags: int
    file_size_field: int
    entry_block_size: int
    name_block_size: int
    data_size_field: int
    compressed_size_field: int
    runtime: bytes
    # Where the blocks start in the file.
    entries_start: int
    names_start: int
    data_start: int
    filename: str
    _source: Source

    def __init__(self, file: Any, *, name: str | None = None) -> None: ...

    @property
    def size(self) -> int: ...
    @property
    def records(self) -> list[tuple[int, ...]]: ...
    @property
    def raw_names(self) -> list[bytes]: ...
    @property
    def _names(self) -> list[str]: ...
    @property
    def compressed(self) -> bool: ...
    @property
    def condensed(self) -> bool: ...

    def __enter__(self) -> Archive: ...
    def __exit__(self, *exc: object) -> None: ...
    def infolist(self) -> list[Entry]: ...
    def open(self, member: str | Entry) -> BinaryIO: ...
    def read(self, member: str | Entry) -> bytes: ...
    def check(self) -> list[Problem]: ...
    def solid_stream(self) -> tuple[list[Segment], bool]: ...
    def chunk_start(self, entry: Entry) -> int: ...
    def new_inflater(self, entry: Entry, checkpointed: bool = False) -> Inflater: ...
    def expected_sizes(self) -> dict[str, int]: ...
    def data_end(self) -> int: ...
    def _member_data(self, entries: list[Entry]) -> Iterator[tuple[Entry, MemberData]]: ...
    def _streamed_member_data(self, entries: list[Entry]) -> Iterator[tuple[Entry, MemberData]]: ...
