"""The verdict policy for unknown values: which values of an unknown are tried, and which of
them a finding may rest on.

A parameter, a launch size or a value read once per warp that no launch fixes is sampled
(`sample_values`). The worst case over every value tried is what `per_request` reports; a
finding must not rest on an unknown taking an unusual value, so by default (`Assume.TYPICAL`)
the rules judge an access at the values programs use: unknown sizes and offsets at multiples
of `TYPICAL_MULTIPLE` elements, block indices at every value (each block runs), and a symbol
the code constrains (`SymbolFacts`: a value, a range, a divisor) at every value the code
allows. `Assume.WORST` (`--assume worst`) judges at every value tried. README: "Verdict
policy".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Protocol

from analyzer.analysis import symbolic as S
from analyzer.analysis.memo import per_node
from analyzer.analysis.values import is_loop_counter
from analyzer.ir import builtins
from analyzer.ir.builtins import BuiltinKind

__all__ = [
    "BLOCK_INDICES",
    "PARAM_SAMPLES",
    "SPARSE_PARAM_SAMPLES",
    "TYPICAL_MULTIPLE",
    "Assume",
    "SymbolFacts",
    "is_block_index",
    "mask_blocks",
    "param_samples",
    "sample_values",
    "stated_gcd",
    "stated_residues",
    "typical_gcd",
    "typical_residues",
]

PARAM_SAMPLES = tuple(range(1, 65))
# Several unknown parameters at once are sampled more sparsely, so that their product stays
# below 150 scenarios: small values, powers of two and their neighbours, where costs change.
SPARSE_PARAM_SAMPLES = (
    (1, 2, 3, 4, 5, 8, 9, 16, 17, 31, 32, 33),
    (1, 2, 3, 4, 8, 16, 17, 32, 33),
    (1, 2, 4, 17, 32),
)
#: Unknown sizes and offsets are judged at multiples of this many elements: the row lengths
#: and offsets programs use (a warp's worth of elements).
TYPICAL_MULTIPLE = 32
#: A monomial of an expression and its coefficient, as `Expr.terms` gives them.
Monomial = tuple[tuple[S.Atom, ...], int]


class Assume(StrEnum):
    """Which values of an unknown a finding may rest on (`--assume`, configuration `assume`)."""

    TYPICAL = "typical"  # the values programs use (the default)
    WORST = "worst"  # every value tried


class SymbolFacts(Protocol):
    """What the code says about symbols (`__assume`, `assert`, guards): the interface through
    which such facts restrict the values tried. A symbol missing from a mapping is not
    constrained by it."""

    @property
    def values(self) -> Mapping[str, int]: ...  # the symbol's one value

    @property
    def ranges(self) -> Mapping[str, tuple[int | None, int | None]]: ...  # inclusive bounds

    @property
    def divisors(self) -> Mapping[str, int]: ...  # the symbol is a multiple of this


def param_samples(count: int) -> tuple[int, ...]:
    """The values tried for each of `count` unknown parameters (1..64 for one alone)."""
    if count <= 1:
        return PARAM_SAMPLES
    for samples in SPARSE_PARAM_SAMPLES:
        if len(samples) ** count <= 150:
            return samples
    return SPARSE_PARAM_SAMPLES[-1]


def is_block_index(name: str) -> bool:
    """`name` is a block index (`blockIdx.x`): not a size, every value of it happens."""
    return name in BLOCK_INDICES


#: The names of the block indices (`is_block_index`), as a set: the walk key asks it of every
#: symbol an access reads (myocyte/main.cu: 21,541 asks, each a look-up of the builtin's spec).
BLOCK_INDICES = frozenset(
    name
    for name in builtins.BUILTINS
    if (spec := builtins.variable(name)) is not None and spec.kind is BuiltinKind.BLOCK_INDEX
)


#: The block indices that decide a warp's masks (`mask_blocks`), by the warp's masks (the tuple
#: `scenarios.decided_masks` remembers): C++AMP BinomialOptions/kernel.cu plans 20,928 warps of
#: a few masks each (cProfile: `scenarios._blocks_to_walk` 7.4% -> 3.6% of the run).
_MASK_BLOCKS: dict[int, tuple] = {}


def mask_blocks(lane_masks: tuple[S.Expr | None, ...]) -> frozenset[str]:
    """The block indices that decide which lanes of a warp are active (`_mask_blocks`), remembered."""
    return per_node(_MASK_BLOCKS, lane_masks, _mask_blocks)


def _mask_blocks(lane_masks: tuple[S.Expr | None, ...]) -> frozenset[str]:
    """The block indices that decide which lanes are active: those of the masks that read no
    other symbol but loop counters (a bounds check that cuts the last block)."""
    names: set[str] = set()
    for m in lane_masks:
        if m is not None and not m.is_const:
            syms = {x for x in m.free_symbols if not is_loop_counter(x)}
            if syms and all(is_block_index(x) for x in syms):
                names |= syms
    return frozenset(names)


def sample_values(symbol: str, assume: Assume, facts: SymbolFacts | None = None, count: int = 1) -> tuple[int, ...]:
    """The values of the unknown `symbol` (one of `count` sampled together) that a verdict
    under `assume` considers. `Assume.WORST`: every value tried (`param_samples`). `TYPICAL`:
    a block index every value tried, a size or offset the multiples of `TYPICAL_MULTIPLE`
    among them. Where `facts` constrain the symbol, both are the values the facts allow: the
    code's constraint is knowledge, not a guess. The typical values are always among the
    worst case's, so one walk serves both."""
    tried = param_samples(count)
    allowed = constrained_values(symbol, tried, facts) if facts is not None else None
    if allowed is not None:
        return allowed
    if assume is Assume.WORST or is_block_index(symbol):
        return tried
    return tuple(v for v in tried if v % TYPICAL_MULTIPLE == 0) or (TYPICAL_MULTIPLE,)


