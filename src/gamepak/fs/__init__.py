"""Packs as filesystems: the `gamepak://` fsspec protocol (`gamepak.fs.fsspec`) and the read-only
FUSE mount behind `gamepak mount` (`gamepak.fs.fuse`), both over one path mapping
(`gamepak.fs.tree`). Nothing here knows a format: members are read through `Archive`.
"""
