"""Bad input never takes the front end down: `parse()` (and `lower()` after it) returns
diagnostics with positions inside the text, never raises, and finishes in a few seconds,
whatever it is given -- an empty file, binary bytes, 10 MB of generated text, nesting
1000 levels deep, an unterminated comment or string. A syntax error costs one statement
or one declaration: the next kernel in the file is still lowered.
"""

from __future__ import annotations

import json
import random
import time
from contextlib import contextmanager

import pytest

from analyzer.diagnostics import Span
from analyzer.ir.lower import lower
from analyzer.syntax import ast as A
from analyzer.syntax.chunks import MAX_NESTING
from analyzer.syntax.parse import parse

MB = 1024 * 1024
# A guard against hangs and runaway work, not a speed test (speed is measured by benchmarks/,
# never asserted): the measured times are under 2 s on one idle core, far below this.
FEW_SECONDS = 120.0

KERNEL = "__global__ void good(float *p) { p[threadIdx.x] = 1.0f; }\n"


@contextmanager
def within(seconds: float):
    start = time.perf_counter()
    yield
    elapsed = time.perf_counter() - start
    assert elapsed < seconds, f"took {elapsed:.1f} s"


def front_end(text: str):
    """parse + lower, checking the invariants every bad input must keep."""
    result = parse(text)
    for d in result.diagnostics:
        assert d.span is not None, d
        assert 0 <= d.span.start <= d.span.end <= len(text), d
        assert d.code.startswith("WL9"), d
    module = lower(result.unit, text, "bad.cu")
    for d in module.diagnostics:
        assert d.span is None or 0 <= d.span.start <= d.span.end <= len(text), d
    return result, module


def kernel_names(module) -> list[str]:
    return [k.name for k in module.kernels]


def span_of(text: str, needle: str) -> Span:
    start = text.index(needle)
    return Span(start, start + len(needle))


# ----------------------------------------------------------------------------- empty and tiny


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "\n\n\n",
        "\t\r\n",
        "// only a comment",
        "/* only a comment */",
        "#include <cuda.h>\n#pragma once\n",
        ";",
        ";;;",
    ],
)
def test_text_without_declarations_parses_to_an_empty_unit(text):
    result, module = front_end(text)
    assert result.diagnostics == []
    assert result.unit.decls == ()
    assert result.unit.span == Span(0, len(text))
    assert module.kernels == []


@pytest.mark.parametrize(
    "text",
    [
        "}",
        ")",
        "{",
        "(",
        "}}}}",
        ")))",
        "((((",
        "{{{{",
        "__global__",
        "__global__ void",
        "template <",
        "template <typename T",
        "struct",
        "struct S {",
        "k<<<",
        ">>>",
        "#",
        "\\",
        "'",
        '"',
        "@",
        "$x",
        "`",
        "int x = ;",
        "x = = 3;",
        "__shared__ float s[;",
        "float3 v = {",
        "a ? b :",
        "sizeof(",
        "0x",
        "1e",
        "__global__ void k() { return",
        "__global__ void k(float *p) { p[0] = 1;",
    ],
)
def test_fragments_give_diagnostics_with_positions_and_never_raise(text):
    front_end(text)


def test_an_unclosed_kernel_at_the_end_of_the_file_is_a_diagnostic():
    text = KERNEL + "__global__ void open(float *p) {\n  p[0] = 1;\n"
    result, module = front_end(text)
    assert [d.code for d in result.diagnostics] == ["WL901"]
    assert kernel_names(module) == ["good"]


def test_a_stray_closing_brace_costs_nothing_after_it():
    text = "}\n" + KERNEL
    _result, module = front_end(text)
    assert kernel_names(module) == ["good"]


# ----------------------------------------------------------------------------- binary bytes


def test_binary_bytes_give_diagnostics_and_never_raise():
    data = bytes(range(256)) * 64
    text = data.decode("latin-1")
    with within(FEW_SECONDS):
        result, module = front_end(text)
    assert result.diagnostics
    assert module.kernels == []


