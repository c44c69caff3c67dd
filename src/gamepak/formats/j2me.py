"""Gameloft J2ME asset packs: placeholder until the formats land."""

from ..source import Source


def sniff_table(source: Source) -> float:
    return 0.0


sniff_offsets = sniff_end_offsets = sniff_sized = sniff_table
