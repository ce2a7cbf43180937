"""The inputs of `benchmarks/fuzz.py`: one seeded generator per family.

Every generator takes a `random.Random` and the seed kernels and returns a `Case`: the files
to write (paths as bytes, so that a name need not be UTF-8), the arguments of the command
and whether its output is JSON or SARIF to validate. A case depends only on its own random
generator, so case N of a seed is the same whatever ran before it or beside it.

Families:

- mutant: a seed kernel mutated at the token level (tokens dropped, repeated, swapped or
  replaced by an odd number, an operator or another name of the file), whole lines repeated
  or dropped, two seeds spliced, the text cut short.
- stress: structured stress: deep nesting (braces, parentheses, `if`, loops, `#if`, macros,
  includes), long expressions, many loops, kernels and launches, huge literals and arrays.
- bytes: random bytes, random printable text, random tokens.
- paths: odd paths: names that are not UTF-8, with spaces or a leading dash (after `--`),
  folders, nested folders, an unreadable file, an empty file, a symbolic link loop.
- options: bad command-line options and configuration files (`warplint.toml`).
- loops: random loop headers around accesses (steps such as `/= -1`, `<<= 100`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

FORMATS = ("text", "concise", "json", "json-lines", "sarif", "github", "html")
NUMBERS = (
    "0",
    "1",
    "-1",
    "2",
    "3",
    "7",
    "31",
    "32",
    "33",
    "64",
    "1024",
    "1025",
    "65535",
    "65536",
    "2147483647",
    "2147483648",
    "4294967295",
    "9223372036854775807",
    "18446744073709551615",
    "0x7fffffff",
    "0xffffffffffffffff",
    "1e999",
    "0.5",
    "-0.0",
    "1e-300",
    "077",
    "09",
    "0b101",
    "1'000",
    "1u",
    "99999999999999999999999999",
    "9" * 5000,
    "0x" + "f" * 100,
    "1.5f",
    "'a'",
    "(1 << 30)",
    "(1 << 62)",
    "(1 << 100)",
    "(-1 >> 1)",
    "(0 / 0)",
    "(1 % 0)",
)
OPERATORS = (
    "+",
    "-",
    "*",
    "/",
    "%",
    "<<",
    ">>",
    "&",
    "|",
    "^",
    "&&",
    "||",
    "<",
    ">",
    "==",
    "!=",
    "=",
    "+=",
    "-=",
    "*=",
    "/=",
    "<<=",
    ">>=",
    "++",
    "--",
    "?",
    ":",
    ",",
    ";",
    "->",
    ".",
    "::",
)
PUNCTUATION = ("{", "}", "(", ")", "[", "]", ";", ",", "<<<", ">>>", "#", "\\", '"', "'", "/*", "*/", "//")
KEYWORDS = (
    "__global__",
    "__device__",
    "__shared__",
    "__constant__",
    "template",
    "struct",
    "typedef",
    "for",
    "while",
    "do",
    "if",
    "else",
    "return",
    "break",
    "continue",
    "switch",
    "case",
    "goto",
    "__syncthreads()",
    "threadIdx.x",
    "blockIdx.y",
    "blockDim.z",
    "gridDim.x",
    "__align__(16)",
    "__launch_bounds__(2048)",
    "extern",
    "volatile",
    "const",
    "auto",
    "sizeof",
    "new",
    "delete",
)
DIRECTIVES = (
    "#include __FILE__\n",
    "#if 1\n",
    "#endif\n",
    "#define X X X\n",
    "#undef X\n",
    "#pragma once\n",
    "#error no\n",
    '#include "missing.h"\n',
    "#line 99999999999999999999\n",
    "#if " + "9" * 5000 + "\n#endif\n",
    "#ifdef\n",
    "#else\n",
    "#elif\n",
)


@dataclass
class Case:
    """One input: the files of its folder, the command's arguments, what to validate."""

    family: str
    files: dict[bytes, bytes] = field(default_factory=dict)  # relative path -> content
    args: list[bytes] = field(default_factory=list)  # after `python -m analyzer`
    validate: str | None = None  # "json" or "sarif": the stdout to check against the schema
    folders: list[bytes] = field(default_factory=list)  # empty folders to make
    unreadable: list[bytes] = field(default_factory=list)  # files or folders made mode 000
    links: dict[bytes, bytes] = field(default_factory=dict)  # symbolic links: name -> target


