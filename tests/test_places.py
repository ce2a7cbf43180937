"""One finding per source place and rule (`analyzer/places.py`), through the command line.

Instantiations, launch configurations and the load and store of one `+=` merge into one
finding with the worst cost; a header's finding is reported once per run; a finding in an
inlined device function names the kernel line that called it. JSON output is validated
against docs/schema-v1.json.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.findings import Finding
from analyzer.places import finding_cost
from runner import warplint  # tests/runner.py

REPO = Path(__file__).resolve().parents[1]

KERNELS = """\
template <typename T>
__global__ void copy_offset(const T* in, T* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i + 1];
}

__device__ void swap_pair(float &a, float &b)
{
    float t = a;
    a = b;
    b = t;
}

__global__ void pairs(float* data)
{
    __shared__ float s[64 * 32];
    int t = threadIdx.x;
    s[t] = data[t];
    __syncthreads();
    swap_pair(s[t * 32], s[t * 32 + 1]);
    data[t] = s[t];
}

int main()
{
    float *f; double *d;
    copy_offset<<<4, 256>>>(f, f);
    copy_offset<<<4, 256>>>(d, d);
    pairs<<<1, 32>>>(f);
    return 0;
}
"""

HEADER = """\
__global__ void strided(float* x)
{
    x[32 * threadIdx.x] = 1.0f;
}
"""


@pytest.fixture
def kernels(tmp_path: Path) -> Path:
    (tmp_path / "t.cu").write_text(KERNELS)
    return tmp_path


def test_instantiations_at_one_place_are_one_finding_with_the_worst_cost(kernels):
    result = warplint("check", "--format", "concise", "t.cu", cwd=kernels)
    assert result.returncode == 1  # merging never changes the exit status
    assert result.stdout.splitlines() == [
        "t.cu:5:14: WL201 uncoalesced global load of `in[i + 1]`: 9 sectors per request, ideal 8 (88.9% efficiency)",
        "t.cu:10:15: WL101 16-way bank conflict on `a`: 32 wavefronts per request, ideal 2",
        "t.cu:12:5: WL101 16-way bank conflict on `b`: 32 wavefronts per request, ideal 2",
    ]
    assert result.stderr == "Found 3 findings in 1 file.\n"


def test_per_instance_keeps_each_instance_a_finding_of_its_own(kernels):
    result = warplint("check", "--per-instance", "--format", "json", "t.cu", cwd=kernels)
    assert result.returncode == 1
    findings = json.loads(result.stdout)["files"][0]["findings"]
    assert [(f["line"], f["column"], f["code"], f["kernel"], f["args"].get("sectors")) for f in findings] == [
        (5, 14, "WL201", "copy_offset<double>", 9),
        (5, 14, "WL201", "copy_offset<float>", 5),
        (10, 15, "WL101", "pairs", None),
        (12, 5, "WL101", "pairs", None),
    ]
    assert all("instances" not in f for f in findings)
    assert result.stderr == "Found 4 findings in 1 file.\n"


def test_the_merged_finding_says_what_it_covers_in_detail_and_args(kernels):
    result = warplint("check", "--format", "json", "t.cu", cwd=kernels)
    document = json.loads(result.stdout)
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator(json.loads((REPO / "docs" / "schema-v1.json").read_text())).validate(document)
    merged = document["files"][0]["findings"][0]
    assert (merged["line"], merged["column"], merged["kernel"]) == (5, 14, "copy_offset<double>")
    assert merged["instances"] == 2
    assert merged["args"]["sectors"] == 9
    assert merged["args"]["instances"] == [
        {"kernel": "copy_offset<double>", "op": "load", "cost": 9},
        {"kernel": "copy_offset<float>", "op": "load", "cost": 5},
    ]
    assert merged["detail"][-1] == (
        "one finding for 2 instances at this place: `copy_offset<double>`, `copy_offset<float>`; "
        "the worst shown (`copy_offset<double>`), costs per request 9, 5"
    )
    assert "instances" not in document["files"][0]["findings"][1]  # one finding: nothing added


def test_a_finding_in_an_inlined_helper_names_the_kernel_line_that_called_it(kernels):
    result = warplint("check", "t.cu", cwd=kernels)
    lines = result.stdout.splitlines()
    at = lines.index("t.cu:10:15: warning: 16-way bank conflict on `a`: 32 wavefronts per request, ideal 2 [WL101]")
    assert "t.cu:21:5: note: `swap_pair` called from kernel `pairs` here" in lines[at:]
    related = json.loads(warplint("check", "--format", "json", "t.cu", cwd=kernels).stdout)["files"][0]["findings"][1]
    assert related["related"] == [
        {
            "line": 21,
            "column": 5,
            "end_line": 21,
            "end_column": 40,
            "message": "`swap_pair` called from kernel `pairs` here",
        }
    ]
    sarif = json.loads(warplint("check", "--format", "sarif", "t.cu", cwd=kernels).stdout)
    result_ = sarif["runs"][0]["results"][1]
    assert [r["physicalLocation"]["region"]["startLine"] for r in result_["relatedLocations"]] == [21]


def test_the_load_and_store_of_a_compound_assignment_are_one_finding():
    result = warplint("check", "--format", "concise", "samples/004_noncoalesced_float3.cu", cwd=REPO)
    at_15 = [line for line in result.stdout.splitlines() if ":15:8:" in line]
    assert at_15 == [
        "samples/004_noncoalesced_float3.cu:15:8: WL201 uncoalesced global load of `in[idx].x`: "
        "12 sectors per request, ideal 4 (33.3% efficiency)",
        "samples/004_noncoalesced_float3.cu:15:8: WL301 array of `float3` (12 bytes, align 4) in global memory: "
        "each field is a separate access strided by 12 bytes",
    ]


def test_a_header_finding_is_reported_once_per_run(tmp_path):
    (tmp_path / "h.cuh").write_text(HEADER)
    (tmp_path / "a.cu").write_text('#include "h.cuh"\nint main()\n{\n    float *x;\n    strided<<<1, 32>>>(x);\n}\n')
    (tmp_path / "b.cu").write_text('#include "h.cuh"\nvoid run_b(float *x)\n{\n    strided<<<2, 64>>>(x);\n}\n')
    result = warplint("check", "--format", "concise", "a.cu", "b.cu", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "h.cuh:3:5: WL201 uncoalesced global store of `x[32 * threadIdx.x]`: 32 sectors per request, "
        "ideal 4 (12.5% efficiency)"
    ]
    assert result.stderr == "Found 1 finding in 1 file.\n"


def test_the_cost_of_a_finding_is_its_wavefronts_or_sectors():
    def finding(**args: object) -> Finding:
        from analyzer.diagnostics import Span

        return Finding("WL101", "bank-conflict", "warning", Span(0, 1), "k", "m", None, args)

    assert finding_cost(finding(wavefronts=4, ways=4)) == 4
    assert finding_cost(finding(sectors=9)) == 9
    assert finding_cost(finding(size=12)) is None


HELPER_CALLED_TWICE = """\
__device__ void put(float *p, int i)
{
    p[i * 2] = 1.0f;
    p[i * 3] = 2.0f;
}

