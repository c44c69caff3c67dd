"""`core.content_limits.limits`: a scope of changed budgets, made without `contextlib`, whose
context variable is made by the first scope that changes a budget (a command without
--allow-large makes none)."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from gamepak.core.content_limits import current, limits


def test_a_scope_changes_the_budgets_inside_and_restores_them_after() -> None:
    before = current()
    with limits(strings_bytes=10) as inside:
        assert current() is inside and inside.strings_bytes == 10
        with limits(allow_large=True) as inner:  # scopes nest
            assert inner.allow_large and inner.strings_bytes == 10
        assert current() is inside
    assert current() is before


def test_a_scope_is_left_even_when_the_code_inside_raises() -> None:
    before = current()
    with pytest.raises(ValueError), limits(zone_bytes=1):
        raise ValueError("inside")
    assert current() is before


def test_an_unknown_budget_is_a_type_error_naming_it() -> None:
    with pytest.raises(TypeError, match="no content limit named nodes"), limits(nodes=1):
        pass


def test_each_thread_keeps_its_own_budgets() -> None:
    seen: list[int] = []
    inside, leave = threading.Event(), threading.Event()

    def other() -> None:
        with limits(strings_bytes=7):
            inside.set()
            leave.wait(10)
            seen.append(current().strings_bytes)

    thread = threading.Thread(target=other)
    thread.start()
    inside.wait(10)
    assert current().strings_bytes != 7  # the other thread's scope is not this one's
    leave.set()
    thread.join()
    assert seen == [7]


def test_a_scope_that_changes_nothing_makes_no_context_variable() -> None:
    probe = (
        "import sys; from gamepak.core import content_limits as c\n"
        "with c.limits(allow_large=False) as b: assert b is c.current()\n"
        "assert c._CURRENT is None and 'contextvars' not in sys.modules\n"
        "with c.limits(allow_large=True) as b: assert b.allow_large and c.current() is b\n"
        "assert c._CURRENT is not None and not c.current().allow_large\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True, timeout=60)
