"""A branch's mask is built when something reads it (`interpret.Ctx.under`): an access in the
branch, a nested branch's access, an early return that masks the rest; so is the condition
under which a block returned (`interpret._Deferred`). A small kernel written for the test: the
masks the accesses carry are those built on entering each branch, and a branch that makes no
access (an inlined helper's arithmetic, its early return) builds none."""

from __future__ import annotations

from analyzer.analysis import interpret
from analyzer.analysis import symbolic as S
from analyzer.analysis.results import LaunchConfig
from analyzer.arch import get_arch
from analyzer.ir.lower import lower
from analyzer.syntax.parse import parse

PROGRAM = """\
__device__ float twice_or_more(float x, int n) {
    if (n > 8)
        return x * 4.0f;
    if (n > 4) {
        x = x * 2.0f;
    } else {
        if (n > 1)
            x = x + 1.0f;
    }
    return x;
}

__global__ void k(float *a, int n, int m) {
    float v = twice_or_more(1.0f, n);
    if (threadIdx.x < n) {
        if (threadIdx.x > m)
            return;
        a[threadIdx.x] = v;
    } else {
        a[threadIdx.x + 32] = v;
    }
    a[threadIdx.x + 64] = v;
}
"""


def _occurrences(monkeypatch) -> tuple[list, int]:
    """The kernel's accesses as the interpreter records them, and the masks it built."""
    built = []
    logical_and = S.logical_and

    def counting(a, b):
        built.append((a, b))
        return logical_and(a, b)

    monkeypatch.setattr(interpret.S, "logical_and", counting)
    module = lower(parse(PROGRAM).unit, PROGRAM, "k.cu")
    interp = interpret.Interpreter(module, LaunchConfig((32, 1, 1), (1, 1, 1), "--block"), {}, get_arch())
    interp.run_kernel(module.kernels[0])
    monkeypatch.setattr(interpret.S, "logical_and", logical_and)
    return interp.occurrences, len(built)


def test_each_access_carries_the_mask_of_its_branches_and_a_branch_without_one_builds_none(monkeypatch):
    occurrences, built = _occurrences(monkeypatch)
    x, n, m = S.sym("threadIdx.x"), S.sym("n"), S.sym("m")
    inside = S.logical_and(S.const(1), S.compare("<", x, n))
    kept = S.logical_and(inside, S.logical_not(S.compare(">", x, m)))  # did not return
    outside = S.logical_and(S.const(1), S.logical_not(S.compare("<", x, n)))
    after = S.logical_and(S.const(1), S.logical_not(S.logical_and(inside, S.compare(">", x, m))))
    assert [(o.access.text, o.mask) for o in occurrences] == [
        ("a[threadIdx.x]", kept),
        ("a[threadIdx.x + 32]", outside),
        ("a[threadIdx.x + 64]", after),
    ]
    # built: the then-branch's mask, the rest of it after the `return`, the else-branch's, the
    # rest of the kernel's, and the two conditions under which a block returned; none of the
    # helper's six branches, nor its early return's, nor the nested `if`'s else (16 when each
    # was built on entry)
    assert built == 6


def _chain(depth: int) -> tuple[interpret.Condition, S.Expr]:
    """A deferred condition of `depth` sides, `&&` and `||` in turn with negated sides, and the
    same built at once."""
    conds = [S.compare("<", S.sym("threadIdx.x"), S.sym(f"n{i}")) for i in range(depth)]
    deferred: interpret.Condition = conds[0]
    eager = conds[0]
    for i, c in enumerate(conds[1:]):
        if i % 2:
            deferred = interpret._Deferred("||", deferred, c, False, True)
            eager = S.logical_or(eager, S.logical_not(c))
        else:
            deferred = interpret._Deferred("&&", c, deferred, True, False)
            eager = S.logical_and(S.logical_not(c), eager)
    return deferred, eager


def test_a_deferred_condition_is_what_building_it_at_once_gives():
    """`built` of `&&`, `||` and negated sides gives the expression `logical_and`, `logical_or`
    and `logical_not` give (nested less than `S.MAX_DEPTH`, past which terms are unknowns),
    and keeps it."""
    deferred, eager = _chain(S.MAX_DEPTH - 4)
    assert isinstance(deferred, interpret._Deferred) and not deferred.is_const
    got = interpret.built(deferred)
    assert got == eager and interpret.built(deferred) is got


def test_a_deferred_condition_is_built_without_recursion_however_deep():
    deferred, _ = _chain(3000)  # a helper of 3,000 early returns
    assert isinstance(interpret.built(deferred), S.Expr)
