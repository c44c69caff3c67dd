"""`python -m gamepak` runs the CLI."""

from .cli import run

run()