def check_args(rng: random.Random, case: Case, paths: list[bytes]) -> None:
    """`check` of `paths`, in a format chosen at random (a tenth JSON, a tenth SARIF), a share
    with `--verify`; or now and then `simulate` of the first path."""
    roll = rng.random()
    if roll < 0.08 and paths:
        case.args = [b"simulate", paths[0], b"--blocks", str(rng.choice((1, 2, 8))).encode()]
        if rng.random() < 0.3:
            case.args += [b"--format", b"json"]
        return
    fmt = "json" if roll < 0.2 else "sarif" if roll < 0.3 else rng.choice(FORMATS)
    case.args = [b"check", b"--no-cache", b"--format", fmt.encode(), b"-j", b"1"]
    if fmt in ("json", "sarif"):
        case.validate = fmt
    if rng.random() < 0.05:
        case.args.append(b"--verify")
    case.args += [b"--", *paths]


# ----------------------------------------------------------------------------- mutant


def tokens(text: str) -> list[str]:
    """A CUDA-ish tokenisation that keeps everything (whitespace too), so that joining gives the text."""
    import re

    return re.findall(
        r"\s+|[A-Za-z_]\w*|\d[\w.']*|//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|<<<|>>>|"
        r"[-+*/%&|^<>=!]=?|&&|\|\||<<|>>|::|->|.",
        text,
        re.DOTALL,
    )


def mutant(rng: random.Random, seeds: list[str]) -> Case:
    text = rng.choice(seeds)
    for _ in range(rng.choice((1, 1, 2, 3, 5, 10))):
        text = _mutate(rng, text, seeds)
    case = Case("mutant", {b"k.cu": text.encode("utf-8", "surrogateescape")})
    check_args(rng, case, [b"k.cu"])
    return case


def _mutate(rng: random.Random, text: str, seeds: list[str]) -> str:
    toks = tokens(text) or [""]
    i, j = sorted(rng.randrange(len(toks)) for _ in range(2))
    kind = rng.randrange(12)
    if kind == 0:
        del toks[i]
    elif kind == 1:
        toks.insert(i, toks[j])
    elif kind == 2:
        toks[i], toks[j] = toks[j], toks[i]
    elif kind == 3:
        toks[i] = rng.choice(NUMBERS)
    elif kind == 4:
        toks[i] = rng.choice(OPERATORS)
    elif kind == 5:
        names = [t for t in toks if t[:1].isalpha() or t[:1] == "_"] or ["x"]
        toks[i] = rng.choice(names)
    elif kind == 6:
        toks.insert(i, rng.choice(PUNCTUATION + KEYWORDS))
    elif kind == 7:
        toks[i:j] = toks[i:j] * rng.choice((2, 3, 10))
    elif kind == 8:
        lines = text.split("\n")
        k = rng.randrange(len(lines))
        lines.insert(k, rng.choice(DIRECTIVES).rstrip("\n"))
        return "\n".join(lines)
    elif kind == 9:
        other = rng.choice(seeds)
        return text[: rng.randrange(len(text) + 1)] + other[rng.randrange(len(other) + 1) :]
    elif kind == 10:
        return text[: rng.randrange(len(text) + 1)]
    else:
        del toks[i:j]
    return "".join(toks)


# ----------------------------------------------------------------------------- stress


