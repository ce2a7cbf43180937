"""Symbolic integer expressions for per-lane address arithmetic.

An `Expr` is a canonical polynomial with integer coefficients over *atoms*:

* `Symbol(name)`: a named integer ("threadIdx.x", "blockDim.x", a parameter "N",
  a loop counter "k@12").  Symbols are interned, so they compare by identity.
* `Term(op, args)`: an opaque value that does not fold into the polynomial:
  C division and modulo that cannot be split, shifts by a non-constant, the bitwise
  operators, min/max, select, comparisons and logical operators, and products that
  would grow past `MAX_MONOMIALS` monomials.
* `Unknown(tag)`: a value warplint does not know (read from memory, changed by a loop in a
  way it does not follow, a float ...).  Every call to `unknown()` makes a fresh one; two
  different Unknowns are never equal.  Besides the text it prints as, an Unknown carries
  where it came from (`Origin`) and whether it may differ between the lanes of a warp:
  analyses decide by those fields (`unknowns`), never by the printed text.

The polynomial is stored as a dict ``monomial -> coefficient`` where a monomial is a
sorted tuple of atoms (repeated for powers) and ``()`` is the constant monomial.
Equal expressions are equal dicts, so `==` and `hash` are structural.

Assumption (docs/CONTRACTS.md): the operands of `/` and `%` in index arithmetic, and every
symbol and opaque term, are non-negative integers.  The simplifier relies on it to split
``(64*bx + tx) / 16`` into ``4*bx + tx / 16``.  Folding two constants always uses C
semantics: truncation toward zero, and the sign of `%` follows the dividend.
"""

from __future__ import annotations

import itertools
import math
import operator
from enum import StrEnum
from typing import Callable, Iterator, Mapping, Sequence

from analyzer.budget import spend as _spend

__all__ = [
    "Expr",
    "Atom",
    "Symbol",
    "Term",
    "Unknown",
    "Origin",
    "UnboundSymbol",
    "UnknownValue",
    "const",
    "sym",
    "unknown",
    "floordiv",
    "mod",
    "shl",
    "shr",
    "bitand",
    "bitor",
    "bitxor",
    "minimum",
    "maximum",
    "select",
    "compare",
    "logical_and",
    "logical_or",
    "logical_not",
    "is_unknown",
    "unknowns",
    "single_atom",
    "conjuncts",
    "affine_in",
    "residues",
    "coefficient_gcd",
    "bounds",
    "MAX_MONOMIALS",
    "MAX_DEPTH",
]

#: A product whose expansion could exceed this many monomials stays an opaque ``*`` term.
MAX_MONOMIALS = 500
#: Opaque terms nested deeper than this become an `Unknown` (keeps recursion bounded).
MAX_DEPTH = 64
#: ``x << n`` with a constant n outside [0, MAX_SHIFT] (undefined in C) is not folded, and
#: `evaluate` refuses it rather than building a huge integer.
MAX_SHIFT = 64


class UnboundSymbol(KeyError):
    """`Expr.evaluate` met a symbol that the environment does not bind."""

    def __str__(self) -> str:  # KeyError's str() would quote the name
        return f"unbound symbol {self.args[0]!r}" if self.args else "unbound symbol"


class UnknownValue(UnboundSymbol):
    """`Expr.evaluate` met an `Unknown` (a data-dependent value): it has no concrete value."""

    def __str__(self) -> str:
        return f"data-dependent value {self.args[0]!r} cannot be evaluated" if self.args else "unknown value"


# ---------------------------------------------------------------------------- atoms

_SYMBOL_RANK = {"threadIdx": 0, "blockIdx": 1, "blockDim": 2, "gridDim": 3}
_ALL_BITS = -1


def _c_div(a: int, b: int) -> int:
    """C division: truncation toward zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _c_mod(a: int, b: int) -> int:
    """C remainder: the sign follows the dividend."""
    return a - b * _c_div(a, b)


class Atom:
    """A factor of a monomial.  `key` is a total, deterministic order; `free` the symbol names."""

    __slots__ = ("key", "free", "depth")

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


class Symbol(Atom):
    """A named integer.  Interned: ``Symbol("x") is Symbol("x")``; equality is identity."""

    __slots__ = ("name",)
    _table: dict[str, "Symbol"] = {}

    def __new__(cls, name: str) -> "Symbol":
        s = cls._table.get(name)
        if s is None:
            if not isinstance(name, str) or not name:
                raise TypeError(f"symbol name must be a non-empty str, got {name!r}")
            s = object.__new__(cls)
            s.name = name
            s.key = (0, _SYMBOL_RANK.get(name.split(".", 1)[0], 4), name)
            s.free = frozenset((name,))
            s.depth = 0
            cls._table[name] = s
        return s

    def __reduce__(self):
        return (Symbol, (self.name,))

    def __repr__(self) -> str:
        return f"Symbol({self.name!r})"

    def evaluate(self, env: Mapping[str, int]) -> int:
        try:
            return env[self.name]
        except KeyError:
            raise UnboundSymbol(self.name) from None


class Term(Atom):
    """An opaque operation ``op(args)``; built only through the module's constructors."""

    __slots__ = ("op", "args", "_hash", "_bnd")
    op: str
    args: tuple[Expr, ...]

    def __eq__(self, other):
        if self is other:
            return True
        return (
            other.__class__ is Term
            and self._hash == other._hash
            and self.op == other.op
            and self.args == other.args
        )

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self):
        return (_raw_term, (self.op, self.args))

    def __repr__(self) -> str:
        return f"Term({self.op!r}, {self.args!r})"

    def subs(self, mapping: Mapping[str, "int | Expr"]) -> "Expr":
        new = [a.subs(mapping) for a in self.args]
        if all(n is o for n, o in zip(new, self.args)):
            return _new({(self,): 1})
        return _REBUILD[self.op](*new)

    def evaluate(self, env: Mapping[str, int]) -> int:
        op, args = self.op, self.args
        if op == "select":
            return args[1].evaluate(env) if args[0].evaluate(env) else args[2].evaluate(env)
        if op == "&&":
            return int(bool(args[0].evaluate(env)) and bool(args[1].evaluate(env)))
        if op == "||":
            return int(bool(args[0].evaluate(env)) or bool(args[1].evaluate(env)))
        a = args[0].evaluate(env)
        b = args[1].evaluate(env)
        if op == "/":
            if b == 0:
                raise ZeroDivisionError(f"division by zero in {_fmt_atom_solo(self)}")
            return _c_div(a, b)
        if op == "%":
            if b == 0:
                raise ZeroDivisionError(f"modulo by zero in {_fmt_atom_solo(self)}")
            return _c_mod(a, b)
        if op == "<<" or op == ">>":
            if b < 0 or (op == "<<" and b > MAX_SHIFT):
                raise ValueError(f"undefined shift count {b} in {_fmt_atom_solo(self)}")
            return a << b if op == "<<" else a >> b
        return _EVAL_BINARY[op](a, b)


