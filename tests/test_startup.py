"""Start-up (issue 48, item 3): the CLI's import of the package, `gamepak --help`, every command's
and sub-command's `--help`, and the cheap commands on a tiny pack load no heavy module before a
command needs it. Each case runs in a fresh interpreter, as the console script does
(`from gamepak.cli import run`), and reports what `sys.modules` holds at the end.

The timing itself is benchmarks/bench_startup.py's (every verb within 1.25x of
`python -c "import re"`); this test holds the cause of most of that time, imports, in place.
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import gamepak
from gamepak.cli import COMMANDS, build_parser

if TYPE_CHECKING:
    import argparse

# Third-party packages gamepak uses somewhere: each costs more than Python's own start-up.
THIRD_PARTY = (
    "numpy", "PIL", "pyarrow", "dask", "distributed", "starlette", "uvicorn", "jinja2", "rich", "click",
    "pygltflib", "orjson", "polib", "isal", "zstandard", "fsspec", "mfusepy", "mapbox_earcut", "quicktex",
    "bc7enc", "xxhash", "pandas", "deflate", "zlib_ng", "duckdb",
)  # fmt: skip
# Standard-library modules that cost a sizeable share of a start-up (dataclasses brings inspect
# and ast; shutil brings bz2 and lzma; typing alone is a third of `python -c pass`) and that no
# command below needs for a tiny pack.
STANDARD = (
    "dataclasses", "inspect", "ast", "typing", "pathlib", "shutil", "bz2", "lzma", "zipfile", "tarfile",
    "json", "textwrap", "gettext", "locale", "threading", "subprocess", "asyncio", "email", "http", "xml",
    "logging", "socket", "ssl", "tempfile", "urllib", "ipaddress", "decimal", "weakref", "atexit",
    "concurrent", "multiprocessing", "uuid", "datetime", "importlib.metadata", "tomllib", "csv", "zlib",
    "contextlib", "contextvars",
)  # fmt: skip
HEAVY = THIRD_PARTY + STANDARD

# Runs what the console script runs (or, with no arguments, only imports it), then prints the
# heavy modules loaded as the last line of stderr.
PROBE = f"""
import os, sys
def report():
    sys.stdout.flush()
    print("heavy:", ",".join(sorted(m for m in {HEAVY!r} if m in sys.modules)), file=sys.stderr)
    sys.stderr.flush()
end, main = os._exit, os.getpid()
def reporting_exit(code):  # `extract` ends without the tear-down (cli._quick_exit)
    if os.getpid() == main:
        report()
    end(code)
os._exit = reporting_exit
from gamepak.cli import run
code = 0
if sys.argv[1:]:
    try:
        run()
    except SystemExit as exit:
        code = exit.code
