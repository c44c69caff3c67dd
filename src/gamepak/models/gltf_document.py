"""A glTF document as gltf_read.py reads it: the GLB container and its JSON (plain dicts), the
buffers (a GLB's BIN chunk as a view, data URIs, files beside a `.gltf` that must stay in its
folder), and each accessor's values, checked against its buffer view and buffer before anything
is allocated."""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import UnsupportedFeatureError
from .mesh import ModelError

TRIANGLES, TRIANGLE_STRIP, TRIANGLE_FAN = 4, 5, 6
COMPONENT_DTYPES = {5120: "i1", 5121: "u1", 5122: "<i2", 5123: "<u2", 5125: "<u4", 5126: "<f4"}
COMPONENT_COUNTS = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
GLB_MAGIC = b"glTF"
# An accessor without a buffer view is zeros: at most as many bytes as the model's buffers hold
# (or this, for a tiny model).
MIN_ZEROS_BYTES = 1 << 16

if TYPE_CHECKING:
    import numpy as np


@dataclass
class Document:
    """A glTF document: its JSON (plain dicts: pygltflib's dataclasses took most of a scene
    import's time to build for a 2,000-node track) and the GLB's BIN chunk, if any."""

    json: dict[str, Any]
    blob: bytes | memoryview | None
    checked: dict[str, list[Any]] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        return self.json.get(name)

    def items(self, name: str, label: str) -> list[Any]:
        """The top-level array `name` (empty when absent); a ModelError when it is not an array
        of objects. Checked once."""
        found = self.checked.get(name)
        if found is not None:
            return found
        values = self.json.get(name)
        if values is None:
            values = []
        if not isinstance(values, list) or not all(isinstance(value, dict) for value in values):
            raise ModelError(f"{label}: {name} is not a list of objects")
        self.checked[name] = values
        return values


def load_document(data: bytes, label: str, max_nodes: int | None = None) -> Document:
    """The GLB container or `.gltf` text `data` as a Document; with `max_nodes`, a ModelError as
    soon as the nodes array holds more (see `_parse_counting_nodes`)."""
    import struct

    blob = None
    if data[:4] == GLB_MAGIC:
        if len(data) < 20:
            raise ModelError(f"{label}: not a readable glTF file: a GLB header cut short")
        _, _, total = struct.unpack_from("<4sII", data, 0)
        end = min(total, len(data))
        json_length, kind = struct.unpack_from("<I4s", data, 12)
        if kind != b"JSON" or 20 + json_length > end:
            raise ModelError(f"{label}: not a readable glTF file: offset 12: no JSON chunk of {json_length} bytes")
        text = data[20 : 20 + json_length]
        position = 20 + json_length + (-json_length % 4)
        if position + 8 <= end:
            blob_length, kind = struct.unpack_from("<I4s", data, position)
            if kind == b"BIN\0":
                if position + 8 + blob_length > end:
                    raise ModelError(f"{label}: not a readable glTF file: offset {position}: BIN chunk cut short")
                # A view, not a copy: a track's scene holds tens of megabytes of images.
                blob = memoryview(data)[position + 8 : position + 8 + blob_length]
    else:
        text = data
    try:
        document = _parse_json(text) if max_nodes is None else _parse_counting_nodes(text, label, max_nodes)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        import json

        if isinstance(exc, RecursionError):
            reason = "nested too deeply"
        elif isinstance(exc, UnicodeDecodeError):
            reason = f"not UTF-8 text (byte {exc.start})"
        elif isinstance(exc, json.JSONDecodeError):  # said in words, not by its class's name
            reason = f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        else:
            reason = str(exc)
        raise ModelError(f"{label}: not a readable glTF file: {reason}") from None
    if not isinstance(document, dict):
        raise ModelError(f"{label}: not a readable glTF file: not a JSON object")
    return Document(document, blob)


def _parse_json(text: bytes) -> Any:
    """JSON text (UTF-8, a BOM allowed): by orjson where installed (several times the standard
    library's speed on a track's megabytes of JSON; it refuses nesting past 1,024 levels), else
    the standard library (RecursionError past its own depth)."""
    import json

    if text.startswith(b"\xef\xbb\xbf"):
        text = text[3:]
    try:
        import orjson
    except ImportError:
        return json.loads(text.decode("utf-8"))
    return orjson.loads(text)


class _TooManyNodes(Exception):
    """Raised inside the JSON walk (not a ValueError: the walk's own errors are those)."""