class Origin(StrEnum):
    """Where an unknown value comes from."""

    LOADED = "loaded"  # read from memory (a load, the old value an atomic returns)
    LOOP_CARRIED = "loop-carried"  # a variable a loop changes other than by a constant step
    CALL_RESULT = "call-result"  # what a call warplint does not follow returns
    FLOAT = "float"  # a floating-point value, or an integer converted from one
    UNINITIALISED = "uninitialised"  # a variable or register read before any write
    PARAMETER = "parameter"  # a parameter (or its field) whose value is not given
    SKIPPED = "skipped"  # written by a statement warplint could not lower
    JOIN = "join"  # two values of different kinds where control flow meets
    UNMODELLED = "unmodelled"  # an operation warplint does not model
    TOO_DEEP = "too-deep"  # an expression nested past `MAX_DEPTH`


class Unknown(Term):
    """A value warplint does not know.  Equal only to itself (the same `unknown()` call).

    `tag`: the text it prints as; `origin`: where it comes from; `lane_varying`: whether it
    may differ between the lanes of a warp (a value read at an address that does)."""

    __slots__ = ("tag", "uid", "origin", "lane_varying")
    tag: str
    uid: int
    origin: Origin
    lane_varying: bool
    _ids = itertools.count()

    def __eq__(self, other):
        return self is other or (other.__class__ is Unknown and other.uid == self.uid)

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self):
        return (_raw_unknown, (self.tag, self.uid, self.origin, self.lane_varying))

    def __repr__(self) -> str:
        return f"Unknown({self.tag!r})"

    def subs(self, mapping):
        return _new({(self,): 1})

    def evaluate(self, env):
        raise UnknownValue(self.tag)


_EVAL_BINARY: dict[str, Callable[[int, int], int]] = {
    "&": operator.and_,
    "|": operator.or_,
    "^": operator.xor,
    "min": min,
    "max": max,
    "<": lambda a, b: int(a < b),
    "<=": lambda a, b: int(a <= b),
    "==": lambda a, b: int(a == b),
    "!=": lambda a, b: int(a != b),
    "*": operator.mul,
}

_COMMUTATIVE = frozenset({"&", "|", "^", "min", "max", "==", "!=", "&&", "||", "*"})
_BOOLEAN = frozenset({"<", "<=", "==", "!=", "&&", "||"})
_KEY = operator.attrgetter("key")


def _raw_term(op: str, args: tuple["Expr", ...]) -> Term:
    t = object.__new__(Term)
    t.op = op
    t.args = args
    t.key = (1, op, tuple(a.skey for a in args))
    free = frozenset()
    depth = 0
    for a in args:
        free = free | a.free_symbols
        d = a.depth
        if d > depth:
            depth = d
    t.free = free
    t.depth = depth + 1
    t._hash = hash((op, args))
    t._bnd = None
    return t


def _raw_unknown(tag: str, uid: int, origin: Origin, lane_varying: bool) -> Unknown:
    u = object.__new__(Unknown)
    u.op = "unknown"
    u.args = ()
    u.tag = tag
    u.uid = uid
    u.origin = origin
    u.lane_varying = lane_varying
    u.key = (2, tag, uid)
    u.free = frozenset()
    u.depth = 0
    u._hash = hash(("unknown", uid))
    u._bnd = (0, None)
    return u


def _term(op: str, args: tuple["Expr", ...]) -> "Expr":
    """The expression consisting of the single opaque atom ``op(args)``."""
    if op in _COMMUTATIVE and len(args) == 2 and args[1].skey < args[0].skey:
        args = (args[1], args[0])
    t = _raw_term(op, args)
    if t.depth > MAX_DEPTH:
        return unknown("<expression too deep>", Origin.TOO_DEEP)
    return _new({(t,): 1})


# ---------------------------------------------------------------------------- Expr


