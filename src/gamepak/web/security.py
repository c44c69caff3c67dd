"""What the viewer's server sends with every response and which Host headers it answers: the
strict Content-Security-Policy and the other security headers, `Guard` (the outermost ASGI layer
adding them, errors included, and letting no exception past), and `allowed_hosts` (the names a
request may give, against DNS rebinding).
"""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from starlette.types import ASGIApp, Message, Receive, Scope, Send

# connect-src allows blob: because three.js fetches a glTF's embedded textures (a scene's) from
# blob URLs the page itself makes of the model it downloaded; nothing from elsewhere.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; "
    "media-src 'self'; connect-src 'self' blob:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]
SECURITY_HEADER_NAMES = {name for name, _ in SECURITY_HEADERS}
LOOPBACK_NAMES = ["127.0.0.1", "localhost", "::1", "[::1]"]


class Guard:
    """The outermost ASGI layer: `SECURITY_HEADERS` on every response, errors included (Starlette
    sends its 500 page from outside the middleware list), and no exception past it: the 500 page
    has been sent and its one line written (`Viewer.internal_error`), so the server has nothing
    to print; if even that page could not be made, a fixed one is sent."""

    def __init__(self, app: ASGIApp, session: Callable[[], contextlib.AbstractContextManager[None]]) -> None:
        self.app = app
        self.session = session

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        with self.session():  # the packs a request uses stay open until its last byte is sent
            await self._guarded(scope, receive, send)

    async def _guarded(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = [(k, v) for k, v in message.get("headers", []) if k not in SECURITY_HEADER_NAMES]
                message["headers"] = headers + SECURITY_HEADERS
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception as exc:  # the last line of defence: a page, never a traceback
            if started:
                return
            sys.stderr.write(f"gamepak serve: internal error: {type(exc).__name__}: {exc}\n")
            body = b"<!doctype html><title>error</title><h1>Internal error</h1><p>The page could not be made.</p>"
            headers = [(b"content-type", b"text/html; charset=utf-8"), (b"content-length", str(len(body)).encode())]
            await send({"type": "http.response.start", "status": 500, "headers": headers + SECURITY_HEADERS})
            await send({"type": "http.response.body", "body": body})


def allowed_hosts(host: str, extra: list[str] | None = None) -> list[str]:
    """The Host header values the server answers: its loopback names, the address it listens
    on and, for a wildcard address, the machine's name; plus `extra`."""
    import socket

    names = list(LOOPBACK_NAMES)
    if host not in ("0.0.0.0", "::", ""):
        names.append(host if ":" not in host else f"[{host}]")
    else:
        hostname = socket.gethostname()
        names += [hostname, socket.getfqdn()]
        with contextlib.suppress(OSError):  # a name the resolver does not know: the others remain
            names += socket.gethostbyname_ex(hostname)[2]
    return list(dict.fromkeys(names + (extra or [])))
