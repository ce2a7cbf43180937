"""The C++ of real CUDA code, part 5 (issue 15): the constants of headers warplint does not
read, and the constructs of device code still not read after part 4; each in a small kernel,
costed exactly.
"""

from __future__ import annotations

import pytest

from analyzer.source.cuda_macros import HEADER_CONSTANTS
from analyzer.source.preprocess import preprocess
from test_cxx_constructs import costs, diagnostics  # the same helpers as part 1

# ----------------------------------------------------------------------------- header constants

# an integer constant of each header, used where the access's cost depends on it: the index is
# the thread's own when the constant compares as the header says, else 0 (a broadcast)
HEADER_CONSTANT_USE = """\
__global__ void k(float *x)
{
    int i = threadIdx.x;
    x[(CONDITION) ? i : 0] = 1.0f;
}
int main() { float *x; k<<<1, 32>>>(x); }
"""


@pytest.mark.parametrize(
    ("condition", "expanded"),
    [
        (
            "INT_MAX == 2147483647 && INT_MIN < -2147483647",
            "2147483647 == 2147483647 && (-2147483647 - 1) < -2147483647",
        ),
        ("UINT_MAX == 4294967295u && CHAR_BIT == 8", "4294967295U == 4294967295u && 8 == 8"),  # <limits.h>
        ("UINT32_MAX == 4294967295u && INT32_MAX == INT_MAX", "4294967295U == 4294967295u && 2147483647 == 2147483647"),
        ("LLONG_MAX > 0 && SHRT_MAX == 32767", "9223372036854775807LL > 0 && 32767 == 32767"),
    ],
)
def test_an_integer_header_constant_has_its_header_s_value(condition, expanded):
    text = HEADER_CONSTANT_USE.replace("CONDITION", condition)
    assert diagnostics(text, show_host=True) == []
    assert costs(text) == [(4, 5, f"x[({expanded}) ? i : 0]", 4, 4)]


# a floating-point constant of each header, in a kernel that is clean and costed: float values
# are not followed, so what matters is that the name is known
HEADER_FLOAT_USE = """\
__global__ void k(float *x)
{
    int i = threadIdx.x;
    float best = NAME;
    if (x[i] < best) x[i] = best;
}
int main() { float *x; k<<<1, 32>>>(x); }
"""


@pytest.mark.parametrize(
    "name", ["FLT_MAX", "FLT_EPSILON", "DBL_MAX", "M_PI", "M_SQRT2", "CUDART_PI_F", "CUDART_INF_F"]
)
def test_a_floating_point_header_constant_is_known(name):
    text = HEADER_FLOAT_USE.replace("NAME", name)
    assert diagnostics(text, show_host=True) == []
    assert costs(text) == [(5, 9, "x[i]", 4, 4), (5, 22, "x[i]", 4, None)]  # the store: data-dependent lanes


def test_every_header_constant_reads_as_a_value():
    text = "\n".join(f"v = {name};" for name in HEADER_CONSTANTS)
    pre = preprocess(text, "k.cu")
    assert pre.diagnostics == ()
    assert pre.text.split("\n") == [f"v = {value};" for value in HEADER_CONSTANTS.values()]


def test_a_file_s_own_definition_replaces_a_header_constant_silently():
    # trimmed benchmark kernels define what <math.h> would: no redefinition warning
    pre = preprocess("#define M_PI 3.14f\n#ifndef FLT_MAX\n#define FLT_MAX 1\n#endif\nv = M_PI + FLT_MAX;\n", "k.cu")
    assert pre.diagnostics == ()
    assert pre.text.split("\n")[4] == "v = 3.14f + 3.40282347e+38F;"
