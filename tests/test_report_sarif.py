"""The SARIF report: real `warplint check --format sarif` output validated against the
SARIF 2.1.0 schema (OASIS's, errata 01: tests/data/sarif-schema-2.1.0.json), and
checked for what GitHub code scanning reads: `$schema`, rule metadata with help, results
with ruleId, ruleIndex, level, message, a repository-relative location and region, and
partialFingerprints that survive code moving down a line.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

jsonschema = pytest.importorskip("jsonschema")

from analyzer.report.sarif import FINGERPRINT, fingerprint  # noqa: E402
from runner import warplint  # noqa: E402 - tests/runner.py

REPO = Path(__file__).resolve().parents[1]
SCHEMA_PATH = REPO / "tests" / "data" / "sarif-schema-2.1.0.json"
STRIDE4 = "samples/000_bank_stride4.cu"

SYNTAX_ERROR = """\
__global__ void k(float* a)
{
    a[threadIdx.x] = 1.0f +;
}
"""


def sarif(*paths: str, cwd: Path = REPO, status: int = 1) -> dict:
    result = warplint("check", "--quiet", "--format", "sarif", *paths, cwd=cwd)
    assert result.returncode == status, result.stdout + result.stderr
    return json.loads(result.stdout)


def validate(log: dict) -> None:
    schema = json.loads(SCHEMA_PATH.read_text())
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:10])


def results(log: dict) -> list[dict]:
    return log["runs"][0]["results"]


def where(result: dict) -> tuple[str, str | None, dict]:
    physical = result["locations"][0]["physicalLocation"]
    artifact = physical["artifactLocation"]
    return artifact["uri"], artifact.get("uriBaseId"), physical["region"]


# ----------------------------------------------------------------------------- the schema


@pytest.mark.parametrize(
    "paths",
    [
        [STRIDE4],
        ["samples/004_noncoalesced_float3.cu", "samples/000_vec3d_plain.cu"],  # related locations
        ["samples/000_vec3d_misspelled_align.cu"],  # WL906 input errors
        pytest.param(["samples"], marks=pytest.mark.slow),  # every sample at once
    ],
    ids=["stride4", "related", "diagnostics", "samples"],
)
def test_real_reports_validate_against_the_sarif_2_1_0_schema(paths):
    validate(sarif(*paths))


def test_a_syntax_error_is_an_error_result_and_validates(tmp_path):
    (tmp_path / "bad.cu").write_text(SYNTAX_ERROR)
    log = sarif("bad.cu", cwd=tmp_path)
    validate(log)
    [result] = results(log)
    assert result["ruleId"] == "WL901"
    assert result["level"] == "error"
    assert result["message"]["text"] == "syntax error: unexpected ';'"
    assert where(result) == ("bad.cu", "%SRCROOT%", {"startLine": 3, "startColumn": 28, "endLine": 3, "endColumn": 29})
    assert log["runs"][0]["invocations"] == [{"executionSuccessful": True}]


def test_an_unreadable_path_is_a_tool_execution_notification_and_exit_2(tmp_path):
    log = sarif("missing.cu", cwd=tmp_path, status=2)
    validate(log)
    [invocation] = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    [note] = invocation["toolExecutionNotifications"]
    assert note["descriptor"] == {"id": "WL910"}
    assert note["message"]["text"] == "no such file or folder"
    assert [r["ruleId"] for r in results(log)] == ["WL910"]


def test_a_clean_file_has_no_results_and_exit_0(tmp_path):
    (tmp_path / "s.cu").write_text("struct S { int a; };\n")
    log = sarif("s.cu", cwd=tmp_path, status=0)
    validate(log)
    assert results(log) == []


# ----------------------------------------------------------------------------- what GitHub reads


def test_the_log_carries_schema_version_and_tool():
    log = sarif(STRIDE4)
    assert log["$schema"].endswith("sarif-schema-2.1.0.json")
    assert log["version"] == "2.1.0"
    assert len(log["runs"]) == 1
    driver = log["runs"][0]["tool"]["driver"]
    import analyzer

    assert driver["name"] == "warplint"
    assert driver["version"] == analyzer.__version__
    assert driver["informationUri"].startswith("https://")


def test_rules_have_the_metadata_code_scanning_shows():
    from analyzer.rules import registry

    rules = sarif(STRIDE4)["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(registry.RULES) + sorted(registry.DIAGNOSTIC_CODES)
    wl101 = rules[0]
    assert wl101["id"] == "WL101"
    assert wl101["name"] == "bank-conflict"
    assert wl101["shortDescription"]["text"] == "Lanes of a warp hit different words of one shared-memory bank."
    assert wl101["fullDescription"]["text"] == (
        "Checks for `__shared__` memory accesses where lanes of one warp touch different 4-byte words of the same bank."
    )
    # help is exactly what `warplint explain WL101` prints, as text and as Markdown
    explain = warplint("explain", "WL101")
    assert wl101["help"]["text"] == explain.stdout.rstrip("\n")
    assert wl101["help"]["markdown"] == wl101["help"]["text"]
    assert "## Why is this bad?" in wl101["help"]["markdown"]
    assert wl101["defaultConfiguration"] == {"level": "warning"}
    by_id = {r["id"]: r for r in rules}
    assert by_id["WL901"]["name"] == "syntax-error"
    assert by_id["WL901"]["defaultConfiguration"] == {"level": "error"}
    assert by_id["WL904"]["defaultConfiguration"] == {"level": "note"}
    for rule in rules:
        for key in ("shortDescription", "fullDescription"):
            assert rule[key]["text"].strip(), (rule["id"], key)
        assert rule["help"]["text"].startswith(f"{rule['id']} {rule['name']}: ")


def test_a_finding_has_rule_level_message_relative_location_and_fingerprint():
    log = sarif(STRIDE4)
    [result] = results(log)
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert result["ruleId"] == "WL101"
    assert rules[result["ruleIndex"]]["id"] == "WL101"
    assert result["level"] == "warning"
    assert result["message"]["text"].startswith("4-way bank conflict on `data`: 4 wavefronts per request, ideal 1\n")
    assert where(result) == (STRIDE4, "%SRCROOT%", {"startLine": 23, "startColumn": 18, "endLine": 23, "endColumn": 38})
    assert result["partialFingerprints"][FINGERPRINT] == fingerprint(
        "WL101", STRIDE4, "bank_stride4", "data[base + 4 * tid]"
    )
    assert result["properties"]["kernel"] == "bank_stride4"
    assert result["properties"]["args"]["ways"] == 4
    base = log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert base.startswith("file:///") and base.endswith("/")


def test_paths_are_relative_to_the_git_root_even_from_a_subfolder():
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    log = sarif("000_bank_stride4.cu", cwd=REPO / "samples")
    assert where(results(log)[0])[:2] == (STRIDE4, "%SRCROOT%")
    assert log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"] == REPO.as_uri() + "/"


def test_a_path_with_a_space_is_percent_encoded_and_one_outside_the_root_is_absolute(tmp_path):
    folder = tmp_path / "my kernels"
    folder.mkdir()
    shutil.copy(REPO / STRIDE4, folder / "k.cu")
    inside = sarif("my kernels/k.cu", cwd=tmp_path)
    validate(inside)
    assert where(results(inside)[0])[:2] == ("my%20kernels/k.cu", "%SRCROOT%")
    outside = sarif(str(folder / "k.cu"), cwd=REPO)
    validate(outside)
    assert where(results(outside)[0])[:2] == ((folder / "k.cu").as_uri(), None)


def test_related_places_are_related_locations():
    log = sarif("samples/004_noncoalesced_float3.cu")
    wl301 = next(r for r in results(log) if r["ruleId"] == "WL301")
    related = wl301["relatedLocations"]
    assert [(r["id"], r["physicalLocation"]["region"]["startLine"], r["message"]["text"]) for r in related] == [
        (1, 16, "also strided: `in[idx].y`"),
        (2, 17, "also strided: `in[idx].z`"),
    ]


# ----------------------------------------------------------------------------- fingerprints


def _fingerprints(log: dict) -> list[tuple[str, str]]:
    return [(r["ruleId"], r["partialFingerprints"][FINGERPRINT]) for r in results(log)]


def test_fingerprints_survive_a_blank_line_inserted_above_the_kernel(tmp_path):
    source = (REPO / "samples/004_noncoalesced_float3.cu").read_text()
    (tmp_path / "k.cu").write_text(source)
    before = sarif("k.cu", cwd=tmp_path)
    kernel_at = source.index("__global__")
    (tmp_path / "k.cu").write_text(source[:kernel_at] + "\n" + source[kernel_at:])
    after = sarif("k.cu", cwd=tmp_path)
    # the lines moved ...
    assert [where(r)[2]["startLine"] + 1 for r in results(before)] == [where(r)[2]["startLine"] for r in results(after)]
    # ... the fingerprints did not
    assert _fingerprints(before) == _fingerprints(after)


def test_fingerprints_are_distinct_within_a_file_even_for_two_findings_on_one_access():
    log = sarif("samples/004_noncoalesced_float3.cu")
    prints = [fp for _, fp in _fingerprints(log)]
    # a WL201 and a WL301 on `in[idx].x` at 15:8 (its load and store are one WL201: analyzer/places.py)
    assert len(prints) == 6
    assert len(set(prints)) == len(prints)


def test_fingerprints_change_with_the_access_path_and_kernel():
    base = fingerprint("WL101", "k.cu", "kern", "tile[ t * 32 ]")
    assert base == fingerprint("WL101", "k.cu", "kern", "tile[\n t * 32 ]")  # whitespace is not the access
    assert base != fingerprint("WL101", "k.cu", "kern", "tile[t * 33]")
    assert base != fingerprint("WL101", "other.cu", "kern", "tile[ t * 32 ]")
    assert base != fingerprint("WL101", "k.cu", "kern2", "tile[ t * 32 ]")
    assert base != fingerprint("WL201", "k.cu", "kern", "tile[ t * 32 ]")
    assert base != fingerprint("WL101", "k.cu", "kern", "tile[ t * 32 ]", occurrence=1)
