"""`python -m analyzer`: the command line, left without tearing the interpreter down.

A run keeps what it analysed until the end (reports, the parse memo, the analyses' memo
tables), and the interpreter's teardown frees each of those objects one by one: measured on
Mandelbrot_cuda.cu (`check --no-cache -j 1`), 0.37 s of its 1.3 s of CPU. Once the output is
flushed nothing is left to do (the worker pools are shut down, files written and closed), so
the process ends at once, as mypy's fast exit does; where flushing fails (a closed pipe), the
ordinary exit reports it, and under a profiler or a tracer (`python -m cProfile -o ...`,
coverage) the ordinary exit lets them write what they found.
"""

import os
import sys

from analyzer.cli import main

status = main()
if sys.getprofile() is not None or sys.gettrace() is not None:  # a profiler or coverage writes at exit
    raise SystemExit(status)
try:
    sys.stdout.flush()
    sys.stderr.flush()
except (OSError, ValueError):
    raise SystemExit(status) from None
os._exit(status if isinstance(status, int) else 1)
