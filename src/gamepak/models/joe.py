"""VDrift JOE v3 models: placeholder until the format lands."""

from ..source import Source


def sniff(source: Source) -> float:
    return 0.0
