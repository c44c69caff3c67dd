"""What the gamepak fuzz harnesses (`fuzz_*.py` beside this file) share: how an archive is read
through every path, and how a pack is rebuilt by a writer and compared.

Each harness is a script in the shape OSS-Fuzz runs Python fuzzers: `TestOneInput(data)` and a
`main()` that imports gamepak under `atheris.instrument_imports()` and calls `atheris.Fuzz()`.
gamepak's own errors (`GamepakError` and its subclasses) are the expected answer to bad input;
any other exception, or an `AssertionError` from a broken invariant, is a crash.

gamepak is imported inside the functions, never at the top of a module: a module imported
before `main()` enters `instrument_imports()` would run without coverage feedback. atheris
itself is imported only in `main()`, so the harnesses also run under plain pytest
(tests/test_fuzz_harnesses.py) over their seeds.
"""

from __future__ import annotations

import atexit
import io
import json
import os
import shutil
import struct
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gamepak.core.archive import Archive

# Formats without a signature: every layout reader is tried on the same input.
J2ME_LAYOUTS = ("j2me-table", "j2me-offsets", "j2me-end-offsets", "j2me-sized", "j2me-ids")
GZIP_MAGIC = b"\x1f\x8b"
# A peg's CPU file states its own size: a uint32 at offset 8 of its header.
PEG_CPU_SIZE = struct.Struct("<8xI")
# The framing of a folder of files (`frame`): each file's size.
FRAMED_SIZE = struct.Struct("<I")
MAX_FRAMED_FILES = 64


def import_all(*names: str) -> None:
    """Import modules and, for packages, every submodule: called inside
    `atheris.instrument_imports()`, so that what gamepak imports lazily later (a codec, a
    format's helper module) is instrumented too."""
    import importlib
    import pkgutil

    for name in names:
        module = importlib.import_module(name)
        for info in pkgutil.walk_packages(getattr(module, "__path__", []), f"{name}."):
            importlib.import_module(info.name)


def fuzz(test_one_input: Callable[[bytes], None], *modules: str) -> None:
    """A harness's `main()`: instrument gamepak (`modules` imported whole, lazily loaded parts
    included), then hand `test_one_input` to atheris with the command line's options."""
    import atheris

    with atheris.instrument_imports(include=["gamepak"]):
        import_all(*modules)
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


@contextmanager
def quiet() -> Iterator[None]:
    """Ignore the warnings readers give about data they accept (NaN coordinates, ...)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@contextmanager
def expected_errors() -> Iterator[None]:
    """Swallow gamepak's own errors (bad input is allowed to be refused) and the warnings
    readers give about data they accept; anything else propagates and is a crash."""
    from gamepak.errors import GamepakError

    with quiet(), suppress(GamepakError):
        yield


def open_archive(data: bytes, format_name: str) -> Archive:
    """`data` opened as `format_name` (never detected: each harness aims at one reader)."""
    import gamepak

    return gamepak.open(io.BytesIO(data), format_name, name=f"fuzz.{format_name}")


def read_members(archive: Archive) -> list[tuple[str, bytes]]:
    """Every member's name and bytes, read two ways that must agree: the archive-order pass
    (`iter_data`, which decodes shared streams once) and random access (`read`, and a stream
    seeked into the middle of the member). A member's bytes must be as long as its entry says."""
    members = []
    entries = archive.infolist()
    assert list(archive.namelist()) == [entry.name for entry in entries], "namelist and infolist disagree"
    for entry, chunks in archive.iter_data():
        data = b"".join(chunks)
        assert len(data) == entry.size, f"{entry.name!r}: iter_data gave {len(data)} bytes, the entry says {entry.size}"
        members.append((entry.name, data))
    for entry, (_, data) in zip(entries, members, strict=True):
        assert archive.read(entry) == data, f"{entry.name!r}: read() and iter_data() disagree"
        middle = entry.size // 2
        with archive.open(entry) as stream:
            stream.seek(middle)
            seeked = stream.read(64)
        assert seeked == data[middle : middle + 64], f"{entry.name!r}: a seek into the member reads other bytes"
    return members


