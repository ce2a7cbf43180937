"""Which specialization of a class template an instance uses: C++'s partial ordering, reduced to
what host code's type computations need (`IF<TYPE_IS<Real, double>::test, A, B>::type`).

A specialization is kept under the name the parser gives it, its pattern spelled out
(`IF<true, L, R>`, `TYPE_IS<L, L>`), with the template parameters it declares (`L`, `R`). An
instance's arguments (types, integers) match a pattern when each spelled argument is one of
those parameters (bound to the argument, the same one each time it appears) or spells the
argument itself (`true` matches 1, `float` matches the type float).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

_TRUTH = {"true": 1, "false": 0}


def pattern_arguments(name: str) -> tuple[str, tuple[str, ...]] | None:
    """(`IF`, (`true`, `L`, `R`)) of a specialization named `IF<true, L, R>`, or None for a
    name that is no specialization's. Commas inside nested `<...>` or `(...)` do not split."""
    if not name.endswith(">") or "<" not in name:
        return None
    head, inner = name[: name.index("<")].strip(), name[name.index("<") + 1 : -1]
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(inner):
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(inner[start:i].strip())
            start = i + 1
    parts.append(inner[start:].strip())
    return head, tuple(parts)


def _same(spelled: str, value: Any) -> bool:
    """Whether a pattern's argument spelled as written is the instance's argument `value`."""
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, int):
        text = spelled.lower().rstrip("ul")
        number = _TRUTH.get(spelled)
        if number is None and text.lstrip("-").isdigit():
            number = int(text)
        return number == value
    return " ".join(spelled.split()) == str(value)


def match(pattern: tuple[str, ...], parameters: Iterable[str], values: tuple[Any, ...]) -> dict[str, Any] | None:
    """The binding of `parameters` under which `pattern` spells `values`, or None when the
    instance does not use this specialization."""
    if len(pattern) != len(values):
        return None
    names = set(parameters)
    bound: dict[str, Any] = {}
    for spelled, value in zip(pattern, values, strict=True):
        if spelled in names:
            if spelled in bound and str(bound[spelled]) != str(value):
                return None
            bound[spelled] = value
        elif not _same(spelled, value):
            return None
    return bound


def specialization_for(
    name: str, values: tuple[Any, ...], specializations: Mapping[str, tuple[str, ...]]
) -> tuple[str, dict[str, Any]] | None:
    """The specialization of the class template `name` that an instance with template arguments
    `values` uses, and its parameters' binding: the first whose pattern matches, among
    `specializations` (specialization name -> its template parameters' names). None: the
    primary template."""
    # the more specialized first: an explicit specialization (no parameters) before a partial one
    for key, parameters in sorted(specializations.items(), key=lambda item: len(item[1])):
        split = pattern_arguments(key)
        if split is None or split[0] != name:
            continue
        bound = match(split[1], parameters, values)
        if bound is not None:
            return key, bound
    return None
