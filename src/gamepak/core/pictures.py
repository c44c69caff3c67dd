"""Image files given to an import (a PNG replacing a texture, a skin, a sprite frame): sized from
their header before a pixel is decoded, refused when larger than the import takes, and Pillow's
decompression-bomb errors turned into one line naming the file.

Pillow's `Image.open` is lazy: it reads the header (the size) and decodes nothing until
`load()`. An 8192x8192 PNG of 0.2 MB takes 256 MiB once decoded as RGBA (and several times that
on its way into a palette or a block format), so the size is checked first:

- never more than MAX_SIDE on a side or MAX_PIXELS in all (below Pillow's own bomb limits, so
  its warning is never the first word);
- without `resize`, at most AREA_FACTOR times the area of what the image replaces.

What `resize` then does is the import's to say (a peg takes the larger size; a Quake image is
scaled to the size of the image it replaces).
"""

from __future__ import annotations

from ..errors import GamepakError, cannot_read

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    import numpy as np

MAX_SIDE = 16384
MAX_PIXELS = 8192 * 8192
AREA_FACTOR = 4


def check_size(width: int, height: int, what: str, *, area_limit: int | None, allowed: str, resize: bool) -> None:
    """Refuse an image size before it is decoded: larger than MAX_SIDE on a side or MAX_PIXELS
    in all, or (without `resize`) more than `area_limit` pixels, `allowed` saying what that
    limit is ("4x the area of wall.tga (64x64)")."""
    if width > MAX_SIDE or height > MAX_SIDE or width * height > MAX_PIXELS:
        raise GamepakError(
            f"{what}: {width}x{height} is larger than gamepak takes for a texture "
            f"(at most {MAX_SIDE} on a side and {MAX_PIXELS // 1_000_000} million pixels)"
        )
    if not resize and area_limit is not None and width * height > area_limit:
        raise GamepakError(f"{what}: {width}x{height} is more than {allowed}; --resize allows a larger image")


def read_rgba(
    path: str,
    check: Callable[[int, int], object],
    *,
    fit: Callable[[int, int], tuple[int, int] | None] | None = None,
    readonly: bool = False,
) -> np.ndarray:
    """The image file at `path` as an (h, w, 4) uint8 RGBA array. `check(width, height)` is
    called with the size from the header, before anything is decoded (it raises to refuse);
    `fit(width, height)` may name a size to scale the image to once decoded; `readonly`: the
    caller never writes to the array (an RGB picture then skips a copy). Any file Pillow
    cannot read, and any size Pillow itself calls a decompression bomb, is a GamepakError
    naming the file."""
    import warnings

    import numpy as np
    from PIL import Image

    try:
        with warnings.catch_warnings():
            # Pillow warns (and past twice its limit, raises) on opening a huge image: both
            # are one line naming the file, never a traceback or a warning before our refusal.
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as image:
                check(*image.size)
                size = fit(*image.size) if fit is not None else None
                if image.mode == "RGBA" and size is None:  # not copied once more by convert
                    image.load()
                    return np.asarray(image)
                if image.mode == "RGB" and size is None:
                    # Pillow keeps RGB pixels as four bytes, the fourth 255: packed out as they
                    # are, that is RGBA without a conversion pass.
                    image.load()
                    data = image.tobytes("raw", "RGBX")
                    width, height = image.size
                    return np.frombuffer(data if readonly else bytearray(data), dtype=np.uint8).reshape(
                        height, width, 4
                    )
                with image.convert("RGBA") as converted:
                    if size is not None and size != converted.size:
                        with converted.resize(size, Image.Resampling.LANCZOS) as scaled:
                            return np.asarray(scaled)
                    return np.asarray(converted)
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise GamepakError(f"{path}: refused: Pillow calls it a decompression bomb ({exc})") from None
    except (OSError, ValueError, SyntaxError, EOFError, NotImplementedError) as exc:
        if isinstance(exc, OSError) and exc.errno is not None:  # the file's, not Pillow's, e.g. ENOENT
            raise cannot_read(path, exc) from None
        raise GamepakError(f"{path}: not an image Pillow reads ({exc})") from None