class Expr:
    """Immutable, hashable integer expression (canonical polynomial over atoms)."""

    __slots__ = ("_p", "_c", "_h", "_free", "_skey", "_bnd", "_depth", "_str")

    def __new__(cls, value: "int | Expr" = 0) -> "Expr":
        """``Expr(5)`` is ``const(5)``; other expressions come from `sym`, the operators and
        the module's functions."""
        return _as_expr(value)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return (_from_items, (tuple(self._p.items()),))

    # -- properties

    @property
    def is_const(self) -> bool:
        return self._c is not None

    @property
    def value(self) -> int:
        c = self._c
        if c is None:
            raise ValueError(f"expression is not constant: {self}")
        return c

    @property
    def free_symbols(self) -> frozenset[str]:
        f = self._free
        if f is None:
            f = frozenset()
            for mono in self._p:
                for a in mono:
                    f = f | a.free
            self._free = f
        return f

    @property
    def depth(self) -> int:
        """Nesting depth of opaque terms (0 for a plain polynomial)."""
        d = self._depth
        if d is None:
            d = 0
            for mono in self._p:
                for a in mono:
                    if a.depth > d:
                        d = a.depth
            self._depth = d
        return d

    @property
    def skey(self) -> tuple:
        """A deterministic total-order key (used to order atoms and commutative arguments)."""
        k = self._skey
        if k is None:
            k = tuple(sorted((tuple([a.key for a in m]), c) for m, c in self._p.items()))
            self._skey = k
        return k

    def terms(self) -> tuple[tuple[tuple[Atom, ...], int], ...]:
        """The ``(monomial, coefficient)`` pairs in printing order (constant last)."""
        return tuple(sorted(self._p.items(), key=_print_order))

    # -- equality and hashing

    def __eq__(self, other):
        if other.__class__ is Expr:
            return self is other or self._p == other._p
        if isinstance(other, int):
            return self._c == other
        return NotImplemented

    def __ne__(self, other):
        r = self.__eq__(other)
        return r if r is NotImplemented else not r

    def __hash__(self) -> int:
        h = self._h
        if h is None:
            c = self._c
            h = hash(c) if c is not None else hash(frozenset(self._p.items()))
            self._h = h
        return h

    def __int__(self) -> int:
        return self.value

    def __bool__(self) -> bool:
        """Truth of a constant; a non-constant expression raises TypeError (use `is_const`)."""
        c = self._c
        if c is None:
            raise TypeError(f"truth value of symbolic expression {self} is not known; test .is_const")
        return c != 0

    # -- arithmetic operators

    def __add__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else _add(self, o)

    __radd__ = __add__

    def __sub__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else _add(self, _scale(o, -1))

    def __rsub__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else _add(o, _scale(self, -1))

    def __mul__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else _mul(self, o)

    __rmul__ = __mul__

    def __neg__(self):
        return _scale(self, -1)

    def __pos__(self):
        return self

    def __invert__(self):  # two's complement: ~x == -x - 1
        return _add(_scale(self, -1), _MINUS_ONE)

    def __floordiv__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else floordiv(self, o)

    def __rfloordiv__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else floordiv(o, self)

    def __mod__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else mod(self, o)

    def __rmod__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else mod(o, self)

    def __lshift__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else shl(self, o)

    def __rlshift__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else shl(o, self)

    def __rshift__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else shr(self, o)

    def __rrshift__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else shr(o, self)

    def __and__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else bitand(self, o)

    __rand__ = __and__

    def __or__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else bitor(self, o)

    __ror__ = __or__

    def __xor__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else bitxor(self, o)

    __rxor__ = __xor__

    # -- substitution and evaluation

    def subs(self, mapping: Mapping[str, "int | Expr"]) -> "Expr":
        """Replace symbols by ints or expressions and re-simplify."""
        if self._c is not None:
            return self
        free = self._free
        if free is None:
            free = self.free_symbols
        if free.isdisjoint(mapping):
            return self
        _spend()  # a substitution that does work is a step too (analyzer.budget)
        get = mapping.get
        out: dict = {}
        extra = None
        for mono, coef in self._p.items():
            kept = []
            factors = None
            resort = False
            for atom in mono:
                if atom.__class__ is Symbol:
                    v = get(atom.name, _MISSING)
                    if v is _MISSING:
                        kept.append(atom)
                        continue
                elif atom.free.isdisjoint(mapping):
                    kept.append(atom)
                    continue
                else:
                    v = atom.subs(mapping)
                vt = v.__class__
                if vt is not int:
                    if vt is not Expr:
                        v = _as_expr(v)
                    vc = v._c
                    if vc is not None:
                        v = vc
                    else:
                        vp = v._p
                        if len(vp) == 1:
                            for vm, vk in vp.items():
                                coef *= vk
                                kept.extend(vm)
                            resort = True
                        else:
                            if factors is None:
                                factors = [v]
                            else:
                                factors.append(v)
                        continue
                coef *= v
                if not coef:
                    break
            if not coef:
                continue
            if resort and len(kept) > 1:
                kept.sort(key=_KEY)
            key = tuple(kept)
            if factors is None:
                out[key] = out.get(key, 0) + coef
            else:
                t = _new({key: coef})
                for f in factors:
                    t = _mul(t, f)
                if extra is None:
                    extra = [t]
                else:
                    extra.append(t)
        res = _new({m: c for m, c in out.items() if c})
        if extra is not None:
            for t in extra:
                res = _add(res, t)
        return res

    def evaluate(self, env: Mapping[str, int]) -> int:
        """The concrete value with C semantics; raises `UnboundSymbol` for a missing symbol."""
        c = self._c
        if c is not None:
            return c
        total = 0
        for mono, coef in self._p.items():
            v = coef
            for atom in mono:
                if atom.__class__ is Symbol:
                    try:
                        v *= env[atom.name]
                    except KeyError:
                        raise UnboundSymbol(atom.name) from None
                else:
                    v *= atom.evaluate(env)
            total += v
        return total

    # -- text

    def __str__(self) -> str:
        s = self._str
        if s is None:
            s = self._str = _fmt_expr(self)
        return s

    def __repr__(self) -> str:
        return f"Expr({str(self)!r})"


_MISSING = object()


def _new(d: dict) -> Expr:
    """Wrap a dict without zero coefficients (the caller guarantees it)."""
    _spend()  # every expression built is a step of the analysis: what its time follows (analyzer.budget)
    e = object.__new__(Expr)
    e._p = d
    n = len(d)
    if n == 0:
        e._c = 0
    elif n == 1 and () in d:
        e._c = d[()]
    else:
        e._c = None
    e._h = None
    e._free = None
    e._skey = None
    e._bnd = None
    e._depth = None
    e._str = None
    return e


def _from_items(items) -> Expr:
    return _new({m: c for m, c in items if c})


_CONSTS = {}


def const(n: int) -> Expr:
    """The constant expression ``n``."""
    e = _CONSTS.get(n)
    if e is None:
        n = operator.index(n)
        e = _new({(): n} if n else {})
        if -1024 <= n <= 4096:  # remembered as they are met (making all at import took 8 ms)
            _CONSTS[n] = e
    return e


_ZERO = const(0)
_ONE = const(1)
_MINUS_ONE = const(-1)

_SYMS: dict[str, Expr] = {}


def sym(name: str) -> Expr:
    """The expression consisting of the symbol ``name``."""
    e = _SYMS.get(name)
    if e is None:
        e = _SYMS[name] = _new({(Symbol(name),): 1})
    return e


