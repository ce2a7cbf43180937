"""The expressions themselves: atoms, opaque terms, `Expr` and the polynomial core.

An `Expr` is a dict ``monomial -> coefficient`` (a monomial is a sorted tuple of `Atom`s,
``()`` the constant one) behind a small immutable class; `add`, `scale` and `mul` are the
polynomial arithmetic every other module of the package builds on, and `term` wraps an
operation that does not fold (``a / b``, ``a & b``, ``min(a, b)``) as an opaque `Term`. The
modules of this package read an `Expr`'s slots (``_p``, the dict, and ``_c``, its value when
constant) directly: they are the package's representation, not its interface.

The operators of `Expr` (``//``, ``%``, ``<<``, ``&`` ...) and its text come from the modules
that build those terms (`division`, `bits`, `printing`), imported at the end of this one:
they build on `Expr`, so they are imported as modules, and either side may be imported first.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Mapping
from typing import ClassVar

from analyzer.analysis.symbolic.c_ints import EVAL_BINARY, MAX_SHIFT, UnboundSymbol, UnknownValue, c_div, c_mod
from analyzer.analysis.symbolic.origins import Origin
from analyzer.budget import BudgetExceeded
from analyzer.budget import current_meter as _meter_now
from analyzer.budget import metered as _metered

#: A product whose expansion could exceed this many monomials stays an opaque ``*`` term.
MAX_MONOMIALS = 500
#: Opaque terms nested deeper than this become an `Unknown` (keeps recursion bounded).
MAX_DEPTH = 64


# ---------------------------------------------------------------------------- atoms

_NO_NAMES: frozenset[str] = frozenset()
_SYMBOL_RANK = {"threadIdx": 0, "blockIdx": 1, "blockDim": 2, "gridDim": 3}
ALL_BITS = -1


class Atom:
    """A factor of a monomial.  `key` is a total, deterministic order; `free` the symbol names."""

    __slots__ = ("depth", "free", "key")
    key: tuple
    free: frozenset[str]
    depth: int

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


class Symbol(Atom):
    """A named integer.  Interned: ``Symbol("x") is Symbol("x")``; equality is identity."""

    __slots__ = ("name",)
    name: str
    _table: ClassVar[dict[str, Symbol]] = {}

    def __new__(cls, name: str) -> Symbol:
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

    __slots__ = ("_bnd", "_hash", "_key", "args", "op")
    op: str
    args: tuple[Expr, ...]
    _hash: int
    _bnd: tuple[int | None, int | None] | None  # `queries.bounds`, remembered
    _key: tuple | None  # `key`, worked out when first asked for

    @property
    def key(self) -> tuple:  # type: ignore[override]  # (Atom's `key` is a slot Symbol sets)
        """The atom's order (`Atom.key`) from its arguments' sort keys, worked out when first
        asked for: most terms built are never ordered (a lane's comparison `c < n`, rebuilt at
        each lane, is one monomial's one atom), and the arguments' keys were a third of
        building one (reduction_kernel.cu under py-spy: `_raw_term` 9% of the check)."""
        k = self._key
        if k is None:
            k = self._key = (1, self.op, tuple([a.skey for a in self.args]))
        return k

    def __eq__(self, other):
        if self is other:
            return True
        return other.__class__ is Term and self._hash == other._hash and self.op == other.op and self.args == other.args

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self):
        return (_raw_term, (self.op, self.args))

    def __repr__(self) -> str:
        return f"Term({self.op!r}, {self.args!r})"

    def subs(self, mapping: Mapping[str, int | Expr]) -> Expr:
        if mapping.__class__ is RememberedSubs:
            return mapping.term(self)
        return self.subs_args(mapping)

    def subs_args(self, mapping: Mapping[str, int | Expr]) -> Expr:
        """`subs`, always worked out: the term rebuilt from its arguments substituted."""
        args = self.args
        if len(args) == 2:  # most terms: their two arguments without a list and its generator
            a, b = args
            na, nb = a.subs(mapping), b.subs(mapping)
            if na is not a or nb is not b:
                return REBUILD[self.op](na, nb)
            return atom_expr(self)
        new = [a.subs(mapping) for a in args]
        if any(map(operator.is_not, new, args)):
            return REBUILD[self.op](*new)
        return atom_expr(self)

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
                raise ZeroDivisionError(f"division by zero in {printing.format_atom(self)}")
            return c_div(a, b)
        if op == "%":
            if b == 0:
                raise ZeroDivisionError(f"modulo by zero in {printing.format_atom(self)}")
            return c_mod(a, b)
        if op == "<<" or op == ">>":
            if b < 0 or (op == "<<" and b > MAX_SHIFT):
                raise ValueError(f"undefined shift count {b} in {printing.format_atom(self)}")
            return a << b if op == "<<" else a >> b
        return EVAL_BINARY[op](a, b)


class Unknown(Term):
    """A value warplint does not know.  Equal only to itself (the same `unknown()` call).

    `tag`: the text it prints as; `origin`: where it comes from; `lane_varying`: whether it
    may differ between the lanes of a warp (a value read at an address that does)."""

    __slots__ = ("lane_varying", "origin", "tag", "uid")
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
        return new_expr({(self,): 1})

    def evaluate(self, env):
        raise UnknownValue(self.tag)


#: The constructor of each opaque operation, by its op: `Term.subs` rebuilds a term whose
#: arguments changed with it. The modules that make opaque terms (division, bits, logic) add
#: theirs when they are imported.
REBUILD: dict[str, Callable[..., Expr]] = {}

_COMMUTATIVE = frozenset({"&", "|", "^", "min", "max", "==", "!=", "&&", "||", "*"})
BOOLEAN_OPS = frozenset({"<", "<=", "==", "!=", "&&", "||"})
_KEY = operator.attrgetter("key")


def _raw_term(op: str, args: tuple[Expr, ...]) -> Term:
    t = object.__new__(Term)
    t.op = op
    t.args = args
    t._key = None  # (`Term.key`)
    free: frozenset[str] = _NO_NAMES
    depth = 0
    for a in args:
        # the argument's set and depth as stored, asked of the properties only where not worked
        # out yet: a property read is a Python call on CPython 3.11 (interval.cu's 20,009 terms:
        # its check under callgrind, 2026-11-29, 4.520 G -> 4.459 G instructions with `term`'s keys)
        f = a._free
        if f is None:
            f = a.free_symbols
        if f and not f <= free:  # an argument's set kept where it holds the others' (no new set)
            free = free | f if free else f
        d = a._depth
        if d is None:
            d = a.depth
        if d > depth:
            depth = d
    t.free = free
    t.depth = depth + 1
    t._hash = hash((op, args))
    t._bnd = None
    return t


#: `_raw_term` by a public name: `shifted.rebuilt` builds a comparison as `term` does, its
#: checks made once per comparison.
raw_term = _raw_term


def _raw_unknown(tag: str, uid: int, origin: Origin, lane_varying: bool) -> Unknown:
    # (`unknown` writes this out, for speed: a field set here is set there too)
    u = object.__new__(Unknown)
    u.op = "unknown"
    u.args = ()
    u.tag = tag
    u.uid = uid
    u.origin = origin
    u.lane_varying = lane_varying
    u._key = (2, tag, uid)  # (`Term.key` reads it)
    u.free = frozenset()
    u.depth = 0
    u._hash = hash(("unknown", uid))
    u._bnd = (0, None)
    return u


#: `_raw_unknown` for another module: an unknown made again with a uid given (`renaming`).
raw_unknown = _raw_unknown


def term(op: str, args: tuple[Expr, ...]) -> Expr:
    """The expression consisting of the single opaque atom ``op(args)``."""
    if op in _COMMUTATIVE and len(args) == 2:
        k0, k1 = args[0]._skey, args[1]._skey  # (as stored: see `_raw_term`)
        if (args[1].skey if k1 is None else k1) < (args[0].skey if k0 is None else k0):
            args = (args[1], args[0])
    t = _raw_term(op, args)
    if t.depth > MAX_DEPTH:
        return unknown("<expression too deep>", Origin.TOO_DEEP)
    return atom_expr(t)


# ---------------------------------------------------------------------------- Expr


class Expr:
    """Immutable, hashable integer expression (canonical polynomial over atoms)."""

    __slots__ = ("_bnd", "_c", "_depth", "_free", "_h", "_p", "_skey", "_str", "_terms")
    _p: dict[tuple[Atom, ...], int]  # monomial -> coefficient, no zero coefficient
    _c: int | None  # the value when constant
    # remembered when first asked for: hash, free symbols, sort key, bounds, depth, text
    _h: int | None
    _free: frozenset[str] | None
    _skey: tuple | None
    _bnd: tuple[int | None, int | None] | None
    _depth: int | None
    _str: str | None
    _terms: tuple | None  # `terms()`: sorted once (the cost walk asks for it per scenario)

    def __new__(cls, value: int | Expr = 0) -> Expr:
        """``Expr(5)`` is ``const(5)``; other expressions come from `sym`, the operators and
        the module's functions."""
        return as_expr(value)

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
            k = tuple(sorted([(tuple([a.key for a in m]), c) for m, c in self._p.items()]))
            self._skey = k
        return k

    def terms(self) -> tuple[tuple[tuple[Atom, ...], int], ...]:
        """The ``(monomial, coefficient)`` pairs in printing order (constant last)."""
        t = self._terms
        if t is None:
            t = self._terms = tuple(sorted(self._p.items(), key=printing.print_order))
        return t

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
        return NotImplemented if o is None else add(self, o)

    __radd__ = __add__

    def __sub__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else add(self, scale(o, -1))

    def __rsub__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else add(o, scale(self, -1))

    def __mul__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else mul(self, o)

    __rmul__ = __mul__

    def __neg__(self):
        return scale(self, -1)

    def __pos__(self):
        return self

    def __invert__(self):  # two's complement: ~x == -x - 1
        return add(scale(self, -1), MINUS_ONE)

    def __floordiv__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else division.floordiv(self, o)

    def __rfloordiv__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else division.floordiv(o, self)

    def __mod__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else division.mod(self, o)

    def __rmod__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else division.mod(o, self)

    def __lshift__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else bits.shl(self, o)

    def __rlshift__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else bits.shl(o, self)

    def __rshift__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else bits.shr(self, o)

    def __rrshift__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else bits.shr(o, self)

    def __and__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else bits.bitand(self, o)

    __rand__ = __and__

    def __or__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else bits.bitor(self, o)

    __ror__ = __or__

    def __xor__(self, other):
        o = _coerce(other)
        return NotImplemented if o is None else bits.bitxor(self, o)

    __rxor__ = __xor__

    # -- substitution and evaluation

    def subs(self, mapping: Mapping[str, int | Expr]) -> Expr:
        """Replace symbols by ints or expressions and re-simplify."""
        if self._c is not None:
            return self
        free = self._free
        if free is None:
            free = self.free_symbols
        if free.isdisjoint(mapping):
            return self
        meter = _meter_now()  # a substitution that does work is a step too (see `new_expr`)
        if meter is not None:
            meter.left -= 1
            if meter.left < 0:
                raise BudgetExceeded(meter.stage, meter.limit)
        remembered = mapping.__class__ is RememberedSubs  # its terms go to `RememberedSubs.term`
        p = self._p
        if len(p) == 1 and ONE_TERM_AS_IS:  # one term alone (a mask's `&&`, `select`, `<`): its result
            ((mono, coef),) = p.items()
            if coef == 1 and len(mono) == 1 and mono[0].__class__ is Term:
                return _one_term(mapping.term(mono[0]) if remembered else mono[0].subs_args(mapping))
        get = mapping.get
        out: dict = {}
        extra = None
        for mono, coef in self._p.items():
            # the constant, and one symbol put in as a number or not at all, without a list of
            # factors; below, a term handed to `RememberedSubs.term` without `Term.subs`, and the
            # dict wrapped as it is when nothing cancelled (the four files of `new_expr`: 161,234
            # calls of `Term.subs` -> 17, 187,560 dict comprehensions -> 22)
            if not mono:
                out[mono] = out.get(mono, 0) + coef
                continue
            if len(mono) == 1 and mono[0].__class__ is Symbol:
                v = get(mono[0].name, _MISSING)
                if v is _MISSING:
                    out[mono] = out.get(mono, 0) + coef
                    continue
                if v.__class__ is int:
                    if v:
                        out[()] = out.get((), 0) + coef * v
                    continue
            kept: list[Atom] = []
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
                else:  # a `Term` (an `Unknown` reads no name): `Term.subs` written out
                    v = mapping.term(atom) if remembered else atom.subs_args(mapping)
                vt = v.__class__
                if vt is not int:
                    if vt is not Expr:
                        v = as_expr(v)
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
                t = new_expr({key: coef})
                for f in factors:
                    t = mul(t, f)
                if extra is None:
                    extra = [t]
                else:
                    extra.append(t)
        res = new_expr({m: c for m, c in out.items() if c} if 0 in out.values() else out)
        if extra is not None:
            for t in extra:
                res = add(res, t)
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
            s = self._str = printing.format_expr(self)
        return s

    def __repr__(self) -> str:
        return f"Expr({str(self)!r})"


_MISSING = object()
#: `Expr.subs` gives an expression of one term the term's result itself (`_one_term`); a test
#: switches it off to hold it to the expression built the long way.
ONE_TERM_AS_IS = True


def _one_term(v: Expr) -> Expr:
    """What `Expr.subs` makes of an expression that is one term (coefficient 1) whose result
    is `v`: an expression equal to `v`, built in one step (two where `v` is a sum: the
    product with 1 and the sum with an empty rest), here `v` itself with the same steps
    spent, where its monomial needs no sorting. A mask is a chain of such terms, each the
    argument of the next, rebuilt at each lane: Mandelbrot_cuda.cu's ternary chains, 768 lanes
    of 139 steps each. Mandelbrot_cuda.cu under callgrind (`check --no-cache -j 1`, measured
    2026-11-28, with `Term.subs_args`'s two arguments written out): 3.591 G -> 3.386 G
    instructions; a wrapper built and hashed no more, and the term's result shared keeps what
    it worked out (its hash, its text)."""
    p = v._p
    n = len(p)
    if n == 1:
        ((mono, coef),) = p.items()
        if len(mono) > 1:  # its atoms put in order as `subs` orders a monomial's
            return new_expr({tuple(sorted(mono, key=_KEY)): coef})
    meter = _meter_now()
    if meter is not None:
        for _ in range(2 if n > 1 else 1):
            meter.left -= 1
            if meter.left < 0:
                raise BudgetExceeded(meter.stage, meter.limit)
    return v


def new_expr(d: dict) -> Expr:
    """Wrap a dict without zero coefficients (the caller guarantees it). Every expression built
    is a step of the analysis, what its time follows (analyzer.budget): `budget.spend` written
    out here, in `Expr.subs` and in `RememberedSubs.term` (five corpora, one process: 5.7, 2.1
    and 1.4 million calls, a Python frame each; Mandelbrot_cuda.cu, threadFenceReduction.cu,
    cdpBitonicSort.cu and C++AMP convolution_simple in one process: `budget.spend` called
    1,693,688 -> 646,761 times; threadFenceReduction.cu under callgrind, with `Expr.subs`'s
    short ways: 8.90 G -> 8.78 G instructions)."""
    meter = _meter_now()
    if meter is not None:
        meter.left -= 1
        if meter.left < 0:
            raise BudgetExceeded(meter.stage, meter.limit)
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
    e._terms = None
    return e


def atom_expr(a: Atom) -> Expr:
    """The expression ``a`` (one atom, coefficient 1), its free symbols, depth and sort key
    taken from the atom's: `_raw_term` asks each argument for them, and working them out of
    the dict cost more than building the term. The masks of nested conditions are chains of
    new terms of new unknowns, each the argument of the next (interval.cu, whose inlined calls
    build 72,000 terms and 48,000 unknowns: `run_kernel` 0.86 -> 0.76 s CPU; a loop building
    such masks, 0.78 -> 0.56 s)."""
    e = new_expr({(a,): 1})
    e._free, e._depth = a.free, a.depth
    if a.__class__ is not Term or a._key is not None:  # (a term's key is worked out when asked for)
        e._skey = (((a.key,), 1),)
    return e


def _from_items(items) -> Expr:
    return new_expr({m: c for m, c in items if c})


_CONSTS: dict[int, Expr] = {}


def const(n: int) -> Expr:
    """The constant expression ``n``."""
    e = _CONSTS.get(n)
    if e is None:
        n = operator.index(n)
        e = new_expr({(): n} if n else {})
        if -1024 <= n <= 4096:  # remembered as they are met (making all at import took 8 ms)
            _CONSTS[n] = e
    return e


# built unmetered: this module is first imported inside the metered analysis of a file, whose
# budget an import must not spend (with `budget.analysis = 1` the import stopped half-way, WL900)
with _metered(None):
    ZERO = const(0)
    ONE = const(1)
    MINUS_ONE = const(-1)

_SYMS: dict[str, Expr] = {}


def sym(name: str) -> Expr:
    """The expression consisting of the symbol ``name``."""
    e = _SYMS.get(name)
    if e is None:
        e = _SYMS[name] = new_expr({(Symbol(name),): 1})
    return e


#: How a value that may differ between lanes prints: before its text.
LANE_VARYING_PREFIX = "per-lane "


#: How many `unknown()` has made (`fresh_values`): counted here, not in an attribute of
#: `Unknown`, since writing a class's attribute invalidates what CPython's specialised
#: instructions keep of the class (its version tag), and every `Unknown` made paid for that
#: (cuda-samples interval.cu, 47,566 unknowns: its check under callgrind, 2026-11-29, 4.89 G ->
#: 4.54 G instructions; myocyte/main.cu 8.93 G -> 8.70 G).
_MADE = [0]


def unknowns_made() -> int:
    """How many `unknown()` has made in this process."""
    return _MADE[0]


def set_unknowns_made(count: int) -> None:
    """Say that `unknown()` has made `count` (a replayed loop, `symbolic.renaming`, counts the
    unknowns it did not make, or puts the count back)."""
    _MADE[0] = count


def unknown(text: str, origin: Origin, lane_varying: bool = False) -> Expr:
    """A fresh unknown value from `origin`; ``str()`` shows ``text`` (after "per-lane " when
    it may differ between the lanes of a warp).  Never equal to another Unknown."""
    tag = f"{LANE_VARYING_PREFIX}{text}" if lane_varying else str(text)
    _MADE[0] += 1
    # `_raw_unknown` and `atom_expr(u)` written out (its `new_expr` too): the interpreter makes
    # an unknown for every load, opaque call and variable a loop writes (tf32TensorCoreGemm.cu:
    # 46,602), and the three Python frames were about half of making one (with the interpreter's
    # remembered trip counts, tf32TensorCoreGemm.cu's check under callgrind, 2026-11-28:
    # 10.11 G -> 9.44 G instructions)
    uid = next(Unknown._ids)
    u = object.__new__(Unknown)
    u.op = "unknown"
    u.args = ()
    u.tag = tag
    u.uid = uid
    u.origin = origin
    u.lane_varying = lane_varying
    u._key = key = (2, tag, uid)
    u.free = _NO_NAMES
    u.depth = 0
    u._hash = hash(("unknown", uid))
    u._bnd = (0, None)
    meter = _meter_now()
    if meter is not None:
        meter.left -= 1
        if meter.left < 0:
            raise BudgetExceeded(meter.stage, meter.limit)
    e = object.__new__(Expr)
    e._p = {(u,): 1}
    e._c = e._h = e._bnd = e._str = e._terms = None
    e._free = _NO_NAMES
    e._depth = 0
    e._skey = (((key,), 1),)
    return e


def fresh_values() -> tuple[int, int]:
    """How many unknowns were made, and constants and symbols remembered (`const`, `sym`), so
    far: a computation that made no unknown makes the same values again, and one that made n
    constants remembered spends n steps fewer again (`analysis.pure` asks, before and after)."""
    return _MADE[0], len(_CONSTS) + len(_SYMS)


def as_expr(x) -> Expr:
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


def add(a: Expr, b: Expr) -> Expr:
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
    return new_expr(d)


def scale(a: Expr, k: int) -> Expr:
    if k == 1:
        return a
    if k == 0 or a._c == 0:
        return ZERO
    c = a._c
    if c is not None:
        return const(c * k)
    return new_expr({m: c * k for m, c in a._p.items()})


def _mono_mul(ma: tuple, mb: tuple) -> tuple:
    if not ma:
        return mb
    if not mb:
        return ma
    if len(ma) == 1 and len(mb) == 1:
        x, y = ma[0], mb[0]
        return (x, y) if x is y or x.key <= y.key else (y, x)
    return tuple(sorted(ma + mb, key=_KEY))


def mul(a: Expr, b: Expr) -> Expr:
    c = a._c
    if c is not None:
        return scale(b, c)
    c = b._c
    if c is not None:
        return scale(a, c)
    pa, pb = a._p, b._p
    if len(pa) * len(pb) > MAX_MONOMIALS:
        return term("*", (a, b))
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
    return new_expr(d)


def single_atom(e: Expr) -> Atom | None:
    """The atom if ``e`` is exactly one atom with coefficient 1 (a symbol, an opaque term such
    as ``a != b``, an unknown), else None."""
    p = e._p
    if len(p) == 1:
        for m, c in p.items():
            if c == 1 and len(m) == 1:
                return m[0]
    return None


# ---------------------------------------------------------------------------- the other modules

REBUILD["*"] = mul

from analyzer.analysis.symbolic import bits, division, printing  # noqa: E402  (see the docstring)
from analyzer.analysis.symbolic.remembered import REMEMBERED_TERMS as REMEMBERED_TERMS  # noqa: E402
from analyzer.analysis.symbolic.remembered import RememberedSubs  # noqa: E402
