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

Assumption (docs/ARCHITECTURE.md, "Contracts between stages"): the operands of `/` and `%`
in index arithmetic, and every symbol and opaque term, are non-negative integers.  The
simplifier relies on it to split ``(64*bx + tx) / 16`` into ``4*bx + tx / 16``.  Folding two
constants always uses C semantics: truncation toward zero, and the sign of `%` follows the
dividend.

The package, by concern (``from analyzer.analysis import symbolic as S`` and the names below
are the interface; the modules are how it is built):

- `expressions`: atoms, terms, `Expr`, `const`/`sym`/`unknown` and the polynomial core;
- `division`: `floordiv` and `mod`;
- `bits`: `shl`, `shr`, `bitand`, `bitor`, `bitxor`;
- `logic`: `minimum`, `maximum`, `select`, `compare`, `logical_and`/`or`/`not`;
- `queries`: `bounds`, `conjuncts`, `unknowns`, `affine_in`, `residues`, ...;
- `printing`: ``str()`` of an expression, in C syntax;
- `compiled`: `compile_values`, many expressions evaluated by one generated function.
"""

from analyzer.analysis.symbolic.bits import bitand, bitor, bitxor, shl, shr
from analyzer.analysis.symbolic.compiled import compile_parts, compile_values, strict_values
from analyzer.analysis.symbolic.division import floordiv, mod
from analyzer.analysis.symbolic.expressions import (
    MAX_DEPTH,
    MAX_MONOMIALS,
    Atom,
    Expr,
    Origin,
    RememberedSubs,
    Symbol,
    Term,
    UnboundSymbol,
    Unknown,
    UnknownValue,
    const,
    fresh_values,
    single_atom,
    sym,
    unknown,
    unknowns_made,
)
from analyzer.analysis.symbolic.logic import (
    compare,
    logical_and,
    logical_not,
    logical_or,
    maximum,
    minimum,
    select,
)
from analyzer.analysis.symbolic.queries import (
    affine_in,
    bounds,
    coefficient_gcd,
    conjuncts,
    constant_difference,
    is_unknown,
    linear_comparison,
    plus_constant,
    residues,
    spent_difference,
    unknowns,
    varies_between_lanes,
)

__all__ = [
    "MAX_DEPTH",
    "MAX_MONOMIALS",
    "Atom",
    "Expr",
    "Origin",
    "RememberedSubs",
    "Symbol",
    "Term",
    "UnboundSymbol",
    "Unknown",
    "UnknownValue",
    "affine_in",
    "bitand",
    "bitor",
    "bitxor",
    "bounds",
    "coefficient_gcd",
    "compare",
    "compile_parts",
    "compile_values",
    "conjuncts",
    "const",
    "constant_difference",
    "floordiv",
    "fresh_values",
    "is_unknown",
    "linear_comparison",
    "logical_and",
    "logical_not",
    "logical_or",
    "maximum",
    "minimum",
    "mod",
    "plus_constant",
    "residues",
    "select",
    "shl",
    "shr",
    "single_atom",
    "spent_difference",
    "strict_values",
    "sym",
    "unknown",
    "unknowns",
    "unknowns_made",
    "varies_between_lanes",
]
