"""`python -m gamepak.content`: print the README's table of content kinds (from the registry)."""

from . import readme_table

print(readme_table(), end="")
