"""The C++ of real CUDA code (issue 15): each construct in a small kernel, costed exactly.

Pointer-to-array casts and declarators, function pointers, reference-to-array parameters,
assignments and increments inside expressions (sequenced as C does), host code kept quiet
(`--show-host`), and the WL908 note at a kernel that indexes memory but has nothing costed.
"""

from __future__ import annotations

from analyzer.api import Options, check_source
from analyzer.syntax import ast as A
from analyzer.syntax.parse import parse


def costs(text: str, **options: object) -> list[tuple[int, int, str, int | None, int | None]]:
    """(line, column, access, sectors or wavefronts per request, total) of every access."""
    report = check_source("k.cu", text, Options(**options))  # type: ignore[arg-type]
    out = []
    for analysis in report.kernels:
        for c in analysis.costs:
            where = report.locate(c.access.span)
            out.append((where.line, where.column, c.access.text, c.per_request, c.total))
    return out


def diagnostics(text: str, **options: object) -> list[tuple[int, int, str, str]]:
    report = check_source("k.cu", text, Options(**options))  # type: ignore[arg-type]
    return [(d.location.line, d.location.column, d.code, str(d.severity)) for d in report.diagnostics]


POINTER_TO_ARRAY = """\
typedef float DATA_TYPE;
#define NJ 64
__global__ void k(DATA_TYPE *A_, DATA_TYPE *B_)
{
    DATA_TYPE (*A)[NJ] = (DATA_TYPE(*)[NJ])A_;
    float (*B)[NJ] = (float(*)[NJ])B_;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    B[i][j] = A[i][j] + A[j][i];
}
int main() { float *a, *b; k<<<dim3(2, 2), dim3(32, 8)>>>(a, b); }
"""


def test_a_cast_to_pointer_to_array_indexes_rows_of_the_declared_length():
    # 2 x 2 blocks of 8 warps: 32 requests; A[j][i] puts neighbouring lanes 64 floats apart
    assert sorted(costs(POINTER_TO_ARRAY)) == [
        (9, 5, "B[i][j]", 4, 128),
        (9, 15, "A[i][j]", 4, 128),
        (9, 25, "A[j][i]", 32, 1024),
    ]
    assert diagnostics(POINTER_TO_ARRAY, show_host=True) == []


FUNCTION_POINTERS = """\
typedef float (*op_t)(float, float);
__device__ float add(float a, float b) { return a + b; }
__device__ op_t ops[2] = {add, add};
__device__ void apply(float *x, float (*f)(float, float)) { x[threadIdx.x] = f(x[threadIdx.x], 1.0f); }
__global__ void k(float *x, void (*cb)(void *), unsigned (&freq)[4])
{
    float (*g)(float, float) = add;
    void (*table[3])(void *);
    x[threadIdx.x] = g(x[threadIdx.x], 2.0f);
    apply(x, add);
}
int main() { void (*fp)(int) = 0; float *a; k<<<1, 32>>>(a, 0, 0); }
"""


def test_function_pointer_declarators_parameters_typedefs_and_arrays_are_read():
    assert diagnostics(FUNCTION_POINTERS, show_host=True) == []
    assert sorted(costs(FUNCTION_POINTERS)) == [
        (4, 61, "x[threadIdx.x]", 4, 4),
        (4, 80, "x[threadIdx.x]", 4, 4),
        (9, 5, "x[threadIdx.x]", 4, 4),
        (9, 24, "x[threadIdx.x]", 4, 4),
    ]


def test_a_pointer_to_function_is_a_variable_and_a_reference_to_array_a_parameter():
    unit = parse(FUNCTION_POINTERS).unit
    kernel = next(d for d in unit.decls if isinstance(d, A.FunctionDef) and d.name == "k")
    cb, freq = kernel.params[1].declarator, kernel.params[2].declarator
    assert cb.params is None and [k for k, _ in cb.derivations] == ["pointer", "function"]
    assert freq.name == "freq" and [k for k, _ in freq.derivations] == ["reference", "array"]


