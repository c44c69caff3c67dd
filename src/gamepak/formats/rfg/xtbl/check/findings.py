"""A check's findings: `Finding` (one value that breaks its field's rule), the lines and counts
`table check` prints, and what a mod's tables find new against the original's."""

from __future__ import annotations

from operator import attrgetter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable


class Finding:
    """One value that breaks its field's rule."""

    __slots__ = ("field", "member", "problem", "row", "severity", "value")

    def __init__(self, member: str, row: str, field: str, value: str, problem: str, severity: str) -> None:
        self.member = member
        self.row = row
        self.field = field
        self.value = value
        self.problem = problem
        self.severity = severity

    @property
    def kind(self) -> str:
        """The problem without its detail (`not a choice`), for counting."""
        return problem_kind(self.problem)

    def __reduce__(self) -> tuple[type[Finding], tuple[str, ...]]:
        # Sent between processes by value (the default for slots goes through copyreg: slower).
        return Finding, (self.member, self.row, self.field, self.value, self.problem, self.severity)

    def to_dict(self) -> dict[str, str]:
        return {
            "member": self.member,
            "row": self.row,
            "field": self.field,
            "value": self.value,
            "problem": self.problem,
            "severity": self.severity,
        }

    def __str__(self) -> str:
        return f"{self.member}: row {self.row}: {self.field} = {self.value!r}: {self.problem}"


def problem_kind(problem: str) -> str:
    """A finding's problem without its detail (`not a choice`), for counting."""
    return problem.split(":", 1)[0].split(" (", 1)[0]


def finding_lines(findings: Iterable[Finding]) -> str:
    """`f"{finding.severity}: {finding}\\n"` of each finding, made without a call to str()
    each (the game's tables give 6,000 findings: these lines end `table check`'s run). Keep
    in step with `Finding.__str__` (a test holds them equal)."""
    return "".join([f"{f.severity}: {f.member}: row {f.row}: {f.field} = {f.value!r}: {f.problem}\n" for f in findings])


def count_kinds(findings: Iterable[Finding]) -> dict[tuple[str, str], int]:
    """{(severity, kind): how many findings}, in the order each first appears: counted by
    (severity, problem) in C first, then folded by kind (a few hundred distinct problems
    against thousands of findings)."""
    from collections import Counter

    findings = list(findings)
    kinds: dict[tuple[str, str], int] = {}
    for (severity, problem), number in Counter(zip(map(_SEVERITY, findings), map(_PROBLEM, findings))).items():
        kind = (severity, problem_kind(problem))
        kinds[kind] = kinds.get(kind, 0) + number
    return kinds


_SEVERITY = attrgetter("severity")
_PROBLEM = attrgetter("problem")


def new_findings(findings: list[Finding], base: list[Finding]) -> list[Finding]:
    """The `findings` that `base` (those of the original tables) does not hold: the same
    member, row, field, value and problem count as the same finding."""
    known = {(f.member, f.row, f.field, f.value, f.problem) for f in base}
    return [f for f in findings if (f.member, f.row, f.field, f.value, f.problem) not in known]
