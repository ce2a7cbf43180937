"""Configuration files: `[tool.warplint]` in pyproject.toml, or warplint.toml.

Each test writes a small project under tmp_path and runs `analyzer.cli.main([...])`,
checking the exact findings left, the exact exit status, and for a broken file the
exact `path:line:col: error: ...` line on stderr.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from analyzer import cli
from analyzer.api import Options
from analyzer.config import ConfigError, Settings, find_config, load_config, options_for

# line 5: a 4-way bank conflict (WL101, col 5) and a stride-2 global load (WL201, col 19);
# line 6: tile[t * s], whose conflict depends on the parameter `s` (WL101, col 14)
KERNEL = """\
__global__ void k(const float* in, float* out, int s)
{
    __shared__ float tile[32 * 32];
    int t = threadIdx.x;
    tile[t * 4] = in[t * 2];
    out[t] = tile[t * s];
}
"""


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], str]:
    """Exit status, the concise report lines (paths relative to the current folder), stderr."""
    status = cli.main(["check", "--format", "concise", "-q", "-j", "1", *args])
    out, err = capsys.readouterr()
    return status, out.splitlines(), err


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, {"src/k.cu": KERNEL})
    return tmp_path


ALL_THREE = [
    "src/k.cu:5:5: WL101 4-way bank conflict on `tile`: 4 wavefronts per request, ideal 1",
    "src/k.cu:5:19: WL201 uncoalesced global load of `in[t * 2]`: 8 sectors per request, ideal 4 (50% efficiency)",
    "src/k.cu:6:14: WL101 32-way bank conflict on `tile`: 32 wavefronts per request, ideal 1",
]


def test_without_a_configuration_every_rule_reports(project, capsys):
    assert run(capsys, "src/k.cu")[:2] == (1, ALL_THREE)


def test_pyproject_select_and_params_apply_to_files_below_it(project, capsys):
    write(
        project,
        {
            "pyproject.toml": """\
        [project]
        name = "demo"

        [tool.warplint]
        select = ["WL101"]

        [tool.warplint.params]
        s = 8
        """
        },
    )
    status, lines, _ = run(capsys, "src/k.cu")
    assert status == 1
    assert lines == [
        "src/k.cu:5:5: WL101 4-way bank conflict on `tile`: 4 wavefronts per request, ideal 1",
        "src/k.cu:6:14: WL101 8-way bank conflict on `tile`: 8 wavefronts per request, ideal 1",
    ]


def test_command_line_overrides_the_file(project, capsys):
    write(project, {"warplint.toml": 'select = ["WL101"]\nparams = { s = 8 }\n'})
    status, lines, _ = run(capsys, "src/k.cu", "--select", "WL201", "--param", "s=2")
    assert (status, lines) == (1, [ALL_THREE[1]])
    status, lines, _ = run(capsys, "src/k.cu", "--param", "s=2")
    assert lines[1] == "src/k.cu:6:14: WL101 2-way bank conflict on `tile`: 2 wavefronts per request, ideal 1"


def test_nearest_configuration_wins_and_is_not_merged_with_parents(project, capsys):
    write(
        project,
        {
            "pyproject.toml": '[tool.warplint]\nignore = ["WL201"]\n',
            "src/warplint.toml": 'ignore = ["bank-conflict"]\n',
        },
    )
    assert run(capsys, "src/k.cu")[:2] == (1, [ALL_THREE[1]])
    assert find_config(str(project / "src")) == str(project / "src" / "warplint.toml")
    assert find_config(str(project)) == str(project / "pyproject.toml")


def test_warplint_toml_wins_over_pyproject_in_the_same_folder(project, capsys):
    write(
        project,
        {
            "src/pyproject.toml": '[tool.warplint]\nselect = ["WL201"]\n',
            "src/warplint.toml": 'select = ["WL101"]\nparams = { s = 8 }\n',
        },
    )
    assert run(capsys, "src/k.cu")[1] == [ALL_THREE[0], ALL_THREE[2].replace("32", "8")]


def test_pyproject_without_a_warplint_table_is_passed_over(project, capsys):
    write(
        project,
        {
            "pyproject.toml": '[tool.warplint]\nselect = ["WL201"]\n',
            "src/pyproject.toml": '[project]\nname = "x"\n[tool.black]\nline-length = 100\n',
        },
    )
    assert run(capsys, "src/k.cu")[:2] == (1, [ALL_THREE[1]])


def test_tool_warplint_table_in_warplint_toml_is_accepted(project, capsys):
    write(project, {"warplint.toml": '[tool.warplint]\nselect = ["WL201"]\n'})
    assert run(capsys, "src/k.cu")[:2] == (1, [ALL_THREE[1]])


def test_isolated_ignores_configuration_and_config_names_one(project, capsys):
    write(
        project,
        {
            "pyproject.toml": '[tool.warplint]\nselect = ["WL201"]\n',
            "other/strict.toml": 'select = ["WL101"]\nparams = { s = 8 }\n',
        },
    )
    assert run(capsys, "src/k.cu", "--isolated")[:2] == (1, ALL_THREE)
    status, lines, _ = run(capsys, "src/k.cu", "--config", "other/strict.toml")
    assert (status, lines) == (1, [ALL_THREE[0], ALL_THREE[2].replace("32", "8")])


def test_config_and_isolated_together_are_a_usage_error(project, capsys):
    status, _, err = run(capsys, "src/k.cu", "--isolated", "--config", "x.toml")
    assert status == 2
    assert "not allowed with argument" in err


def test_missing_config_file_is_a_usage_error(project, capsys):
    status, lines, err = run(capsys, "src/k.cu", "--config", "nope.toml")
    assert (status, lines) == (2, [])
    assert err == "warplint: error: argument --config: nope.toml: no such file\n"


def test_per_file_ignores_globs_are_relative_to_the_config_folder(project, capsys):
    write(
        project,
        {
            "src/gen/k.cu": KERNEL,
            "pyproject.toml": """\
            [tool.warplint.per-file-ignores]
            "src/gen/*.cu" = ["WL101"]
            "*.cuh" = ["ALL"]
            """,
        },
    )
    status, lines, _ = run(capsys, "src")
    gen = [line.replace("src/k.cu", "src/gen/k.cu") for line in ALL_THREE]
    assert (status, lines) == (1, [gen[1], *ALL_THREE])


def test_per_file_ignores_without_a_slash_match_the_file_name(project, capsys):
    write(project, {"src/k2.cuh": KERNEL, "warplint.toml": '[per-file-ignores]\n"*.cuh" = ["WL1"]\n'})
    _status, lines, _ = run(capsys, "src")
    assert lines == [*ALL_THREE, ALL_THREE[1].replace("k.cu", "k2.cuh")]


def test_extend_ignore_adds_to_the_files_ignore(project, capsys):
    write(project, {"warplint.toml": 'ignore = ["WL201"]\n'})
    status, lines, _ = run(capsys, "src/k.cu", "--extend-ignore", "WL101")
    assert (status, lines) == (0, [])


def test_extend_select_adds_to_the_files_select(project, capsys):
    write(project, {"warplint.toml": 'select = ["WL201"]\nextend-select = ["WL101"]\nparams = { s = 8 }\n'})
    assert run(capsys, "src/k.cu")[1] == [ALL_THREE[0], ALL_THREE[1], ALL_THREE[2].replace("32", "8")]


def test_defines_and_include_paths_are_relative_to_the_config(project, capsys):
    write(
        project,
        {
            "inc/stride.cuh": "#define STRIDE 4\n",
            "src/m.cu": """\
            #include "stride.cuh"
            __global__ void m(float* out)
            {
                __shared__ float tile[32 * 32];
            #ifdef CHECK_ME
                tile[threadIdx.x * STRIDE * WIDE] = 1.0f;
            #endif
                out[threadIdx.x] = tile[threadIdx.x];
            }
            """,
            "pyproject.toml": """\
            [tool.warplint]
            include-paths = ["inc"]
            block = [32]
            defines = ["CHECK_ME", "WIDE=2"]
            """,
        },
    )
    status, lines, _ = run(capsys, "src/m.cu")
    assert (status, lines) == (
        1,
        ["src/m.cu:6:5: WL101 8-way bank conflict on `tile`: 8 wavefronts per request, ideal 1"],
    )
    write(
        project,
        {
            "pyproject.toml": '[tool.warplint]\ninclude-paths = ["inc"]\nblock = 32\n'
            "[tool.warplint.defines]\nCHECK_ME = true\nWIDE = 4\n"
        },
    )
    assert run(capsys, "src/m.cu")[1] == [
        "src/m.cu:6:5: WL101 16-way bank conflict on `tile`: 16 wavefronts per request, ideal 1"
    ]


def test_arch_block_and_grid_reach_the_json_report(project, capsys):
    write(project, {"warplint.toml": 'arch = "sm_80"\nblock = [64, 2]\ngrid = 10\n'})
    status = cli.main(["check", "--format", "json", "-q", "src/k.cu"])
    document = json.loads(capsys.readouterr().out)
    assert status == 1
    assert document["arch"] == "sm_80"
    launch = document["files"][0]["kernels"][0]["launch"]
    assert (launch["block"], launch["grid"]) == ([64, 2, 1], [10, 1, 1])
    cli.main(["check", "--format", "json", "-q", "src/k.cu", "--arch", "sm_70", "--block", "32"])
    document = json.loads(capsys.readouterr().out)
    assert document["arch"] == "sm_70"
    assert document["files"][0]["kernels"][0]["launch"]["block"] == [32, 1, 1]


def test_severity_changes_the_level_of_findings(project, capsys):
    write(project, {"warplint.toml": '[severity]\nbank-conflict = "error"\nWL201 = "note"\n'})
    status = cli.main(["check", "-q", "--isolated", "src/k.cu"])
    assert "src/k.cu:5:5: warning: 4-way" in capsys.readouterr().out
    status = cli.main(["check", "-q", "src/k.cu"])
    heads = [
        line.split(" ", 2)[:2]
        for line in capsys.readouterr().out.splitlines()
        if line.startswith("src/") and line.endswith("]")
    ]  # findings, not their related notes
    assert status == 1
    assert heads == [["src/k.cu:5:5:", "error:"], ["src/k.cu:5:19:", "note:"], ["src/k.cu:6:14:", "error:"]]


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "pyproject.toml",
            '[project]\nname = "x"\n\n[tool.warplint]\nselct = ["WL101"]\n',
            "pyproject.toml:5:1: error: unknown key `tool.warplint.selct`; did you mean `select`?",
        ),
        (
            "warplint.toml",
            'arch = "sm_90"\n  colour = true\n',
            "warplint.toml:2:3: error: unknown key `colour`; known keys: select, ignore, extend-select, "
            "extend-ignore, per-file-ignores, arch, assume, defines, define, include-paths, include, cuda-version, block, grid, params, severity, budget, show-host, exclude, extend-exclude, "
            "respect-gitignore, cache-dir, kernels",
        ),
        (
            "warplint.toml",
            'select = [\n    "WL101",\n    "WL1O1",\n]\n',
            "warplint.toml:3:5: error: unknown rule `WL1O1` in `select`; `warplint rules` lists them",
        ),
        (
            "pyproject.toml",
            '[tool.warplint]\nignore = "WL201, WL7"\n',
            "pyproject.toml:2:18: error: unknown rule `WL7` in `tool.warplint.ignore`; `warplint rules` lists them",
        ),
        ("warplint.toml", 'select = ["WL101"\n', "warplint.toml:2:1: error: invalid TOML: unclosed array"),
        ("warplint.toml", "arch = sm_90\n", "warplint.toml:1:8: error: invalid TOML: invalid value"),
        (
            "warplint.toml",
            'arch = "sm_99"\n',
            "warplint.toml:1:8: error: unknown architecture 'sm_99'; choose one of {ARCHS}",
        ),
        (
            "warplint.toml",
            "\narch = 90\n",
            'warplint.toml:2:1: error: `arch` must be a string such as "sm_90", not an integer',
        ),
        (
            "warplint.toml",
            "block = [32, 32, 2]\n",
            "warplint.toml:1:1: error: `block`: 2048 threads per block, the limit is 1024",
        ),
        ("warplint.toml", "grid = [0]\n", "warplint.toml:1:1: error: `grid`: every dimension must be at least 1"),
        (
            "warplint.toml",
            'block = "32,8"\n',
            "warplint.toml:1:1: error: `block` must be an integer or an array of 1 to 3 integers such as [32, 8], "
            "not a string",
        ),
        (
            "pyproject.toml",
            '[tool.warplint.params]\nn = 1\nm = "big"\n',
            "pyproject.toml:3:1: error: `tool.warplint.params.m` must be an integer, not a string",
        ),
        (
            "warplint.toml",
            "params = { n = 1, m = 2.5 }\n",
            "warplint.toml:1:19: error: `params.m` must be an integer, not a number",
        ),
        (
            "warplint.toml",
            '[severity]\nWL101 = "error"\nuncoalesced-access = "fatal"\n',
            "warplint.toml:3:1: error: `severity.uncoalesced-access` must be one of 'error', 'warning', 'note', "
            "not 'fatal'",
        ),
        (
            "warplint.toml",
            '[severity]\nbank-conflicts = "error"\n',
            "warplint.toml:2:1: error: unknown rule `bank-conflicts` in `severity`; `warplint rules` lists them",
        ),
        (
            "warplint.toml",
            '[per-file-ignores]\n"a/*.cu" = ["WL101"]\n"b/*.cu" = ["WL301", "nope"]\n',
            "warplint.toml:3:22: error: unknown rule `nope` in `per-file-ignores.b/*.cu`; `warplint rules` lists them",
        ),
        (
            "warplint.toml",
            'per-file-ignores = ["WL101"]\n',
            "warplint.toml:1:1: error: `per-file-ignores` must be a table of glob = [codes], not an array",
        ),
        (
            "warplint.toml",
            'defines = ["OK", "2BAD"]\n',
            'warplint.toml:1:18: error: bad macro definition \'2BAD\'; expected "NAME" or "NAME=VALUE"',
        ),
        (
            "warplint.toml",
            "[defines]\nX = false\n",
            "warplint.toml:2:1: error: `defines.X` must be a string, a number or true, not a boolean",
        ),
        (
            "warplint.toml",
            "include-paths = [1]\n",
            "warplint.toml:1:1: error: `include-paths` must be an array of strings; it holds an integer",
        ),
        ("pyproject.toml", "[tool]\nwarplint = 3\n", "pyproject.toml:1:1: error: `tool.warplint` must be a table"),
    ],
)
def test_a_broken_configuration_is_an_error_at_its_line_with_exit_2(project, capsys, name, text, message):
    from analyzer.arch import ARCHITECTURES

    message = message.replace("{ARCHS}", ", ".join(sorted(ARCHITECTURES)))
    (project / "src" / name).write_text(text, encoding="utf-8")
    if name == "pyproject.toml" and "[tool.warplint" not in text:  # found only with --config
        status, lines, err = run(capsys, "src/k.cu", "--config", f"src/{name}")
    else:
        status, lines, err = run(capsys, "src/k.cu")
    assert (status, lines) == (2, [])
    assert err == f"src/{message}\n"
    with pytest.raises(ConfigError) as caught:
        load_config(str(project / "src" / name))
    assert str(caught.value) == f"src/{message}"


def test_broken_pyproject_that_does_not_mention_warplint_is_passed_over(project, capsys):
    write(project, {"src/pyproject.toml": "[project\nname = 1\n"})
    assert run(capsys, "src/k.cu")[:2] == (1, ALL_THREE)


def test_configuration_errors_come_before_any_analysis(project, capsys):
    write(project, {"bad/warplint.toml": "select = 1\n", "bad/z.cu": KERNEL})
    status, lines, err = run(capsys, "src/k.cu", "bad/z.cu")
    assert (status, lines) == (2, [])
    assert err == "bad/warplint.toml:1:1: error: `select` must be an array of strings, not an integer\n"


# ----------------------------------------------------------------------------- merging, as data


def test_options_for_merges_key_by_key_command_line_first(tmp_path):
    file = Settings(
        path=str(tmp_path / "warplint.toml"),
        select=("WL1",),
        ignore=("WL201",),
        extend_ignore=("WL301",),
        arch="sm_80",
        params={"n": 1, "m": 2},
        defines={"A": "1"},
        include_paths=(str(tmp_path / "inc"),),
        block=(64, 1, 1),
        per_file_ignores=(("gen/*.cu", ("WL101",)),),
        severity={"WL101": "error"},
    )
    cli_settings = Settings(
        ignore=("WL1",), params={"m": 5}, defines={"B": None}, include_paths=("/i",), grid=(4, 1, 1)
    )
    options = options_for(str(tmp_path / "gen" / "x.cu"), file, cli_settings, Options(format="json"))
    assert options == Options(
        arch="sm_80",
        block=(64, 1, 1),
        grid=(4, 1, 1),
        params={"n": 1, "m": 5},
        defines={"A": "1", "B": None},
        include_paths=["/i", str(tmp_path / "inc")],
        select=["WL1"],
        ignore=["WL1", "WL301", "WL101"],
        format="json",
        severity={"WL101": "error"},
    )
    other = options_for(str(tmp_path / "src" / "x.cu"), file, Settings(), Options())
    assert (other.select, other.ignore, other.arch) == (["WL1"], ["WL201", "WL301"], "sm_80")
    assert options_for("x.cu", None, Settings(), Options()) == Options()


TWO_KERNELS = """\
template <int N> __global__ void spread(float *a, int w)
{
    a[threadIdx.x * N + blockIdx.x * w] = 0;
}
template __global__ void spread<2>(float *, int);
__global__ void rows(float *a, int w)
{
    a[threadIdx.y * w + threadIdx.x] = 0;
}
"""


def _launches_and_costs(capsys, *args: str) -> dict[str, tuple[dict, list[tuple[int, int]]]]:
    cli.main(["check", "--format", "json", "-q", "--exit-zero", "src/t.cu", *args])
    (entry,) = json.loads(capsys.readouterr().out)["files"]
    return {k["name"]: (k["launch"], [(a["line"], a["per_request"]) for a in k["accesses"]]) for k in entry["kernels"]}


def test_a_per_kernel_table_gives_its_kernels_block_grid_params_and_facts(project, capsys):
    write(
        project,
        {
            "src/t.cu": TWO_KERNELS,
            "warplint.toml": """\
                block = 256
                [kernels."spread<*>"]
                block = 64
                grid = 8
                facts = { w = { multiple-of = 32 } }
                [kernels.rows]
                block = [16, 2]
                params = { w = 16 }
                """,
        },
    )
    got = _launches_and_costs(capsys)
    launch, costs = got["spread<2>"]
    assert (launch["block"], launch["grid"], launch["origin"]) == (
        [64, 1, 1],
        [8, 1, 1],
        '[kernels."spread<*>"] of warplint.toml',
    )
    assert costs == [(3, 8)]  # lanes 8 bytes apart, each block's start a multiple of 32 floats: 8 sectors
    launch, costs = got["rows"]
    assert (launch["block"], launch["params"], costs) == ([16, 2, 1], {"w": 16}, [(8, 4)])  # two rows of 16: 4 sectors
    # the command line wins over the tables, as over the rest of the file
    launch, _ = _launches_and_costs(capsys, "--block", "32", "--param", "w=33")["rows"]
    assert (launch["block"], launch["params"]) == ([32, 1, 1], {"w": 33})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[kernels.rows]\nblock = [16, 2]\nblok = 3\n",
            "warplint.toml:3:1: error: unknown key `kernels.rows.blok`; did you mean `block`?",
        ),
        (
            '[kernels."spread<*>"]\ngrid = [1, 2, 3, 4]\n',
            "warplint.toml:2:1: error: `kernels.spread<*>.grid` must be an integer or an array of 1 to 3 integers "
            "such as [32, 8], not an array",
        ),
        (
            "[kernels.rows]\nfacts = { w = { multiple = 32 } }\n",
            "warplint.toml:2:17: error: unknown fact `multiple` in `kernels.rows.facts.w`; did you mean `multiple-of`?",
        ),
        ("kernels = 3\n", "warplint.toml:1:1: error: `kernels` must be a table of kernel name = table"),
    ],
)
def test_a_broken_per_kernel_table_is_an_error_at_its_line(project, capsys, text, message):
    (project / "src" / "warplint.toml").write_text(text, encoding="utf-8")
    status, lines, err = run(capsys, "src/k.cu")
    assert (status, lines, err) == (2, [], f"src/{message}\n")
