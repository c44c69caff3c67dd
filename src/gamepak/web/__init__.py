"""`gamepak serve`: look inside packs in a browser (read-only).

    >>> from gamepak.web import create_app, serve
    >>> app = create_app("/games/rfg")          # an ASGI application (Starlette)
    >>> serve("/games/rfg", port=8000)          # runs uvicorn until Ctrl-C or SIGTERM

Starlette, Jinja2 and uvicorn are imported by this package only, never by `import gamepak`.
"""

from __future__ import annotations

from .server import serve

__all__ = ["create_app", "serve"]


def __getattr__(name: str) -> object:
    if name == "create_app":
        from .app import create_app

        return create_app
    raise AttributeError(name)
