"""Template kernels launched with template arguments host code computes (issue 14): a typedef
chosen by a class template's partial specialization (`IF<TYPE_IS<Real, double>::test, A, B>::type`)
inside a member of a class template instantiated explicitly, and the cuRAND types such launches
name. Each on a small program written for the test, with exact costs, lines and columns."""

from __future__ import annotations

import json
from pathlib import Path

from analyzer.cli import main
from analyzer.ir import types as T
from analyzer.ir.specializations import match, pattern_arguments, specialization_for

SELECT = """\
template <typename L, typename R> struct TYPE_IS { static const bool test = false; };
template <typename L> struct TYPE_IS<L, L> { static const bool test = true; };
template <bool, class L, class R> struct IF { typedef R type; };
template <class L, class R> struct IF<true, L, R> { typedef L type; };
struct Wide { double v[4]; };
struct Narrow { float v[4]; };

template <typename S> __global__ void init(S *const states, int n)
{
    states[threadIdx.x * n].v[0] = 0;
}

template <typename Real> class Est
{
  public:
    Real operator()();
};

template <typename Real> Real Est<Real>::operator()()
{
    typedef typename IF<TYPE_IS<Real, double>::test, Wide, Narrow>::type state_t;
    state_t *d;
    init<<<1, 32>>>(d, 1);
    return 0;
}
template class Est<float>;
template class Est<double>;
"""


def report(tmp_path: Path, capsys, source: str) -> dict:
    (tmp_path / "k.cu").write_text(source)
    main(["check", "--format", "json", "--isolated", "--exit-zero", "-q", "--show-host", str(tmp_path / "k.cu")])
    (entry,) = json.loads(capsys.readouterr().out)["files"]
    return entry


def test_a_typedef_chosen_by_a_partial_specialization_deduces_the_launched_kernel(tmp_path, capsys):
    entry = report(tmp_path, capsys, SELECT)
    assert entry["errors"] == []  # the unnamed `bool` parameter and both partial specializations are read
    got = sorted(
        (
            k["name"],
            k["launch"]["origin"],
            [(a["line"], a["column"], a["bytes"], a["per_request"]) for a in k["accesses"]],
        )
        for k in entry["kernels"]
    )
    assert got == [
        # Est<float>: TYPE_IS<float, double>::test is false, IF<false, ...> the primary: Narrow,
        # 16 bytes a lane, a 4-byte store: 16 sectors
        ("init<Narrow>", "launch at line 23", [(10, 5, 4, 16)]),
        # Est<double>: TYPE_IS<double, double> is the partial specialization: IF<true, ...>, Wide,
        # 32 bytes a lane, an 8-byte store: a sector each
        ("init<Wide>", "launch at line 23", [(10, 5, 8, 32)]),
    ]


def test_an_explicit_specialization_wins_over_a_partial_one():
    patterns = {"P<L, L>": ("L",), "P<int, int>": (), "P<L, R>": ("L", "R")}
    assert specialization_for("P", (T.INT, T.INT), patterns) == ("P<int, int>", {})
    assert specialization_for("P", (T.FLOAT, T.FLOAT), patterns) == ("P<L, L>", {"L": T.FLOAT})
    assert specialization_for("P", (T.FLOAT, T.INT), patterns) == ("P<L, R>", {"L": T.FLOAT, "R": T.INT})
    assert specialization_for("Q", (T.INT,), patterns) is None


def test_a_pattern_splits_at_its_top_level_commas_and_matches_truth_values():
    assert pattern_arguments("IF<true, S<a, b>, (1, 2)>") == ("IF", ("true", "S<a, b>", "(1, 2)"))
    assert pattern_arguments("Plain") is None
    assert match(("true", "L"), ("L",), (1, T.FLOAT)) == {"L": T.FLOAT}
    assert match(("false", "L"), ("L",), (1, T.FLOAT)) is None
    assert match(("4u", "L"), ("L",), (4, T.FLOAT)) == {"L": T.FLOAT}


def test_curand_sobol_states_and_direction_vectors_have_their_headers_sizes(tmp_path, capsys):
    source = (
        "__global__ void k(curandStateSobol32_t *s, curandStateSobol64_t *t, curandDirectionVectors32_t *v)\n{\n"
        "    s[threadIdx.x].x = 0;\n    t[threadIdx.x].x = 0;\n    v[threadIdx.x][0] = 0;\n}\n"
        "int main() { curandStateSobol32_t *s; curandStateSobol64_t *t; curandDirectionVectors32_t *v;\n"
        "    k<<<1, 32>>>(s, t, v); }\n"
    )
    (kernel,) = report(tmp_path, capsys, source)["kernels"]
    # 140, 536 and 128 bytes a lane: each lane's store in its own sector
    assert [(a["line"], a["column"], a["bytes"], a["stride_bytes"], a["per_request"]) for a in kernel["accesses"]] == [
        (3, 5, 4, 140, 32),
        (4, 5, 8, 536, 32),
        (5, 5, 4, 128, 32),
    ]
    assert T.builtin_type("curandDirectionVectors64_t") == T.ArrayType(T.ULONGLONG, 64)


PARTIAL = """\
struct Pair { float a; float b; };
template <typename Real, typename State>
__global__ void compute(Real *out, State *states)
{
    out[threadIdx.x] = states[threadIdx.x].a;
}
int main()
{
    double *d;
    Pair *p;
    compute<double><<<1, 32>>>(d, p);
}
"""


def test_a_launch_that_writes_the_first_template_arguments_deduces_the_rest(tmp_path, capsys):
    entry = report(tmp_path, capsys, PARTIAL)
    assert entry["errors"] == []
    got = [
        (k["name"], [(a["line"], a["column"], a["bytes"], a["per_request"]) for a in k["accesses"]])
        for k in entry["kernels"]
    ]
    # `Real` as written (double: 8-byte stores, 8 sectors), `State` deduced from `p` (Pair:
    # 8 bytes a lane, a 4-byte load of `.a`: 8 sectors)
    assert got == [("compute<double, Pair>", [(5, 5, 8, 8), (5, 24, 4, 8)])]


def test_a_written_template_argument_is_not_replaced_by_one_deduced_from_the_arguments(tmp_path, capsys):
    source = PARTIAL.replace("Real *out", "Real *out, Real scale").replace("(d, p)", "(d, 2, p)")
    entry = report(tmp_path, capsys, source)
    # `scale` is given the int 2, but `Real` is written: double
    assert [(k["name"], [a["bytes"] for a in k["accesses"]]) for k in entry["kernels"]] == [
        ("compute<double, Pair>", [8, 4])
    ]
