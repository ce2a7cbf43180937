"""`#if` expression evaluation: the value of a fully macro-expanded `#if`/`#elif` line.

C's semantics on 64-bit `intmax_t`/`uintmax_t`: integer and character constants with their
suffixes and escapes, the usual arithmetic conversions between signed and unsigned,
wrap-around, truncating division, `?:`, and the alternative spellings (`and`, `not_eq`).
An invalid expression raises `ExpressionError`, which the caller reports.
"""

from __future__ import annotations

from collections.abc import Sequence

from analyzer.lazy_pattern import lazy_compile
from analyzer.source.tokens import CHR, ID, NUM, PUNCT, PPToken

_M64 = (1 << 64) - 1
_INT64_MAX = (1 << 63) - 1
_BINARY = {
    "*": 13, "/": 13, "%": 13, "+": 12, "-": 12, "<<": 11, ">>": 11,
    "<": 10, "<=": 10, ">": 10, ">=": 10, "==": 9, "!=": 9,
    "&": 8, "^": 7, "|": 6, "&&": 5, "||": 4, ",": 1,
}  # fmt: skip
_ALTERNATIVE = {
    "and": "&&", "or": "||", "not": "!", "bitand": "&", "bitor": "|",
    "xor": "^", "compl": "~", "not_eq": "!=",
}  # fmt: skip
_ESCAPES = {"n": 10, "t": 9, "r": 13, "a": 7, "b": 8, "f": 12, "v": 11, "e": 27, "\\": 92, "'": 39, '"': 34, "?": 63}

_INTEGER = lazy_compile(r"(0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)((?:[uU](?:ll|LL|[lLzZ])?|(?:ll|LL|[lLzZ])[uU]?)?)")


class ExpressionError(Exception):
    """An `#if` expression that is not a valid integer constant expression."""


def _wrap(value: int, unsigned: bool) -> tuple[int, bool]:
    if unsigned:
        return value & _M64, True
    return ((value + (1 << 63)) & _M64) - (1 << 63), False


def _parse_integer(text: str) -> tuple[int, bool]:
    spelling = text.replace("'", "")
    m = _INTEGER.fullmatch(spelling)
    if m is None:
        lower = spelling.lower()
        if "." in spelling or (not lower.startswith("0x") and "e" in lower) or "p" in lower:
            raise ExpressionError("floating constant in preprocessor expression")
        raise ExpressionError(f"invalid integer constant '{text}' in preprocessor expression")
    digits, suffix = m.group(1), m.group(2)
    lower = digits.lower()
    significant = lower[2:] if lower.startswith(("0x", "0b")) else lower
    bits_per_digit = 4 if lower.startswith("0x") else 1 if lower.startswith("0b") else 3.33
    if len(significant.lstrip("0")) * bits_per_digit > 70:  # past 64 bits, without reading it all
        raise ExpressionError(f"integer constant '{_shortened(text)}' is too large")
    if lower.startswith("0x"):
        value = int(digits[2:], 16)
    elif lower.startswith("0b"):
        value = int(digits[2:], 2)
    elif len(digits) > 1 and digits[0] == "0":
        if "8" in digits or "9" in digits:
            raise ExpressionError(f"invalid digit in octal constant '{text}'")
        value = int(digits, 8)
    else:
        value = int(digits)
    if value > _M64:
        raise ExpressionError(f"integer constant '{_shortened(text)}' is too large")
    return value, "u" in suffix.lower() or value > _INT64_MAX


def _shortened(text: str) -> str:
    """A literal as a message quotes it: at most 40 characters."""
    return text if len(text) <= 40 else f"{text[:18]}...{text[-18:]}"


