"""Building blocks for `ArchiveWriter.option_validators`.

Each builder returns a validator: a function that takes the value a user gave (from Python, a
manifest, or the CLI's `-O KEY=VALUE`, where numbers arrive as ints, `yes`/`no` as booleans and
an empty value as None) and returns the normalised value, or raises ValueError saying what the
option takes. The writer turns that into an InvalidOptionError naming the option. Every format
takes the same spellings: numbers as text too (`"9"`, `"0x10"`), booleans as yes/no,
true/false, on/off or 1/0.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Validator = Callable[[Any], Any]


def whole_number(minimum: int | None = None, maximum: int | None = None, *, allow_none: bool = False) -> Validator:
    """An int in [minimum, maximum] (either bound optional); None only with `allow_none`."""
    if minimum is not None and maximum is not None:
        wanted = f"a whole number from {minimum} to {maximum}"
    elif minimum is not None:
        wanted = f"a whole number of at least {minimum}"
    else:
        wanted = "a whole number"
    if allow_none:
        wanted += " (or empty for the default)"

    def validate(value: Any) -> Any:
        if value is None and allow_none:
            return None
        if isinstance(value, str):
            try:
                value = int(value.strip(), 0)
            except ValueError:
                raise ValueError(f"takes {wanted}, not {_shown(value)}") from None
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"takes {wanted}, not {_shown(value)}")
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            raise ValueError(f"takes {wanted}")
        return value

    return validate


def one_of(*choices: Any) -> Validator:
    """One of `choices` (strings compare ignoring case)."""

    def validate(value: Any) -> Any:
        for choice in choices:
            if value == choice and type(value) is type(choice):
                return choice
            if isinstance(value, str) and isinstance(choice, str) and value.lower() == choice.lower():
                return choice
        listed = ", ".join(_shown(choice) for choice in choices)
        raise ValueError(f"takes one of {listed}, not {_shown(value)}")

    return validate


def boolean(*, allow_none: bool = False) -> Validator:
    """True or False (yes/no, true/false, on/off or 1/0)."""

    def validate(value: Any) -> Any:
        if value is None and allow_none:
            return None
        if isinstance(value, bool):
            return value
        if value in (0, 1) and isinstance(value, int):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in _SPELLED:
            return _SPELLED[value.strip().lower()]
        raise ValueError(f"takes yes or no (true/false), not {_shown(value)}")

    return validate


_SPELLED = {"yes": True, "true": True, "on": True, "1": True, "no": False, "false": False, "off": False, "0": False}


def _shown(value: Any) -> str:
    if value is None:
        return "an empty value"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)