SIDE_EFFECTS = """\
__device__ float *next(float *p) { return p + 1; }
__global__ void k(float *w, float *p, const float *in)
{
    int idx = threadIdx.x;
    w[idx++] = 1.0f;
    w[idx] = 2.0f;
    float *q;
    if ((q = next(p)) == 0) return;
    *p++ = in[threadIdx.x];
    p[threadIdx.x] = 3.0f;
    int j = 2 * threadIdx.x;
    float v = in[++j];
    w[32 + j] = v;
}
int main() { float *a; k<<<1, 32>>>(a, a, a); }
"""


def test_increments_and_assignments_inside_expressions_are_sequenced_as_c_does():
    # w[idx++] stores at idx, then idx is one more (w[idx]: 4 bytes off, 5 sectors); *p++ is one
    # word for all lanes, then p is one float on (5 sectors); in[++j] reads at 2 * tid + 1
    found = sorted((line, col, text, cost) for line, col, text, cost, _total in costs(SIDE_EFFECTS))
    assert found == [
        (5, 5, "w[idx++]", 4),
        (6, 5, "w[idx]", 5),
        (9, 5, "*p++", 1),
        (9, 12, "in[threadIdx.x]", 4),
        (10, 5, "p[threadIdx.x]", 5),
        (12, 15, "in[++j]", 8),
        (13, 5, "w[32 + j]", 8),
    ]
    assert diagnostics(SIDE_EFFECTS, show_host=True) == []


def test_an_increment_under_a_condition_happens_only_where_the_condition_holds():
    # part 3: `i++` runs only where n > 0 (not known), so p[i] is p[tid + 1] or p[tid]: 5 sectors at worst
    text = "__global__ void k(int *p, int n) { int i = threadIdx.x; int v = n > 0 && p[i++] > 0; p[i] = v; }"
    assert diagnostics(text) == []
    assert sorted(costs(text)) == [(1, 74, "p[i++]", 4, None), (1, 86, "p[i]", 5, None)]


HOST_CODE = """\
__global__ void k(float *p) { p[threadIdx.x] = 1.0f; }
void host_helper() {
    auto f = [](int x) { return x; };
    int y = = 3;
}
int main() { float *a; k<<<1, 32>>>(a); return 0; }
"""


def test_what_host_code_warplint_cannot_follow_is_not_reported_unless_asked():
    assert diagnostics(HOST_CODE) == []
    assert diagnostics(HOST_CODE, show_host=True) == [
        (3, 14, "WL902", "warning"),
        (4, 13, "WL901", "warning"),  # shown, never an error: the exit status stays 0
    ]
    assert costs(HOST_CODE) == [(1, 31, "p[threadIdx.x]", 4, 4)]


def test_a_syntax_error_in_a_kernel_is_still_reported():
    text = "__global__ void k(float *p) { p[threadIdx.x] = 1.0f +; }\nint main() { float *a; k<<<1, 32>>>(a); }\n"
    assert diagnostics(text) == [(1, 54, "WL901", "error")]


def test_a_kernel_that_indexes_memory_with_nothing_costed_gets_a_note_saying_why():
    text = (
        "__global__ void k(int *out) { int *p = (int *)lookup(threadIdx.x); p[0] = 1; }\n"
        "int main() { int *o; k<<<1, 32>>>(o); }\n"
    )
    report = check_source("k.cu", text, Options())
    (note,) = report.diagnostics
    assert (note.location.line, note.location.column, note.code, str(note.severity)) == (1, 17, "WL908", "note")
    assert (
        note.message
        == "no memory access of kernel `k` was costed: the addresses of its 1 accesses could not be worked out"
    )
    assert diagnostics(text.replace("p[0] = 1;", "int q = *(int *)0 != 0;").replace("*(int *)0", "0")) == []


def test_a_typedef_of_a_function_pointer_names_an_eight_byte_type():
    text = (
        "typedef float (*fp)(float);\n"
        "__global__ void k(float *x, fp *fs) { fp f = fs[threadIdx.x]; x[threadIdx.x] = f(1.0f); }\n"
        "int main() { float *a; fp *b; k<<<1, 32>>>(a, b); }\n"
    )
    # 32 lanes x 8 bytes: 8 sectors, the ideal
    assert sorted(costs(text)) == [(2, 46, "fs[threadIdx.x]", 8, 8), (2, 63, "x[threadIdx.x]", 4, 4)]
    assert diagnostics(text, show_host=True) == []
