"""Every rule, one line each (like ruff's codes.rs), and the `check` stage that runs them.

Code families (house style section 6): WL1xx shared memory, WL2xx global coalescing,
WL3xx struct layout and alignment, WL9xx parse and internal problems (reported by the
earlier stages as `Diagnostic`s; listed in `DIAGNOSTIC_CODES` so that `warplint rules`
and SARIF can describe them). A retired code is never reused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from analyzer.analysis.results import KernelAnalysis
from analyzer.analysis.verdict import Assume
from analyzer.arch import Architecture
from analyzer.diagnostics import Severity
from analyzer.findings import Finding
from analyzer.rules.base import CheckContext, Reanalyze, Rule
from analyzer.rules.diagnostic_docs import DIAGNOSTIC_DOCUMENTATION
from analyzer.rules.wl101_bank_conflict import BankConflict
from analyzer.rules.wl201_uncoalesced_access import UncoalescedAccess
from analyzer.rules.wl301_misaligned_struct import MisalignedStruct

__all__ = [
    "DIAGNOSTIC_CODES",
    "DIAGNOSTIC_DOCUMENTATION",
    "RULES",
    "UnknownRule",
    "check",
    "get_rule",
    "get_rules",
    "is_selected",
    "rule_documentation",
    "rules_table",
]

# fmt: off
RULES: dict[str, type[Rule]] = {
    "WL101": BankConflict,
    "WL201": UncoalescedAccess,
    "WL301": MisalignedStruct,
}

#: Problems with the input, reported by the earlier stages: code -> (name, summary).
DIAGNOSTIC_CODES: dict[str, tuple[str, str]] = {
    "WL900": ("internal-error",
              "warplint itself failed on this input (please report it)"),
    "WL901": ("syntax-error",
              "the source does not parse; the construct is skipped"),
    "WL902": ("unsupported-construct",
              "a construct warplint does not model; its accesses are not checked"),
    "WL903": ("lowering-problem",
              "a statement or expression could not be lowered to the IR"),
    "WL904": ("template-never-launched",
              "a template kernel is never instantiated by a launch, so it is not checked"),
    "WL905": ("recursion",
              "device functions call each other recursively; calls on the cycle are not inlined"),
    "WL906": ("misspelled-align",
              "`__align(n)__` is not CUDA: the attribute is spelled `__align__(n)`"),
    "WL907": ("cuda-limit",
              "a value CUDA refuses (launch dimensions, __launch_bounds__, __align__, a shared array's "
              "size); what it makes invalid is not analysed"),
    "WL908": ("no-costed-access",
              "a kernel that indexes memory ended with no costed access; the note says what was missing"),
    "WL910": ("input-error",
              "a path that is not a readable CUDA text file"),
    "WL920": ("unused-suppression",
              "a suppression comment that silenced nothing (--report-unused-suppressions)"),
    "WL921": ("invalid-suppression",
              "a suppression comment naming an unknown rule, or a NOLINTBEGIN/NOLINTEND without its pair"),
    "WL930": ("verify-mismatch",
              "check --verify: the reference simulator's cost of an access disagrees with the static one"),
    "WL940": ("budget-exceeded",
              "a stage spent its budget of steps on this file and stopped short; the message says what was cut"),
}

# fmt: on


class UnknownRule(KeyError):
    """A rule selector (code, name or code prefix) that matches nothing."""

    def __init__(self, selector: str) -> None:
        super().__init__(selector)
        self.selector = selector

    def __str__(self) -> str:
        known = ", ".join(f"{code} ({rule.name})" for code, rule in RULES.items())
        return f"unknown rule {self.selector!r}; rules: {known}"


def _all_codes() -> list[str]:
    return list(RULES) + list(DIAGNOSTIC_CODES)


def _matches(selector: str, code: str, name: str) -> bool:
    s = selector.strip()
    if not s:
        return False
    return s.upper() == "ALL" or code.startswith(s.upper()) or s.lower() == name


def get_rules(selector: str) -> list[type[Rule]]:
    """The rules a selector names: a code ("WL101"), a name ("bank-conflict"), a code
    prefix ("WL1", "WL"), or "ALL". Raises `UnknownRule` when it names neither a rule
    nor a diagnostic code; a WL9xx selector gives no rule."""
    rules = [rule for code, rule in RULES.items() if _matches(selector, code, rule.name)]
    if not rules and not any(_matches(selector, code, name) for code, (name, _) in DIAGNOSTIC_CODES.items()):
        raise UnknownRule(selector)
    return rules


def get_rule(code_or_name: str) -> type[Rule]:
    """The one rule a code, name or code prefix names ("WL101", "bank-conflict", "WL1").

    Raises `UnknownRule` when it names no rule, or more than one (a prefix like "WL").
    """
    rules = [rule for code, rule in RULES.items() if _matches(code_or_name, code, rule.name)]
    if len(rules) != 1:
        raise UnknownRule(code_or_name)
    return rules[0]


def is_selected(code: str, select: Iterable[str] | None = None, ignore: Iterable[str] | None = None) -> bool:
    """Whether findings or diagnostics with `code` are reported under `select`/`ignore`
    (selectors as in `get_rules`). WL900, an internal error, is always reported."""
    if code == "WL900":
        return True
    name = RULES[code].name if code in RULES else DIAGNOSTIC_CODES.get(code, ("", ""))[0]
    if select is not None and not any(_matches(s, code, name) for s in select):
        return False
    return not (ignore is not None and any(_matches(s, code, name) for s in ignore))


def _validate(selectors: Iterable[str] | None) -> list[str] | None:
    if selectors is None:
        return None
    selectors = list(selectors)
    for s in selectors:
        get_rules(s)  # raises UnknownRule for a selector that matches nothing
    return selectors


ReanalyzeFactory = Callable[[KernelAnalysis], "Reanalyze | None"]


def check(
    analyses: Iterable[KernelAnalysis],
    arch: Architecture,
    reanalyze_factory: ReanalyzeFactory | None = None,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    *,
    raise_errors: bool = False,
    assume: str = Assume.TYPICAL,
) -> list[Finding]:
    """Run the selected rules on every kernel analysis; findings sorted by (span.start, code).

    `reanalyze_factory(analysis)` gives the `reanalyze` callable for that kernel (see
    `CheckContext`), or None. A rule that raises becomes a WL900 finding on the kernel
    (or propagates, with `raise_errors=True`). Identical findings (one access reached
    twice through inlined calls) are reported once. `assume` is the verdict policy
    (`analysis/verdict.py`): which values of unknowns a finding may rest on.
    """
    select, ignore = _validate(select), _validate(ignore)
    rules = [rule() for code, rule in RULES.items() if is_selected(code, select, ignore)]
    findings: list[Finding] = []
    seen: set[tuple[object, ...]] = set()
    for analysis in analyses:
        reanalyze = reanalyze_factory(analysis) if reanalyze_factory is not None else None
        ctx = CheckContext(arch=arch, reanalyze=reanalyze, assume=Assume(assume))
        for rule in rules:
            try:
                produced = list(rule.check(analysis, ctx))
            except Exception as exc:  # a bug in a rule must not hide the other findings
                if raise_errors:
                    raise
                produced = [_internal_error(rule, analysis, exc)]
            for f in produced:
                key = (f.code, f.span, f.kernel, f.message, f.fix, f.detail)
                if key not in seen:
                    seen.add(key)
                    findings.append(f)
    findings.sort(key=lambda f: (f.span.start, f.code, f.span.end, f.kernel, f.message))
    return findings


def _internal_error(rule: Rule, analysis: KernelAnalysis, exc: Exception) -> Finding:
    import traceback  # (only for an internal error: 5 ms of imports)

    kernel = analysis.kernel.display_name
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    return Finding(
        code="WL900",
        rule=DIAGNOSTIC_CODES["WL900"][0],
        severity=Severity.ERROR.value,
        span=analysis.kernel.name_span,
        kernel=kernel,
        message=f"internal error in {rule.code} ({rule.name}) on kernel `{kernel}`: {type(exc).__name__}: {exc}",
        fix=None,
        args={"rule": rule.code, "exception": type(exc).__name__, "error": str(exc)},
        detail=(f"at {where.filename}:{where.lineno} in {where.name}",) if where else (),
    )


# ----------------------------------------------------------------------------- documentation
def rule_documentation(code_or_name: str) -> str:
    """What `warplint explain RULE` prints: "WL101 bank-conflict: summary", a blank line,
    and the rule's docstring, dedented. Diagnostic codes (WL9xx) get their summary."""
    key = code_or_name.strip()
    for code, (name, summary) in DIAGNOSTIC_CODES.items():
        if key.upper() == code or key.lower() == name:
            more = DIAGNOSTIC_DOCUMENTATION.get(code)
            return f"{code} {name}: {summary}\n" + (f"\n{more}\n" if more else "")
    rule = get_rule(key)
    return f"{rule.code} {rule.name}: {rule.summary}\n\n{rule.documentation()}\n"


def rules_table(include_diagnostics: bool = False) -> list[tuple[str, str, str]]:
    """`(code, name, summary)` for every rule, in code order (and the WL9xx codes)."""
    rows = [(code, rule.name, rule.summary) for code, rule in RULES.items()]
    if include_diagnostics:
        rows += [(code, name, summary) for code, (name, summary) in DIAGNOSTIC_CODES.items()]
    return sorted(rows)
