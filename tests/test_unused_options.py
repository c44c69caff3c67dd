"""Issue 19 class 9: a writer option the output would ignore is refused (exit 2), naming it."""

from __future__ import annotations

import pytest

import gamepak
from gamepak.cli import main
from gamepak.errors import InvalidOptionError

# (output name, options that do nothing together, the option named)
IGNORED = [
    ("out.tar", {"level": 9}, "level"),
    ("out.zip", {"compression": "store", "level": 9}, "level"),
    ("out.zip", {"compression": "lzma", "level": 1}, "level"),
    ("out.vpp_pc", {"flags": 0, "level": 9}, "level"),
    ("out.vpp_pc", {"level": 5}, "level"),
    ("out.str2_pc", {"flags": 2, "window_bits": 15}, "window_bits"),
]

# The same options where they take effect, and empty values (the default) everywhere.
USED = [
    ("out.tar.gz", {"level": 9}),
    ("out.tgz", {"level": 1}),
    ("out.tar", {"level": None}),
    ("out.zip", {"compression": "deflate", "level": 9}),
    ("out.zip", {"compression": "bzip2", "level": 9}),
    ("out.zip", {"compression": "store"}),
    ("out.vpp_pc", {"flags": 1, "level": 9}),
    ("out.str2_pc", {"level": 5}),
    ("out.pak", {"align": 4, "directory": "start"}),
    ("out.jpk", {"name_field_size": 64}),
]


@pytest.mark.parametrize(("name", "options", "named"), IGNORED)
def test_an_option_without_effect_is_refused_before_writing(tmp_path, name, options, named):
    target = tmp_path / name
    with pytest.raises(InvalidOptionError) as caught:
        gamepak.create(target, **options)
    assert caught.value.args[0].count(named) and "no effect" in str(caught.value)
    assert not target.exists()


@pytest.mark.parametrize(("name", "options"), USED)
def test_an_option_with_effect_is_taken(tmp_path, name, options):
    with gamepak.create(tmp_path / name, **options) as writer:
        writer.add("a.txt", b"hello " * 50)
    with gamepak.open(tmp_path / name) as archive:
        assert archive.read("a.txt") == b"hello " * 50


def test_cli_exits_2_naming_the_option(tmp_path, capsys):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_bytes(b"x")
    code = main(["create", str(tmp_path / "out.tar"), str(tmp_path / "in"), "-O", "level=9"])
    assert code == 2
    assert "level" in capsys.readouterr().err
    assert not (tmp_path / "out.tar").exists()
