"""The values of C literals as the AST records them: integers, floating constants, characters.

The text of a literal is kept beside its value (`A.Constant.text`); the value is what
constant folding and the analyses compute with. Suffixes (`u`, `ll`, `f`) and digit
separators (`1'000`) are dropped here; the type a suffix gives is lowering's business.
"""

from __future__ import annotations


def int_value(text: str) -> int:
    """`0x1F`, `0b101`, `017`, `42u`, `1'000`."""
    t = text.replace("'", "").rstrip("uUlL")
    if t[:2] in ("0x", "0X"):
        return int(t[2:] or "0", 16)
    if t[:2] in ("0b", "0B"):
        return int(t[2:], 2)
    if len(t) > 1 and t[0] == "0":
        return int(t, 8)
    return int(t)


def float_value(text: str) -> float:
    """`1.5f`, `2e-3`, `0x1p4`; 0.0 for a spelling Python cannot read."""
    t = text.rstrip("fFlL")
    try:
        if t[:2] in ("0x", "0X"):
            return float.fromhex(t)
        return float(t)
    except ValueError:
        return 0.0


_ESCAPES = {"n": 10, "t": 9, "r": 13, "0": 0, "\\": 92, "'": 39, '"': 34, "a": 7, "b": 8, "f": 12, "v": 11}


def char_value(text: str) -> int:
    """`'a'`, `'\\n'`, `L'x'`: the code of the (first) character."""
    body = text[text.index("'") + 1 : -1]
    if body.startswith("\\"):
        return _ESCAPES.get(body[1:2], ord(body[1:2] or "\0"))
    return ord(body[0]) if body else 0
