"""A translation's bytes decoded as "utf-8-sig" decodes them (`translate._decode`, which does not
look that codec up): the same text, or the same byte offset named when they are not UTF-8."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamepak.errors import GamepakError
from gamepak.formats.rfg.locatext.translate import _decode

BYTES = st.one_of(
    st.binary(max_size=40),
    st.text(max_size=20).map(lambda text: text.encode("utf-8", "surrogatepass")),
).flatmap(lambda data: st.sampled_from([data, b"\xef\xbb\xbf" + data, b"\xef\xbb" + data]))


@settings(max_examples=200, deadline=None)
@given(BYTES)
def test_decoded_as_utf_8_sig_decodes(data: bytes) -> None:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        with pytest.raises(GamepakError, match="UTF-16"):
            _decode(data, "t.po")
        return
    try:
        expected = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        with pytest.raises(GamepakError, match=f"^t.po: byte {exc.start}: not UTF-8"):
            _decode(data, "t.po")
    else:
        assert _decode(data, "t.po") == expected
