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
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["CPLUSPLUS", "DEFAULT_TOOLKIT", "ToolkitVersion", "cuda_macros", "parse_toolkit_version"]

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
