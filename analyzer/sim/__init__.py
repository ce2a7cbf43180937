"""The reference simulator: runs a kernel's blocks with numpy and charges what they access.

numpy is imported here first, with OpenBLAS told to keep to one thread (unless the environment
says otherwise): the simulator makes no BLAS call, yet OpenBLAS starts a thread per core when
numpy is imported, and starting them is CPU the run pays for nothing. Measured 2026-11-28 on
the 2-core development machine: `import numpy` 0.16-0.18 s of CPU, 0.08-0.10 s with one thread
(0.10 s of wall time either way); on a machine of many cores the pool is larger.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
