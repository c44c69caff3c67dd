"""Checking a table's values against its schema.

Each finding names the table (member), the row (its key), the field (a dotted path), the
value and the problem, with a severity: "error" for what the game cannot read as the schema
says (a number that does not parse, a Selection outside its Choices, a Flag not in the list,
a duplicate row key), "warning" for the rest (a Filename without its extension, a Reference
to a row the referenced table lacks, an element the schema does not know).

`table` walks a table's rows (`check_table`), `rules` holds each kind's rule, `references`
finds what a Reference may name, `findings` what a check reports.
"""

from __future__ import annotations

from .findings import Finding, count_kinds, finding_lines, new_findings, problem_kind
from .references import (
    LATER,
    NOT_AT_HAND,
    UNDECIDED,
    DeferredReferences,
    Later,
    ReferenceIndex,
    missing_row,
    reference_targets,
    reference_values,
    resolve_later,
    table_file_name,
)
from .table import BATCH_CELLS, check_table

__all__ = [
    "BATCH_CELLS",
    "LATER",
    "NOT_AT_HAND",
    "UNDECIDED",
    "DeferredReferences",
    "Finding",
    "Later",
    "ReferenceIndex",
    "check_table",
    "count_kinds",
    "finding_lines",
    "missing_row",
    "new_findings",
    "problem_kind",
    "reference_targets",
    "reference_values",
    "resolve_later",
    "table_file_name",
]
