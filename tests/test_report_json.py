"""The JSON report: real output validated against docs/schema-v1.json (draft 2020-12).

The schema lets version 1 grow (no object forbids additional properties), so real output is
validated twice: against the schema, and against a strict copy of it in which every object
forbids what it does not name, so that every field the report can emit is in the schema (and
documented in README.md). Positions are 1-based with `end_column` one past the end, so the
source text between them is the access as written.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

jsonschema = pytest.importorskip("jsonschema")

from analyzer import api  # noqa: E402
from analyzer.diagnostics import Span  # noqa: E402
from analyzer.findings import Finding, Related  # noqa: E402
from analyzer.report import json as json_report  # noqa: E402
from analyzer.report import render  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((REPO / "docs" / "schema-v1.json").read_text())


def _strict(node: object) -> object:
    """The schema with `additionalProperties: false` on every object that names its properties."""
    if isinstance(node, list):
        return [_strict(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _strict(value) for key, value in node.items()}
    if "properties" in node and "additionalProperties" not in node:
        out["additionalProperties"] = False
    return out


STRICT = _strict(SCHEMA)


KERNELS = """\
struct vec3d { float x, y, z; };

__global__ void mixed(const vec3d* data, float* out, int stride)
{
    __shared__ float tile[32 * 33];
    int t = threadIdx.x;
    tile[t * 32] = data[t].x;
    __syncthreads();
    out[t * stride] = tile[t];
}

