"""What `warplint explain` prints for each WL9xx code: what it means, whether it matters,
and what to do (the three sections every code has; a test walks `registry.DIAGNOSTIC_CODES`).

The rules' documentation lives in their docstrings (`wl101_bank_conflict.py` ...); the WL9xx
codes are no rule classes, so theirs lives here, beside them.
"""

from __future__ import annotations

__all__ = ["DIAGNOSTIC_DOCUMENTATION", "SECTIONS"]

#: The sections of every code's documentation, in order.
SECTIONS = ("## What it means", "## Does it matter?", "## What to do")

# fmt: off
DIAGNOSTIC_DOCUMENTATION: dict[str, str] = {
    "WL900": """\
## What it means
warplint itself failed on this input: a stage raised an error it did not expect. The
message names the stage and the error; what that stage would have produced for the file (or
the kernel) is missing from the report.

## Does it matter?
Yes, for the report's completeness: findings may be missing where the error struck. It says
nothing about your code's correctness. The exit status is 2 (a tool error).

## What to do
Report it (the message and, if you can, the smallest file that shows it). Meanwhile,
`warplint: ignore[WL900]` does not hide it: internal errors are always reported; check the
other files on their own, or leave the file out with `--extend-exclude`.""",
    "WL901": """\
## What it means
The source does not parse: warplint's grammar (C++ as CUDA uses it) refused the text at
this place. The declaration or statement that holds it is skipped, and parsing resumes after it.

## Does it matter?
Only for what was skipped: accesses in it are not checked. If nvcc compiles the file, the
construct is one warplint does not read yet; if nvcc refuses it too, it is a real syntax
error. In host code it is shown only with `--show-host`, as a warning.

## What to do
Check that the file compiles with nvcc and that the macros it needs are defined (`-D`,
`-I`, `-include`, or `-p build/` with a compilation database). If it compiles, report the
construct; `// warplint: ignore[WL901]` on the line silences it.""",
    "WL902": """\
## What it means
A construct warplint knows but does not model (inline assembly, some C++ features): it is
skipped, and the accesses it makes are not costed.

## Does it matter?
Only if the construct touches shared or global memory in a way that matters: warplint
cannot see those accesses, so it can neither flag nor clear them.

## What to do
Nothing, if the construct does not access memory. Otherwise measure that part with Nsight
Compute; silence the note with `// warplint: ignore[WL902]`.""",
    "WL903": """\
## What it means
A statement or expression parsed but could not be lowered to warplint's IR (a type or a
name it could not resolve, a form the lowering does not handle). It is left out of the analysis.

## Does it matter?
For kernels: the accesses in that statement are not costed and values it defines become
unknown, which can make later findings rest on assumptions. In host code (only with
`--show-host`) it can hide a launch configuration.

## What to do
Make sure the headers that declare the names are found (`-I`, `-p`); the message says what
was missing. Report a construct nvcc accepts; `// warplint: ignore[WL903]` silences it.""",
    "WL904": """\
## What it means
A template kernel that no launch of the run instantiates: warplint analyses a template only
for the template arguments a launch gives it, so this kernel is not checked.

## Does it matter?
Only in that the kernel's accesses go unchecked; it is not a problem in the code.

## What to do
Check the file together with the file that launches the kernel (one run is one program:
`warplint check kernels.cuh main.cu`), or add a launch or an explicit instantiation.
`// warplint: ignore[WL904]` silences it.""",
    "WL905": """\
## What it means
Device functions call each other recursively. warplint inlines calls to cost the accesses
inside them; on a cycle it stops, so the calls on the cycle are not followed.

## Does it matter?
The accesses inside the recursive functions are not costed (as if they were not there).

## What to do
Nothing is wrong with recursion as such; measure the recursive part with Nsight Compute,
or silence the note with `// warplint: ignore[WL905]`.""",
    "WL906": """\
## What it means
`__align(n)__` is not CUDA's spelling: the attribute is `__align__(n)`. The misspelled form
is a macro nvcc does not define, so the alignment you meant is not applied.

## Does it matter?
Yes: the struct keeps its natural alignment, and an array of it may be moved as several
narrow accesses (WL301) instead of one wide one.

## What to do
Write `__align__(n)` (or `alignas(n)`).""",
    "WL907": """\
## What it means
A value outside what CUDA accepts is reported where it enters, and nothing is computed with it:

- a launch (`k<<<grid, block>>>` in the host code, `__launch_bounds__(n)`): more than 1024
  threads a block, a block dimension over 1024 x 1024 x 64, a grid dimension over
  2147483647 x 65535 x 65535, or a dimension that is 0, negative or not an integer
  (`dim3 grid(1, 0.5)` is a grid of height 0). That launch is not analysed.
- `__align__(n)`, `alignas(n)`: n must be a power of two no larger than 536870912 (2^29, the
  largest nvcc accepts). The alignment is ignored.
- a `__shared__` array larger than a block's static shared memory (48 KiB on sm_70 ... sm_90,
  `Architecture.shared_memory_per_block`), or an element moved by one access larger than that:
  the kernel that declares such an array, or the access, is not analysed.

The command line (`--block`, `--grid`) and the configuration (`block`, `grid`) refuse the
same values as usage and configuration errors (exit status 2).

## Does it matter?
Yes: nvcc or the CUDA runtime refuses such a value (the launch fails, the kernel does not
compile), and warplint analyses nothing that depends on it.

## What to do
Fix the value the message names (the launch dimensions, `__launch_bounds__`, the alignment or
the array's size); if it comes from a macro, check the `-D` values of the run.""",
    "WL908": """\
## What it means
A kernel indexes memory but ended with no access costed; the note says what was missing
(an unknown launch configuration, pointers warplint cannot follow, calls it does not see).

## Does it matter?
It means silence here is not a clean bill: the kernel's accesses were not checked.

## What to do
Give what the note names: a launch (`--block`, `--grid`, or the file that launches the
kernel), parameter values (`--param`), the headers (`-I`). `// warplint: ignore[WL908]` on the
kernel's line silences it.""",
    "WL910": """\
## What it means
A path given to warplint that is not a readable CUDA text file: it does not exist, cannot be
read, is not a regular file, is not text, or is a folder with no .cu or .cuh file (a warning).

## Does it matter?
Yes for the run: the path was not checked. A missing or unreadable path makes the exit
status 2, and the summary counts it as an error.

## What to do
Check the spelling of the path, its permissions and its encoding (UTF-8 text); for a folder,
check `exclude`, `extend-exclude` and `.gitignore` (`--no-respect-gitignore`).""",
    "WL920": """\
## What it means
A suppression comment (`// warplint: ignore[...]`, `// NOLINT(...)`) that silences nothing:
no finding of the rules it names is at its place. Reported only with
`--report-unused-suppressions`.

## Does it matter?
Not for performance; a stale suppression can hide a future finding at that line.

## What to do
Delete the comment, or move it to the line of the finding it was meant for.""",
    "WL921": """\
## What it means
A suppression comment that names an unknown rule, or a `NOLINTBEGIN` without its
`NOLINTEND` (or the other way round).

## Does it matter?
Yes: the comment does not silence what you meant, or silences more lines than you meant.

## What to do
Correct the rule's code or name (`warplint rules` lists them), or add the missing
`NOLINTBEGIN`/`NOLINTEND`.""",
    "WL930": """\
## What it means
`check --verify` ran the kernel in warplint's reference simulator and the simulated cost of
an access differs from the static one: the static analysis assumed something the concrete run
does not do (or there is a bug).

## Does it matter?
Yes for trust in the finding at this place: one of the two costs is wrong for this launch.

## What to do
Read the static finding's `assumed:` notes; give the launch and parameters the program uses
(`--block`, `--grid`, `--param`). If they are right, report it with the file.""",
    "WL940": """\
## What it means
Every stage counts its work on a file in steps (never seconds, so that results do not depend
on the machine) against a budget; what spends it stops and is reported here, at the place
where it stopped, naming what was cut short:

- preprocess (tokens moved by macro expansion, and the text read): preprocessing stops, the
  rest of the file is not read;
- parse (the text given to the parser, retries included): the declarations after it are not read;
- lower (the functions lowered and their text): the functions after it are not analysed;
- analysis (statements interpreted, host statements run to find launches, warps planned,
  requests costed): the kernel keeps the launch configurations analysed before; once the
  file's budget is spent, the kernels left are named. A kernel may take at most half of what
  is left, so one heavy kernel leaves the others something;
- simulation (`simulate`, `check --verify`: statements, accesses and lanes run, and each
  launch): the run stops (an endless loop, most often), or `--all-blocks` simulates a sample of
  a grid too large for the budget; once the file's budget is spent, the launches left are named.

The rest of the file, and the other files, are still analysed and printed. Each budget is a
setting: `[tool.warplint.budget]` with `preprocess`, `parse`, `lower`, `analysis`,
`simulation` (README: Configuration). The defaults keep every file of the public corpora the
project measures whole, and end any file in a few seconds.

## Does it matter?
The report is complete for what ran; what was cut short is not analysed (and may hide
findings). It is a warning, not an error in your code.

## What to do
Raise the budget of the stage the message names in `[tool.warplint.budget]`, or split the
file; a file that needs much more than the defaults is worth reporting.""",
}
# fmt: on