def _parse_char(text: str) -> tuple[int, bool]:
    quote = text.index("'")
    prefix, body = text[:quote], text[quote + 1 :]
    if not body.endswith("'") or len(body) < 2:
        raise ExpressionError(
            "missing terminating ' character" if not body.endswith("'") else "empty character constant"
        )
    body = body[:-1]
    values = []
    i = 0
    while i < len(body):
        c = body[i]
        i += 1
        if c != "\\":
            values.append(ord(c))
            continue
        e = body[i] if i < len(body) else ""
        i += 1
        if e in _ESCAPES:
            values.append(_ESCAPES[e])
        elif e == "x":
            j = i
            while j < len(body) and body[j] in "0123456789abcdefABCDEF":
                j += 1
            values.append(int(body[i:j], 16) if j > i else 0)
            i = j
        elif e in "01234567" and e:
            j = i
            while j < len(body) and j < i + 2 and body[j] in "01234567":
                j += 1
            values.append(int(body[i - 1 : j], 8))
            i = j
        elif e in ("u", "U"):
            width = 4 if e == "u" else 8
            digits = body[i : i + width]
            values.append(int(digits, 16) if digits and all(d in "0123456789abcdefABCDEF" for d in digits) else 0)
            i += width
        else:
            values.append(ord(e) if e else 0)
    if prefix:  # L'x', u'x', U'x', u8'x': the value of the (last) character
        return values[-1], False
    value = 0
    for v in values:
        value = (value << 8) | (v & 0xFF)
    if len(values) == 1:
        value = values[0]
        if 128 <= value < 256:  # plain char is signed
            value -= 256
    else:
        value &= 0xFFFFFFFF
        if value >= 1 << 31:
            value -= 1 << 32
    return value, False


Value = tuple[int, bool]  # (value, unsigned); None in its place: poisoned by a division by zero
Item = tuple  # in RPN: ("v", value, unsigned) or (operator, precedence, role)


def evaluate(tokens: Sequence[PPToken]) -> int:
    """Value of a fully expanded `#if` expression (C semantics on 64-bit intmax_t/uintmax_t).

    Shunting-yard to RPN, then a stack machine: no recursion, so nesting depth is free.
    Division by zero poisons only the branches that are evaluated (`0 && 1/0` is fine).
    """
    result = _run(_to_rpn(tokens))
    if result is None:
        raise ExpressionError("division by zero in #if")
    return result[0]


def _to_rpn(tokens: Sequence[PPToken]) -> list[Item]:
    """The expression in reverse Polish notation; operators are (operator, precedence, role)
    with role `u` unary, `b` binary, `t` the `?:` pair (`(` and `?` only while on `ops`)."""
    rpn: list[Item] = []
    ops: list[tuple[str, int, str]] = []  # (operator, precedence, role: u b ( ? t)
    expect = True  # an operand comes next
    for tok in tokens:
        kind, text = tok.kind, tok.text
        if kind == ID and text in _ALTERNATIVE:
            kind, text = PUNCT, _ALTERNATIVE[text]
        if kind in (ID, NUM, CHR):
            if not expect:
                raise ExpressionError(f"missing binary operator before token '{text}'")
            rpn.append(_operand(kind, text))
            expect = False
        elif kind != PUNCT:
            raise ExpressionError(f"token '{text}' is not valid in preprocessor expressions")
        elif expect:
            ops.append(_prefix(text))
        else:
            expect = _infix(text, ops, rpn)
    if expect:
        raise ExpressionError("missing expression" if tokens else "#if with no expression")
    while ops:
        op = ops.pop()
        if op[2] == "(":
            raise ExpressionError("missing ')' in expression")
        if op[2] == "?":
            raise ExpressionError("'?' without following ':'")
        rpn.append(op)
    return rpn


def _operand(kind: str, text: str) -> Item:
    """A name left after expansion is 0 (`true` is 1); numbers and characters have values."""
    if kind == ID:
        return ("v", 1 if text == "true" else 0, False)
    if kind == NUM:
        return ("v", *_parse_integer(text))
    return ("v", *_parse_char(text))


def _prefix(text: str) -> tuple[str, int, str]:
    """A punctuator where an operand is expected: `(` or a unary operator."""
    if text == "(":
        return ("(", 0, "(")
    if text in ("+", "-", "!", "~"):
        return (text, 14, "u")
    if text in _BINARY or text in ("?", ":", ")"):
        raise ExpressionError(f"missing expression before '{text}'")
    raise ExpressionError(f"token '{text}' is not valid in preprocessor expressions")


