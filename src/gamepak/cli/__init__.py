"""The `gamepak` command. `main()` answers `--version`, and the plain forms of `ls`, `info`,
`extract` (see `cli/listing.py`), `add` and `update` (see `cli/editing.py`), before importing
anything heavy (click alone takes longer to import than Python takes to start)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 ok, 1 gamepak error, 2 usage error)."""
    arguments = sys.argv[1:] if argv is None else argv
    if arguments == ["--version"]:
        from .. import __version__

        sys.stdout.write(f"gamepak {__version__}\n")
        return 0
    if arguments and arguments[0] in ("ls", "info", "extract"):
        from .listing import run_quick

        code = run_quick(arguments)
        if code is not None:
            return code
    if arguments and arguments[0] in ("add", "update"):
        from .editing import run_quick as run_quick_edit

        code = run_quick_edit(arguments)
        if code is not None:
            return code
    from .app import run

    return run(arguments)


if __name__ == "__main__":
    sys.exit(main())