def exercise_archive(data: bytes, format_name: str) -> list[tuple[str, bytes]] | None:
    """Open `data` as `format_name` and use everything a reader offers: names, every member by
    each read path, the check, the header fields and the byte-exact layout. Returns the members,
    or None when the reader refused the data with a gamepak error."""
    with expected_errors():
        with open_archive(data, format_name) as archive:
            members = read_members(archive)
            archive.check()
            archive.header_fields()
            archive.layout()
            return members
    return None


_SCRATCH: str | None = None


def scratch_folder() -> str:
    """One folder per process for the rebuilt packs: GAMEPAK_FUZZ_SCRATCH (run.py makes one per
    run and removes it, since a crashing harness exits without clean-up), else a new one, on
    tmpfs when there is one."""
    global _SCRATCH
    if _SCRATCH is None:
        _SCRATCH = os.environ.get("GAMEPAK_FUZZ_SCRATCH")
    if _SCRATCH is None:
        base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
        _SCRATCH = tempfile.mkdtemp(prefix="gamepak-fuzz-", dir=base)
        atexit.register(shutil.rmtree, _SCRATCH, True)
    return _SCRATCH


def _write_pack(
    path: str, format_name: str, members: list[tuple[str, bytes]], options: dict[str, Any]
) -> set[str] | None:
    """Write `members` with the format's writer. Returns the members the writer changed on
    purpose (an RFG pack's `.asm_pc` tables, brought up to date with the `.str2_pc` members
    written beside them), or None when it refused the members (a name or a size the format
    cannot hold): refusing is allowed, writing something else is not."""
    import gamepak
    from gamepak.errors import GamepakError

    names = [name for name, _ in members]
    try:
        with (
            quiet(),
            gamepak.create(
                path, format_name, overwrite=True, allow_duplicates=len(set(names)) != len(names), **options
            ) as writer,
        ):
            for name, data in members:
                writer.add(name, data)
    except GamepakError:
        return None
    return updated_on_purpose(writer)


def updated_on_purpose(writer: Any) -> set[str]:
    """The members a writer changed on purpose: an RFG writer's `.asm_pc` tables brought up to
    date with the `.str2_pc` members written beside them."""
    return {change.split(":", 1)[0] for change in getattr(writer, "asm_updates", [])}


def assert_same_members(
    before: list[tuple[str, bytes]], after: list[tuple[str, bytes]], updated: set[str], how: str
) -> None:
    """The same names in the same order, each with the same bytes unless `updated` names it."""
    assert [name for name, _ in after] == [name for name, _ in before], f"{how}: other names"
    for (name, data), (_, data_after) in zip(before, after, strict=True):
        assert data_after == data or name in updated, f"{how}: {name!r} reads back other bytes"


def pack_suffix(data: bytes, format_name: str) -> str:
    """The extension a rebuilt copy of `data` needs: the tar writer compresses by the name."""
    return ".tar.gz" if format_name == "tar" and data.startswith(GZIP_MAGIC) else f".{format_name}"


def _read_for_rebuild(data: bytes, format_name: str) -> tuple[list[tuple[str, bytes]], dict[str, Any], Any] | None:
    """The members, layout options and byte-exact layout of `data` read as `format_name`, or
    None when the reader refused it."""
    with expected_errors():
        with open_archive(data, format_name) as archive:
            # Through JSON, as a manifest carries the layout.
            return read_members(archive), archive.layout_options(), json.loads(json.dumps(archive.layout()))
    return None


def rebuild_archive(data: bytes, format_name: str) -> None:
    """If `data` reads as `format_name`, write its members again with the format's writer twice
    (with the pack's own layout options, as an edit does; and with its byte-exact layout, as a
    manifest rebuild does) and read each result: it must hold the same members, in the same
    order, with the same bytes (an RFG pack's `.asm_pc` tables may be brought up to date)."""
    import gamepak

    read = _read_for_rebuild(data, format_name)
    if read is None:
        return
    members, options, layout = read
    path = os.path.join(scratch_folder(), f"rebuilt{pack_suffix(data, format_name)}")
    attempts = {
        "layout options": options,
        "byte-exact layout": {**layout.get("options", {}), "layout": layout.get("exact", {})},
    }
    for how, writer_options in attempts.items():
        updated = _write_pack(path, format_name, members, writer_options)
        if updated is None:
            continue
        with gamepak.open(path, format_name) as again:
            assert_same_members(members, read_members(again), updated, f"rebuilt with the {how}")


