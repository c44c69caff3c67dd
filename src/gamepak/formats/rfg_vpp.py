"""Red Faction Guerrilla packfile v3 (`vpp`): placeholder until the format lands."""

from ..source import Source


def sniff(source: Source) -> float:
    return 0.0