def constrained_values(symbol: str, tried: tuple[int, ...], facts: SymbolFacts) -> tuple[int, ...] | None:
    """The values of `symbol` that `facts` allow, in place of `tried` (the same number of
    them where the facts leave that many); None when the facts say nothing of it."""
    value = facts.values.get(symbol)
    if value is not None:
        return (value,)
    lo, hi = facts.ranges.get(symbol, (None, None))
    divisor = facts.divisors.get(symbol, 1)
    if lo is None and hi is None and divisor == 1:
        return None
    start = max(lo if lo is not None else 1, 1)  # the values tried are positive, as sizes are
    first = -(-start // divisor) * divisor  # the first multiple of the divisor in range
    candidates = (first + divisor * k for k in range(len(tried)))
    return tuple(v for v in candidates if hi is None or v <= hi) or None


def typical_residues(e: S.Expr, modulus: int, facts: SymbolFacts | None = None) -> frozenset[int]:
    """The values ``e mod modulus`` takes when every size or offset in it (a symbol other than
    a block index, an unknown) is a typical value: a multiple of `TYPICAL_MULTIPLE` (or of the
    divisor the facts give), while block indices and other terms take any value. A monomial
    with such a factor moves `e` by multiples of its coefficient times that multiple."""
    g = typical_gcd(e.terms(), modulus, facts)
    c0 = next((c for m, c in e.terms() if not m), 0)
    return frozenset(range(c0 % g, modulus, g))


def typical_gcd(terms: Iterable[Monomial], modulus: int, facts: SymbolFacts | None = None) -> int:
    """The step between the values an expression of these `terms` takes modulo `modulus` at
    typical values (`typical_residues`): the gcd of `modulus` and each monomial's coefficient
    times its typical multiple."""
    g = 0
    for monomial, coefficient in terms:
        if not monomial:
            continue
        g = math.gcd(g, abs(coefficient) * _typical_step(monomial, facts))
    return math.gcd(g, modulus)


def stated_residues(e: S.Expr, modulus: int, facts: SymbolFacts | None) -> frozenset[int] | None:
    """The values ``e mod modulus`` can take where `facts` state divisors of its symbols (a
    host guard `if (w % 32) exit(1)`): knowledge, so it restricts the worst case too; None when
    the facts constrain none of its terms."""
    g = stated_gcd(e.terms(), modulus, facts)
    if g is None:
        return None
    c0 = next((c for m, c in e.terms() if not m), 0)
    return frozenset(range(c0 % g, modulus, g))


def stated_gcd(terms: Iterable[Monomial], modulus: int, facts: SymbolFacts | None) -> int | None:
    """The step between the values an expression of these `terms` can take modulo `modulus`
    by what `facts` state (`stated_residues`); None when the facts constrain none of them."""
    if facts is None or not facts.divisors:
        return None
    g, constrained = 0, False
    for monomial, coefficient in terms:
        if not monomial:
            continue
        step = max((facts.divisors.get(a.name, 1) for a in monomial if isinstance(a, S.Symbol)), default=1)
        constrained = constrained or step > 1
        g = math.gcd(g, abs(coefficient) * step)
    return math.gcd(g, modulus) if constrained else None


def _typical_step(monomial: tuple[S.Atom, ...], facts: SymbolFacts | None) -> int:
    """The multiple a monomial's value is of at typical values: the largest of its factors'
    (a size or offset: `TYPICAL_MULTIPLE`; one the facts constrain: their divisor, else 1;
    a block index, a loop counter or an opaque term: 1, every value happens)."""
    step = 1
    for atom in monomial:
        if isinstance(atom, S.Unknown):
            step = max(step, TYPICAL_MULTIPLE)
        elif isinstance(atom, S.Symbol) and not is_block_index(atom.name) and not is_loop_counter(atom.name):
            step = max(step, _symbol_step(atom.name, facts))
    return step


def _symbol_step(name: str, facts: SymbolFacts | None) -> int:
    """What a size or offset is a multiple of at its typical values."""
    if facts is None or not any(name in m for m in (facts.values, facts.ranges, facts.divisors)):
        return TYPICAL_MULTIPLE
    return facts.divisors.get(name, 1)