def stress(rng: random.Random, seeds: list[str]) -> Case:
    n = rng.choice((10, 100, 300, 1000, 5000, 20000))
    kernel = "__global__ void k(float *p, int n) {{ {body} }}\n"
    access = "p[threadIdx.x] = 1;"
    kind = rng.randrange(12)
    if kind == 0:
        body = "{" * min(n, 3000) + access + "}" * min(n, 3000)
    elif kind == 1:
        body = "p[" + "(" * n + "threadIdx.x" + ")" * n + "] = 1;"
    elif kind == 2:
        body = "p[threadIdx.x" + " + 1" * n + "] = 1;"
    elif kind == 3:
        body = "if (threadIdx.x > 1) " * min(n, 2000) + access
    elif kind == 4:
        depth = rng.choice((2, 3, 4, 6, 8, 12, 16))
        trips = rng.choice((2, 3, 8, 12, 64))
        loops = " ".join(f"for (int i{d} = 0; i{d} < {trips}; i{d}++)" for d in range(depth))
        body = loops + f" p[threadIdx.x + i{depth - 1}] = 1;"
    elif kind == 5:
        body = " ".join(f"p[threadIdx.x * {i % 37}] = {i};" for i in range(n))
    elif kind == 6:
        body = f"__shared__ float s[{rng.choice(NUMBERS)}]; s[threadIdx.x] = p[threadIdx.x];"
    elif kind == 7:
        body = f"int x = {'9' * n}; p[threadIdx.x * x] = 1;"
    elif kind == 8:
        text = "#define A0 threadIdx.x\n" + "".join(f"#define A{i} (A{i - 1} + A{i - 1})\n" for i in range(1, 40))
        return _one_file(rng, text + kernel.format(body=f"p[A{rng.randrange(1, 40)}] = 1;"))
    elif kind == 9:
        text = "#if 1\n" * min(n, 5000) + kernel.format(body=access) + "#endif\n" * min(n, 5000)
        return _one_file(rng, text)
    elif kind == 10:
        launches = "".join(f"k<<<{i % 97 + 1}, {i % 1024 + 1}>>>(p, {i});\n" for i in range(min(n, 3000)))
        return _one_file(rng, kernel.format(body="p[threadIdx.x * n] = 1;") + "void h(float *p) {\n" + launches + "}\n")
    else:
        text = "".join(kernel.replace("void k(", f"void k{i}(").format(body=access) for i in range(min(n, 2000)))
        return _one_file(rng, text)
    return _one_file(rng, kernel.format(body=body))


def _one_file(rng: random.Random, text: str, family: str = "stress") -> Case:
    case = Case(family, {b"k.cu": text.encode("utf-8", "surrogateescape")})
    check_args(rng, case, [b"k.cu"])
    return case


# ----------------------------------------------------------------------------- bytes


