"""One run is one program (analyzer.program), the build's flags (analyzer.build: `-p`, flags
after `--`) and CUDA's predefined macros: each on a small program written for the test, with
the exact cost warplint must give."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from analyzer.build import CompilationDatabase, parse_flags
from analyzer.cli import main
from analyzer.source.cuda_macros import cuda_macros

SCALE_DEFINED = "__global__ void scale(float *x, int stride)\n{\n    x[threadIdx.x * stride] = 1.0f;\n}\n"
SCALE_LAUNCHED = (
    "__global__ void scale(float *x, int stride);\n\nint main()\n{\n    float *x;\n"
    "    scale<<<1, 128>>>(x, 8);\n    return 0;\n}\n"
)
TRANSPOSE_HEADER = (
    "#define TILE 32\n__global__ void transpose(float *out)\n{\n    __shared__ float tile[TILE][TILE];\n"
    "    tile[threadIdx.x][threadIdx.y] = 0;\n    out[threadIdx.x] = tile[threadIdx.y][threadIdx.x];\n}\n"
)
TRANSPOSE_MAIN = (
    '#include "k.cuh"\nint main()\n{\n    float *out;\n    dim3 block(32, 32);\n    transpose<<<1, block>>>(out);\n}\n'
)
STRIDED = "__global__ void strided(float *x)\n{\n    x[threadIdx.x * STRIDE] = 0;\n}\nint main() { float *x; strided<<<1, 32>>>(x); }\n"


def write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def report(capsys, *args: str) -> dict:
    """`warplint check --format json ARGS` run in this process: the report, by file name."""
    status = main(["check", "--format", "json", "--isolated", "--exit-zero", "-q", *args])
    out = json.loads(capsys.readouterr().out)
    assert status == 0
    return {Path(f["path"]).name: f for f in out["files"]}


def costs(entry: dict) -> list[tuple[int, int, str]]:
    """(line, cost per request, launch origin) of every access of every kernel of a file's report."""
    return sorted((a["line"], a["per_request"], k["launch"]["origin"]) for k in entry["kernels"] for a in k["accesses"])


# ----------------------------------------------------------------------------- one program