def test_random_bytes_then_a_kernel():
    rng = random.Random(7)
    junk = rng.randbytes(4096).decode("utf-8", errors="replace")
    junk = junk.replace("{", "").replace("}", "")  # keep the kernel after the junk reachable
    text = junk + ";\n" + KERNEL
    _result, module = front_end(text)
    assert "good" in kernel_names(module)


def test_nul_bytes_and_control_characters_inside_a_kernel():
    text = "__global__ void k(float *p) {\x00\x01 p[0] = 1; \x7f}\n" + KERNEL
    result, module = front_end(text)
    assert result.diagnostics
    assert result.diagnostics[0].span == Span(text.index("\x00"), text.index("\x00") + 1)
    assert "good" in kernel_names(module)


def test_binary_bytes_through_the_preprocessor(tmp_path):
    pre = pytest.importorskip("analyzer.source.preprocess")
    path = tmp_path / "binary.cu"
    path.write_bytes(bytes(range(256)) * 64 + KERNEL.encode())
    with within(FEW_SECONDS):
        pp = pre.preprocess_file(str(path))
        result, _module = front_end(pp.text)
    for d in result.diagnostics:
        where = pp.linemap.resolve_span(d.span)
        assert where.line >= 1 and where.column >= 1


def test_non_ascii_text_in_comments_strings_and_names():
    text = (
        "// 共享内存 bank conflict — ünïcödé\n"
        '__global__ void k(float *p) { const char *s = "šđč"; p[0] = 1; }\n'
        "__global__ void ключ(float *p) { p[0] = 2; }\n" + KERNEL
    )
    _result, module = front_end(text)
    assert "k" in kernel_names(module) and "good" in kernel_names(module)


def test_crlf_line_endings_are_whitespace():
    text = KERNEL.replace("\n", "\r\n").replace("{ ", "{\r\n")
    result, module = front_end(text)
    assert result.diagnostics == []
    assert module.kernels[0].accesses[0].span == span_of(text, "p[threadIdx.x]")


# ----------------------------------------------------------------------------- 10 MB


def lookup_table(size: int) -> str:
    """A generated lookup table of `size` bytes and a kernel that reads it."""
    parts, n, total = [], 0, 0
    while total < size:
        item = f"{n * 0.001:.6f}f,{chr(10) if n % 8 == 7 else ' '}"
        parts.append(item)
        total += len(item)
        n += 1
    return (
        f"__constant__ float table[{n}] = {{\n{''.join(parts)}}};\n"
        "__global__ void lookup(float *out) { out[threadIdx.x] = table[threadIdx.x]; }\n" + KERNEL
    )


@pytest.mark.slow
def test_a_10_mb_generated_lookup_table_is_skimmed_and_its_kernels_lowered():
    text = lookup_table(10 * MB)
    assert len(text) >= 10 * MB
    with within(FEW_SECONDS):
        result, module = front_end(text)
    assert result.diagnostics == []
    assert kernel_names(module) == ["lookup", "good"]
    assert [(a.space, a.op, a.text) for a in module.kernels[0].accesses] == [
        ("constant", "load", "table[threadIdx.x]"),
        ("global", "store", "out[threadIdx.x]"),
    ]
    (table,) = module.globals
    assert table.type.length == text.count("f,")


@pytest.mark.slow
def test_a_10_mb_lookup_table_through_the_preprocessor(tmp_path):
    pre = pytest.importorskip("analyzer.source.preprocess")
    path = tmp_path / "table.cu"
    path.write_text("#define SCALE 2\n" + lookup_table(10 * MB))
    with within(FEW_SECONDS):
        pp = pre.preprocess_file(str(path))
        _result, module = front_end(pp.text)
    assert kernel_names(module) == ["lookup", "good"]
    lines = path.read_text().split("\n")
    row = next(i for i, line in enumerate(lines) if "void lookup" in line)
    (load,) = [a for a in module.kernels[0].accesses if a.op == "load"]
    where = pp.linemap.resolve_span(load.span)
    assert (where.line, where.column) == (row + 1, lines[row].index("table[threadIdx.x]") + 1)


