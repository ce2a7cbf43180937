"""A branch's mask is built when something reads it (`interpret.Ctx.under`): an access in the
branch, a nested branch's access, an early return that masks the rest. Small kernels written
for the test: the masks the accesses carry are those built on entering each branch, and a
branch that makes no access (an inlined helper's arithmetic) builds none."""

from __future__ import annotations

from analyzer.analysis import interpret
from analyzer.analysis import symbolic as S
from analyzer.analysis.results import LaunchConfig
from analyzer.arch import get_arch
from analyzer.ir.lower import lower
from analyzer.syntax.parse import parse

PROGRAM = """\
__device__ float twice_or_more(float x, int n) {
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
    # helper's four branches, nor of the nested `if`'s else (12 when each was built on entry)
    assert built == 6
