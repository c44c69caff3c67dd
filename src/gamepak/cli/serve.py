"""`gamepak serve`: browse a folder of packs, or one pack, in a web page."""

from __future__ import annotations

import argparse

from .common import add_command, note, write_text

SERVE_HELP = """Serve ROOT (a folder, such as a game's install, or one pack) as web pages, read-only.

Every folder, pack, nested pack and member has a page at /browse/<path>: listings (sortable,
filterable, paged), a pack's format, header fields and check, and previews: images and RFG
textures, JOE models in a 3D view, text and J2ME strings, audio, hex for the rest. /raw/<path>
downloads a member; /search?q=GLOB finds names (with --catalog, from a `gamepak catalog`).

The server listens on 127.0.0.1 (this machine only) unless --host says otherwise, answers only
requests addressed to its own name (DNS rebinding), GET and HEAD only, and never serves
anything outside ROOT. Stop it with Ctrl-C (exit 0).

examples:
  gamepak serve "C:/Games/Red Faction Guerrilla/data"
  gamepak serve pak0.pak --port 0 --open
  gamepak serve /games --catalog games.catalog"""


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    serve = add_command(commands, "serve", run_serve, "Browse packs, textures and models in a web page.", SERVE_HELP)
    serve.add_argument("root", metavar="ROOT", help="a folder of packs, or one pack")
    serve.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)"
    )
    serve.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000; 0: any free port)")
    serve.add_argument("--open", dest="open_browser", action="store_true", help="open the page in the web browser")
    serve.add_argument(
        "--catalog", metavar="DIR", help="a catalog of ROOT made by `gamepak catalog`, for searching every member"
    )
    serve.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="another name this server may be reached by (a Host header to accept; repeatable)",
    )


def run_serve(args: argparse.Namespace) -> None:
    import os

    from ..errors import GamepakError, UsageError

    if not os.path.exists(args.root):
        raise GamepakError(f"{args.root}: no such file or folder")
    if args.catalog is not None and not os.path.isdir(args.catalog):
        raise UsageError(f"--catalog {args.catalog}: not a folder made by `gamepak catalog`")
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port}: must be 0 to 65535")
    from ..web.server import is_loopback, serve

    if not is_loopback(args.host):
        note(
            f"warning: listening on {args.host}: anyone who can reach this machine can read {args.root}; "
            "the server answers only requests addressed to this machine's own names"
        )

    def ready(url: str) -> None:
        write_text(f"Serving {args.root} at {url}browse/ (Ctrl-C to stop)\n")
        if args.open_browser:
            import webbrowser

            webbrowser.open(url + "browse/")

    try:
        serve(args.root, host=args.host, port=args.port, catalog=args.catalog, extra_hosts=args.allow_host, ready=ready)
    except OSError as exc:
        raise GamepakError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
