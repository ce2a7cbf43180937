"""The rules' re-analysis of a kernel with a shared array padded (`CheckContext.padded`): the
check of a padding fix (WL101's `smallest_padding`) lowers the file again with the array wider
and analyses the kernel for the same launch. Apart from `analyzer.api`, whose pipeline hands it
to the rules, because it is the one part of that pipeline that lowers a file a second time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from analyzer.api import Options, launched_elsewhere
from analyzer.arch import Architecture

__all__ = ["padding_reanalysis"]


def padding_reanalysis(
    path: str, pre: Any, parsed: Any, arch: Architecture, options: Options
) -> Callable[[Any], Callable[[Mapping[str, int]], Any]]:
    """The rules' `reanalyze(analysis)(padding)`: the kernel lowered again with the padded
    arrays wider and analysed for the same launch (only the padded arrays' accesses: the
    rules compare no others), or None when that cannot be done. Each padding is lowered once."""
    from analyzer.analysis.kernel import analyze_kernel
    from analyzer.ir.lower import lower

    padded_modules: dict[tuple, Any] = {}

    def reanalyze_factory(analysis: Any) -> Callable[[Mapping[str, int]], Any]:
        def reanalyze(padding: Mapping[str, int]) -> Any:
            try:
                key = tuple(sorted(padding.items()))
                padded = padded_modules.get(key)
                if padded is None:
                    elsewhere = launched_elsewhere(options.program)
                    padded = lower(parsed.unit, pre.text, path, padding=dict(padding), elsewhere=elsewhere)
                    padded_modules[key] = padded
                name = analysis.kernel.display_name
                twin = next((k for k in padded.kernels if k.display_name == name), None)
                if twin is None:
                    return None
                return analyze_kernel(
                    padded, twin, analysis.launch, arch, params=options.params or None, arrays=padding
                )
            except (Exception, RecursionError):  # noqa: BLE001 - a fix we cannot verify
                return None

        return reanalyze

    return reanalyze_factory