def test_a_kernel_declared_and_launched_in_b_cu_is_analysed_with_that_launch(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(write(tmp_path, {"a.cu": SCALE_DEFINED, "b.cu": SCALE_LAUNCHED}))
    files = report(capsys, ".")
    kernel = files["a.cu"]["kernels"][0]
    assert kernel["launch"]["block"] == [128, 1, 1]
    assert kernel["launch"]["params"] == {"stride": 8}
    assert costs(files["a.cu"]) == [(3, 32, "launch at b.cu:6")]  # 32 bytes between lanes: 32 sectors
    assert files["b.cu"]["kernels"] == [] and files["b.cu"]["findings"] == []


def test_a_template_kernel_launched_only_from_another_file_is_instantiated_there(tmp_path, capsys, monkeypatch):
    defined = "template <class T> __global__ void scale(T *x, int stride)\n{\n    x[threadIdx.x * stride] = 0;\n}\n"
    launched = (
        "template <class T> __global__ void scale(T *x, int stride);\n\nint main()\n{\n    double *x;\n"
        "    scale<double><<<1, 64>>>(x, 2);\n    return 0;\n}\n"
    )
    monkeypatch.chdir(write(tmp_path, {"a.cu": defined, "b.cu": launched}))
    files = report(capsys, ".")
    (kernel,) = files["a.cu"]["kernels"]
    assert kernel["name"] == "scale<double>" and kernel["launch"]["params"] == {"stride": 2}
    assert costs(files["a.cu"]) == [(3, 16, "launch at b.cu:6")]  # 16 bytes apart: 16 sectors a request
    assert not [e for e in files["a.cu"]["errors"] if e["code"] == "WL904"]


def test_a_file_checked_alone_works_as_before(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(write(tmp_path, {"a.cu": SCALE_DEFINED, "b.cu": SCALE_LAUNCHED}))
    kernel = report(capsys, "a.cu")["a.cu"]["kernels"][0]
    assert kernel["launch"]["assumed"] and kernel["launch"]["block"] == [256, 1, 1]


def test_a_cuh_launched_from_a_cu_is_reported_once_at_its_own_path(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(write(tmp_path, {"k.cuh": TRANSPOSE_HEADER, "main.cu": TRANSPOSE_MAIN}))
    files = report(capsys, ".")
    assert list(files) == ["k.cuh", "main.cu"]
    assert [(f["code"], f["line"]) for f in files["k.cuh"]["findings"]] == [("WL101", 5)]
    assert files["k.cuh"]["findings"][0]["args"]["ways"] == 32
    assert costs(files["k.cuh"]) == [
        (5, 32, "launch at line 6"),
        (6, 1, "launch at line 6"),
        (6, 4, "launch at line 6"),
    ]
    assert files["main.cu"]["findings"] == [] and files["main.cu"]["kernels"] == []


def test_a_kernel_file_included_by_another_is_analysed_with_its_macros(tmp_path, capsys, monkeypatch):
    kernel = "__global__ void k(float *x)\n{\n    x[threadIdx.x * STRIDE] = 0;\n}\n"
    main_cu = '#define STRIDE 2\n#include "kernel.cu"\nint main() { float *x; k<<<1, 64>>>(x); }\n'
    monkeypatch.chdir(write(tmp_path, {"kernel.cu": kernel, "main.cu": main_cu}))
    files = report(capsys, ".")
    assert costs(files["kernel.cu"]) == [(3, 8, "launch at line 3")]  # 8 bytes apart: 8 sectors
    assert files["kernel.cu"]["errors"] == []  # STRIDE is known: no syntax error
    assert files["main.cu"]["kernels"] == []


def test_a_header_included_by_two_files_is_reported_once(tmp_path, capsys, monkeypatch):
    second = TRANSPOSE_MAIN.replace("int main()", "int other()")
    monkeypatch.chdir(write(tmp_path, {"k.cuh": TRANSPOSE_HEADER, "main.cu": TRANSPOSE_MAIN, "two.cu": second}))
    files = report(capsys, ".")
    assert len(files["k.cuh"]["findings"]) == 1
    assert files["two.cu"]["findings"] == [] and files["two.cu"]["kernels"] == []


def test_the_report_does_not_depend_on_jobs(tmp_path, capsys, monkeypatch):
    files = {"a.cu": SCALE_DEFINED, "b.cu": SCALE_LAUNCHED, "k.cuh": TRANSPOSE_HEADER, "main.cu": TRANSPOSE_MAIN}
    monkeypatch.chdir(write(tmp_path, files))
    assert report(capsys, "-j", "1", ".") == report(capsys, "-j", "2", ".")


# ----------------------------------------------------------------------------- predefined macros


def test_cudart_version_is_defined_so_a_guarded_kernel_is_analysed(tmp_path, capsys, monkeypatch):
    guarded = "#if CUDART_VERSION >= 2020\n" + STRIDED.replace("STRIDE", "2") + "#endif\n"
    monkeypatch.chdir(write(tmp_path, {"g.cu": guarded}))
    assert costs(report(capsys, "g.cu")["g.cu"]) == [(4, 8, "launch at line 6")]
    assert report(capsys, "--cuda-version", "2.0", "g.cu")["g.cu"]["kernels"] == []  # CUDART_VERSION 2000


def test_the_predefined_macros_follow_the_architecture_toolkit_and_standard():
    macros = cuda_macros("sm_80", "12.4", "c++14")
    assert (macros["__CUDA_ARCH__"], macros["CUDART_VERSION"], macros["CUDA_VERSION"]) == ("800", "12040", "12040")
    assert (macros["__CUDACC_VER_MAJOR__"], macros["__CUDACC_VER_MINOR__"], macros["__cplusplus"]) == (
        "12",
        "4",
        "201402L",
    )
    assert cuda_macros()["__CUDA_ARCH__"] == "900" and cuda_macros()["CUDART_VERSION"] == "12000"


def test_cuda_arch_follows_arch_in_the_file(tmp_path, capsys, monkeypatch):
    text = "#if __CUDA_ARCH__ == 800\n#define STRIDE 4\n#else\n#define STRIDE 1\n#endif\n" + STRIDED
    monkeypatch.chdir(write(tmp_path, {"a.cu": text}))
    assert costs(report(capsys, "--arch", "sm_80", "a.cu")["a.cu"])[0][1] == 16
    assert costs(report(capsys, "a.cu")["a.cu"])[0][1] == 4


# ----------------------------------------------------------------------------- the build


def test_nvcc_flags_after_double_dash_are_flags_and_the_rest_paths(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(write(tmp_path, {"-x.cu": STRIDED, "inc/s.h": "#define STRIDE 4\n"}))
    files = report(capsys, "--", "-x.cu", "-DSTRIDE=2", "-I", "inc", "-arch=sm_80", "-std=c++14", "-x", "cu")
    assert costs(files["-x.cu"])[0][1] == 8


def test_include_and_undefine_flags_after_double_dash(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(write(tmp_path, {"k.cu": STRIDED, "inc/s.h": "#define STRIDE 4\n"}))
    assert costs(report(capsys, "--", "k.cu", "-include", "inc/s.h")["k.cu"])[0][1] == 16
    defaulted = "#ifndef STRIDE\n#define STRIDE 1\n#endif\n" + STRIDED
    write(tmp_path, {"u.cu": defaulted})
    assert costs(report(capsys, "u.cu", "-D", "STRIDE=4")["u.cu"])[0][1] == 16
    assert costs(report(capsys, "u.cu", "-D", "STRIDE=4", "--", "-USTRIDE")["u.cu"])[0][1] == 4  # -U after every -D


def test_parse_flags_reads_every_spelling():
    flags, rest = parse_flags(
        ["-Iinc", "-isystem", "sys", "--define-macro=A=1", "-DB", "-UC", "--pre-include=f.h",
         "-gencode", "arch=compute_80,code=[sm_80,compute_80]", "--gpu-architecture=sm_86", "--std", "c++20",
         "-o", "out.o", "k.cu"],
        "/build",
        strict=False,
    )  # fmt: skip
    assert flags.include_paths == ("/build/inc", "/build/sys")
    assert flags.defines == (("A", "1"), ("B", None))
    assert (flags.undefines, flags.forced_includes, flags.std) == (("C",), ("/build/f.h",), "c++20")
    assert flags.archs == ("sm_86", "sm_80", "sm_80")
    assert rest == ["k.cu"]  # -o and its value skipped in a database's command


def test_p_reads_a_hand_written_compile_commands_json(tmp_path, capsys, monkeypatch):
    source = '#include "s.h"\n' + STRIDED
    header = "#ifndef STRIDE\n#define STRIDE 4\n#endif\n"
    write(tmp_path, {"src/k.cu": source, "src/other.cu": source, "inc/s.h": header})
    entries = [
        {"directory": str(tmp_path / "build"), "file": "../src/k.cu",
         "command": "nvcc -DSTRIDE=8 -I../inc -arch=sm_80 -c ../src/k.cu -o k.o"},
    ]  # fmt: skip
    write(tmp_path, {"build/compile_commands.json": json.dumps(entries)})
    monkeypatch.chdir(tmp_path)
    files = report(capsys, "-p", "build", "-I", "inc", "src")
    assert costs(files["k.cu"])[0][1] == 32  # the database's STRIDE=8: 32 bytes apart
    assert costs(files["other.cu"])[0][1] == 16  # not in the database: the command line's -I, STRIDE 4
    files = report(capsys, "-p", "build/compile_commands.json", "-D", "STRIDE=2", "src/k.cu")
    assert costs(files["k.cu"])[0][1] == 8  # the command line's -D wins over the database's


def test_p_with_a_missing_database_is_a_usage_error(tmp_path, capsys):
    assert main(["check", "-p", str(tmp_path), str(tmp_path)]) == 2
    assert "no compile_commands.json" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("c++") is None, reason="needs cmake and c++")
def test_p_reads_the_compile_commands_json_cmake_generates(tmp_path, capsys, monkeypatch):
    write(
        tmp_path,
        {
            "k.cu": STRIDED,
            "include/s.h": "#define STRIDE 4\n",
            "CMakeLists.txt": "cmake_minimum_required(VERSION 3.10)\nproject(t LANGUAGES CXX)\n"
            "set_source_files_properties(k.cu PROPERTIES LANGUAGE CXX)\n"
            "add_library(k OBJECT k.cu)\ntarget_compile_definitions(k PRIVATE STRIDE=16)\n"
            "target_include_directories(k PRIVATE include)\n",
        },
    )
    done = subprocess.run(
        ["cmake", "-S", str(tmp_path), "-B", str(tmp_path / "build"), "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    flags = CompilationDatabase.load(str(tmp_path / "build")).flags_for(str(tmp_path / "k.cu"))
    assert flags is not None and ("STRIDE", "16") in flags.defines
    monkeypatch.chdir(tmp_path)
    assert costs(report(capsys, "-p", "build", "k.cu")["k.cu"])[0][1] == 32  # 64 bytes apart: 32 sectors
