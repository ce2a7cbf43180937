"""The C++ of real CUDA code, part 2 (issue 15): each construct in a small kernel, costed exactly.

Explicitly instantiated kernel templates, ...
"""

from __future__ import annotations

from analyzer.api import Options, check_source


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


EXPLICIT_INSTANTIATION = """\
template <class T> __global__ void k(T *x, T *y);
template __global__ void k<double>(double *x, double *y);
template <class T>
__global__ void k(T *x, T *y)
{
    y[threadIdx.x] = x[2 * threadIdx.x];
}
"""


def test_an_explicitly_instantiated_kernel_template_is_analysed_for_its_arguments():
    # never launched: the 256-thread block assumed; doubles 16 bytes apart touch 16 sectors, ideal 8
    assert diagnostics(EXPLICIT_INSTANTIATION) == []
    assert sorted(costs(EXPLICIT_INSTANTIATION)) == [
        (6, 5, "y[threadIdx.x]", 8, None),
        (6, 22, "x[2 * threadIdx.x]", 16, None),
    ]
