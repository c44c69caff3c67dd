"""The `gamepak` command. `main()` answers `--version` before importing anything heavy."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 ok, 1 gamepak error, 2 usage error)."""
    arguments = sys.argv[1:] if argv is None else argv
    if arguments == ["--version"]:
        from .. import __version__

        sys.stdout.write(f"gamepak {__version__}\n")
        return 0
    from .app import run

    return run(arguments)


if __name__ == "__main__":
    sys.exit(main())
