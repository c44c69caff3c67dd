"""The package's version, in a module of its own so that every layer can say it without
importing the package's front door."""

__version__ = "0.1.0"