JUNK_10_MB = {
    "one 10 MB name": lambda: "x" * (10 * MB),
    "one 10 MB expression": lambda: "__global__ void k(float *p) { p[0] = " + "a+" * (5 * MB) + "a; }\n",
    "10 MB of open parentheses": lambda: "(" * (10 * MB),
    "10 MB of open braces": lambda: "{" * (10 * MB),
    "10 MB of semicolons": lambda: ";" * (10 * MB),
    "10 MB of random bytes": lambda: random.Random(3).randbytes(10 * MB).decode("latin-1"),
}


@pytest.mark.parametrize("name", list(JUNK_10_MB))
@pytest.mark.slow
def test_10_mb_of_generated_junk_ends_without_hanging(name):
    text = JUNK_10_MB[name]()
    assert len(text) >= 10 * MB
    with within(FEW_SECONDS):
        result, _ = front_end(text)
    assert result.diagnostics or name == "10 MB of semicolons"  # empty declarations are valid C


def test_a_declaration_too_large_to_analyse_is_skipped_and_the_next_kernel_lowered():
    text = "__global__ void huge(float *p) { p[0] = " + "a+" * (MB // 2) + "a; }\n" + KERNEL
    with within(FEW_SECONDS):
        result, module = front_end(text)
    (d,) = result.diagnostics
    assert d.code == "WL901" and "too large" in d.message
    assert d.span.start == 0
    assert kernel_names(module) == ["good"]


# ----------------------------------------------------------------------------- deep nesting


def test_1000_nested_braces_in_a_kernel_skip_that_kernel_only():
    text = "__global__ void deep(float *p) {" + "{" * 1000 + "p[0] = 1;" + "}" * 1000 + "}\n" + KERNEL
    with within(FEW_SECONDS):
        result, module = front_end(text)
    (d,) = result.diagnostics
    assert d.code == "WL901" and "nested deeper" in d.message
    brace = text.index("{") + MAX_NESTING  # the first brace past the limit
    assert d.span == Span(brace, brace + 1)
    assert kernel_names(module) == ["good"]


@pytest.mark.parametrize("closed", [True, False], ids=["closed", "never closed"])
def test_a_kernel_nested_too_deeply_is_an_error_that_check_reports(closed, tmp_path, capsys):
    """The kernel refused by the splitter is device code: `check` says so (a WL901 error at the
    first brace past the limit) and analyses the next kernel; it is not hidden as host code."""
    from analyzer.cli import main

    deep = "__global__ void deep(float *p) {\n" + "{" * 300 + "p[0] = 1;" + ("}" * 300 + "}\n" if closed else "")
    text = KERNEL + deep
    path = tmp_path / "deep.cu"
    path.write_text(text)
    assert main(["check", "--no-cache", "--block", "256", "--output-format", "json", str(path)]) == 1
    (report,) = json.loads(capsys.readouterr().out)["files"]
    (error,) = report["errors"]
    # line 3 is the braces alone: the first past the limit is the 256th
    assert (error["code"], error["line"], error["column"]) == ("WL901", 3, MAX_NESTING)
    assert error["message"] == f"braces nested deeper than {MAX_NESTING} levels; this declaration is skipped"
    assert [k["name"] for k in report["kernels"]] == ["good"]


def test_parentheses_too_deep_in_a_kernel_are_an_error_that_check_reports(tmp_path, capsys):
    """The rest of the file is not read from the first parenthesis past the limit: the kernel
    it stops in is device code, so `check` says why (it is not hidden as host code)."""
    from analyzer.cli import main
    from analyzer.syntax.chunks import MAX_PAREN_NESTING

    deep = "__global__ void k(float *p) { p[0] = " + "(" * 3000 + "1" + ")" * 3000 + "; }\n"
    path = tmp_path / "parens.cu"
    path.write_text(KERNEL + deep + "__global__ void after(float *q) { q[0] = 1.0f; }\n")
    assert main(["check", "--no-cache", "--block", "256", "--output-format", "json", str(path)]) == 1
    (report,) = json.loads(capsys.readouterr().out)["files"]
    (error,) = report["errors"]
    column = len("__global__ void k(float *p) { p[0] = ") + MAX_PAREN_NESTING + 1
    assert (error["code"], error["line"], error["column"]) == ("WL901", 2, column)
    assert "the rest of the file is skipped" in error["message"]
    assert [k["name"] for k in report["kernels"]] == ["good"]


def test_a_host_function_nested_too_deeply_stays_hidden_as_host_code(tmp_path, capsys):
    from analyzer.cli import main

    host = "void setup(int *p) {\n" + "{" * 300 + "p[0] = 1;" + "}" * 300 + "}\n"
    path = tmp_path / "host.cu"
    path.write_text(KERNEL + host)
    assert main(["check", "--no-cache", "--block", "256", str(path)]) == 0
    assert "WL901" not in capsys.readouterr().out


def test_nesting_up_to_the_limit_is_parsed():
    depth = MAX_NESTING - 2
    text = "__global__ void deep(float *p) {" + "{" * depth + "p[0] = 1;" + "}" * depth + "}\n"
    result, module = front_end(text)
    assert result.diagnostics == []
    assert [a.text for a in module.kernels[0].accesses] == ["p[0]"]


def test_1000_nested_parentheses_in_a_kernel_are_parsed():
    text = "__global__ void deep(float *p) { p[0] = " + "(" * 1000 + "1" + ")" * 1000 + "; }\n" + KERNEL
    with within(FEW_SECONDS):
        result, module = front_end(text)
    assert result.diagnostics == []
    assert kernel_names(module) == ["deep", "good"]


def test_parentheses_never_closed_stop_the_file_with_a_diagnostic():
    text = KERNEL + "__global__ void k(float *p) { p[0] = " + "(" * 100_000
    with within(FEW_SECONDS):
        result, module = front_end(text)
    assert [d.code for d in result.diagnostics] == ["WL901"]
    assert kernel_names(module) == ["good"]


DEEP_1000 = {
    "if": "if (p) " * 1000 + "p[0] = 1;",
    "unary minus": "p[0] = " + "-" * 1000 + "1;",
    "index": "p[0] = p" + "[0]" * 1000 + ";",
    "call": "p[0] = " + "f(" * 1000 + "1" + ")" * 1000 + ";",
    "ternary": "p[0] = " + "a ? b : " * 1000 + "c;",
    "assignment": "a" + " = a" * 1000 + ";",
}


@pytest.mark.parametrize("what", list(DEEP_1000))
def test_1000_levels_of_nested_statements_or_expressions_are_one_diagnostic(what):
    body = DEEP_1000[what]
    text = "__global__ void deep(float *p, int a, int b, int c) { " + body + " }\n" + KERNEL
    with within(FEW_SECONDS):
        result, module = front_end(text)
    assert len(result.diagnostics) <= 1
    assert "good" in kernel_names(module)


# ----------------------------------------------------------------------------- unterminated


def test_an_unterminated_comment_is_wl901_at_the_comment():
    text = KERNEL + "/* never closed\n__global__ void later(float *p) { p[0] = 1; }\n"
    result, module = front_end(text)
    (d,) = result.diagnostics
    assert d.code == "WL901" and "unterminated comment" in d.message
    assert d.span == span_of(text, "/*")
    assert kernel_names(module) == ["good"]


def test_an_unterminated_comment_inside_a_kernel():
    text = "__global__ void k(float *p) { p[0] = 1; /* oops }\n" + KERNEL
    result, _module = front_end(text)
    assert result.diagnostics and result.diagnostics[0].code == "WL901"
    assert result.diagnostics[0].span.start == text.index("/*")


def test_an_unterminated_string_is_wl901_at_the_quote_and_the_next_kernel_is_lowered():
    text = '__global__ void k(float *p) { const char *s = "abc; p[0] = 1; }\n' + KERNEL
    result, module = front_end(text)
    (d,) = result.diagnostics
    assert d.code == "WL901" and d.message == "unterminated string literal"
    assert d.span.start == text.index('"')
    assert d.span.end == text.index("\n")
    assert "good" in kernel_names(module)


def test_an_unterminated_character_literal():
    text = "__global__ void k(char *p) { p[0] = 'a; }\n" + KERNEL
    result, module = front_end(text)
    assert result.diagnostics[0].message == "unterminated character literal"
    assert result.diagnostics[0].span.start == text.index("'")
    assert "good" in kernel_names(module)


def test_an_unterminated_comment_through_the_preprocessor(tmp_path):
    pre = pytest.importorskip("analyzer.source.preprocess")
    path = tmp_path / "c.cu"
    path.write_text(KERNEL + "/* never closed\n")
    pp = pre.preprocess_file(str(path))
    result, module = front_end(pp.text)
    assert kernel_names(module) == ["good"]
    assert any(d.code == "WL901" for d in list(pp.diagnostics) + result.diagnostics)


# ----------------------------------------------------------------------------- syntax errors


def test_a_syntax_error_in_one_kernel_still_lets_the_next_kernel_be_lowered():
    text = (
        "__global__ void first(int *p) {\n"
        "  int x;\n"
        "  x = = 3;\n"
        "  p[0] = x;\n"
        "}\n"
        "__global__ void second(int *q) { q[threadIdx.x] = 2; }\n"
    )
    result, module = front_end(text)
    (d,) = result.diagnostics
    assert d.code == "WL901"
    second_equals = text.index("= =") + 2
    assert d.span == Span(second_equals, second_equals + 1)
    assert kernel_names(module) == ["first", "second"]
    second = module.kernels[1]
    assert [(a.space, a.op, a.text) for a in second.accesses] == [("global", "store", "q[threadIdx.x]")]
    assert second.accesses[0].span == span_of(text, "q[threadIdx.x]")


def test_many_errors_in_one_kernel_end_in_a_bounded_number_of_diagnostics():
    body = "\n".join(f"  x = = {i};" for i in range(500))
    text = "__global__ void k(int *p) {\n  int x;\n" + body + "\n  p[0] = x;\n}\n" + KERNEL
    with within(FEW_SECONDS * 3):
        result, module = front_end(text)
    assert 1 <= len(result.diagnostics) <= 100
    assert "good" in kernel_names(module)


@pytest.mark.slow
def test_random_mutations_of_a_kernel_never_raise():
    source = (
        "template <typename T> struct SharedMemory { __device__ operator T *() { extern __shared__ int s[]; return (T *)s; } };\n"
        "__global__ void __launch_bounds__(256) reduce(const float *in, float *out, int n) {\n"
        "  float *sdata = SharedMemory<float>();\n"
        "  unsigned int tid = threadIdx.x, i = blockIdx.x * blockDim.x * 2 + threadIdx.x;\n"
        "  sdata[tid] = (i < n ? in[i] : 0) + (i + blockDim.x < n ? in[i + blockDim.x] : 0);\n"
        "  __syncthreads();\n"
        "  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) { if (tid < s) sdata[tid] += sdata[tid + s]; __syncthreads(); }\n"
        "  if (tid == 0) atomicAdd(&out[0], sdata[0]);\n"
        "}\n"
        "int main() { dim3 b(256); reduce<<<64, b, 256 * sizeof(float)>>>(0, 0, 1 << 20); }\n"
    )
    rng = random.Random(2024)
    alphabet = "{}()[];,<>=+-*/&|!~?:.#'\"\\ \nxT0_"
    for _ in range(150):
        chars = list(source)
        for _ in range(rng.randrange(1, 6)):
            pos = rng.randrange(len(chars))
            action = rng.randrange(3)
            if action == 0:
                del chars[pos]
            elif action == 1:
                chars.insert(pos, rng.choice(alphabet))
            else:
                chars[pos] = rng.choice(alphabet)
        front_end("".join(chars))


def test_a_kernel_lost_to_an_error_is_recorded_as_skipped():
    text = "__global__ void k(float *p) @ { p[0] = 1; }\n" + KERNEL
    result, module = front_end(text)
    assert result.skipped and isinstance(result.skipped[0], A.Unsupported)
    assert result.skipped[0].span.start == 0
    assert kernel_names(module) == ["good"]