def _infix(text: str, ops: list[tuple[str, int, str]], rpn: list[Item]) -> bool:
    """A punctuator after an operand: `)`, `?`, `:` or a binary operator, moving the operators
    it closes from `ops` to `rpn`. Returns whether an operand comes next."""
    if text == ")":
        while ops and ops[-1][2] not in ("(", "?"):
            rpn.append(ops.pop())
        if not ops or ops[-1][2] != "(":
            raise ExpressionError("missing '(' in expression" if not ops else "'?' without following ':'")
        ops.pop()
        return False
    if text == "?":
        while ops and ops[-1][2] in ("u", "b") and ops[-1][1] > 3:
            rpn.append(ops.pop())
        ops.append(("?", 3, "?"))
        return True
    if text == ":":
        while ops and ops[-1][2] not in ("(", "?"):
            rpn.append(ops.pop())
        if not ops or ops[-1][2] != "?":
            raise ExpressionError("':' without preceding '?'")
        ops[-1] = (":", 3, "t")
        return True
    if text in _BINARY:
        prec = _BINARY[text]
        while ops and ops[-1][2] in ("u", "b", "t") and ops[-1][1] >= prec:
            rpn.append(ops.pop())
        ops.append((text, prec, "b"))
        return True
    if text == "(":
        raise ExpressionError("missing binary operator before token '('")
    raise ExpressionError(f"token '{text}' is not valid in preprocessor expressions")


def _run(rpn: list[Item]) -> Value | None:
    """Run the RPN on a stack of values."""
    stack: list[Value | None] = []  # None: poisoned by a division by zero
    for item in rpn:
        role = item[2] if item[0] != "v" else "v"
        if role == "v":
            stack.append((item[1], item[2]))
        elif role == "u":
            stack.append(_unary(item[0], stack.pop()))
        elif role == "t":
            else_ = stack.pop()
            then = stack.pop()
            stack.append(_choose(stack.pop(), then, else_))
        else:
            b = stack.pop()
            a = stack.pop()
            stack.append(_binary(item[0], a, b))
    return stack.pop()


def _unary(op: str, a: Value | None) -> Value | None:
    if a is None:
        return None
    v, unsigned = a
    if op == "!":
        return (int(v == 0), False)
    if op == "-":
        return _wrap(-v, unsigned)
    if op == "~":
        return _wrap(~v, unsigned)
    return a  # unary plus


def _choose(cond: Value | None, then: Value | None, else_: Value | None) -> Value | None:
    """`cond ? then : else_`: the result is unsigned if either branch is."""
    if cond is None:
        return None
    pick = then if cond[0] else else_
    unsigned = any(x is not None and x[1] for x in (then, else_))
    return None if pick is None else _wrap(pick[0], unsigned)


def _binary(op: str, a, b):
    if op == "&&":
        if a is None or not a[0]:
            return a if a is None else (0, False)
        return None if b is None else (int(b[0] != 0), False)
    if op == "||":
        if a is None or a[0]:
            return a if a is None else (1, False)
        return None if b is None else (int(b[0] != 0), False)
    if a is None or b is None:
        return None
    if op == ",":
        return b
    av, au = a
    bv, bu = b
    if op in ("<<", ">>"):
        count = bv if op == "<<" else -bv
        if au:
            av &= _M64
        if count >= 0:
            return _wrap(av << count if count < 64 else 0, au)
        count = -count
        return _wrap(av >> count if count < 64 else (-1 if av < 0 else 0), au)
    unsigned = au or bu
    if unsigned:
        av &= _M64
        bv &= _M64
    if op == "*":
        r = av * bv
    elif op in ("/", "%"):
        if bv == 0:
            return None
        q = abs(av) // abs(bv)
        if (av < 0) != (bv < 0):
            q = -q
        r = q if op == "/" else av - bv * q
    elif op == "+":
        r = av + bv
    elif op == "-":
        r = av - bv
    elif op == "<":
        return int(av < bv), False
    elif op == "<=":
        return int(av <= bv), False
    elif op == ">":
        return int(av > bv), False
    elif op == ">=":
        return int(av >= bv), False
    elif op == "==":
        return int(av == bv), False
    elif op == "!=":
        return int(av != bv), False
    elif op == "&":
        r = av & bv
    elif op == "^":
        r = av ^ bv
    else:  # "|"
        r = av | bv
    return _wrap(r, unsigned)
