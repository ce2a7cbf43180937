"""The values of C literals as the AST records them: integers, floating constants, characters.

The text of a literal is kept beside its value (`A.Constant.text`); the value is what
constant folding and the analyses compute with. Suffixes (`u`, `ll`, `f`) and digit
separators (`1'000`) are dropped here; the type a suffix gives is lowering's business.
"""

from __future__ import annotations

INT_BITS = 64  # the widest integer type: a literal wider than this keeps its low 64 bits


def int_value(text: str) -> int:
    """`0x1F`, `0b101`, `017`, `42u`, `1'000`. A literal of any length is read (in linear time,
    past Python's 4,300-digit limit on `int(str)`); one wider than 64 bits keeps its low 64
    bits, as gcc's truncation does; `09`, not octal, is read as the decimal it looks like."""
    t = text.replace("'", "").rstrip("uUlLzZ")
    if t[:2] in ("0x", "0X"):
        return digits_value(t[2:], 16)
    if t[:2] in ("0b", "0B"):
        return digits_value(t[2:], 2)
    if len(t) > 1 and t[0] == "0" and not set(t) & {"8", "9"}:
        return digits_value(t, 8)
    return digits_value(t, 10)


def digits_value(digits: str, base: int) -> int:
    """The value of a run of digits in `base` (0 for none, or for a digit outside the base),
    modulo 2**64 once it is longer than 64 bits, in chunks that `int` reads in linear time."""
    mask = (1 << INT_BITS) - 1
    value = 0
    try:
        for start in range(0, len(digits), 64):
            chunk = digits[start : start + 64]
            value = value * base ** len(chunk) + int(chunk, base)
            if value > mask:
                value &= mask
    except ValueError:
        return 0
    return value


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
