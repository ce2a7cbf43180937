"""How much analysis the inputs built to blow it up take: steps and seconds per file.

    python benchmarks/analysis_steps.py [FILE ...]

Issue 19's analysis inputs (`tests/fixtures/robustness/`: nested loops, nested data-dependent
subscripts, 1,900 template instantiations, 1,000 launch configurations) by default. Each file
is lowered, then every kernel's launch configurations are found and analysed as `warplint
check` does, under an analysis meter with no practical limit; the script prints per file the
kernels, the configurations analysed, the analysis steps spent (`analyzer.budget`: what the
default budget of 12,000,000 is counted in) and the CPU seconds of the analysis.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analyzer import api  # noqa: E402
from analyzer.analysis.kernel import analyze_kernel  # noqa: E402
from analyzer.analysis.launch import launch_configs  # noqa: E402
from analyzer.arch import get_arch  # noqa: E402
from analyzer.budget import Meter, metered  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "robustness"
INPUTS = (
    "slow_nested_loops_4x12.cu",
    "slow_nested_loops_16x2.cu",
    "hang_nested_subscripts_13.cu",
    "slow_template_1900_instantiations.cu",
    "slow_1000_launch_configs.cu",
)
UNLIMITED = 10**15


def measure(path: Path) -> tuple[int, int, int, float]:
    """(kernels, configurations analysed, analysis steps, CPU seconds of the analysis) of one file."""
    _, module = api.lower_file(str(path), api.Options())
    arch = get_arch()
    meter = Meter("analysis", UNLIMITED)
    configurations = 0
    start = time.process_time()
    with metered(meter):
        for kernel in module.kernels:
            for launch in launch_configs(module, kernel):
                analyze_kernel(module, kernel, launch, arch)
                configurations += 1
    return len(module.kernels), configurations, UNLIMITED - meter.left, time.process_time() - start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", help="the files to measure (default: issue 19's analysis inputs)")
    paths = [Path(f) for f in ap.parse_args(argv).files] or [FIXTURES / name for name in INPUTS]
    print(f"{'file':40} {'kernels':>7} {'configs':>7} {'steps':>12} {'CPU s':>7}")
    for path in paths:
        kernels, configurations, steps, seconds = measure(path)
        print(f"{path.name:40} {kernels:7} {configurations:7} {steps:12,} {seconds:7.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