int main()
{
    vec3d* data; float* out;
    mixed<<<4, 32>>>(data, out, 7);
    mixed<<<4, 64>>>(data, out, 1);
    return 0;
}
"""


def validate(document: dict) -> None:
    jsonschema.Draft202012Validator(SCHEMA).validate(document)
    jsonschema.Draft202012Validator(STRICT).validate(document)  # every field emitted is named


def analysed_report(path: Path) -> api.FileReport:
    """A FileReport built from the real stages up to the analysis (no rules), plus a finding
    made by hand, so the schema test runs before the rule registry exists."""
    from analyzer.analysis.kernel import analyze_kernel
    from analyzer.analysis.launch import launch_configs
    from analyzer.arch import get_arch
    from analyzer.ir.lower import lower
    from analyzer.source.preprocess import preprocess_file
    from analyzer.syntax.parse import parse

    pre = preprocess_file(str(path))
    parsed = parse(pre.text)
    module = lower(parsed.unit, pre.text, str(path))
    report = api.FileReport(str(path), linemap=pre.linemap)
    for kernel in module.kernels:
        for launch in launch_configs(module, kernel, line_of=lambda s: report.locate(s).line):
            report.kernels.append(analyze_kernel(module, kernel, launch, get_arch()))
    access = next(c for c in report.kernels[0].costs if c.text == "tile[t * 32]")
    report.findings.append(
        Finding(
            code="WL101",
            rule="bank-conflict",
            severity="warning",
            span=access.span,
            kernel="mixed",
            message="32-way bank conflict on `tile`",
            fix="pad `tile` by one float per row",
            args={"ways": 32, "array": "tile", "ratio": float("nan"), "lanes": (0, 1)},
            detail=("lanes 0 and 1 hit bank 0", "worst case shown"),
            related=(Related(Span(KERNELS.index("tile[32"), KERNELS.index("tile[32") + 4), "`tile` declared here"),),
        )
    )
    return report


# ----------------------------------------------------------------------------- the schema itself


def test_the_schema_is_valid_draft_2020_12():
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_the_schema_has_an_id_and_lets_version_1_grow():
    assert SCHEMA["$id"] == "urn:warplint:report:v1"
    assert '"additionalProperties": false' not in json.dumps(SCHEMA)
    grown = {"version": 1, "tool": {"name": "warplint", "version": "9"}, "arch": "sm_90", "files": [], "new": 1}
    jsonschema.Draft202012Validator(SCHEMA).validate(grown)  # a field version 1 adds later
    with pytest.raises(jsonschema.ValidationError, match="'files' is a required property"):
        jsonschema.Draft202012Validator(SCHEMA).validate({k: v for k, v in grown.items() if k != "files"})
    finding = SCHEMA["$defs"]["finding"]
    assert finding["required"] == [
        "code",
        "rule",
        "severity",
        "line",
        "column",
        "end_line",
        "end_column",
        "kernel",
        "message",
        "fix",
    ]


def test_the_schema_ships_in_the_package_and_is_the_documents():
    assert json_report.schema() == SCHEMA
    assert json_report.schema_text() == (REPO / "docs" / "schema-v1.json").read_text()
    import tomllib

    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert setuptools["package-dir"]["analyzer.schemas"] == "docs"
    assert "analyzer.schemas" in setuptools["packages"]
    assert setuptools["package-data"]["analyzer.schemas"] == ["schema-v1.json"]


def test_findings_carry_the_sarif_fingerprint(tmp_path, monkeypatch):
    from analyzer.report import sarif

    monkeypatch.chdir(REPO)
    reports = api.check_paths(["samples/000_bank_stride4.cu", "samples/004_noncoalesced_float3.cu"])
    document = json_report.document(reports)
    validate(document)
    prints = [f["fingerprint"] for file in document["files"] for f in file["findings"]]
    results = sarif.document(reports)["runs"][0]["results"]
    assert prints == [r["partialFingerprints"][sarif.FINGERPRINT] for r in results]
    assert prints[0] == "5f24a151a81c5579f38b205b17132797"
    assert len(set(prints)) == len(prints) == 10  # a repeat of one access is counted, not merged


def _properties(schema: dict) -> set[str]:
    names: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            names.update(node.get("properties", {}))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return names


def test_every_field_of_the_schema_is_documented_in_the_readme():
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## JSON format") :]
    section = section[: section.find("\n## ", 1) if "\n## " in section[1:] else len(section)]
    undocumented = sorted(name for name in _properties(SCHEMA) if f"`{name}`" not in section)
    assert undocumented == []


# ----------------------------------------------------------------------------- real output


def test_a_report_of_unreadable_files_matches_the_schema(tmp_path):
    (tmp_path / "blob.cu").write_bytes(b"\0\1\2")
    (tmp_path / "empty").mkdir()
    reports = api.check_paths([str(tmp_path / "blob.cu"), str(tmp_path / "missing.cu"), str(tmp_path / "empty")])
    document = json.loads(render(reports, "json", arch="sm_80"))
    validate(document)
    assert document["version"] == 1
    assert document["tool"]["name"] == "warplint"
    assert document["arch"] == "sm_80"
    assert [e["code"] for f in document["files"] for e in f["errors"]] == [api.INPUT_ERROR] * 3


def test_a_file_without_kernels_has_empty_lists(tmp_path):
    (tmp_path / "s.cu").write_text("struct S { int a; };\n")
    (report,) = api.check_paths([str(tmp_path / "s.cu")])
    document = json_report.document([report])
    validate(document)
    assert document["files"][0] | {"path": ""} == {"path": "", "errors": [], "kernels": [], "findings": []}


def test_json_is_indented_by_two_and_keeps_field_order(tmp_path):
    (tmp_path / "s.cu").write_text("struct S { int a; };\n")
    text = render(api.check_paths([str(tmp_path / "s.cu")]), "json")
    assert text.startswith('{\n  "version": 1,\n  "tool": {\n    "name": "warplint",')
    assert list(json.loads(text)) == ["version", "tool", "arch", "files"]


def test_an_analysed_file_matches_the_schema_with_one_entry_per_launch(tmp_path):
    source = tmp_path / "mixed.cu"
    source.write_text(KERNELS)
    document = json_report.document([analysed_report(source)])
    validate(document)
    (file,) = document["files"]
    assert [(k["name"], k["line"], k["launch"]["block"]) for k in file["kernels"]] == [
        ("mixed", 3, [32, 1, 1]),
        ("mixed", 3, [64, 1, 1]),
    ]
    for kernel in file["kernels"]:
        assert kernel["launch"]["origin"]
        assert {a["space"] for a in kernel["accesses"]} == {"shared", "global"}
        for access in kernel["accesses"]:
            assert access["unit"] == ("wavefronts" if access["space"] == "shared" else "sectors")


def test_positions_are_1_based_and_end_column_is_one_past_the_end(tmp_path):
    source = tmp_path / "mixed.cu"
    source.write_text(KERNELS)
    document = json_report.document([analysed_report(source)])
    lines = KERNELS.splitlines()
    accesses = [a for k in document["files"][0]["kernels"] for a in k["accesses"]]
    assert accesses
    for access in accesses:
        assert access["line"] == access["end_line"]
        written = lines[access["line"] - 1][access["column"] - 1 : access["end_column"] - 1]
        assert written == access["text"]
    (finding,) = document["files"][0]["findings"]
    assert lines[finding["line"] - 1][finding["column"] - 1 : finding["end_column"] - 1] == "tile[t * 32]"
    assert finding["related"][0]["line"] == 5


def test_finding_args_stay_typed_and_odd_values_become_text(tmp_path):
    source = tmp_path / "mixed.cu"
    source.write_text(KERNELS)
    text = render([analysed_report(source)], "json")
    assert "NaN" not in text  # not JSON
    (finding,) = json.loads(text)["files"][0]["findings"]
    assert finding["args"] == {"ways": 32, "array": "tile", "ratio": "nan", "lanes": [0, 1]}
    assert finding["detail"] == ["lanes 0 and 1 hit bank 0", "worst case shown"]
    assert finding["kernel"] == "mixed" and finding["fix"].startswith("pad")


def test_the_text_report_of_the_same_file_is_gcc_shaped(tmp_path):
    source = tmp_path / "mixed.cu"
    source.write_text(KERNELS)
    text = render([analysed_report(source)], "text")
    shown = api.FileReport(str(source)).path
    from analyzer.report import display_path

    assert text.splitlines() == [
        f"{display_path(shown)}:7:5: warning: 32-way bank conflict on `tile` [WL101]",
        "    = note: in kernel `mixed`",
        "    = note: lanes 0 and 1 hit bank 0",
        "    = note: worst case shown",
        "    = help: pad `tile` by one float per row",
        f"{display_path(shown)}:5:22: note: `tile` declared here",
    ]


def test_the_samples_report_matches_the_schema():
    reports = api.check_paths([str(REPO / "samples")])
    document = json_report.document(reports)
    validate(document)
    assert len(document["files"]) == len(list((REPO / "samples").glob("*.cu")))
    codes = {f["code"] for file in document["files"] for f in file["findings"]}
    assert any(re.match(r"WL1\d\d", c) for c in codes)
    assert any(re.match(r"WL2\d\d", c) for c in codes)