#: How a value that may differ between lanes prints: before its text.
LANE_VARYING_PREFIX = "per-lane "


def unknown(text: str, origin: Origin, lane_varying: bool = False) -> Expr:
    """A fresh unknown value from `origin`; ``str()`` shows ``text`` (after "per-lane " when
    it may differ between the lanes of a warp).  Never equal to another Unknown."""
    tag = f"{LANE_VARYING_PREFIX}{text}" if lane_varying else str(text)
    return _new({(_raw_unknown(tag, next(Unknown._ids), origin, lane_varying),): 1})


def _as_expr(x) -> Expr:
    if x.__class__ is Expr:
        return x
    if isinstance(x, Expr):
        return x
    try:
        return const(operator.index(x))
    except TypeError:
        raise TypeError(f"expected an int or Expr, got {type(x).__name__}") from None


def _coerce(x):
    if x.__class__ is Expr:
        return x
    if x.__class__ is int:
        return const(x)
    try:
        return const(operator.index(x))
    except TypeError:
        return None


# ---------------------------------------------------------------------------- polynomial core


def _add(a: Expr, b: Expr) -> Expr:
    if b._c == 0:
        return a
    if a._c == 0:
        return b
    pa, pb = a._p, b._p
    if len(pa) < len(pb):
        pa, pb = pb, pa
    d = dict(pa)
    get = d.get
    for m, c in pb.items():
        v = get(m, 0) + c
        if v:
            d[m] = v
        else:
            del d[m]
    return _new(d)


def _scale(a: Expr, k: int) -> Expr:
    if k == 1:
        return a
    if k == 0 or a._c == 0:
        return _ZERO
    c = a._c
    if c is not None:
        return const(c * k)
    return _new({m: c * k for m, c in a._p.items()})


def _mono_mul(ma: tuple, mb: tuple) -> tuple:
    if not ma:
        return mb
    if not mb:
        return ma
    if len(ma) == 1 and len(mb) == 1:
        x, y = ma[0], mb[0]
        return (x, y) if x is y or x.key <= y.key else (y, x)
    return tuple(sorted(ma + mb, key=_KEY))


def _mul(a: Expr, b: Expr) -> Expr:
    c = a._c
    if c is not None:
        return _scale(b, c)
    c = b._c
    if c is not None:
        return _scale(a, c)
    pa, pb = a._p, b._p
    if len(pa) * len(pb) > MAX_MONOMIALS:
        return _term("*", (a, b))
    d: dict = {}
    get = d.get
    for ma, x in pa.items():
        for mb, y in pb.items():
            m = _mono_mul(ma, mb)
            v = get(m, 0) + x * y
            if v:
                d[m] = v
            else:
                del d[m]
    return _new(d)


def single_atom(e: Expr) -> Atom | None:
    """The atom if ``e`` is exactly one atom with coefficient 1 (a symbol, an opaque term such
    as ``a != b``, an unknown), else None."""
    p = e._p
    if len(p) == 1:
        for m, c in p.items():
            if c == 1 and len(m) == 1:
                return m[0]
    return None


def _nonconst_gcd(p: dict, start: int = 0) -> int:
    g = start
    for m, c in p.items():
        if m:
            g = math.gcd(g, c)
            if g == 1:
                break
    return g


# ---------------------------------------------------------------------------- bounds


def bounds(e: Expr) -> tuple[int | None, int | None]:
    """An interval ``(lo, hi)`` containing every value of ``e`` (None = unbounded), assuming
    symbols and unknowns are non-negative and so are the operands of ``/`` and ``%``."""
    e = _as_expr(e)
    b = e._bnd
    if b is None:
        b = e._bnd = _expr_bounds(e)
    return b


def _expr_bounds(e: Expr):
    lo = hi = 0
    for m, c in e._p.items():
        if not m:
            ml = mh = 1
        else:
            ml, mh = _mono_bounds(m)
        if c > 0:
            lo = None if lo is None or ml is None else lo + c * ml
            hi = None if hi is None or mh is None else hi + c * mh
        else:
            lo = None if lo is None or mh is None else lo + c * mh
            hi = None if hi is None or ml is None else hi + c * ml
        if lo is None and hi is None:
            break
    return (lo, hi)


def _mono_bounds(m: tuple):
    lo, hi = 1, 1
    for a in m:
        al, ah = _atom_bounds(a)
        if al is None or al < 0:
            return (None, None)
        lo *= al
        if ah == 0:
            return (0, 0)
        hi = None if hi is None or ah is None else hi * ah
    return (lo, hi)


def _atom_bounds(a: Atom):
    if a.__class__ is Symbol:
        return (0, None)
    b = a._bnd
    if b is None:
        b = a._bnd = _term_bounds(a)
    return b


