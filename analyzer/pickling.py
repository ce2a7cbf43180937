"""Pickling what reports hold for the worker processes of a run (`api.run_files`): a finding's
`args` is a read-only mappingproxy, which pickle refuses by itself."""

from __future__ import annotations

from typing import Any


def pickle_mappingproxy() -> None:
    """Findings keep their `args` in a read-only mappingproxy, which pickle refuses;
    teach pickle to send it as a dict and rebuild the proxy on arrival."""
    import copyreg
    import types

    copyreg.pickle(types.MappingProxyType, _mappingproxy_reduce)


def _mappingproxy_reduce(proxy: Any) -> tuple[Any, tuple[dict[Any, Any]]]:
    return _mappingproxy, (dict(proxy),)


def _mappingproxy(data: dict[Any, Any]) -> Any:
    import types

    return types.MappingProxyType(data)
