"""Running the viewer: a socket bound first (so the printed URL is the real one, port 0
included), then uvicorn until Ctrl-C or SIGTERM."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

# Seconds a client has to send a whole request head, and that a kept-alive connection may idle.
CLIENT_SECONDS = 10.0
# The largest request head accepted (the URL and headers): a browser's are a few kB.
REQUEST_HEAD_BYTES = 64 << 10


def is_loopback(host: str) -> bool:
    """Whether `host` is a loopback address or name (nobody else can connect to it)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port (port 0: a free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    if os.name != "nt":  # on Windows it would let another program take the port as well
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def _quiet_exit(server_class: type) -> type:
    """uvicorn's server, stopping on Ctrl-C and SIGTERM without raising the signal again once
    it has shut down (uvicorn does, so the process would die by the signal, not exit 0)."""

    class Server(server_class):  # type: ignore[misc, valid-type]
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            stop = [signal.SIGINT, signal.SIGTERM] + ([signal.SIGBREAK] if hasattr(signal, "SIGBREAK") else [])
            previous = {number: signal.signal(number, self.handle_exit) for number in stop}
            try:
                yield
            finally:
                for number, handler in previous.items():
                    signal.signal(number, handler)

    return Server


def _dropping_slow_clients(protocol_class: type, seconds: float) -> type:
    """uvicorn's h11 protocol, closing a connection whose request head has not arrived whole
    `seconds` after its first byte (or after the connection opened): uvicorn's own keep-alive
    timeout only runs between requests, so a client sending half a request would be kept."""

    class Protocol(protocol_class):  # type: ignore[misc, valid-type]
        _head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._head_timer is None and self._waiting_for_head():
                self._arm()

        def handle_events(self) -> None:
            super().handle_events()
            if self._head_timer is not None and not self._waiting_for_head():
                self._head_timer.cancel()
                self._head_timer = None

        def connection_lost(self, exc: Exception | None) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None
            super().connection_lost(exc)

        def _waiting_for_head(self) -> bool:
            import h11

            # IDLE: no request yet, or its head not complete (h11 buffers it); a request being
            # answered is the application's business.
            return bool(self.conn.their_state is h11.IDLE and (self.cycle is None or self.cycle.response_complete))

        def _arm(self) -> None:
            self._head_timer = self.loop.call_later(seconds, self._drop)

        def _drop(self) -> None:
            self._head_timer = None
            if self._waiting_for_head() and not self.transport.is_closing():
                self.transport.close()

    return Protocol


def serve(
    root: str | os.PathLike[str],
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    catalog: str | None = None,
    extra_hosts: list[str] | None = None,
    ready: Callable[[str], None] | None = None,
    client_seconds: float = CLIENT_SECONDS,
) -> None:
    """Serve ROOT read-only until Ctrl-C or SIGTERM; `ready(url)` is called once it listens.
    A client that sends no whole request head for `client_seconds` (a slow or idle one) is
    dropped, as is a kept-alive connection idle that long."""
    import uvicorn
    from uvicorn.protocols.http.h11_impl import H11Protocol

    from .app import create_app

    app = create_app(root, host=host, catalog=catalog, extra_hosts=extra_hosts)
    sock = bind(host, port)
    try:
        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            server_header=False,
            http=_dropping_slow_clients(H11Protocol, client_seconds),  # type: ignore[arg-type]
            timeout_keep_alive=max(1, round(client_seconds)),
            h11_max_incomplete_event_size=REQUEST_HEAD_BYTES,
        )
        server = _quiet_exit(uvicorn.Server)(config)
        if ready is not None:
            ready(url_of(sock))
        sys.stdout.flush()
        server.run(sockets=[sock])
    finally:
        sock.close()
        site = getattr(app, "site", None)
        if site is not None:
            site.close()