def _term_bounds(t: Term):
    op, args = t.op, t.args
    if op in _BOOLEAN:
        return (0, 1)
    if op == "select":
        (l1, h1), (l2, h2) = bounds(args[1]), bounds(args[2])
        return (None if l1 is None or l2 is None else min(l1, l2), None if h1 is None or h2 is None else max(h1, h2))
    (la, ha), (lb, hb) = bounds(args[0]), bounds(args[1])
    if op == "/":
        if args[1]._c is not None and args[1]._c > 0:
            k = args[1]._c
            return (max(la or 0, 0) // k, None if ha is None else max(ha, 0) // k)
        return (0, None if ha is None else max(ha, 0))
    if op == "%":
        hi = ha
        if hb is not None:
            hi = max(hb - 1, 0) if hi is None else min(hi, max(hb - 1, 0))
        return (0, None if hi is None else max(hi, 0))
    if op == "&":
        his = [h for (l, h) in ((la, ha), (lb, hb)) if l is not None and l >= 0 and h is not None]
        if his:
            return (0, min(his))
        if la is not None and la >= 0 and lb is not None and lb >= 0:
            return (0, None)
        return (None, None)
    if op in ("|", "^"):
        if la is None or lb is None or la < 0 or lb < 0:
            return (None, None)
        if ha is None or hb is None:
            return (0, None)
        return (0, (1 << max(ha, hb).bit_length()) - 1)
    if op == "<<":
        return (0, None) if la is not None and la >= 0 else (None, None)
    if op == ">>":
        return (0, ha) if la is not None and la >= 0 else (None, None)
    if op == "min":
        return (None if la is None or lb is None else min(la, lb), hb if ha is None else ha if hb is None else min(ha, hb))
    if op == "max":
        return (lb if la is None else la if lb is None else max(la, lb), None if ha is None or hb is None else max(ha, hb))
    if op == "*":
        if la is None or lb is None or la < 0 or lb < 0:
            return (None, None)
        if ha == 0 or hb == 0:
            return (0, 0)
        return (la * lb, None if ha is None or hb is None else ha * hb)
    return (None, None)


# ---------------------------------------------------------------------------- division and modulo


def floordiv(a, b) -> Expr:
    """C division ``a / b`` (truncation toward zero)."""
    a, b = _as_expr(a), _as_expr(b)
    k = b._c
    if k is not None:
        if k == 0:
            return _term("/", (a, b))
        if a._c is not None:
            return const(_c_div(a._c, k))
        if k == 1:
            return a
        if k == -1:
            return _scale(a, -1)
        if k < 0:
            return _scale(_divmod_const(a, -k, True), -1)
        return _divmod_const(a, k, True)
    return _divmod_symbolic(a, b, True)


def mod(a, b) -> Expr:
    """C remainder ``a % b`` (sign of the dividend)."""
    a, b = _as_expr(a), _as_expr(b)
    k = b._c
    if k is not None:
        if k == 0:
            return _term("%", (a, b))
        if a._c is not None:
            return const(_c_mod(a._c, k))
        if k < 0:
            k = -k
        if k == 1:
            return _ZERO
        return _divmod_const(a, k, False)
    return _divmod_symbolic(a, b, False)


def _divmod_const(a: Expr, k: int, want_div: bool) -> Expr:
    """``a / k`` or ``a % k`` for a non-constant ``a`` and a constant ``k >= 2``.

    Write a = k*Q + R with every coefficient of R in [0, k); then a/k = Q + R/k and
    a%k = R%k (exact for non-negative operands)."""
    q: dict = {}
    r: dict = {}
    for m, c in a._p.items():
        qq, rr = divmod(c, k)
        if qq:
            q[m] = qq
        if rr:
            r[m] = rr
    r0 = r.pop((), 0)
    if not r:  # R is a constant in [0, k)
        return _new(q) if want_div else const(r0)
    # Divide R and k by g = gcd(k, coefficients of R):  R = g*R' + rho, with rho < g.
    g = _nonconst_gcd(r, k)
    rho = 0
    if g > 1:
        r = {m: c // g for m, c in r.items()}
        rho = r0 % g
        r0 //= g
        k //= g
    if r0:
        r[()] = r0
    rest = _new(r)
    if want_div:
        t = _div_reduced(rest, k, r0)
        return _add(_new(q), t) if q else t
    t = _mod_reduced(rest, k, r0)
    if g > 1:
        t = _add(_scale(t, g), const(rho))
    return t


def _div_reduced(rest: Expr, k: int, r0: int) -> Expr:
    """``rest / k`` where rest's coefficients lie in [0, k) and share no factor with k."""
    lo, hi = bounds(rest)
    if lo is not None and lo >= 0 and hi is not None and hi < k:
        return _ZERO
    p = rest._p
    if len(p) == 1 or (len(p) == 2 and () in p):  # rest == t + r0 for one atom t
        for m, c in p.items():
            if m and c == 1 and len(m) == 1 and m[0].__class__ is Term:
                t = m[0]
                k1 = t.args[1]._c if t.op in ("/", "%") else None
                if k1 is not None and k1 > 0:
                    if t.op == "/":  # (X/k1 + r0)/k = (X + k1*r0)/(k1*k)
                        return floordiv(_add(t.args[0], const(k1 * r0)), k1 * k)
                    if r0 == 0 and k1 % k == 0:  # (X % (k*j)) / k = (X / k) % j
                        return mod(floordiv(t.args[0], k), k1 // k)
    return _term("/", (rest, const(k)))


def _mod_reduced(rest: Expr, k: int, r0: int) -> Expr:
    """``rest % k`` where rest's coefficients lie in [0, k) and share no factor with k."""
    lo, hi = bounds(rest)
    if lo is not None and lo >= 0 and hi is not None and hi < k:
        return rest
    # (c*(X % m) + ...) % k == (c*X + ...) % k when k divides m.
    acc = None
    for m, c in rest._p.items():
        if len(m) == 1 and m[0].__class__ is Term and m[0].op == "%":
            t = m[0]
            k1 = t.args[1]._c
            if k1 is not None and k1 > 0 and k1 % k == 0:
                acc = _add(rest if acc is None else acc, _new({m: -c}))
                acc = _add(acc, _scale(t.args[0], c))
    if acc is not None:
        return mod(acc, k)
    return _term("%", (rest, const(k)))


def _mono_div(m: tuple, d: tuple):
    """``m / d`` if the monomial d divides m, else None."""
    if len(d) > len(m):
        return None
    rest = list(m)
    for a in d:
        try:
            rest.remove(a)
        except ValueError:
            return None
    return tuple(rest)


def _divmod_symbolic(a: Expr, b: Expr, want_div: bool) -> Expr:
    """``a / b`` or ``a % b`` for a non-constant divisor."""
    if a._c == 0:
        return _ZERO
    pb = b._p
    if len(pb) == 1:
        ((mb, cb),) = pb.items()
        if cb < 0:
            nb = _scale(b, -1)
            return _scale(_divmod_symbolic(a, nb, True), -1) if want_div else _divmod_symbolic(a, nb, False)
        # a = b*Q + R with R >= 0 (every coefficient of R non-negative): a/b = Q + R/b, a%b = R%b
        q: dict = {}
        r: dict = {}
        for m, c in a._p.items():
            rest = _mono_div(m, mb)
            if rest is None:
                if c < 0:
                    q = None
                    break
                r[m] = c
            else:
                qq, rr = divmod(c, cb)
                if qq:
                    q[rest] = qq
                if rr:
                    r[m] = rr
        if q:
            if not r:
                return _new(q) if want_div else _ZERO
            rest_e = _new(r)
            if want_div:
                return _add(_new(q), _term("/", (rest_e, b)))
            return _term("%", (rest_e, b))
    return _term("/" if want_div else "%", (a, b))


# ---------------------------------------------------------------------------- shifts and bitwise


def shl(a, b) -> Expr:
    """``a << b``."""
    a, b = _as_expr(a), _as_expr(b)
    n = b._c
    if n is not None and 0 <= n <= MAX_SHIFT:
        return _scale(a, 1 << n)
    if a._c == 0:
        return _ZERO
    return _term("<<", (a, b))


def shr(a, b) -> Expr:
    """``a >> b`` (arithmetic shift for constants; division by 2**b for non-negative ``a``)."""
    a, b = _as_expr(a), _as_expr(b)
    n = b._c
    if n is not None and n >= 0:
        if a._c is not None:
            return const(a._c >> n)
        if n <= MAX_SHIFT:
            return floordiv(a, 1 << n)
    if a._c == 0:
        return _ZERO
    return _term(">>", (a, b))


def _low_zero_bits(e: Expr) -> int:
    """The number of low bits that are zero in every value of ``e`` (e != 0)."""
    g = 0
    for c in e._p.values():
        g = math.gcd(g, c)
        if g & 1:
            return 0
    return (g & -g).bit_length() - 1


def _disjoint_sum(a: Expr, b: Expr):
    """``a + b`` if the set bits of a and b can never overlap, else None."""
    for x, y in ((a, b), (b, a)):
        t = _low_zero_bits(x)
        if t:
            lo, hi = bounds(y)
            if lo is not None and lo >= 0 and hi is not None and hi < (1 << t):
                return _add(x, y)
    return None


def bitand(a, b) -> Expr:
    """``a & b``."""
    a, b = _as_expr(a), _as_expr(b)
    if a._c is not None and b._c is not None:
        return const(a._c & b._c)
    if a._c is not None:
        a, b = b, a
    m = b._c
    if m is not None:
        if m == 0:
            return _ZERO
        if m == _ALL_BITS:
            return a
        if m > 0:
            low = (m & -m).bit_length() - 1
            width = (m >> low).bit_length()
            if (m >> low) == (1 << width) - 1:  # contiguous mask: ((a >> low) % 2**width) << low
                return _scale(mod(floordiv(a, 1 << low), 1 << width), 1 << low)
        else:
            low = (m & -m).bit_length() - 1
            if m == -(1 << low):  # clears the low bits: a - a % 2**low
                return _add(a, _scale(mod(a, 1 << low), -1))
    if a == b:
        return a
    return _term("&", (a, b))


def bitor(a, b) -> Expr:
    """``a | b``."""
    a, b = _as_expr(a), _as_expr(b)
    if a._c is not None and b._c is not None:
        return const(a._c | b._c)
    if a._c == 0:
        return b
    if b._c == 0:
        return a
    if a._c == _ALL_BITS or b._c == _ALL_BITS:
        return _MINUS_ONE
    if a == b:
        return a
    s = _disjoint_sum(a, b)
    if s is not None:
        return s
    return _term("|", (a, b))


def bitxor(a, b) -> Expr:
    """``a ^ b``."""
    a, b = _as_expr(a), _as_expr(b)
    if a._c is not None and b._c is not None:
        return const(a._c ^ b._c)
    if a._c == 0:
        return b
    if b._c == 0:
        return a
    if a._c == _ALL_BITS:
        return ~b
    if b._c == _ALL_BITS:
        return ~a
    if a == b:
        return _ZERO
    s = _disjoint_sum(a, b)
    if s is not None:
        return s
    return _term("^", (a, b))


# ---------------------------------------------------------------------------- min, max, select, comparisons


def minimum(a, b) -> Expr:
    """``min(a, b)``."""
    a, b = _as_expr(a), _as_expr(b)
    d = _add(a, _scale(b, -1))._c
    if d is not None:
        return a if d <= 0 else b
    return _term("min", (a, b))


def maximum(a, b) -> Expr:
    """``max(a, b)``."""
    a, b = _as_expr(a), _as_expr(b)
    d = _add(a, _scale(b, -1))._c
    if d is not None:
        return a if d >= 0 else b
    return _term("max", (a, b))


def select(cond, a, b) -> Expr:
    """``cond ? a : b``."""
    cond, a, b = _as_expr(cond), _as_expr(a), _as_expr(b)
    c = cond._c
    if c is not None:
        return a if c else b
    if a == b:
        return a
    return _term("select", (cond, a, b))


_SWAPPED = {">": "<", ">=": "<="}
_COMPARE_FOLD = {
    "<": operator.lt,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
}


def compare(op: str, a, b) -> Expr:
    """``a op b`` for op in ``< <= > >= == !=``: 1 or 0 (folds when ``a - b`` is constant)."""
    a, b = _as_expr(a), _as_expr(b)
    if op in _SWAPPED:
        op = _SWAPPED[op]
        a, b = b, a
    elif op not in _COMPARE_FOLD:
        raise ValueError(f"unknown comparison operator {op!r}")
    d = _add(a, _scale(b, -1))._c
    if d is not None:
        return _ONE if _COMPARE_FOLD[op](d, 0) else _ZERO
    return _term(op, (a, b))


def _is_boolean(e: Expr) -> bool:
    if e._c is not None:
        return e._c in (0, 1)
    t = single_atom(e)
    return t is not None and t.__class__ is Term and t.op in _BOOLEAN


def _truth(e: Expr) -> Expr:
    return e if _is_boolean(e) else compare("!=", e, 0)


def logical_and(a, b) -> Expr:
    """``a && b`` (0 or 1)."""
    a, b = _as_expr(a), _as_expr(b)
    if a._c is not None:
        return _truth(b) if a._c else _ZERO
    if b._c is not None:
        return _truth(a) if b._c else _ZERO
    a, b = _truth(a), _truth(b)
    if a == b:
        return a
    return _term("&&", (a, b))


def logical_or(a, b) -> Expr:
    """``a || b`` (0 or 1)."""
    a, b = _as_expr(a), _as_expr(b)
    if a._c is not None:
        return _ONE if a._c else _truth(b)
    if b._c is not None:
        return _ONE if b._c else _truth(a)
    a, b = _truth(a), _truth(b)
    if a == b:
        return a
    return _term("||", (a, b))


_NEGATED = {"==": "!=", "!=": "=="}


def logical_not(a) -> Expr:
    """``!a`` (0 or 1)."""
    a = _as_expr(a)
    if a._c is not None:
        return _ZERO if a._c else _ONE
    t = single_atom(a)
    if t is not None and t.__class__ is Term:
        x, y = t.args[0], t.args[1] if len(t.args) > 1 else None
        if t.op == "<":  # !(x < y) == y <= x
            return compare("<=", y, x)
        if t.op == "<=":
            return compare("<", y, x)
        if t.op in _NEGATED:
            return compare(_NEGATED[t.op], x, y)
    return compare("==", a, 0)


_REBUILD: dict[str, Callable[..., Expr]] = {
    "/": floordiv,
    "%": mod,
    "<<": shl,
    ">>": shr,
    "&": bitand,
    "|": bitor,
    "^": bitxor,
    "min": minimum,
    "max": maximum,
    "select": select,
    "<": lambda a, b: compare("<", a, b),
    "<=": lambda a, b: compare("<=", a, b),
    "==": lambda a, b: compare("==", a, b),
    "!=": lambda a, b: compare("!=", a, b),
    "&&": logical_and,
    "||": logical_or,
    "*": lambda a, b: _mul(a, b),
}


# ---------------------------------------------------------------------------- queries


def conjuncts(e: Expr) -> frozenset[Expr]:
    """The conditions ``e`` is the conjunction of: ``a && b && c`` -> {a, b, c}; a constant
    true has none, any other expression is its own single conjunct."""
    e = _as_expr(e)
    if e._c is not None and e._c:
        return frozenset()
    out: set[Expr] = set()
    stack = [e]
    while stack:
        x = stack.pop()
        atom = single_atom(x)
        if atom is not None and atom.__class__ is Term and atom.op == "&&":
            stack.extend(atom.args)
        else:
            out.add(x)
    return frozenset(out)


def unknowns(e: Expr) -> Iterator[Unknown]:
    """Every `Unknown` in ``e`` (also inside opaque terms), each once per place it appears."""
    stack = [_as_expr(e)]
    while stack:
        x = stack.pop()
        for m in x._p:
            for a in m:
                if a.__class__ is Unknown:
                    yield a
                elif a.__class__ is Term:
                    stack.extend(a.args)


def is_unknown(e: Expr) -> bool:
    """True if ``e`` contains an `Unknown` anywhere (also inside opaque terms)."""
    return next(unknowns(e), None) is not None


_NAME_INDEX: dict[tuple[str, ...], dict[str, int]] = {}


def affine_in(e: Expr, names: Sequence[str]) -> tuple[tuple[int, ...], Expr] | None:
    """``((c_0, c_1, ...), rest)`` with ``e == sum(c_i * names[i]) + rest``, every c_i an int and
    ``rest`` free of ``names`` (also inside opaque terms); None if ``e`` is not of that form."""
    e = _as_expr(e)
    key = names if names.__class__ is tuple else tuple(names)
    idx = _NAME_INDEX.get(key)
    if idx is None:
        idx = {n: i for i, n in enumerate(key)}
        if len(_NAME_INDEX) < 256:
            _NAME_INDEX[key] = idx
    coeffs = [0] * len(key)
    if e._c is not None:
        return tuple(coeffs), e
    free = e._free
    if free is None:
        free = e.free_symbols
    if free.isdisjoint(idx):
        return tuple(coeffs), e
    rest = None
    for m, c in e._p.items():
        if len(m) == 1:
            a = m[0]
            if a.__class__ is Symbol:
                i = idx.get(a.name)
                if i is None:
                    continue
                coeffs[i] += c
                if rest is None:
                    rest = dict(e._p)
                del rest[m]
                continue
        for a in m:
            if not a.free.isdisjoint(idx):
                return None
    return tuple(coeffs), (e if rest is None else _new(rest))


def coefficient_gcd(e: Expr) -> int:
    """The gcd of the coefficients of all non-constant monomials (0 if ``e`` is constant)."""
    return _nonconst_gcd(_as_expr(e)._p)


def residues(e: Expr, modulus: int) -> frozenset[int]:
    """The values ``e mod modulus`` (in [0, modulus)) can take when every symbol and opaque term
    is an arbitrary non-negative integer: all r with r = const (mod gcd(coefficients, modulus))."""
    if modulus <= 0:
        raise ValueError(f"modulus must be positive, got {modulus}")
    e = _as_expr(e)
    g = math.gcd(coefficient_gcd(e), modulus)
    c0 = e._p.get((), 0)
    return frozenset(range(c0 % g, modulus, g))


# ---------------------------------------------------------------------------- text

_PREC = {  # C precedence level: lower binds tighter
    "*": 3, "/": 3, "%": 3,
    "<<": 5, ">>": 5,
    "<": 6, "<=": 6,
    "==": 7, "!=": 7,
    "&": 8, "^": 9, "|": 10, "&&": 11, "||": 12, "select": 13,
}
_FUNCTION_LIKE = frozenset({"min", "max", "unknown"})


def _print_order(mc):
    m = mc[0]
    return (not m, tuple([a.key for a in m]))


def _is_primary(e: Expr) -> bool:
    c = e._c
    if c is not None:
        return c >= 0
    a = single_atom(e)
    return a is not None and (a.__class__ is Symbol or a.op in _FUNCTION_LIKE)


def _fmt_arg(e: Expr) -> str:
    s = str(e)
    return s if _is_primary(e) else f"({s})"


def _fmt_atom_solo(a: Atom) -> str:
    if a.__class__ is Symbol:
        return a.name
    if a.__class__ is Unknown:
        return a.tag
    op, args = a.op, a.args
    if op in ("min", "max"):
        return f"{op}({args[0]}, {args[1]})"
    if op == "select":
        return f"{_fmt_arg(args[0])} ? {_fmt_arg(args[1])} : {_fmt_arg(args[2])}"
    if op == "*":
        return f"{_fmt_arg(args[0])}*{_fmt_arg(args[1])}"
    return f"{_fmt_arg(args[0])} {op} {_fmt_arg(args[1])}"


def _fmt_atom(a: Atom, bare: bool) -> str:
    s = _fmt_atom_solo(a)
    if bare or a.__class__ is Symbol or a.op in _FUNCTION_LIKE:
        return s
    return f"({s})"


def _fmt_expr(e: Expr) -> str:
    p = e._p
    if not p:
        return "0"
    items = sorted(p.items(), key=_print_order)
    single = len(items) == 1
    parts: list[str] = []
    for i, (m, c) in enumerate(items):
        neg = c < 0
        mag = -c if neg else c
        if not m:
            body = str(mag)
        elif len(m) == 1 and mag == 1:
            a = m[0]
            # one atom alone: bare if it is the whole expression, or a / % term in a sum
            bare = (single and not neg) or (
                a.__class__ is Term and _PREC.get(a.op, 99) <= 3 and not (neg and i == 0)
            )
            body = _fmt_atom(a, bare)
        else:
            body = "*".join(_fmt_atom(a, False) for a in m)
            if mag != 1:
                body = f"{body}*{mag}"
        if i == 0:
            parts.append(f"-{body}" if neg else body)
        else:
            parts.append(f" - {body}" if neg else f" + {body}")
    return "".join(parts)


# ---------------------------------------------------------------------------- compiled evaluation


def _cc_div(a: int, b: int) -> int:
    if b > 0 and a >= 0:  # the common case, where C and Python agree
        return a // b
    if b == 0:
        raise ZeroDivisionError("division by zero")
    return _c_div(a, b)


def _cc_mod(a: int, b: int) -> int:
    if b > 0 and a >= 0:
        return a % b
    if b == 0:
        raise ZeroDivisionError("modulo by zero")
    return _c_mod(a, b)


def _cc_shl(a: int, b: int) -> int:
    if b < 0 or b > MAX_SHIFT:
        raise ValueError(f"undefined shift count {b}")
    return a << b


def _cc_shr(a: int, b: int) -> int:
    if b < 0:
        raise ValueError(f"undefined shift count {b}")
    return a >> b


_CC_GLOBALS = {"_div": _cc_div, "_mod": _cc_mod, "_shl": _cc_shl, "_shr": _cc_shr, "min": min, "max": max,
               "__builtins__": {}}
_CC_INFIX = {"&": "&", "|": "|", "^": "^", "*": "*"}
_CC_COMPARE = {"<": "<", "<=": "<=", "==": "==", "!=": "!="}
_CC_CALL = {"/": "_div", "%": "_mod", "<<": "_shl", ">>": "_shr", "min": "min", "max": "max"}


class _NotCompilable(Exception):
    pass


def _cc_expr(e: Expr, args: Mapping[str, str]) -> str:
    c = e._c
    if c is not None:
        return f"({c})"
    parts = []
    for mono, coef in e._p.items():
        factors = [str(coef)] + [_cc_atom(a, args) for a in mono]
        parts.append("*".join(factors))
    return "(" + "+".join(parts) + ")"


def _cc_atom(a: Atom, args: Mapping[str, str]) -> str:
    if a.__class__ is Symbol:
        try:
            return args[a.name]
        except KeyError:
            raise _NotCompilable(a.name) from None
    if a.__class__ is not Term:  # an Unknown has no value
        raise _NotCompilable(repr(a))
    op = a.op
    xs = [_cc_expr(x, args) for x in a.args]
    if op == "select":
        return f"({xs[1]} if {xs[0]} else {xs[2]})"
    if op == "&&":
        return f"(1 if ({xs[0]} and {xs[1]}) else 0)"
    if op == "||":
        return f"(1 if ({xs[0]} or {xs[1]}) else 0)"
    if op in _CC_COMPARE:
        return f"(1 if {xs[0]} {_CC_COMPARE[op]} {xs[1]} else 0)"
    if op in _CC_INFIX:
        return f"({xs[0]} {_CC_INFIX[op]} {xs[1]})"
    if op in _CC_CALL:
        return f"{_CC_CALL[op]}({xs[0]}, {xs[1]})"
    raise _NotCompilable(op)


def compile_values(exprs: Sequence["Expr | None"], names: Sequence[str]) -> Callable[..., tuple]:
    """A function of ``names`` (positional ints) returning the value of every expression
    in ``exprs`` with C semantics, as `evaluate` would, but without building expressions:
    for the inner loops that evaluate the same lane expressions for many values of a few
    symbols.  An entry that is None, or cannot be evaluated from ``names`` alone (another
    symbol, an `Unknown`), is returned as None; the caller substitutes it the slow way.
    The function raises ZeroDivisionError or ValueError where `evaluate` would. Its attribute
    ``compiled`` says, for each entry, whether it was compiled (False: always None)."""
    args = {n: f"a{i}" for i, n in enumerate(names)}
    items = []
    compiled = []
    for e in exprs:
        item = "None"
        if e is not None:
            try:
                item = _cc_expr(e, args)
            except _NotCompilable:
                pass
        items.append(item)
        compiled.append(item != "None")
    params = ", ".join(args[n] for n in names)
    source = f"lambda {params}: ({', '.join(items)}{',' if len(items) == 1 else ''})"
    function = _COMPILED.get(source)
    if function is None:  # (the same kernel under several launches, template instances)
        function = eval(source, _CC_GLOBALS)  # noqa: S307 - source built from our own expression trees
        function.compiled = tuple(compiled)
        if len(_COMPILED) >= 1000:
            _COMPILED.clear()
        _COMPILED[source] = function
    return function


_COMPILED: dict[str, Callable[..., tuple]] = {}
