"""The rules stage: `check(analyses, arch, ...)` turns kernel analyses into findings.

One module per rule (`wl101_bank_conflict.py` ...), each a `Rule` subclass whose
docstring is its documentation; `registry.py` lists them and runs them.
"""

from analyzer.rules.base import SECTIONS, CheckContext, Reanalyze, Rule
from analyzer.rules.registry import (
    DIAGNOSTIC_CODES,
    RULES,
    UnknownRule,
    check,
    get_rule,
    get_rules,
    is_selected,
    rule_documentation,
    rules_table,
)

__all__ = [
    "DIAGNOSTIC_CODES",
    "RULES",
    "SECTIONS",
    "CheckContext",
    "Reanalyze",
    "Rule",
    "UnknownRule",
    "check",
    "get_rule",
    "get_rules",
    "is_selected",
    "rule_documentation",
    "rules_table",
]
