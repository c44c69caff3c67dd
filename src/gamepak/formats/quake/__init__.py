"""Quake's own asset formats, as found inside PAKs: WAD2/WAD3 archives (`wad`), palette images
(qpic LMPs, miptex, conchars, Quake II WAL: `images`), sprites (`spr`), alias models (`mdl`) and
BSP maps (`bsp`). The palette they share is in `palette`. The PAK container is `quake_pak`.
"""
