"""CUDA's predefined macros for an architecture and a toolkit version, as nvcc defines them.

warplint reads no `<...>` header, so what nvcc and `cuda_runtime.h` define before the first
line must come from here: `#if CUDART_VERSION >= 2020` or `#if __CUDA_ARCH__ >= 700` would
otherwise drop code silently. The names and values are those of `nvcc -E -Xcompiler -dM`
(nvcc 13.0 on sm_90 lists `__CUDACC_VER_MAJOR__ 13`, `CUDART_VERSION 13000`, ...), with the
version numbers of the toolkit chosen (`--cuda-version`, default `DEFAULT_TOOLKIT`).

nvcc preprocesses a .cu twice: once for the host, without `__CUDA_ARCH__`, and once per
architecture for the device, with it. warplint reads a file once, as the device pass sees it
(`__CUDA_ARCH__` defined), since the kernels are what it costs; host code that hides behind
`#ifndef __CUDA_ARCH__` is not read, as in nvcc's device pass.

`CUDA_VERSION` is `cuda.h`'s (the driver API's); it is defined too, with the same value as
`CUDART_VERSION`, since code that tests it includes `cuda.h` and warplint does not read it.

`HEADER_CONSTANTS` are the constants of the standard and CUDA headers that kernels use and that
warplint, reading no `<...>` header, would otherwise not know (`FLT_MAX`, `UINT_MAX`, `M_PI`,
`CUDART_PI_F`): defined before the first line, whether or not the file includes the header
(code often gets `<float.h>` through another header, and trimmed benchmark kernels include
nothing), under the origin `HEADERS_ORIGIN`, so that a file's own `#define` of one of them
replaces it with no redefinition warning, as a header's value it never read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

__all__ = [
    "CPLUSPLUS",
    "DEFAULT_TOOLKIT",
    "HEADERS_ORIGIN",
    "HEADER_CONSTANTS",
    "ToolkitVersion",
    "cuda_macros",
    "parse_toolkit_version",
]

#: The toolkit warplint preprocesses for when none is given. CUDA 12 is the last toolkit that
#: compiles for every architecture warplint models (CUDA 13 dropped sm_70 and sm_72).
DEFAULT_TOOLKIT = "12.0"

_VERSION = re.compile(r"(\d{1,3})\.(\d{1,2})(?:\.(\d{1,4}))?")
_ARCH = re.compile(r"sm_(\d)(\d)[a-z]?")
_DEFAULT_ARCH_MACRO = "900"

ToolkitVersion = tuple[int, int, int]  # (major, minor, build)


def parse_toolkit_version(text: str) -> ToolkitVersion:
    """`"12.4"` -> (12, 4, 0), `"12.4.131"` -> (12, 4, 131); raises ValueError on anything else."""
    m = _VERSION.fullmatch(text.strip())
    if m is None:
        raise ValueError(f"bad CUDA version {text!r}; expected MAJOR.MINOR, such as 12.4")
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


def _arch_macro(arch: str) -> str:
    """`__CUDA_ARCH__` of an architecture name: sm_86 -> 860 (900 for a model without an sm_ name)."""
    m = _ARCH.fullmatch(arch)
    return f"{m.group(1)}{m.group(2)}0" if m else _DEFAULT_ARCH_MACRO


#: `__cplusplus` for each `-std` nvcc takes (its default, C++17, when none is given).
CPLUSPLUS = MappingProxyType(
    {"c++03": "199711L", "c++11": "201103L", "c++14": "201402L", "c++17": "201703L", "c++20": "202002L"}
)


def cuda_macros(arch: str = "sm_90", toolkit: str = DEFAULT_TOOLKIT, std: str | None = None) -> Mapping[str, str]:
    """The object-like macros nvcc's device pass for `arch` defines, with `toolkit`'s version
    numbers (the versions as `CUDART_VERSION` spells them: 12.4 -> 12040) and `__cplusplus`
    of the `-std` given (gnu++17 reads as c++17)."""
    major, minor, build = parse_toolkit_version(toolkit)
    version = str(major * 1000 + minor * 10)
    arch_number = _arch_macro(arch)
    return MappingProxyType(
        {
            "__CUDACC__": "1",
            "__NVCC__": "1",
            "__CUDA_ARCH__": arch_number,
            "__CUDACC_VER_MAJOR__": str(major),
            "__CUDACC_VER_MINOR__": str(minor),
            "__CUDACC_VER_BUILD__": str(build),
            "__cplusplus": CPLUSPLUS.get((std or "c++17").replace("gnu++", "c++"), CPLUSPLUS["c++17"]),
            "__CUDA_ARCH_LIST__": arch_number,
            "__CUDA_API_VER_MAJOR__": str(major),
            "__CUDA_API_VER_MINOR__": str(minor),
            "CUDART_VERSION": version,
            "CUDA_VERSION": version,
            # a kernel parameter's attribute (nvcc's header defines it as one): read as nothing
            "__grid_constant__": "",
        }
    )


#: The file name the header constants are defined in (`Macro.where()` says it).
HEADERS_ORIGIN = "<headers>"

#: Constants of the headers warplint does not read, as glibc's and the CUDA toolkit's headers
#: (x86-64: `long` is 64 bits) spell them.
HEADER_CONSTANTS: Mapping[str, str] = MappingProxyType(
    {
        # <float.h> / <cfloat>
        "FLT_MAX": "3.40282347e+38F",
        "FLT_MIN": "1.17549435e-38F",
        "FLT_EPSILON": "1.19209290e-7F",
        "FLT_DIG": "6",
        "FLT_MANT_DIG": "24",
        "DBL_MAX": "1.7976931348623157e+308",
        "DBL_MIN": "2.2250738585072014e-308",
        "DBL_EPSILON": "2.2204460492503131e-16",
        "DBL_DIG": "15",
        "DBL_MANT_DIG": "53",
        # <limits.h> / <climits>
        "CHAR_BIT": "8",
        "SCHAR_MIN": "(-128)",
        "SCHAR_MAX": "127",
        "UCHAR_MAX": "255",
        "CHAR_MIN": "(-128)",
        "CHAR_MAX": "127",
        "SHRT_MIN": "(-32768)",
        "SHRT_MAX": "32767",
        "USHRT_MAX": "65535",
        "INT_MIN": "(-2147483647 - 1)",
        "INT_MAX": "2147483647",
        "UINT_MAX": "4294967295U",
        "LONG_MIN": "(-9223372036854775807L - 1L)",
        "LONG_MAX": "9223372036854775807L",
        "ULONG_MAX": "18446744073709551615UL",
        "LLONG_MIN": "(-9223372036854775807LL - 1LL)",
        "LLONG_MAX": "9223372036854775807LL",
        "ULLONG_MAX": "18446744073709551615ULL",
        # <stdint.h> / <cstdint>
        "INT8_MAX": "127",
        "UINT8_MAX": "255",
        "INT16_MAX": "32767",
        "UINT16_MAX": "65535",
        "INT32_MIN": "(-2147483647 - 1)",
        "INT32_MAX": "2147483647",
        "UINT32_MAX": "4294967295U",
        "INT64_MIN": "(-9223372036854775807LL - 1)",
        "INT64_MAX": "9223372036854775807LL",
        "UINT64_MAX": "18446744073709551615ULL",
        "SIZE_MAX": "18446744073709551615UL",
        # <math.h> / <cmath> (POSIX)
        "M_E": "2.7182818284590452354",
        "M_LOG2E": "1.4426950408889634074",
        "M_LOG10E": "0.43429448190325182765",
        "M_LN2": "0.69314718055994530942",
        "M_LN10": "2.30258509299404568402",
        "M_PI": "3.14159265358979323846",
        "M_PI_2": "1.57079632679489661923",
        "M_PI_4": "0.78539816339744830962",
        "M_1_PI": "0.31830988618379067154",
        "M_2_PI": "0.63661977236758134308",
        "M_2_SQRTPI": "1.12837916709551257390",
        "M_SQRT2": "1.41421356237309504880",
        "M_SQRT1_2": "0.70710678118654752440",
        # CUDA's <math_constants.h>
        "CUDART_INF_F": "__int_as_float(0x7f800000U)",
        "CUDART_NAN_F": "__int_as_float(0x7fffffffU)",
        "CUDART_MAX_NORMAL_F": "__int_as_float(0x7f7fffffU)",
        "CUDART_ZERO_F": "0.0f",
        "CUDART_ONE_F": "1.0f",
        "CUDART_SQRT_HALF_F": "0.707106781f",
        "CUDART_SQRT_TWO_F": "1.414213562f",
        "CUDART_THIRD_F": "0.333333333f",
        "CUDART_PIO4_F": "0.785398163f",
        "CUDART_PIO2_F": "1.570796327f",
        "CUDART_3PIO4_F": "2.356194490f",
        "CUDART_2_OVER_PI_F": "0.636619772f",
        "CUDART_PI_F": "3.141592654f",
        "CUDART_L2E_F": "1.442695041f",
        "CUDART_LN2_F": "0.693147181f",
        "CUDART_NORM_HUGE_F": "3.402823466e38f",
        "CUDART_INF": "__longlong_as_double(0x7ff0000000000000ULL)",
        "CUDART_NAN": "__longlong_as_double(0xfff8000000000000ULL)",
        "CUDART_PI": "3.1415926535897931e+0",
        "CUDART_PIO2": "1.5707963267948966e+0",
        "CUDART_SQRT_2PI": "2.5066282746310002e+0",
        "CUDART_SQRT_HALF": "7.0710678118654757e-1",
        "CUDART_SQRT_TWO": "1.4142135623730951e+0",
        "CUDART_LN2": "6.9314718055994529e-1",
        "CUDART_L2E": "1.4426950408889634e+0",
        # the CUDA runtime's (driver_types.h, surface_types.h) that device code passes: a surface
        # store's boundary mode, the flags of a stream created by a kernel (dynamic parallelism)
        "cudaBoundaryModeZero": "0",
        "cudaBoundaryModeClamp": "1",
        "cudaBoundaryModeTrap": "2",
        "cudaStreamDefault": "0x00",
        "cudaStreamNonBlocking": "0x01",
    }
)