def _parse_counting_nodes(text: bytes, label: str, max_nodes: int) -> Any:
    """JSON text read by the standard library's scanner a top-level value at a time, and the
    top-level `nodes` array a node at a time: a ModelError as soon as it holds more than
    `max_nodes`. A 14 MB glTF of 300,000 tiny nodes is thus refused having built at most
    `max_nodes` of them, where orjson builds its whole tree first (~13 bytes per input byte),
    then every dict. The result is what `json.loads` gives (duplicate keys: the last wins)."""
    import json
    import re

    from ..core.content_limits import ALLOW_LARGE_ADVICE

    if text.startswith(b"\xef\xbb\xbf"):
        text = text[3:]
    string = text.decode("utf-8")
    scan = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # the C scanner, one value at a time
    spaces = re.compile(r"[ \t\n\r]*")

    def skip(position: int) -> int:
        """The position after the whitespace at `position` (the pattern always matches)."""
        return spaces.match(string, position).end()  # type: ignore[union-attr]

    def value_at(position: int) -> tuple[Any, int]:
        try:
            return scan(string, position)  # type: ignore[no-any-return]
        except StopIteration as stop:
            raise json.JSONDecodeError("Expecting value", string, stop.value) from None

    def after(position: int, closing: str, what: str) -> tuple[bool, int]:
        """(whether `closing` ends the container here, the position after the `,` or it)."""
        position = skip(position)
        found = string[position : position + 1]
        if found not in (",", closing):
            raise json.JSONDecodeError(f"Expecting ',' delimiter in {what}", string, position)
        return found == closing, position + 1

    def nodes_at(position: int) -> tuple[list[Any], int]:
        nodes: list[Any] = []
        position = skip(position)
        if string[position : position + 1] == "]":
            return nodes, position + 1
        while True:
            node, position = value_at(skip(position))
            nodes.append(node)
            if len(nodes) > max_nodes:
                raise _TooManyNodes(position)
            closed, position = after(position, "]", "the nodes array")
            if closed:
                return nodes, position

    position = skip(0)
    if string[position : position + 1] != "{":
        return json.loads(string)  # not an object: the caller says so (or json what is wrong)
    document: dict[str, Any] = {}
    position = skip(position + 1)
    closed = string[position : position + 1] == "}"
    position += closed
    try:
        while not closed:
            position = skip(position)
            if string[position : position + 1] != '"':
                raise json.JSONDecodeError("Expecting property name enclosed in double quotes", string, position)
            key, position = value_at(position)
            position = skip(position)
            if string[position : position + 1] != ":":
                raise json.JSONDecodeError("Expecting ':' delimiter", string, position)
            position = skip(position + 1)
            if key == "nodes" and string[position : position + 1] == "[":
                document[key], position = nodes_at(position + 1)
            else:
                document[key], position = value_at(position)
            closed, position = after(position, "}", "the document object")
    except _TooManyNodes as stop:
        raise ModelError(
            f"{label}: more than {max_nodes:,} nodes (at character {stop.args[0]:,} of its JSON): "
            f"more than a scene import reads ({ALLOW_LARGE_ADVICE})"
        ) from None
    if skip(position) != len(string):
        raise json.JSONDecodeError("Extra data", string, skip(position))
    return document


def is_index(value: Any, count: int) -> bool:
    """Whether `value` is an index into a list of `count` (an int; JSON's true is not one)."""
    return type(value) is int and 0 <= value < count


def _whole(value: Any, default: int = 0) -> int | None:
    """A non-negative integer field (None when it is something else)."""
    if value is None:
        return default
    return value if type(value) is int and value >= 0 else None


def buffers_of(gltf: Document, label: str, folder: str | None) -> list[bytes | memoryview]:
    result = []
    for number, buffer in enumerate(gltf.items("buffers", label)):
        uri = buffer.get("uri")
        if uri is None:
            if gltf.blob is None:
                raise ModelError(f"{label}: buffer {number} has no data")
            result.append(gltf.blob)
        elif not isinstance(uri, str):
            raise ModelError(f"{label}: buffer {number}: its uri is not text")
        elif uri.startswith("data:"):
            _, _, payload = uri.partition(",")
            try:
                result.append(base64.b64decode(payload, validate=False))
            except ValueError as exc:
                raise ModelError(f"{label}: buffer {number}: bad data URI: {exc}") from None
        else:
            if folder is None:
                raise ModelError(f"{label}: buffer {number} is an external file ({uri}); read the model from a path")
            result.append(_external_buffer(folder, uri, f"{label}: buffer {number} ({uri})"))
    return result


def _external_buffer(folder: str, uri: str, where: str) -> bytes:
    """The file a buffer's relative URI names, which must lie in the glTF's folder or below,
    links followed: a model from a stranger must not read (and carry into a pack) other files."""
    from urllib.parse import unquote

    relative = unquote(uri)
    if "\0" in relative:
        raise ModelError(f"{where}: not a file name (it holds a NUL): refused")
    if ":" in relative.split("/", 1)[0] or relative.startswith(("/", "\\")) or os.path.isabs(relative):
        raise ModelError(f"{where}: not a file beside the glTF (a URI scheme or an absolute path): refused")
    base = os.path.realpath(folder)
    target = os.path.realpath(os.path.join(base, relative))
    if os.path.commonpath([base, target]) != base:
        raise ModelError(f"{where}: leads outside the glTF's folder: refused")
    from ..core.files import read_file

    # One capped read that refuses a FIFO, device or folder without blocking on it.
    return read_file(target, error=ModelError, label=where)