def split_peg_pair(data: bytes) -> tuple[bytes, bytes]:
    """A peg fuzz input as (CPU bytes, GPU bytes): the CPU file, as long as its header says,
    then the GPU file. The mutator moves the boundary by changing that field."""
    if len(data) < PEG_CPU_SIZE.size:
        return data, b""
    (cpu_size,) = PEG_CPU_SIZE.unpack_from(data)
    return data[:cpu_size], data[cpu_size:]


def glb_document(glb: bytes) -> dict[str, Any]:
    """The JSON of a `.glb`, read strictly (NaN and Infinity are not JSON: a viewer refuses
    them); its binary chunk must be as long as the buffer says."""
    json_length, kind = struct.unpack_from("<I4s", glb, 12)
    assert glb[:4] == b"glTF" and kind == b"JSON", "not a glb"
    assert struct.unpack_from("<I", glb, 8)[0] == len(glb), "the glb header states another length"

    def refuse(name: str) -> None:
        raise AssertionError(f"the glTF holds {name}, which is not JSON")

    document: dict[str, Any] = json.loads(glb[20 : 20 + json_length], parse_constant=refuse)
    buffers = document.get("buffers", [])
    if buffers:
        (blob_length,) = struct.unpack_from("<I", glb, 20 + json_length)
        assert blob_length >= buffers[0]["byteLength"], "the binary chunk is shorter than the buffer"
    for view in document.get("bufferViews", []):
        assert view["byteOffset"] + view["byteLength"] <= buffers[0]["byteLength"], "a buffer view ends past the buffer"
    return document


def frame(files: dict[str, bytes]) -> bytes:
    """A folder's files as one fuzz input (for the seeds), in a framing that keeps each file's
    bytes where mutations reach them (a zip's CRC would refuse most):

        repeated: u8 name length, name (UTF-8, a relative path), u32 LE size, the file's bytes
    """
    out = bytearray()
    for name, data in files.items():
        encoded = name.encode()
        out += bytes([len(encoded)]) + encoded + FRAMED_SIZE.pack(len(data)) + data
    return bytes(out)


def unframe(data: bytes) -> dict[str, bytes] | None:
    """The files `frame` made (a size past the end takes what is left); None when a name is
    not a plain relative path: harnesses write the files, and a name climbing out of the
    scratch folder would be the harness's bug, not the reader's."""
    files: dict[str, bytes] = {}
    at = 0
    while at < len(data) and len(files) < MAX_FRAMED_FILES:
        length = data[at]
        name_bytes = data[at + 1 : at + 1 + length]
        at += 1 + length
        if at + FRAMED_SIZE.size > len(data):
            break
        (size,) = FRAMED_SIZE.unpack_from(data, at)
        at += FRAMED_SIZE.size
        try:
            name = name_bytes.decode()
        except UnicodeDecodeError:
            return None
        parts = name.replace("\\", "/").split("/")
        if not name or any(part in ("", ".", "..") or "\0" in part for part in parts):
            return None
        files["/".join(parts)] = data[at : at + size]
        at += size
    return files


def write_files(folder: str, files: dict[str, bytes]) -> bool:
    """Write `unframe`'s files under the new folder `folder`; False when the file system
    refuses one (a name that is a file and a folder, too long ...)."""
    os.makedirs(folder)
    for name, data in files.items():
        path = os.path.join(folder, *name.split("/"))
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "xb") as handle:
                handle.write(data)
        except OSError:
            return False
    return True


def run_on_seeds(test_one_input: Callable[[bytes], None], folder: str) -> int:
    """Call a harness on every file in `folder`; returns how many there were (for the tests)."""
    count = 0
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.is_file():
            with open(entry.path, "rb") as handle:
                test_one_input(handle.read())
            count += 1
    return count


def pack_bytes(format_name: str, options: dict[str, Any], members: list[tuple[str, bytes]]) -> bytes:
    """A pack of `format_name` written with `options`, holding `members` (a seed's bytes)."""
    import gamepak

    extension = {"tar.gz": ".tar.gz"}.get(format_name, f".{format_name}")
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, f"seed{extension}")
        with gamepak.create(path, format_name.removesuffix(".gz"), **options) as writer:
            for name, data in members:
                writer.add(name, data)
        with open(path, "rb") as handle:
            return handle.read()
