"""Running the viewer: a socket bound first (so the printed URL is the real one, port 0
included), then uvicorn until Ctrl-C or SIGTERM."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator


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


def serve(
    root: str | os.PathLike[str],
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    catalog: str | None = None,
    extra_hosts: list[str] | None = None,
    ready: Callable[[str], None] | None = None,
) -> None:
    """Serve ROOT read-only until Ctrl-C or SIGTERM; `ready(url)` is called once it listens."""
    import uvicorn

    from .app import create_app

    app = create_app(root, host=host, catalog=catalog, extra_hosts=extra_hosts)
    sock = bind(host, port)
    try:
        config = uvicorn.Config(app, log_level="warning", access_log=False, server_header=False)
        server = _quiet_exit(uvicorn.Server)(config)
        if ready is not None:
            ready(url_of(sock))
        sys.stdout.flush()
        server.run(sockets=[sock])
    finally:
        sock.close()