report()
sys.exit(code)
"""


def heavy_after(*arguments: str) -> tuple[int, list[str]]:
    """(exit code, heavy modules loaded) of `gamepak ARGUMENTS` in a fresh interpreter."""
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *arguments], capture_output=True, text=True, timeout=120, check=False
    )
    last = result.stderr.splitlines()[-1] if result.stderr else ""
    assert last.startswith("heavy:"), result.stderr
    loaded = last.removeprefix("heavy:").strip()
    return result.returncode, loaded.split(",") if loaded else []


def every_help() -> list[list[str]]:
    """`--help` of the program, of every verb `gamepak --help` lists, and of every sub-command of a
    command group."""
    import argparse

    cases = [["--help"], ["--version"]]
    for names in COMMANDS.values():
        for verb in names:
            cases.append([verb, "--help"])
            parser = build_parser(verb)
            command = parser._subparsers._group_actions[0].choices[verb]  # type: ignore[union-attr,index]
            for action in command._actions:
                if isinstance(action, argparse._SubParsersAction):
                    cases += [[verb, sub, "--help"] for sub in action.choices]
    return cases


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("startup")
    small, other = folder / "small.pak", folder / "other.pak"
    for path in (small, other):
        with gamepak.create(path) as writer:
            for index in range(5):
                writer.add(f"docs/page{index}.txt", b"text %d" % index)
    inputs = folder / "inputs"
    inputs.mkdir()
    (inputs / "readme.txt").write_bytes(b"text")
    return {"small": str(small), "other": str(other), "folder": str(folder), "inputs": str(inputs)}


def test_importing_the_cli_loads_nothing_heavy() -> None:
    assert heavy_after() == (0, [])


@pytest.mark.parametrize("arguments", every_help(), ids=" ".join)
def test_help_of_every_command_loads_nothing_heavy(arguments: list[str]) -> None:
    assert heavy_after(*arguments) == (0, [])


@pytest.mark.parametrize(
    "command",
    [
        ["ls", "{small}"],
        ["ls", "-l", "{small}"],
        ["info", "{small}"],
        ["cat", "{small}", "docs/page1.txt"],
        ["verify", "{small}"],
        ["diff", "{small}", "{other}"],
        ["add", "{other}", "{small}", "--dry-run"],
        ["rm", "{other}", "docs/page1.txt", "--dry-run"],
        ["detect", "{small}"],
        ["extract", "{small}", "-o", "{folder}/extracted"],
        ["create", "{folder}/created.pak", "{inputs}"],
        ["convert", "{small}", "{folder}/converted.jpk"],
    ],
    ids=lambda command: command[0] + (" -l" if "-l" in command else ""),
)
def test_cheap_commands_on_a_tiny_pack_load_nothing_heavy(tiny: dict[str, str], command: list[str]) -> None:
    code, loaded = heavy_after(*(word.format(**tiny) for word in command))
    assert (code, loaded) == (0, [])


def test_the_probe_sees_a_heavy_module(tiny: dict[str, str]) -> None:
    # The probe itself can fail: a command that needs a heavy module (JSON output) is reported.
    code, loaded = heavy_after("ls", "--json", tiny["small"])
    assert code == 0 and "json" in loaded


def test_every_help_covers_every_verb_of_the_help() -> None:
    listed = {arguments[0] for arguments in every_help() if len(arguments) == 2 and arguments[0] != "--help"}
    assert listed == {verb for names in COMMANDS.values() for verb in names}


# -- detection passes over formats by their declared signatures (no module imported) --------------
def _sniff_all(data: bytes) -> dict[str, float]:
    from gamepak.core.registry import FORMATS
    from gamepak.core.source import Source

    source = Source.open(io.BytesIO(data))
    return {spec.name: float(spec.sniffer()(source)) for spec in FORMATS}


def _heads() -> st.SearchStrategy[bytes]:
    """Bytes that start with a declared signature (or one of its bytes changed), or anything."""
    from gamepak.core.registry import FORMATS

    signed = [(offset, signature) for spec in FORMATS for offset, signature in spec.magic]

    @st.composite
    def near_a_signature(draw: st.DrawFn) -> bytes:
        offset, signature = draw(st.sampled_from(signed))
        data = bytearray(draw(st.binary(min_size=offset, max_size=offset + 64)).ljust(offset, b"\0"))
        data[offset:offset] = signature
        if draw(st.booleans()):
            data[offset + draw(st.integers(0, len(signature) - 1))] ^= 1 << draw(st.integers(0, 7))
        return bytes(data + draw(st.binary(max_size=600)))

    return st.one_of(near_a_signature(), st.binary(max_size=1100))


@settings(max_examples=150, deadline=None)
@given(data=_heads())
@example(data=bytes(1024))  # an empty tar: two zero blocks, no signature
def test_a_format_passed_over_by_its_signatures_is_one_its_sniffer_refuses(data: bytes) -> None:
    from gamepak.core.registry import FORMATS, MAGIC_SPAN

    confidences = _sniff_all(data)
    for spec in FORMATS:
        if not spec.may_hold(data[:MAGIC_SPAN]):
            assert confidences[spec.name] == 0, spec.name


def test_detect_imports_only_the_formats_whose_signature_a_file_holds(tiny: dict[str, str]) -> None:
    probe = (
        "import sys; import gamepak; print(gamepak.detect(sys.argv[1])[0].format); "
        "print(sorted(m for m in sys.modules if m.startswith('gamepak.formats.')))"
    )
    result = subprocess.run([sys.executable, "-c", probe, tiny["small"]], capture_output=True, text=True, check=True)
    found, modules = result.stdout.splitlines()
    assert found == "pak"
    for passed_over in ("gamepak.formats.zip", "gamepak.formats.rfg.packfile", "gamepak.formats.quake.wad"):
        assert passed_over not in modules


# -- the reading verbs load nothing of the writing side --------------------------------------------
WRITING_SIDE = ("gamepak.core.writer", "gamepak.core.layout")  # the option checkers are in core.writer


def gamepak_modules_after(*arguments: str) -> tuple[int, list[str]]:
    """(exit code, gamepak modules loaded) of `gamepak ARGUMENTS` in a fresh interpreter."""
    probe = PROBE.replace("heavy:", "modules:").replace(
        f"m for m in {HEAVY!r} if m in sys.modules", "m for m in list(sys.modules) if m.startswith('gamepak')"
    )
    result = subprocess.run([sys.executable, "-c", probe, *arguments], capture_output=True, text=True, check=False)
    last = result.stderr.splitlines()[-1] if result.stderr else ""
    assert last.startswith("modules:"), result.stderr
    return result.returncode, last.removeprefix("modules:").strip().split(",")


@pytest.mark.parametrize(
    "command",
    [
        ["ls", "{small}"],
        ["info", "{small}"],
        ["cat", "{small}", "docs/page1.txt"],
        ["verify", "{small}"],
        ["diff", "{small}", "{other}"],
        ["detect", "{small}"],
        ["extract", "{small}", "-o", "{folder}/extracted-reading"],
    ],
    ids=lambda command: command[0],
)
def test_reading_verbs_load_nothing_of_the_writing_side(tiny: dict[str, str], command: list[str]) -> None:
    code, loaded = gamepak_modules_after(*(word.format(**tiny) for word in command))
    assert code == 0
    assert "gamepak.formats.quake_pak" in loaded  # the probe sees the modules the verb used
    assert [module for module in WRITING_SIDE if module in loaded] == []


def test_a_writer_class_is_made_on_first_use_and_named_as_before() -> None:
    import pickle

    from gamepak.formats import quake_pak
    from gamepak.formats.quake_pak import Writer

    assert quake_pak.Writer is Writer and Writer.__qualname__ == "Writer"
    assert pickle.loads(pickle.dumps(Writer)) is Writer
    with pytest.raises(AttributeError, match="no attribute 'Writr'"):
        quake_pak.Writr  # noqa: B018 - the attribute's lookup is the test


@pytest.mark.parametrize(
    "module",
    [
        "quake_pak",
        "joepack",
        "zip",
        "tar",
        "j2me",
        "j2me.packs",
        "quake.wad",
        "quake.bsp",
        "rfg.asm",
        "rfg.locatext.view",
    ],
)
def test_a_format_module_loads_its_writer_only_when_asked(module: str) -> None:
    probe = (
        f"import sys; import gamepak.formats.{module} as format_module; "
        "before = [m for m in sys.modules if m in {'gamepak.core.writer', 'gamepak.core.layout'}]; "
        "writer = getattr(format_module, 'Writer', None) or format_module.TableWriter; "
        "print(before, writer.__name__, 'gamepak.core.writer' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    before, name, after = result.stdout.split()
    assert before == "[]" and name.endswith("Writer") and after == "True"


def test_the_command_raises_the_collectors_first_threshold(tiny: dict[str, str]) -> None:
    # The young collections the imports set off were ~4% of a short command (issue 48, item 3).
    from gamepak.cli import GC_THRESHOLD

    probe = PROBE.replace('print("heavy:"', 'import gc; print("threshold:", gc.get_threshold()[0]); print("heavy:"')
    result = subprocess.run([sys.executable, "-c", probe, "ls", tiny["small"]], capture_output=True, text=True)
    assert f"threshold: {GC_THRESHOLD}" in result.stdout.splitlines()
    assert GC_THRESHOLD > 700  # above Python's default


def test_cat_of_a_member_of_the_pack_itself_loads_no_nested_walker(tiny: dict[str, str]) -> None:
    code, loaded = gamepak_modules_after("cat", tiny["small"], "docs/page1.txt")
    assert code == 0 and "gamepak.core.nested" not in loaded
    code, loaded = gamepak_modules_after("cat", tiny["small"], "docs/missing.txt")
    assert code == 1 and "gamepak.core.nested" in loaded  # a path not in the pack: nested packs looked at


# -- verify finds the content rows that check a pack without importing the content registry -------
def test_the_verify_index_of_pack_checks_is_the_content_registrys() -> None:
    from gamepak.cli.reading import PACK_CHECKS
    from gamepak.content import verifiers
    from gamepak.core.registry import FORMATS

    declared = {spec.name: tuple(kind.name for kind in verifiers(spec.name)) for spec in FORMATS}
    assert {name: kinds for name, kinds in declared.items() if kinds} == PACK_CHECKS


def test_verify_of_a_pak_imports_no_content_row(tiny: dict[str, str]) -> None:
    code, loaded = gamepak_modules_after("verify", tiny["small"])
    assert code == 0
    assert [module for module in loaded if module.startswith("gamepak.content")] == []


# -- `gamepak formats` lists the writers' options from a static table -----------------------------
def test_the_formats_table_of_writer_options_is_the_writers() -> None:
    from gamepak.cli.reading import WRITER_OPTIONS
    from gamepak.core.registry import FORMATS

    declared = {spec.name: dict(spec.writer_class().option_defaults) for spec in FORMATS if spec.kind == "archive"}
    assert {name: options for name, options in declared.items() if options} == WRITER_OPTIONS
    for name, options in WRITER_OPTIONS.items():  # the same values, of the same types (1 is not True)
        assert [type(value) for value in options.values()] == [type(value) for value in declared[name].values()]


def test_formats_imports_no_format_module() -> None:
    code, loaded = gamepak_modules_after("formats")
    assert code == 0
    assert [module for module in loaded if module.startswith(("gamepak.formats", "gamepak.core.writer"))] == []


def test_detect_loads_only_the_sniffers_of_the_formats_without_a_signature(tiny: dict[str, str]) -> None:
    # tar, JOE and the J2ME layouts are asked about every file; their readers' helpers are not needed.
    code, loaded = gamepak_modules_after("detect", tiny["small"])
    assert code == 0 and "gamepak.formats.j2me.structure" in loaded
    # tar: no zero head; JOE: no version 3 at offset 4 (tests/test_models.py detects real JOE files)
    unneeded = ("gamepak.formats.j2me.members", "gamepak.formats._stdlib", "gamepak.formats.tar", "gamepak.models")
    assert [module for module in unneeded if module in loaded] == []


def test_convert_to_a_pak_or_a_new_zip_loads_no_zipfile(tiny: dict[str, str], tmp_path: Path) -> None:
    # zipfile brings shutil, bz2 and lzma: only a zip source (or a zip written with a level,
    # bzip2 or lzma) needs it; a new zip of stored or deflated members is written without it.
    source = tmp_path / "small.jpk"
    with gamepak.create(source) as writer:
        writer.add("docs/page.txt", b"text")
    assert heavy_after("convert", str(source), str(tmp_path / "converted.pak")) == (0, [])
    code, loaded = heavy_after("convert", str(source), str(tmp_path / "converted.zip"))
    assert code == 0 and "zipfile" not in loaded and "zlib" in loaded
    code, loaded = heavy_after("convert", str(tmp_path / "converted.zip"), str(tmp_path / "back.pak"))
    assert code == 0 and "zipfile" in loaded  # the probe sees it where it is needed: reading a zip


def test_convert_to_a_new_zip_loads_no_portable_helpers(tiny: dict[str, str], tmp_path: Path) -> None:
    # os.pwrite and os.path.samefile do on POSIX what `core.portable` offers: its stand-ins are
    # for systems without them (tests/test_portable.py), a module less (~0.4 M instructions) here.
    code, loaded = gamepak_modules_after("convert", tiny["small"], str(tmp_path / "converted.zip"))
    assert code == 0 and "gamepak.core.writer" in loaded and "gamepak.core.portable" not in loaded
    code, loaded = gamepak_modules_after("create", str(tmp_path / "created.pak"), tiny["inputs"])
    assert code == 0 and "gamepak.core.portable" in loaded  # the probe sees it where it is used


def test_the_version_is_imported_only_by_version(tiny: dict[str, str]) -> None:
    code, loaded = gamepak_modules_after("ls", tiny["small"])
    assert code == 0 and "gamepak.version" not in loaded
    result = subprocess.run([sys.executable, "-m", "gamepak", "--version"], capture_output=True, text=True, check=True)
    assert result.stdout == f"gamepak {gamepak.__version__}\n"
    from gamepak.version import __version__

    assert gamepak.__version__ == __version__


# -- extract and create import the manifest's code only when a manifest is written or read ---------
def test_extract_without_manifest_imports_no_manifest_code(tiny: dict[str, str]) -> None:
    code, loaded = gamepak_modules_after("extract", tiny["small"], "-o", tiny["folder"] + "/no-manifest")
    assert code == 0 and "gamepak.ops.extract" in loaded
    assert [module for module in ("gamepak.ops.manifest", "gamepak.core.jsontext") if module in loaded] == []
    code, loaded = gamepak_modules_after("extract", tiny["small"], "-o", tiny["folder"] + "/manifest", "--manifest")
    assert code == 0 and "gamepak.ops.manifest" in loaded  # the probe sees it where it is needed


def test_create_of_a_folder_without_manifest_imports_no_manifest_code(tiny: dict[str, str]) -> None:
    code, loaded = gamepak_modules_after("create", tiny["folder"] + "/created-plain.pak", tiny["inputs"])
    assert code == 0 and "gamepak.ops.inputs" in loaded and "gamepak.ops.manifest" not in loaded
    extracted = tiny["folder"] + "/with-manifest"
    assert gamepak_modules_after("extract", tiny["small"], "-o", extracted, "--manifest")[0] == 0
    code, loaded = gamepak_modules_after("create", tiny["folder"] + "/rebuilt.pak", extracted)
    assert code == 0 and "gamepak.ops.manifest" in loaded  # a folder holding one: read


# -- verify of a PAK checks against the written-out `any` engine: no other table, no file check ----
def test_verify_of_a_pak_builds_no_engine_table_and_imports_no_file_check(tiny: dict[str, str]) -> None:
    probe = (
        # `main`, not `run`: verify ends with the quick exit (os._exit), before the probe's print.
        "import sys; from gamepak.cli import main; main(['verify', sys.argv[1]])\n"
        "print('gamepak.formats.quake.file_limits' in sys.modules, 'gamepak.formats.quake.engines' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", probe, tiny["small"]], capture_output=True, text=True, check=True)
    assert result.stdout.split()[-2:] == ["False", "False"]
    result = subprocess.run(
        [sys.executable, "-c", probe.replace("'verify', ", "'verify', '--engine', 'quake', "), tiny["small"]],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.split()[-2:] == ["False", "True"]  # the probe sees the tables loaded when an engine is named


def test_a_small_extract_imports_no_worker_machinery(tiny: dict[str, str], tmp_path: Path) -> None:
    # Forked workers (and their pipes, batches and queue) only for many members or bytes.
    code, loaded = gamepak_modules_after("extract", tiny["small"], "-o", str(tmp_path / "small"))
    assert code == 0 and "gamepak.ops.copier" in loaded and "gamepak.ops.copy_workers" not in loaded
    many = tmp_path / "many.pak"
    with gamepak.create(many) as writer:
        for index in range(300):  # over the copier's threshold of 256 members
            writer.add(f"docs/page{index}.txt", b"text")
    code, loaded = gamepak_modules_after("extract", str(many), "-o", str(tmp_path / "many"))
    assert code == 0 and "gamepak.ops.copy_workers" in loaded  # the probe sees it where it is needed


# -- `warnings` is imported only when something warns, and its warnings are still gamepak's lines --
def test_a_command_imports_no_warnings_module_and_still_shows_warnings_as_its_lines(tiny: dict[str, str]) -> None:
    probe = (
        "import sys; from gamepak.cli import main; sys.argv[1:] = ['ls', sys.argv[1]]; main()\n"
        "print('imported:', 'warnings' in sys.modules, 'gettext' in sys.modules)\n"
        "import argparse, warnings; warnings.warn('a library warning')\n"
        # Python 3.13's argparse imports warnings where it warns: no module-level name to compare.
        "bound = getattr(argparse, 'warnings', warnings)\n"
        "print('same warn:', bound.warn is warnings.warn, warnings.__loader__.get_source('warnings') > '')"
    )
    result = subprocess.run([sys.executable, "-c", probe, tiny["small"]], capture_output=True, text=True, check=True)
    assert "imported: False False" in result.stdout.splitlines()
    assert "same warn: True True" in result.stdout.splitlines()
    assert result.stderr == "gamepak: warning: a library warning\n"


def test_warnings_imported_before_the_command_are_shown_as_its_lines(tiny: dict[str, str]) -> None:
    probe = (
        "import sys, warnings; from gamepak.cli import main; sys.argv[1:] = ['ls', sys.argv[1]]; main()\n"
        "warnings.warn('a library warning')"
    )
    result = subprocess.run([sys.executable, "-c", probe, tiny["small"]], capture_output=True, text=True, check=True)
    assert result.stderr == "gamepak: warning: a library warning\n"


# -- the edits' dry runs: removing members or planning a compaction loads nothing of the writing side -
@pytest.mark.parametrize(
    "command",
    [["rm", "{other}", "docs/page1.txt", "--dry-run"], ["compact", "{other}", "--dry-run"]],
    ids=lambda command: command[0],
)
def test_a_dry_run_that_checks_no_name_loads_nothing_of_the_writing_side(
    tiny: dict[str, str], command: list[str]
) -> None:
    code, loaded = gamepak_modules_after(*(word.format(**tiny) for word in command))
    assert code == 0 and "gamepak.ops.edit" in loaded
    assert [module for module in (*WRITING_SIDE, "gamepak.core.snapshot") if module in loaded] == []


# JoePack's rule reads the `name_field_size` option; a packfile's names hold no folders; J2ME
# members are numbered; a zip's names are UTF-8; a tar takes any safe name.
NAMED_PACKS = {
    "jpk": ("names.jpk", "docs/page1.txt", "docs/moved.txt"),
    "vpp": ("names.vpp_pc", "page1.txt", "moved.txt"),
    "zip": ("names.zip", "docs/page1.txt", "docs/moved.txt"),
    "tar": ("names.tar", "docs/page1.txt", "docs/moved.txt"),
    "wad": ("names.wad", "PAGE1", "MOVED"),
    "j2me-table": ("names.bin", "0", "1"),
}


@pytest.mark.parametrize("format_name", sorted(NAMED_PACKS))
def test_add_and_mv_dry_runs_of_every_format_check_names_without_a_writer(
    tiny: dict[str, str], format_name: str, tmp_path: Path
) -> None:
    file_name, member, new = NAMED_PACKS[format_name]
    pack = str(tmp_path / file_name)
    with gamepak.create(pack, format_name) as writer:
        writer.add(member, b"text")
    readme = tiny["inputs"] + "/readme.txt"
    commands = [["add", pack, readme, "--name", new, "--dry-run"]]
    if not member.isdigit():  # J2ME members have no names to change
        commands.append(["mv", pack, member, new, "--dry-run"])
    for command in commands:
        code, loaded = gamepak_modules_after(*command)
        assert code == 0 and "gamepak.ops.edit" in loaded, command
        # (a packfile's reader aligns with `core.layout` too)
        assert "gamepak.core.writer" not in loaded
    # the edit itself makes the writer that checks the names again (the probe sees it)
    code, loaded = gamepak_modules_after(*commands[0][:-1])
    assert code == 0 and "gamepak.core.writer" in loaded


@pytest.mark.parametrize(
    "command",
    [
        ["mv", "{other}", "docs/page1.txt", "docs/moved.txt", "--dry-run"],
        ["add", "{other}", "{inputs}/readme.txt", "--dry-run"],
    ],
    ids=lambda command: command[0],
)
def test_a_dry_run_that_checks_a_pak_name_loads_nothing_of_the_writing_side(
    tiny: dict[str, str], command: list[str]
) -> None:
    # The PAK's registry row names its rule for new names: no writer is made to check them.
    code, loaded = gamepak_modules_after(*(word.format(**tiny) for word in command))
    assert code == 0 and "gamepak.ops.edit" in loaded
    assert [module for module in (*WRITING_SIDE, "gamepak.core.snapshot") if module in loaded] == []
    assert "gamepak.core.names" not in loaded  # the rule of new names is in stored_names


# -- a dry run only reads: no edit lock (`fcntl`), no clean-up of temporaries (`core.atomic`) ------
COMMIT_SIDE = ("fcntl", "gamepak.core.atomic", "gamepak.core.portable", "gamepak.ops.edit_commit")


@pytest.mark.parametrize(
    "command",
    [
        ["add", "{other}", "{inputs}/readme.txt", "--dry-run"],
        ["rm", "{other}", "docs/page1.txt", "--dry-run"],
        ["mv", "{other}", "docs/page1.txt", "docs/moved.txt", "--dry-run"],
        ["update", "{other}", "{inputs}", "--dry-run"],
        ["compact", "{other}", "--dry-run"],
    ],
    ids=lambda command: command[0],
)
def test_a_dry_run_loads_nothing_of_the_lock_or_the_clean_up(
    tiny: dict[str, str], command: list[str], tmp_path: Path
) -> None:
    import shutil

    probe = PROBE.replace(f"m for m in {HEAVY!r}", f"m for m in {COMMIT_SIDE!r}")
    arguments = [word.format(**tiny) for word in command]
    result = subprocess.run([sys.executable, "-c", probe, *arguments], capture_output=True, text=True, check=False)
    loaded = result.stderr.splitlines()[-1].removeprefix("heavy: ")
    # `update` reads a folder, whose temporaries it leaves out by their names (`core.atomic`)
    expected = "gamepak.core.atomic,gamepak.core.portable" if command[0] == "update" else ""
    assert (result.returncode, loaded) == (0, expected)
    # an edit that may commit (of a copy) takes the lock and clears temporaries: the probe sees them
    arguments[1] = shutil.copy(tiny["other"], str(tmp_path))
    result = subprocess.run([sys.executable, "-c", probe, *arguments[:-1]], capture_output=True, text=True, check=False)
    assert result.stderr.splitlines()[-1] == "heavy: " + ",".join(sorted(COMMIT_SIDE)), result.stderr


def _outcome(check: object, name: str) -> tuple[type, str] | None:
    try:
        check(name)  # type: ignore[operator]
    except gamepak.GamepakError as error:
        return type(error), str(error)
    return None


@settings(max_examples=150, deadline=None)
@given(name=st.one_of(st.text(max_size=70), st.text(alphabet="ab/.\\:\0é", max_size=60)), nested=st.booleans())
@example(name="x" * 55, nested=False)
@example(name="x" * 56, nested=False)
@example(name="é" * 28, nested=False)
@example(name="", nested=False)
@example(name="../up", nested=False)
def test_an_editor_refuses_a_name_by_the_name_rule_as_the_writer_does(
    tiny: dict[str, str], name: str, nested: bool
) -> None:
    from gamepak.core.registry import get_format

    name = "docs/" + name if nested else name
    assert get_format("pak").name_rule is not None  # every format's: tests/test_edit_name_rules.py
    pack = gamepak.edit(tiny["other"])
    try:
        edit = pack._root
        light = _outcome(edit.check_name, name)  # the row's name rule: no writer made
        assert edit._checker is None
        assert _outcome(edit.checker.check_name, name) == light
        assert edit.checker.flat_names is False  # a format with a name rule holds folders
    finally:
        pack.abort()


def test_an_editor_refuses_the_callers_writer_options_at_once(tiny: dict[str, str]) -> None:
    # The checker is made lazily, but options the caller gives are still checked when opening.
    with pytest.raises(gamepak.InvalidOptionError, match="has no option asm"):
        gamepak.edit(tiny["other"], options={"asm": "level.asm_pc"})
    pack = gamepak.edit(tiny["other"])
    with pytest.raises(gamepak.FormatLimitError, match="a PAK name holds at most 55"):
        pack.add("x" * 57, b"data")  # a name the format cannot hold: refused when added
    assert pack.plan() == []
    pack.abort()


# -- the rarely raised errors are made on first use, as the same classes ---------------------------
RARE_ERRORS = {
    "AmbiguousFormatError": ("UnknownFormatError",),
    "UnnamedFormatError": ("UnknownFormatError",),
    "InvalidOptionError": ("UnsupportedFeatureError",),
    "NotAnArchiveError": ("UnsupportedFeatureError",),
    "FormatLimitError": ("GamepakError",),
    "InputChangedError": ("GamepakError",),
    "MissingDependencyError": ("GamepakError",),
    "OutputExistsError": ("GamepakError", "FileExistsError"),
    "UsageError": ("GamepakError",),
}


def test_reading_a_pack_makes_none_of_the_rarely_raised_errors(tiny: dict[str, str]) -> None:
    probe = (
        "import sys; from gamepak.cli import main; sys.argv[1:] = ['ls', sys.argv[1]]; main()\n"
        "import gamepak.errors as errors; print('made:', sorted(set(vars(errors)) & set(errors._MAKERS)))"
    )
    result = subprocess.run([sys.executable, "-c", probe, tiny["small"]], capture_output=True, text=True, check=True)
    assert "made: []" in result.stdout.splitlines()


@pytest.mark.parametrize(
    "command",
    [
        ["create", "{folder}/made-no-errors.pak", "{inputs}"],
        ["add", "{other}", "{inputs}/readme.txt", "--dry-run"],
        ["mv", "{other}", "docs/page1.txt", "docs/moved.txt", "--dry-run"],
        ["convert", "{small}", "{folder}/made-no-errors.zip"],
    ],
    ids=lambda command: command[0],
)
def test_writing_makes_none_of_the_rarely_raised_errors(tiny: dict[str, str], command: list[str]) -> None:
    # Each made class is ~0.1 M instructions: create made seven, imported where nothing raised them.
    probe = (
        "import sys; from gamepak.cli import main; code = main(sys.argv[1:])\n"
        "import gamepak.errors as errors; print('made:', sorted(set(vars(errors)) & set(errors._MAKERS)))"
    )
    arguments = [word.format(**tiny) for word in command]
    result = subprocess.run([sys.executable, "-c", probe, *arguments], capture_output=True, text=True, check=True)
    assert "made: []" in result.stdout.splitlines()
    if command[0] in ("create", "convert"):  # the probe sees one where it is raised: the output exists now
        again = subprocess.run([sys.executable, "-c", probe, *arguments], capture_output=True, text=True)
        assert "made: ['OutputExistsError']" in again.stdout.splitlines()


def test_create_loads_nothing_of_the_reading_side(tiny: dict[str, str]) -> None:
    # A writer needs `PendingMember`, not the sources, detection and opening of packs.
    code, loaded = gamepak_modules_after("create", tiny["folder"] + "/no-reading.pak", tiny["inputs"])
    assert code == 0 and "gamepak.core.writer" in loaded
    assert [m for m in ("gamepak.core.source", "gamepak.core.detection", "gamepak.core.opening") if m in loaded] == []


@pytest.mark.parametrize("name", sorted(RARE_ERRORS))
def test_a_rarely_raised_error_is_the_same_class_however_it_is_reached(name: str) -> None:
    import pickle

    from gamepak import errors

    cls = getattr(errors, name)
    assert getattr(errors, name) is cls and getattr(gamepak, name, cls) is cls  # one class, made once
    assert (cls.__name__, cls.__qualname__, cls.__module__) == (name, name, "gamepak.errors")
    assert [base.__name__ for base in cls.__bases__] == list(RARE_ERRORS[name])
    assert issubclass(cls, errors.GamepakError) and name in dir(errors)
    assert pickle.loads(pickle.dumps(cls)) is cls
    namespace: dict[str, object] = {}
    exec(f"from gamepak.errors import {name}", namespace)
    assert namespace[name] is cls


def test_pickled_errors_and_their_exit_codes_are_as_before() -> None:
    import pickle

    from gamepak import errors

    for error, code in (
        (errors.UsageError("bad"), errors.EXIT_USAGE),
        (errors.InvalidOptionError("no such option", "align"), errors.EXIT_USAGE),
        (errors.UnnamedFormatError("which format?"), errors.EXIT_USAGE),
        (errors.FormatLimitError("too long"), errors.EXIT_BAD_INPUT),
        (errors.CorruptArchiveError("bad", path="x.pak", offset=4), errors.EXIT_BAD_INPUT),
    ):
        again = pickle.loads(pickle.dumps(error))
        assert type(again) is type(error) and str(again) == str(error)
        assert errors.exit_code_for(error) == code
    with pytest.raises(AttributeError, match="no attribute 'UsageErr'"):
        errors.UsageErr  # noqa: B018 - the attribute's lookup is the test


# -- the parse matches words to nargs as argparse's regular expressions do, without compiling them --
NARGS = (None, "?", "*", "+", "...", "A...", "==SUPPRESS==", 0, 1, 2, 3)


@st.composite
def _actions(draw: st.DrawFn, most: int) -> list[argparse.Action]:
    import argparse

    count = draw(st.integers(1, most))
    return [
        argparse.Action(option_strings=draw(st.sampled_from([[], ["-x"]])), dest=f"d{index}", nargs=nargs)
        for index, nargs in enumerate(draw(st.lists(st.sampled_from(NARGS), min_size=count, max_size=count)))
    ]


@settings(max_examples=300, deadline=None)
@given(data=st.data(), words=st.text(alphabet="AO-", max_size=12))
def test_words_are_matched_to_nargs_as_argparses_regular_expressions_match_them(
    data: st.DataObject, words: str
) -> None:
    import argparse
    import re

    from gamepak.cli.parser import CommandParser, nargs_match

    actions = data.draw(_actions(4))
    ours, plain = CommandParser(prog="t"), argparse.ArgumentParser(prog="t")
    pattern = "".join(plain._get_nargs_pattern(action) for action in actions)
    expected = re.match(pattern, words)
    found = nargs_match(pattern, words)
    assert found == (() if expected is None else ([len(group) for group in expected.groups()], expected.end()))
    assert ours._match_arguments_partial(actions, words) == plain._match_arguments_partial(actions, words)
    for action in actions:
        try:
            wanted: object = plain._match_argument(action, words)
        except argparse.ArgumentError as error:
            wanted = str(error)
        try:
            got: object = ours._match_argument(action, words)
        except argparse.ArgumentError as error:
            got = str(error)
        assert got == wanted


def test_a_pattern_of_another_kind_is_left_to_the_regular_expression() -> None:
    from gamepak.cli.parser import nargs_match

    for pattern in ("(A+)", "A", "(A{2})", "([A-O]*)", "(A|O)", "((A))", "(A", "(-*A-*)x"):
        assert nargs_match(pattern, "AAA") is None, pattern
    assert nargs_match("(-*A-*)(-*[A-]*)", "A-AA") == ([2, 2], 4)
    assert nargs_match("(-*A-*)", "OA") == ()


def test_parsing_a_command_line_compiles_no_regular_expression_of_nargs(tiny: dict[str, str]) -> None:
    import ast
    import re

    probe = (
        "import re, sys; from gamepak.cli import main; before = set(re._cache)\n"
        "sys.argv[1:] = ['extract', sys.argv[1], '-o', sys.argv[2], 'docs/page1.txt', 'docs/*']; main()\n"
        "print('compiled:', sorted(key[1] for key in set(re._cache) - before))"
    )
    out = tiny["folder"] + "/extracted-no-regex"
    result = subprocess.run(
        [sys.executable, "-c", probe, tiny["small"], out], capture_output=True, text=True, check=True
    )
    compiled = ast.literal_eval(result.stdout.splitlines()[-1].removeprefix("compiled: "))
    assert compiled and not [pattern for pattern in compiled if re.fullmatch(r"[()\[\]AO*?-]+", pattern)]
    # the probe sees them: argparse's own matching compiles e.g. (-*A-*)(-*[A-]*)
    plain = probe.replace(
        "from gamepak.cli import main",
        "import argparse; from gamepak.cli import main; from gamepak.cli.parser import CommandParser",
    )
    plain = plain.replace(
        "main()",
        "CommandParser._match_arguments_partial = argparse.ArgumentParser._match_arguments_partial; main()",
    )
    out = tiny["folder"] + "/extracted-regex"
    result = subprocess.run(
        [sys.executable, "-c", plain, tiny["small"], out], capture_output=True, text=True, check=True
    )
    compiled = ast.literal_eval(result.stdout.splitlines()[-1].removeprefix("compiled: "))
    assert [pattern for pattern in compiled if re.fullmatch(r"[()\[\]AO*?-]+", pattern)]


# -- argparse's negative-number test, answered without compiling its regular expression -----------
@settings(max_examples=300, deadline=None)
@given(word=st.text(alphabet="-.05\n\u0663\uff17x ", max_size=7))
@example(word="-5\n")
@example(word="-.5")
@example(word="-5.")
@example(word="-\u0663")  # an Arabic-Indic digit: \\d matches it
def test_the_negative_number_test_answers_as_argparses_regular_expression(word: str) -> None:
    import re

    from gamepak.cli.parser import NEGATIVE_NUMBER_PATTERN, negative_number

    assert negative_number(word) == bool(re.match(NEGATIVE_NUMBER_PATTERN, word))


def test_argparse_gets_the_negative_number_test_instead_of_compiling_it() -> None:
    probe = (
        "import argparse, re; from gamepak.cli import build_parser; build_parser('extract', listed=False)\n"
        "from gamepak.cli.parser import NEGATIVE_NUMBER_PATTERN, CommandParser, negative_number\n"
        "assert not [key for key in re._cache if key[1] == NEGATIVE_NUMBER_PATTERN], 'compiled'\n"
        "parser = CommandParser(prog='t'); parser.add_argument('word')\n"
        "assert parser._negative_number_matcher.match is negative_number\n"
        "assert parser.parse_args(['-5']).word == '-5'  # a negative number is a positional\n"
        "parser.add_argument('-1', dest='one', action='store_true')\n"
        "assert parser._has_negative_number_optionals  # unless an option looks like one\n"
        "assert argparse._re.compile(r'a+').match('aa')  # any other pattern is re's\n"
        # the pattern is still the one argparse compiles: the stand-in is used, not bypassed
        "import inspect; assert NEGATIVE_NUMBER_PATTERN in inspect.getsource(argparse)\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True, timeout=60)


# -- a plain member name is matched without compiling a regular expression --------------------------
@settings(max_examples=300, deadline=None)
@given(
    name=st.text(alphabet="./ab*?[]!-\\", max_size=8),
    pattern=st.text(alphabet="./ab*?[]!-\\", max_size=8),
    prefixes=st.tuples(st.booleans(), st.booleans()),
)
def test_a_member_name_matches_a_pattern_as_fnmatch_says(name: str, pattern: str, prefixes: tuple[bool, bool]) -> None:
    import fnmatch

    from gamepak.core.names import member_matches

    name, pattern = "./" * prefixes[0] + name, "./" * prefixes[1] + pattern
    bare_name, bare_pattern = name.removeprefix("./"), pattern.removeprefix("./")
    expected = fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(bare_name, bare_pattern)
    assert member_matches(name, pattern) == expected


def test_extracting_members_by_plain_names_compiles_no_pattern(tiny: dict[str, str]) -> None:
    probe = (
        "import sys; from gamepak.cli import main\n"
        "sys.argv[1:] = ['extract', sys.argv[1], '-o', sys.argv[2], 'docs/page1.txt', './docs/page2.txt']; main()\n"
        "print('fnmatch' in sys.modules)"
    )
    out = tiny["folder"] + "/extracted-plain-names"
    command = [sys.executable, "-c", probe, tiny["small"], out]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    assert result.stdout.splitlines()[-1] == "False"
    assert sorted(path.name for path in Path(out, "docs").iterdir()) == ["page1.txt", "page2.txt"]


# -- the directories of PAKs and JoePacks are read without the `array` module ------------------------
@pytest.mark.parametrize(
    "command",
    [["ls", "{small}"], ["verify", "{small}"], ["diff", "{small}", "{other}"], ["rm", "{other}", "x", "--dry-run"]],
    ids=lambda command: command[0],
)
def test_reading_a_pak_directory_imports_no_array_module(tiny: dict[str, str], command: list[str]) -> None:
    probe = PROBE.replace(f"m for m in {HEAVY!r} if m in sys.modules", "m for m in ('array',) if m in sys.modules")
    arguments = [word.format(**tiny) for word in command]
    result = subprocess.run([sys.executable, "-c", probe, *arguments], capture_output=True, text=True, check=False)
    assert result.stderr.splitlines()[-1] == "heavy: "


@settings(max_examples=50, deadline=None)
@given(words=st.lists(st.integers(0, 2**32 - 1), max_size=40))
def test_the_uint32_view_reads_as_the_array_does(words: list[int]) -> None:
    import struct

    from gamepak.core.stored_names import _uint32_view, uint32_array

    raw = struct.pack(f"<{len(words)}I", *words)
    assert list(_uint32_view(raw)) == uint32_array(raw).tolist() == words


# -- the name rules every read meets are in `stored_names`: no `core.names` for verify, rm, compact --
@pytest.mark.parametrize(
    "command",
    [["verify", "{small}"], ["rm", "{other}", "docs/page1.txt", "--dry-run"], ["compact", "{other}", "--dry-run"]],
    ids=lambda command: command[0],
)
def test_reading_names_loads_no_module_of_the_new_name_rules(tiny: dict[str, str], command: list[str]) -> None:
    code, loaded = gamepak_modules_after(*(word.format(**tiny) for word in command))
    assert code == 0 and "gamepak.core.stored_names" in loaded and "gamepak.core.names" not in loaded


def test_the_name_rules_are_one_function_under_both_modules() -> None:
    from gamepak.core import names, stored_names

    for name in ("NAME_MAX", "member_matches", "safe_parts", "check_new_name"):
        assert getattr(names, name) is getattr(stored_names, name)


def test_extract_on_linux_loads_the_windows_name_rules_only_when_asked(tiny: dict[str, str]) -> None:
    if sys.platform.startswith(("win", "darwin")):
        pytest.skip("there, extraction checks Windows names by default")
    code, loaded = gamepak_modules_after("extract", tiny["small"], "-o", tiny["folder"] + "/no-windows-names")
    assert code == 0 and "gamepak.ops.safe_tree" in loaded and "gamepak.core.names" not in loaded
    out = tiny["folder"] + "/windows-names"
    code, loaded = gamepak_modules_after("extract", tiny["small"], "-o", out, "--windows-names")
    assert code == 0 and "gamepak.core.names" in loaded  # the probe sees them where they are used


# -- text import of an .rfglocatext reads and writes files whole: no pack reading, no scopes -------
@pytest.fixture(scope="module")
def locatext(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    from gamepak.cli import main
    from gamepak.formats.rfg.locatext import LocaEntry, build

    folder = tmp_path_factory.mktemp("locatext")
    file, po = folder / "strings.rfglocatext", folder / "strings.po"
    file.write_bytes(build([LocaEntry(index, f"text {index}".encode("utf-16-le") + b"\0\0") for index in range(5)]))
    assert main(["text", "export", str(file), "-o", str(po)]) == 0
    return {"file": str(file), "po": str(po), "folder": str(folder)}


def test_text_import_loads_neither_the_pack_sources_nor_the_name_rules(locatext: dict[str, str]) -> None:
    out = locatext["folder"] + "/imported"
    code, loaded = gamepak_modules_after("text", "import", locatext["file"], locatext["po"], "-o", out)
    assert code == 0 and "gamepak.ops.locatext" in loaded and "gamepak.core.files" in loaded
    assert not {"gamepak.core.source", "gamepak.core.streams", "gamepak.core.stored_names"} & set(loaded)


def test_text_import_without_allow_large_loads_no_context_modules(locatext: dict[str, str]) -> None:
    out = locatext["folder"] + "/imported-plain"
    code, loaded = heavy_after("text", "import", locatext["file"], locatext["po"], "-o", out)
    # nor zlib: a translation keyed by hashes hashes no identifier
    assert code == 0 and not {"contextlib", "contextvars", "zlib"} & set(loaded)
    # the probe sees them when a budget changes
    out = locatext["folder"] + "/imported-large"
    code, loaded = heavy_after("text", "import", locatext["file"], locatext["po"], "-o", out, "--allow-large")
    assert code == 0 and "contextvars" in loaded


def test_the_temporaries_name_limit_is_the_name_rules_one() -> None:
    from gamepak.core import atomic, stored_names

    assert atomic.NAME_MAX == stored_names.NAME_MAX


def test_text_import_makes_no_usage_error_class_it_does_not_raise(locatext: dict[str, str]) -> None:
    probe = PROBE.replace(
        f"m for m in {HEAVY!r} if m in sys.modules",
        "m for m in ('UsageError', 'FormatLimitError') if m in vars(sys.modules['gamepak.errors'])",
    )
    out = locatext["folder"] + "/imported-no-errors"
    arguments = ["text", "import", locatext["file"], locatext["po"], "-o", out]
    result = subprocess.run([sys.executable, "-c", probe, *arguments], capture_output=True, text=True, check=False)
    assert result.returncode == 0 and result.stderr.splitlines()[-1] == "heavy: ", result.stderr


def test_a_warning_after_the_command_started_is_one_line_of_ours(tiny: dict[str, str]) -> None:
    # `warnings` is not imported by a short command: the finder sets `showwarning` when it is.
    probe = (
        "import sys; from gamepak.cli import main; main(['ls', sys.argv[1]])\n"
        "assert 'warnings' not in sys.modules\n"
        "import warnings; warnings.warn('watch out')\n"
        "assert not [f for f in sys.meta_path if hasattr(f, 'find_spec') and 'warnings' in repr(f.find_spec)]\n"
    )
    result = subprocess.run([sys.executable, "-c", probe, tiny["small"]], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stderr == "gamepak: warning: watch out\n"


def test_the_progress_bar_class_is_made_by_the_commands_that_show_one(tiny: dict[str, str]) -> None:
    probe = (
        "import sys; from gamepak.cli import main, common; main(sys.argv[1:])\n"
        "print('made:', 'progress_bar' in vars(common))\n"
    )
    for arguments, made in (
        (["ls", tiny["small"]], False),
        (["convert", tiny["small"], tiny["folder"] + "/bar.zip"], False),
        (["extract", tiny["small"], "-o", tiny["folder"] + "/bar"], True),
    ):
        result = subprocess.run([sys.executable, "-c", probe, *arguments], capture_output=True, text=True, timeout=60)
        assert result.stdout.splitlines()[-1] == f"made: {made}", (arguments, result.stderr)


def test_a_metavar_that_does_not_fit_nargs_is_still_refused_when_declared() -> None:
    from gamepak.cli.parser import CommandParser

    parser = CommandParser(prog="t")
    parser.add_argument("--pair", nargs=2, metavar=("A", "B"))  # fits
    with pytest.raises(ValueError, match="length of metavar tuple does not match nargs"):
        parser.add_argument("--three", nargs=3, metavar=("A", "B"))
