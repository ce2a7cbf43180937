"""The C++ of real CUDA code, part 3 (issue 15): statements and expressions, each construct in
a small kernel, costed exactly.

A declaration in an `if`/`while`/`switch` condition, `typeid`, `new`/`delete`, `goto` and
labels, effects under `&&`/`||`/`?:` and in loop conditions, memory written inside an
expression, references bound to call results, array members of `const &` parameters,
`__grid_constant__`, and an unbraced statement before `else` that is skipped.
"""

from __future__ import annotations

from test_cxx_constructs import costs, diagnostics  # the same helpers as part 1

CONDITION_DECLARATIONS = """\
__global__ void k(float *x, int *q)
{
    int t = threadIdx.x;
    if (int m = q[t])
        x[t] = m;
    switch (int s = q[t + 32]) {
    case 1: x[t + 64] = 1.0f; break;
    default: break;
    }
    while (int w = q[2 * t])
        x[t + 96] = w;
}
int main() { float *a; int *b; k<<<1, 32>>>(a, b); }
"""


def test_a_declaration_in_a_condition_declares_its_variable_and_tests_it():
    # each branch runs where the loaded value says: its cost is the worst over the lanes;
    # the while loop leaves by a break, so its trips (and totals) are not known
    assert diagnostics(CONDITION_DECLARATIONS, show_host=True) == []
    assert sorted(costs(CONDITION_DECLARATIONS)) == [
        (4, 17, "q[t]", 4, 4),
        (5, 9, "x[t]", 4, None),
        (6, 21, "q[t + 32]", 4, 4),
        (7, 13, "x[t + 64]", 4, None),
        (10, 20, "q[2 * t]", 8, None),
        (11, 9, "x[t + 96]", 4, None),
    ]


TYPEID_NEW_DELETE = """\
template <typename T>
__global__ void k(T *x, double *y)
{
    if (typeid(T) == typeid(float))
        x[threadIdx.x] = 1;
    else
        y[2 * threadIdx.x] = 2;
    int *h = new int[x[0] > 0 ? 4 : 8];
    h[0] = 1;
    delete[] h;
}
int main() { float *a; double *b; k<<<1, 32>>>(a, b); k<<<1, 32>>>(b, b); }
"""


def test_typeid_of_known_types_is_a_constant_and_new_allocates_an_address_not_known():
    # k<float> stores to x only, k<double> to y only (16-byte stride: 16 sectors); `new`
    # costs nothing itself, and a store through its pointer has no known address
    assert diagnostics(TYPEID_NEW_DELETE, show_host=True) == []
    assert sorted(costs(TYPEID_NEW_DELETE)) == [
        (5, 9, "x[threadIdx.x]", 4, 4),
        (7, 9, "y[2 * threadIdx.x]", 16, 16),
        (8, 22, "x[0]", 1, 1),
        (8, 22, "x[0]", 1, 1),
        (9, 5, "h[0]", None, None),
        (9, 5, "h[0]", None, None),
    ]


GOTOS = """\
__global__ void k(float *x, int *q, int n)
{
    int t = threadIdx.x;
    for (int i = 0; i < n; i++) {
        if (q[t] > i)
            goto done;
        x[t] = 1.0f;
    }
    x[t + 32] = 2.0f;
done:
    x[t + 64] = 3.0f;
    if (t < 8) goto out;
    x[2 * t] = 4.0f;
out:
    q[t] = 0;
}
int main() { float *a; int *b; k<<<1, 32>>>(a, b, 4); }
"""


def test_a_forward_goto_skips_to_its_label_for_the_lanes_that_take_it():
    # lanes 0-7 jump past x[2 * t]: lanes 8-31 store floats 16..62, 6 sectors; after each
    # label every lane runs again (x[t + 64], q[t]: exact); the loop a goto leaves has trips
    # that depend on the data
    assert diagnostics(GOTOS, show_host=True) == []
    assert sorted(costs(GOTOS)) == [
        (5, 13, "q[t]", 4, None),
        (7, 9, "x[t]", 4, None),
        (9, 5, "x[t + 32]", 4, None),
        (11, 5, "x[t + 64]", 4, 4),
        (13, 5, "x[2 * t]", 6, 6),
        (15, 5, "q[t]", 4, 4),
    ]


BACKWARD_GOTO = """\
__global__ void k(float *x)
{
    int t = threadIdx.x;
again:
    x[t] = 1.0f;
    if (x[t + 32] > 0) goto again;
}
"""


def test_a_backward_goto_is_reported_as_a_loop_not_modelled():
    assert diagnostics(BACKWARD_GOTO) == [(6, 24, "WL903", "warning")]


EFFECTS_ON_ONE_PATH = """\
__global__ void k(float *x, int *q, int n)
{
    int t = threadIdx.x;
    if (t < 16 && x[t++] > 0) x[t] = 1;
    int r = t > 3 ? q[t++] : 0;
    x[r] = 2;
}
int main() { float *a; int *b; k<<<1, 32>>>(a, b, 4); }
"""