__device__ void other(float *p) { p[threadIdx.x] = 0.0f; }

__global__ void twice(float *p)
{
    other(p);
    put(p, threadIdx.x);
    put(p + 64, threadIdx.x);
}
"""


def test_each_finding_in_a_helper_called_twice_names_both_calls_and_the_body_is_read_once(
    tmp_path, monkeypatch, capsys
):
    """Both findings in `put` get both kernel lines that call it, in order; the kernel's calls
    are found once for the two (`places._calls_by_name`)."""
    from analyzer import cli, places

    (tmp_path / "t.cu").write_text(HELPER_CALLED_TWICE)
    monkeypatch.chdir(tmp_path)
    read = []
    calls_by_name = places._calls_by_name
    monkeypatch.setattr(places, "_calls_by_name", lambda kernel: read.append(kernel.name) or calls_by_name(kernel))
    assert cli.main(["check", "--no-cache", "--block", "256", "--format", "json", "t.cu"]) == 1
    findings = json.loads(capsys.readouterr().out)["files"][0]["findings"]
    assert [(f["line"], f["column"], f["code"]) for f in findings] == [(3, 5, "WL201"), (4, 5, "WL201")]
    for f in findings:
        assert [(r["line"], r["column"], r["message"]) for r in f["related"]] == [
            (12, 5, "`put` called from kernel `twice` here"),
            (13, 5, "`put` called from kernel `twice` here"),
        ]
    assert read == ["twice"]
