"""The headers of the C and C++ standard libraries, POSIX and the CUDA toolkit, by name.

A quoted `#include "math.h"` is looked for beside the including file and in the `-I` folders,
and then, as a compiler does, among the system headers. warplint reads no system header (an
`#include <...>` is recorded, never read), so a quoted include that the user's folders do not
hold is one of two things: a system header spelled with quotes (Rodinia's `#include "cuda.h"`,
cuda-samples' `#include "cuda_runtime.h"`), which the compiler finds and warplint must treat as
`<...>`; or a user header that is missing, which is an error (the compiler would fail too).
`is_system_header` tells them apart by name. Both ways, what the program then uses and nothing
defines is said at the kernel (WL903).

Measured on the five public corpora (2026-11-25): 22 quoted includes not found were reported as
errors, 19 of them toolkit or standard headers (`cuda.h`, `cuda_runtime.h`, `thrust/sort.h`,
`math_constants.h`, `curand_kernel.h`, `stdio.h`, `math.h`, `cudla.h`, `nvscisync.h`, ...).
"""

from __future__ import annotations

from analyzer.lazy_pattern import lazy_compile

__all__ = ["is_system_header"]

# C (C17), POSIX headers programs include, and the C++ standard library (C++23) with its <cname>s.
_STANDARD = frozenset(
    """
    assert.h complex.h ctype.h errno.h fenv.h float.h inttypes.h iso646.h limits.h locale.h math.h
    setjmp.h signal.h stdalign.h stdarg.h stdatomic.h stdbool.h stddef.h stdint.h stdio.h stdlib.h
    stdnoreturn.h string.h tgmath.h threads.h time.h uchar.h wchar.h wctype.h
    unistd.h fcntl.h dirent.h dlfcn.h pthread.h sched.h semaphore.h strings.h termios.h malloc.h
    memory.h getopt.h libgen.h sys/types.h sys/stat.h sys/time.h sys/times.h sys/resource.h
    sys/mman.h sys/wait.h sys/socket.h sys/ioctl.h sys/syscall.h netdb.h netinet/in.h arpa/inet.h
    windows.h direct.h io.h process.h conio.h tchar.h intrin.h immintrin.h xmmintrin.h emmintrin.h omp.h mpi.h
    algorithm any array atomic barrier bit bitset cassert ccomplex cctype cerrno cfenv cfloat charconv
    chrono cinttypes ciso646 climits clocale cmath codecvt compare complex concepts condition_variable
    coroutine csetjmp csignal cstdalign cstdarg cstdbool cstddef cstdint cstdio cstdlib cstring ctgmath
    ctime cuchar cwchar cwctype deque exception execution expected filesystem format forward_list
    fstream functional future initializer_list iomanip ios iosfwd iostream istream iterator latch limits
    list locale map memory memory_resource mutex new numbers numeric optional ostream print queue random
    ranges ratio regex scoped_allocator semaphore set shared_mutex source_location span spanstream
    sstream stack stacktrace stdexcept stop_token streambuf string string_view strstream syncstream
    system_error thread tuple type_traits typeindex typeinfo unordered_map unordered_set utility
    valarray variant vector version
    """.split()  # noqa: SIM905 - a table of words reads better than 200 quoted strings
)

# The CUDA toolkit's headers and folders (`nvcc`'s include folder and its libraries), and the
# platform headers its samples use (OpenGL, EGL, NvSci, NvMedia, cuDLA).
_TOOLKIT = lazy_compile(
    r"""(?x)
    (?:thrust|cub|cuda|cooperative_groups|nv|crt|GL|EGL|KHR|GLES\d?|vulkan|cudnn)/.+
    | (?:cuda|cublas|cufft|curand|cusparse|cusolver|cudla|cudnn|cutensor|cufile|nvrtc|nvToolsExt|nvtx|nvml|
       nvjpeg|nvsci|nvmedia|npp|math_constants|math_functions|sm_\d+_intrinsics|sm_\d+_atomic_functions|
       device_(?:launch_parameters|functions|types|atomic_functions|double_functions)|vector_(?:types|functions)|
       texture_(?:types|fetch_functions|indirect_functions)|surface_(?:types|functions|indirect_functions)|
       host_(?:defines|config)|driver_(?:types|functions)|channel_descriptor|builtin_types|common_functions|
       mma|cooperative_groups|library_types|cuComplex)\w*\.(?:h|hpp)
    """
)


def is_system_header(name: str) -> bool:
    """Whether `#include "name"` names a standard, POSIX or CUDA toolkit header: one the compiler
    would find among the system headers when the user's folders do not hold it."""
    return name in _STANDARD or _TOOLKIT.fullmatch(name) is not None