def test_an_increment_under_and_or_and_conditional_happens_only_on_the_path_taken():
    # x[t++] is loaded by lanes 0-15 only (2 sectors), which then store x[t + 1] (floats 1..16:
    # 3 sectors) where the value allows; q[t] is read by the lanes whose t > 3 (t = 4..31)
    assert diagnostics(EFFECTS_ON_ONE_PATH, show_host=True) == []
    assert sorted(costs(EFFECTS_ON_ONE_PATH)) == [
        (4, 19, "x[t++]", 2, 2),
        (4, 31, "x[t]", 3, None),
        (5, 21, "q[t++]", 4, 4),
        (6, 5, "x[r]", 32, None),
    ]


EFFECTS_IN_LOOP_CONDITIONS = """\
__device__ int next(int *p, int i) { return p[i]; }
__global__ void k(float *x, int *q, int n)
{
    int t = threadIdx.x;
    while ((t = next(q, t)) != 0) x[t] = 1.0f;
    for (int i = 0; i++ < n; ) x[threadIdx.x + i] = 2.0f;
    int j = 0;
    do { x[j] = 3.0f; } while (++j < 4);
}
int main() { float *a; int *b; k<<<1, 32>>>(a, b, 4); }
"""


def test_an_assignment_or_increment_in_a_loop_condition_runs_each_time_round():
    # `i++ < n` tests i before the step: the body sees i = 1..4, each one float off the
    # 256-byte alignment (5 sectors); the loops end by a break, so their totals are not known
    assert diagnostics(EFFECTS_IN_LOOP_CONDITIONS, show_host=True) == []
    assert sorted(costs(EFFECTS_IN_LOOP_CONDITIONS)) == [
        (1, 45, "p[i]", 32, None),
        (5, 35, "x[t]", 32, None),
        (6, 32, "x[threadIdx.x + i]", 5, None),
        (8, 10, "x[j]", 1, None),
    ]


MEMORY_WRITTEN_IN_EXPRESSIONS = """\
struct Box { float lo, hi; };
__device__ Box make(float *x) { Box b; b.lo = x[threadIdx.x]; b.hi = 0; return b; }
__global__ void k(char *c, float *x, int *n)
{
    if (--(*c) == 0)
        x[threadIdx.x] = 0;
    const Box &b = make(x);
    x[threadIdx.x + 32] = b.lo;
    if ((n[threadIdx.x] = 5) > 0)
        x[threadIdx.x + 64] = 1;
}
int main() { char *c; float *a; int *n; k<<<1, 32>>>(c, a, n); }
"""


def test_memory_written_inside_an_expression_is_one_load_and_one_store():
    # `--(*c)`: every lane reads and writes the same byte (1 sector each); `b` is bound to
    # the value make() returns
    assert diagnostics(MEMORY_WRITTEN_IN_EXPRESSIONS, show_host=True) == []
    assert sorted(costs(MEMORY_WRITTEN_IN_EXPRESSIONS)) == [
        (2, 47, "x[threadIdx.x]", 4, 4),
        (5, 12, "*c", 1, 1),
        (5, 12, "*c", 1, 1),
        (6, 9, "x[threadIdx.x]", 4, None),
        (8, 5, "x[threadIdx.x + 32]", 4, 4),
        (9, 10, "n[threadIdx.x]", 4, 4),
        (10, 9, "x[threadIdx.x + 64]", 4, None),
    ]


CONST_REFERENCE_AND_GRID_CONSTANT = """\
typedef struct { float4 m[3]; } float3x4;
__constant__ float3x4 view;
__device__ float mul(const float3x4 &M, float4 v) { return M.m[0].x * v.x + M.m[1].y * v.y; }
typedef struct { int param[4]; } param_t;
__global__ void k(float *out, const float4 *in, __grid_constant__ const param_t p)
{
    out[threadIdx.x] = mul(view, in[threadIdx.x]) + p.param[1];
}
int main() { float *a; float4 *b; param_t p; k<<<1, 32>>>(a, b, p); }
"""


def test_array_members_of_a_const_reference_parameter_and_a_grid_constant_one_are_values():
    assert diagnostics(CONST_REFERENCE_AND_GRID_CONSTANT, show_host=True) == []
    assert sorted(costs(CONST_REFERENCE_AND_GRID_CONSTANT)) == [
        (7, 5, "out[threadIdx.x]", 4, 4),
        (7, 28, "view", None, None),
        (7, 34, "in[threadIdx.x]", 16, 16),
    ]


SKIPPED_STATEMENT_BEFORE_ELSE = """\
__global__ void k(float *x, int i)
{
    if (i < 0)
        throw C<float>::empty();
    else
        x[threadIdx.x] = 1.0f;
}
int main() { float *a; k<<<1, 32>>>(a, 1); }
"""


def test_an_unbraced_statement_skipped_before_else_keeps_its_if():
    # the throw is skipped (WL902), not the `if`: no syntax error at `else` (a qualified call,
    # `return C<float>::empty();`, was the example until part 5 read it)
    assert [d[2] for d in diagnostics(SKIPPED_STATEMENT_BEFORE_ELSE, show_host=True)] == ["WL902"]
    assert costs(SKIPPED_STATEMENT_BEFORE_ELSE) == [(6, 9, "x[threadIdx.x]", 4, 4)]
