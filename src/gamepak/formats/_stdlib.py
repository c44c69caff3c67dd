"""What the formats backed by the standard library (`zip`, `tar`) share."""

from __future__ import annotations

from ..core.source import SeekableStream

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..core.archive import Archive, Entry


class GuardedStream(SeekableStream):
    """A member stream from the standard library, with its errors turned into gamepak's and
    seeks passed on (it is opened on first read)."""

    def __init__(
        self, archive: Archive, entry: Entry, opener: Callable[[], Any], errors: tuple[type[BaseException], ...]
    ) -> None:
        super().__init__(entry.size, f"{archive.filename}/{entry.name}")
        self._archive = archive
        self._entry = entry
        self._opener = opener
        self._errors = errors
        self._inner: Any = None

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self._position >= self.size:
            return 0
        try:
            if self._inner is None:
                self._inner = self._opener()
            if self._inner.tell() != self._position:
                self._inner.seek(self._position)
            data = self._inner.read(min(len(buffer), self.size - self._position))
        except self._errors as exc:
            raise self._archive.corrupt(f"cannot read the member: {exc}", member=self._entry.name) from exc
        if not data:
            raise self._archive.corrupt(
                f"member ends after {self._position} of its {self.size} bytes", member=self._entry.name
            )
        buffer[: len(data)] = data
        self._position += len(data)
        return len(data)

    def readall(self) -> bytes:
        chunks = []
        while self._position < self.size:
            chunk = self.read(min(1 << 20, self.size - self._position))
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        if self._inner is not None:
            self._inner.close()
            self._inner = None
        super().close()