def random_bytes(rng: random.Random, seeds: list[str]) -> Case:
    size = rng.choice((0, 1, 10, 100, 1000, 10000, 100000))
    kind = rng.randrange(3)
    if kind == 0:
        data = rng.randbytes(size)
    elif kind == 1:
        data = bytes(rng.choice(b" \t\n\v\f\rabcdefxyz_019{}()[];,.<>=+-*/%&|^!~?:#\"'\\") for _ in range(size))
    else:
        words = KEYWORDS + OPERATORS + PUNCTUATION + NUMBERS[:30] + ("p", "k", "x", "\n")
        data = " ".join(rng.choice(words) for _ in range(size // 5)).encode()
    case = Case("bytes", {b"k.cu": data})
    check_args(rng, case, [b"k.cu"])
    return case


# ----------------------------------------------------------------------------- paths


def odd_paths(rng: random.Random, seeds: list[str]) -> Case:
    kernel = rng.choice(seeds).encode("utf-8", "surrogateescape")
    names = [
        b"\xff.cu",
        b"\xc3\x28.cu",
        b"a b.cu",
        b"-x.cu",
        b"--help.cu",
        b"k.cuh",
        b"k",
        b".hidden.cu",
        b"\xe9t\xe9.cu",
        b"x" * 200 + b".cu",
        b"sub/\xfe/k.cu",
        b"sub/deep/er/k.cu",
        b"k.ptx",
    ]
    case = Case("paths")
    chosen = rng.sample(names, rng.randrange(1, 4))
    for name in chosen:
        case.files[name] = kernel if rng.random() < 0.8 else b""
    paths = list(chosen)
    roll = rng.random()
    if roll < 0.2:
        case.folders.append(b"empty")
        paths.append(b"empty")
    elif roll < 0.35:
        case.files[b"locked.cu"] = kernel
        case.unreadable.append(b"locked.cu")
        paths.append(b"locked.cu")
    elif roll < 0.45:
        case.links[b"loop"] = b"loop"
        case.links[b"sub/up"] = b".."
        paths.append(b".")
    elif roll < 0.6:
        paths = [b"."]
    elif roll < 0.7:
        case.files[b"inc/\xff.h"] = b"__device__ int f(int x) { return x; }\n"
        case.files[b"m.cu"] = b'#include "\xff.h"\n' + kernel
        paths = [b"m.cu"]
        check_args(rng, case, paths)
        case.args[1:1] = [b"-I", b"inc", b"-D", b"X=\xfa"]
        return case
    else:
        paths.append(b"missing.cu")
    check_args(rng, case, paths)
    if rng.random() < 0.1:
        case.args[1:1] = [b"-o", rng.choice(paths)]
        case.validate = None
    return case


# ----------------------------------------------------------------------------- loops


def loop_headers(rng: random.Random, seeds: list[str]) -> Case:
    var = "d"
    init = rng.choice((*NUMBERS[:20], "threadIdx.x", "n", "-n", "blockDim.x"))
    cond = rng.choice(
        (
            f"{var} > 0",
            f"{var} < n",
            f"{var} != 0",
            f"{var} >= -1",
            "1",
            "",
            f"{var} < {rng.choice(NUMBERS)}",
            f"{var} * {var} < 1000000",
            f"{var} > 0 && {var} < 100000",
        )
    )
    step = rng.choice(
        (
            f"{var} /= -1",
            f"{var} *= -1",
            f"{var} >>= -1",
            f"{var} <<= 100",
            f"{var} *= 1000000007",
            f"{var} /= 0",
            f"{var} >>= 64",
            f"{var}++",
            f"{var}--",
            f"{var} += {rng.choice(NUMBERS)}",
            f"{var} = {var} * {rng.choice(NUMBERS)}",
            f"{var} <<= 1",
            f"{var} >>= 1",
            f"{var} /= 2",
            f"{var} = ({var} + 1) % 32",
            f"{var} = {var} ^ 1",
            "",
        )
    )
    index = rng.choice(
        (
            f"{var}",
            f"{var} * threadIdx.x",
            f"threadIdx.x * {var} % 1024",
            f"threadIdx.x + {var}",
            f"({var} + threadIdx.x) & 1023",
        )
    )
    space = rng.choice(("__shared__ float s[1024]; s", "float *s = p; s"))
    nested = rng.random() < 0.3
    inner = f"for (int e = 0; e < {rng.choice((2, 4, 32))}; e++) " if nested else ""
    body = f"{space}[({index}) % 1024] = 0;"
    text = (
        f"__global__ void k(float *p, int n)\n{{\n  for (int {var} = {init}; {cond}; {step})\n    {inner}{body}\n}}\n"
        f"void h(float *p) {{ k<<<{rng.choice(('1', '2', 'n'))}, {rng.choice(('32', '256', '1024'))}>>>(p, "
        f"{rng.choice(NUMBERS[:12])}); }}\n"
    )
    return _one_file(rng, text, "loops")


# ----------------------------------------------------------------------------- options


BAD_OPTIONS = (
    [b"--block", b"0"],
    [b"--block", b"1025"],
    [b"--block", b"32,32,2"],
    [b"--block", b"x"],
    [b"--block", b"-1"],
    [b"--block", b"9" * 5000],
    [b"--grid", b"2147483648"],
    [b"--grid", b"1,65536"],
    [b"--grid", b"0.5"],
    [b"--param", b"n=99999999999999999999999"],
    [b"--param", b"n=-5"],
    [b"--param", b"=3"],
    [b"--param", b"n=0x" + b"f" * 40],
    [b"-D", b"X=\xff"],
    [b"-D", b"("],
    [b"-D", b"X=(((("],
    [b"-D", b"A=A A"],
    [b"-I", b"\xfe"],
    [b"-I", b"missing"],
    [b"--select", b"WL999"],
    [b"--ignore", b","],
    [b"--select", b"WL9"],
    [b"--arch", b"sm_99"],
    [b"--arch", b""],
    [b"-j", b"0"],
    [b"-j", b"100000"],
    [b"--format", b"xml"],
    [b"--config", b"missing.toml"],
    [b"--isolated"],
    [b"--exit-zero"],
    [b"--statistics"],
    [b"--report-unused-suppressions"],
    [b"--extend-select", b"WL1"],
    [b"--no-color"],
    [b"--via-ptx"],
    [b"-o", b"-"],
    [b"-o", b"sub"],
    [b"--"],
    [b"--verify"],
)
SIMULATE_OPTIONS = (
    [b"--seed", b"-1"],
    [b"--seed", b"9" * 50],
    [b"--blocks", b"0"],
    [b"--all-blocks"],
    [b"--kernel", b"nope"],
    [b"--fill", b"iota"],
    [b"--format", b"json"],
    [b"--block", b"1024"],
)
CONFIG_LINES = (
    "x = " + "[" * 500 + "]" * 500,
    "a = " + "{b = " * 300 + "1" + "}" * 300,
    'select = ["WL999"]',
    "block = [0]",
    "block = 1.5",
    "grid = [2147483648]",
    "params = { n = " + "9" * 5000 + " }",
    "[budget]\nanalysis = 0",
    "[budget]\nanalysis = 1",
    "[budget]\npreprocess = 1\nparse = 1\nlower = 1",
    "[budget]\nsimulation = 1",
    "[budget]\nunknown = 5",
    'budget = "lots"',
    "arch = 5",
    'defines = ["X=\\u00ff"]',
    'include-paths = ["/nonexistent"]',
    'severity = { WL900 = "note" }',
    '[per-file-ignores]\n"*" = ["WL1"]',
    "selct = []",
    "\x00",
    "[tool.warplint]\n[tool.warplint]",
    "= 1",
    'a = "\\',
    "a = '''",
    "key = 1979-05-27T07:32:00Z",
)


def bad_options(rng: random.Random, seeds: list[str]) -> Case:
    case = Case("options", {b"k.cu": rng.choice(seeds).encode("utf-8", "surrogateescape")})
    case.folders.append(b"sub")
    if rng.random() < 0.45:
        lines = rng.sample(CONFIG_LINES, rng.randrange(1, 4))
        case.files[b"warplint.toml"] = "\n".join(lines).encode("utf-8", "surrogateescape") + b"\n"
    if rng.random() < 0.15:
        case.args = [b"simulate", b"k.cu", *[a for o in rng.sample(SIMULATE_OPTIONS, rng.randrange(1, 3)) for a in o]]
        return case
    check_args(rng, case, [b"k.cu"])
    extra = [a for o in rng.sample(BAD_OPTIONS, rng.randrange(1, 4)) for a in o]
    cut = case.args.index(b"--") if b"--" in case.args else len(case.args)
    case.args[cut:cut] = extra
    if b"--format" in extra or b"-o" in extra:
        case.validate = None
    return case


GENERATORS = {
    "mutant": (mutant, 35),
    "stress": (stress, 12),
    "bytes": (random_bytes, 8),
    "paths": (odd_paths, 10),
    "options": (bad_options, 15),
    "loops": (loop_headers, 20),
}


def make_case(rng: random.Random, seeds: list[str]) -> Case:
    """One case of a family chosen by the weights of GENERATORS."""
    names = list(GENERATORS)
    name = rng.choices(names, weights=[GENERATORS[n][1] for n in names])[0]
    return GENERATORS[name][0](rng, seeds)