@dataclass
class Span:
    """Where an accessor's values lie: `data[start:]`, `count` rows of `width` values of `dtype`
    every `stride` bytes (`data` None: zeros, no buffer view)."""

    data: bytes | None
    dtype: Any
    width: int
    count: int
    start: int = 0
    stride: int = 0
    normalized: bool = False

    @property
    def packed_bytes(self) -> bytes | None:
        """The values as stored, when they lie one after another (else None)."""
        if self.data is None or self.stride != self.dtype.itemsize * self.width:
            return None
        return self.data[self.start : self.start + self.stride * self.count]


def accessor_values(gltf: Document, buffers: list[bytes | memoryview], index: Any, label: str) -> np.ndarray:
    """The values of accessor `index` as a (count, components) array, checked against its
    buffer view before anything is allocated."""
    import numpy as np

    span = accessor_span(gltf, buffers, index, label)
    dtype, width, count, start, stride, data = span.dtype, span.width, span.count, span.start, span.stride, span.data
    if data is None:
        return np.zeros((count, width), dtype)
    element = dtype.itemsize * width
    end = start + (stride * (count - 1) + element if count else 0)
    if start % dtype.itemsize or stride % dtype.itemsize:
        # Unaligned data: copy into place byte-wise.
        raw = np.frombuffer(data, np.uint8, end - start, start) if count else np.zeros(0, np.uint8)
        rows = np.lib.stride_tricks.as_strided(raw, (count, element), (stride, 1)) if count else raw.reshape(0, element)
        values = np.ascontiguousarray(rows).view(dtype).reshape(count, width)
    elif stride == element:
        values = np.frombuffer(data, dtype, count * width, start).reshape(count, width).copy()
    else:
        values = np.ndarray((count, width), dtype, buffer=data, offset=start, strides=(stride, dtype.itemsize)).copy()
    if span.normalized and dtype.kind in "iu":
        limit = float(np.iinfo(dtype).max)
        return np.maximum(values.astype(np.float64) / limit, -1.0)
    return values


def accessor_span(gltf: Document, buffers: list[bytes | memoryview], index: Any, label: str) -> Span:
    """Where accessor `index`'s values lie, every field checked against its buffer view and
    buffer (nothing allocated)."""
    import numpy as np

    accessors = gltf.items("accessors", label)
    if not is_index(index, len(accessors)):
        raise ModelError(f"{label}: accessor {index!r} does not exist")
    accessor = accessors[index]
    if accessor.get("sparse") is not None:
        raise UnsupportedFeatureError(f"{label}: accessor {index} is sparse (not supported)")
    component, kind = accessor.get("componentType"), accessor.get("type")
    if not isinstance(kind, str) or type(component) is not int:
        raise ModelError(f"{label}: accessor {index} has an unknown type {component!r}/{kind!r}")
    if component not in COMPONENT_DTYPES or kind not in COMPONENT_COUNTS:
        raise ModelError(f"{label}: accessor {index} has an unknown type {component}/{kind}")
    dtype = np.dtype(COMPONENT_DTYPES[component])
    width = COMPONENT_COUNTS[kind]
    count = accessor.get("count")
    if type(count) is not int or count < 0:
        raise ModelError(f"{label}: accessor {index} has a bad count {count!r}")
    if accessor.get("bufferView") is None:
        # Zeros with no bytes behind them: a count from the file alone would allocate anything.
        if count * width * dtype.itemsize > max(sum(map(len, buffers)), MIN_ZEROS_BYTES):
            raise ModelError(f"{label}: accessor {index} holds {count} values of zeros, more than the model's data")
        return Span(None, dtype, width, count)
    views = gltf.items("bufferViews", label)
    if not is_index(accessor.get("bufferView"), len(views)):
        raise ModelError(f"{label}: accessor {index} names a missing buffer view")
    view = views[accessor.get("bufferView")]
    if not is_index(view.get("buffer"), len(buffers)):
        raise ModelError(f"{label}: buffer view {accessor.get('bufferView')} names a missing buffer")
    data = buffers[view.get("buffer")]
    element = dtype.itemsize * width
    stride, view_start = _whole(view.get("byteStride")), _whole(view.get("byteOffset"))
    offset, view_length = _whole(accessor.get("byteOffset")), _whole(view.get("byteLength"))
    if stride is None or view_start is None or offset is None or view_length is None:
        raise ModelError(
            f"{label}: accessor {index} or its buffer view has an offset, length or stride that is not a count"
        )
    stride = stride or element
    start = view_start + offset
    end = start + (stride * (count - 1) + element if count else 0)
    if stride < element or end > view_start + view_length or end > len(data):
        raise ModelError(f"{label}: accessor {index} runs past its buffer view or buffer")
    return Span(data, dtype, width, count, start, stride, accessor.get("normalized") is True)
