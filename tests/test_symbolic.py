"""Specification of analyzer.analysis.symbolic: canonical integer expressions for lane addresses.

Index arithmetic is assumed non-negative (docs/ARCHITECTURE.md, "Contracts between stages");
folding two constants uses C semantics (truncation toward zero, the sign of % follows the
dividend).
"""

from __future__ import annotations

import copy
import pickle
import random

import pytest

from analyzer.analysis import symbolic as S
from analyzer.analysis.symbolic import (
    Expr,
    Origin,
    UnboundSymbol,
    UnknownValue,
    affine_in,
    bounds,
    coefficient_gcd,
    compare,
    compile_values,
    const,
    floordiv,
    is_unknown,
    logical_and,
    logical_not,
    logical_or,
    maximum,
    minimum,
    mod,
    residues,
    select,
    sym,
    unknown,
    unknowns,
)

tx, ty, tz = sym("threadIdx.x"), sym("threadIdx.y"), sym("threadIdx.z")
bx, by = sym("blockIdx.x"), sym("blockIdx.y")
bdx = sym("blockDim.x")
N, M = sym("N"), sym("M")
THREAD = ("threadIdx.x", "threadIdx.y", "threadIdx.z")


def at(e: Expr, **env: int) -> int:
    """Evaluate with keyword names: tx, ty, bx, by, bdx, N, M."""
    names = {
        "tx": "threadIdx.x",
        "ty": "threadIdx.y",
        "tz": "threadIdx.z",
        "bx": "blockIdx.x",
        "by": "blockIdx.y",
        "bdx": "blockDim.x",
    }
    return e.evaluate({names.get(k, k): v for k, v in env.items()})


# ---------------------------------------------------------------- canonical form


def test_addition_and_multiplication_are_commutative():
    assert tx + bx == bx + tx
    assert tx * N == N * tx
    assert hash(tx + bx) == hash(bx + tx)
    assert (tx + 1) * (ty + 2) == ty * tx + 2 * tx + ty + 2


def test_equal_expressions_built_differently_are_equal_and_hash_equal():
    a = ((by * 16 + ty) * N + bx * 16 + tx) * 4
    b = 4 * tx + 64 * bx + N * (64 * by + 4 * ty)
    assert a == b
    assert hash(a) == hash(b)
    assert len({a, b}) == 1


def test_zero_terms_are_dropped_and_identities_fold():
    assert tx - tx == 0
    assert (tx * 1 + 0) == tx
    assert (tx + bx - bx).free_symbols == frozenset({"threadIdx.x"})
    assert tx * 0 == 0


def test_constants_compare_equal_to_ints_and_hash_like_them():
    assert const(5) == 5
    assert hash(const(5)) == hash(5)
    assert Expr(5) == const(5)
    assert const(3) + 4 == 7
    assert (tx - tx).is_const and (tx - tx).value == 0


def test_is_const_and_value():
    assert const(7).is_const
    assert not tx.is_const
    with pytest.raises(ValueError):
        _ = tx.value


def test_truth_value_of_a_symbolic_expression_is_an_error():
    assert bool(const(1)) and not bool(const(0))
    with pytest.raises(TypeError):
        bool(tx)


def test_free_symbols_include_symbols_inside_opaque_terms():
    e = tx * 4 + floordiv(ty, N) + (bx ^ M)
    assert e.free_symbols == frozenset({"threadIdx.x", "threadIdx.y", "N", "blockIdx.x", "M"})


def test_powers_are_kept_as_repeated_factors():
    assert tx * tx * tx == (tx * tx) * tx
    assert (tx + 1) * (tx - 1) == tx * tx - 1


# ---------------------------------------------------------------- C semantics of constants


def test_constant_division_truncates_toward_zero():
    assert const(-7) // 2 == -3
    assert floordiv(7, -2) == -3
    assert floordiv(-7, -2) == 3
    assert const(7) // 2 == 3


def test_constant_modulo_takes_the_sign_of_the_dividend():
    assert const(-7) % 2 == -1
    assert mod(7, -2) == 1
    assert mod(-7, -2) == -1


def test_constant_shifts_and_bitwise_ops_fold():
    assert const(1) << 5 == 32
    assert const(-8) >> 1 == -4
    assert (const(12) & 10) == 8
    assert (const(12) | 3) == 15
    assert (const(12) ^ 10) == 6
    assert ~const(5) == -6


def test_division_by_constant_zero_stays_opaque_and_raises_when_evaluated():
    e = tx // 0
    assert not e.is_const
    with pytest.raises(ZeroDivisionError):
        at(e, tx=3)


# ---------------------------------------------------------------- division and modulo


def test_division_splits_off_multiples_of_the_divisor():
    assert (64 * bx + tx) // 16 == 4 * bx + tx // 16
    assert str((64 * bx + tx) // 16) == "blockIdx.x*4 + threadIdx.x / 16"


def test_division_folds_completely_once_the_remainder_is_a_small_constant():
    e = (64 * bx + tx) // 16
    assert e.subs({"threadIdx.x": 5}) == 4 * bx
    assert (32 * tx + 31) // 32 == tx
    assert (32 * tx + 31) % 32 == 31


def test_modulo_keeps_only_the_remainder_part():
    assert (64 * bx + tx) % 16 == tx % 16
    assert (128 * by + 32 * ty + tx) % 32 == tx % 32
    assert (tx * 32) % 32 == 0


def test_common_factor_of_remainder_and_divisor_is_divided_out():
    assert (4 * tx + 2) // 8 == tx // 2
    assert (4 * tx + 2) % 8 == 4 * (tx % 2) + 2


def test_nested_division_multiplies_the_divisors():
    assert (tx // 4) // 8 == tx // 32
    assert (tx >> 2) >> 3 == tx >> 5


def test_nested_modulo_by_a_divisor_reduces():
    assert (tx % 32) % 8 == tx % 8
    assert (tx % 8) % 32 == tx % 8


def test_modulo_then_division_is_division_then_modulo():
    assert (tx % 32) // 8 == (tx // 8) % 4


def test_values_known_to_be_below_the_divisor_fold():
    assert (tx % 16) // 16 == 0
    assert (tx % 16 + 16 * (ty % 2)) // 32 == 0
    assert (tx % 16 + 16 * (ty % 2)) % 32 == tx % 16 + 16 * (ty % 2)


def test_division_by_one_and_by_minus_one():
    assert tx // 1 == tx
    assert tx % 1 == 0
    assert tx // -1 == -tx


def test_division_by_a_symbol_stays_opaque_until_substitution():
    e = (tx + 3) // N
    assert not e.is_const and e.free_symbols == {"threadIdx.x", "N"}
    assert e.subs({"N": 4}) == (tx + 3) // 4
    assert e.subs({"N": 4, "threadIdx.x": 9}) == 3


def test_division_by_a_symbol_splits_exact_multiples():
    assert (ty * N + tx) // N == ty + tx // N
    assert (ty * N + tx) % N == tx % N
    assert (ty * N) // N == ty
    assert (ty * N) % N == 0


# ---------------------------------------------------------------- shifts and masks


def test_shift_by_constant_is_multiplication_or_division():
    assert tx << 2 == tx * 4
    assert tx >> 3 == tx // 8
    assert not (1 << tx).is_const  # a shift by a symbol stays opaque
    assert (const(1) << tx).subs({"threadIdx.x": 4}) == 16


def test_low_bit_mask_is_modulo():
    assert tx & 31 == tx % 32
    assert 7 & tx == tx % 8
    assert (tx & 0xF0) == ((tx // 16) % 16) * 16
    assert (tx & ~3) == tx - tx % 4


def test_bitwise_identities():
    assert tx ^ 0 == tx
    assert tx | 0 == tx
    assert tx & 0 == 0
    assert tx ^ tx == 0
    assert tx | tx == tx
    assert tx & -1 == tx


def test_or_of_disjoint_bit_fields_is_addition():
    assert (ty * 16) | (tx % 16) == ty * 16 + tx % 16
    assert (tx << 1) | 1 == 2 * tx + 1


def test_xor_swizzle_folds_with_concrete_values():
    assert (tx ^ ty).subs({"threadIdx.x": 3, "threadIdx.y": 5}) == 6
    swizzled = ty * 32 + (tx ^ (ty % 32))
    assert swizzled.subs({"threadIdx.x": 1, "threadIdx.y": 3}) == 98


def test_xor_is_commutative_in_canonical_form():
    assert tx ^ ty == ty ^ tx
    assert hash(tx ^ ty) == hash(ty ^ tx)


# ---------------------------------------------------------------- select, compare, min/max, logic


def test_compare_folds_when_the_difference_is_constant():
    assert compare("<", tx, tx + 1) == 1
    assert compare(">=", tx, tx + 1) == 0
    assert compare("==", tx, tx) == 1
    assert compare("!=", 3, 3) == 0
    assert compare("<", tx, 16).subs({"threadIdx.x": 20}) == 0


def test_compare_greater_than_is_a_swapped_less_than():
    assert compare(">", tx, N) == compare("<", N, tx)
    assert compare(">=", tx, N) == compare("<=", N, tx)


def test_select_folds_on_a_constant_condition_or_equal_branches():
    assert select(1, tx, ty) == tx
    assert select(0, tx, ty) == ty
    assert select(compare("<", tx, 16), bx, bx) == bx
    e = select(compare("<", tx, 16), tx, 0)
    assert e.subs({"threadIdx.x": 3}) == 3
    assert e.subs({"threadIdx.x": 30}) == 0


def test_select_evaluates_only_the_chosen_branch():
    e = select(compare("==", N, 0), 0, tx // N)
    assert at(e, tx=5, N=0) == 0


def test_min_and_max_fold_when_decidable():
    assert minimum(tx, tx + 1) == tx
    assert maximum(tx, tx + 1) == tx + 1
    assert minimum(3, 9) == 3
    assert minimum(tx, N) == minimum(N, tx)
    assert maximum(tx, N).subs({"threadIdx.x": 7, "N": 4}) == 7


def test_logical_operators_fold_and_yield_zero_or_one():
    assert logical_and(1, 5) == 1
    assert logical_and(tx, 0) == 0
    assert logical_or(0, 7) == 1
    assert logical_or(compare("<", tx, 4), 1) == 1
    assert logical_not(0) == 1 and logical_not(9) == 0
    assert logical_not(compare("<", tx, 16)) == compare("<=", 16, tx)
    assert logical_and(compare("<", tx, 16), compare("<", ty, 4)).subs({"threadIdx.x": 3, "threadIdx.y": 2}) == 1


# ---------------------------------------------------------------- unknowns


def test_two_unknowns_are_never_equal():
    a, b = unknown("x[i]", Origin.LOADED), unknown("x[i]", Origin.LOADED)
    assert a != b
    assert a == a
    assert a - a == 0
    assert str(a) == "x[i]"


def test_is_unknown_looks_inside_opaque_terms():
    u = unknown("idx[tid]", Origin.LOADED)
    assert is_unknown(u * 4 + tx)
    assert is_unknown(floordiv(u, 16) ^ tx)
    assert not is_unknown(tx * 4 + bx)


def test_an_unknown_keeps_its_origin_and_lane_variance_as_fields_and_prints_as_before():
    loaded = unknown("value of s[pos]", Origin.LOADED, lane_varying=True)
    carried = unknown("modified in loop", Origin.LOOP_CARRIED)
    e = floordiv(loaded, 16) ^ (carried * 4 + tx)
    assert str(loaded) == "per-lane value of s[pos]" and str(carried) == "modified in loop"
    assert sorted((u.origin, u.lane_varying) for u in unknowns(e)) == [
        (Origin.LOADED, True),
        (Origin.LOOP_CARRIED, False),
    ]
    assert list(unknowns(tx * 4 + bx)) == []
    copied = pickle.loads(pickle.dumps(loaded))
    assert [(u.origin, u.lane_varying, u.tag) for u in unknowns(copied)] == [
        (Origin.LOADED, True, "per-lane value of s[pos]")
    ]


def test_unknowns_reads_a_shared_argument_once_and_meets_each_unknown_first_where_it_did():
    # an argument shared by several terms (the same object), as the offsets of mergeSort.cu's
    # data-dependent accesses share theirs: a plain depth-first walk met it once per term
    loaded = unknown("value of key", Origin.LOADED, lane_varying=True)
    carried = unknown("modified in loop", Origin.LOOP_CARRIED)
    shared = floordiv(loaded + carried * 2, 3)
    e = select(compare("<", tx, shared), shared ^ tx, mod(shared, 7)) + minimum(shared, carried)
    # `shared` read once (a plain walk read it four times: nine unknowns, the same two first)
    assert [u.tag for u in unknowns(e)] == ["modified in loop", "per-lane value of key", "modified in loop"]
    nested = shared
    for _ in range(30):  # 2**30 places to a walk that read every place
        nested = maximum(nested, nested + 1)
    assert [u.tag for u in unknowns(nested)] == ["per-lane value of key", "modified in loop"]
    assert is_unknown(nested) and not is_unknown(tx * 4 + bx)


def test_evaluating_an_unknown_raises():
    with pytest.raises(UnknownValue):
        (unknown("v", Origin.LOADED) + 1).evaluate({})


# ---------------------------------------------------------------- subs and evaluate


def test_subs_replaces_symbols_and_resimplifies():
    e = ((by * 16 + ty) * N + bx * 16 + tx) * 4
    lane = e.subs({"threadIdx.x": 3, "threadIdx.y": 1})
    assert lane == 64 * by * N + 4 * N + 64 * bx + 12
    assert lane.subs({"blockIdx.x": 0, "blockIdx.y": 0, "N": 1024}) == 4108


def test_subs_accepts_expressions():
    assert (tx * 4).subs({"threadIdx.x": ty + 1}) == 4 * ty + 4
    assert (tx * ty).subs({"threadIdx.x": ty, "threadIdx.y": tx}) == tx * ty
    assert (tx // 16).subs({"threadIdx.x": 16 * bx + ty}) == bx + ty // 16


def test_every_opaque_operation_is_rebuilt_by_a_substitution():
    # each module of the package registers the constructors of its terms (expressions.REBUILD);
    # one it forgot would fail here, at `subs`
    a, b, c = sym("a"), sym("b"), sym("c")
    made = {
        "/": a // b,
        "%": a % b,
        "<<": a << b,
        ">>": a >> b,
        "&": a & b,
        "|": a | b,
        "^": a ^ b,
        "min": minimum(a, b),
        "max": maximum(a, b),
        "select": select(c, a, b),
        "<": compare("<", a, b),
        "<=": compare("<=", a, b),
        "==": compare("==", a, b),
        "!=": compare("!=", a, b),
        "&&": logical_and(a, b),
        "||": logical_or(a, b),
    }
    env = {"a": 13, "b": 3, "c": 0}
    for op, e in made.items():
        assert e.subs(env) == e.evaluate(env), op
        assert e.subs({"a": 6}).evaluate(env | {"a": 6}) == e.evaluate(env | {"a": 6}), op


def test_subs_with_unrelated_names_returns_the_same_object():
    e = tx * 4 + 1
    assert e.subs({"blockIdx.x": 3}) is e


def test_evaluate_uses_c_semantics():
    e = (tx * 4 + bx * 128 + 3) // 8
    assert at(e, tx=5, bx=1) == (5 * 4 + 128 + 3) // 8
    assert at(tx % N, tx=17, N=5) == 2
    assert at(floordiv(tx - 20, N), tx=3, N=2) == -8  # (3-20)/2 == -17/2 == -8 in C


def test_evaluate_reports_a_missing_symbol():
    with pytest.raises(UnboundSymbol) as info:
        (tx + N).evaluate({"threadIdx.x": 1})
    assert info.value.args[0] == "N"
    assert isinstance(info.value, KeyError)


# ---------------------------------------------------------------- affine_in, residues, gcd


def test_affine_in_splits_thread_coefficients_from_the_rest():
    e = (128 * by + 32 * ty + tx) * 4 + 8
    assert affine_in(e, THREAD) == ((4, 128, 0), 512 * by + 8)


def test_affine_in_with_no_thread_terms():
    assert affine_in(bx * 64 + 3, THREAD) == ((0, 0, 0), bx * 64 + 3)


def test_affine_in_needs_integer_coefficients():
    e = ((by * 16 + ty) * N + bx * 16 + tx) * 4
    assert affine_in(e, THREAD) is None  # threadIdx.y is multiplied by N
    assert affine_in(e.subs({"N": 1024}), THREAD) == ((4, 4096, 0), 65536 * by + 64 * bx)


def test_affine_in_is_none_for_nonlinear_or_opaque_uses():
    assert affine_in(tx * tx, ["threadIdx.x"]) is None
    assert affine_in((tx // 16) * 17, ["threadIdx.x"]) is None
    assert affine_in(tx + (bx ^ ty), THREAD) is None


def test_residues_of_a_constant_offset_on_a_multiple_of_the_modulus():
    assert residues(4 * bx * 32 + 8, 32) == {8}


def test_residues_use_the_gcd_of_the_coefficients():
    assert residues(4 * N + 8, 32) == frozenset(range(0, 32, 4))
    assert residues(6 * N + 1, 4) == {1, 3}
    assert residues(N + 5, 32) == frozenset(range(32))
    assert residues(const(-1), 32) == {31}


def test_coefficient_gcd():
    assert coefficient_gcd(128 * by + 32 * ty + 8) == 32
    assert coefficient_gcd(6 * N - 9 * tx + 1) == 3
    assert coefficient_gcd(const(12)) == 0


def test_bounds_of_bounded_terms():
    assert bounds(tx % 32) == (0, 31)
    assert bounds(4 * (tx % 8) + 3) == (3, 31)
    assert bounds(tx + 1) == (1, None)
    assert bounds(compare("<", tx, N)) == (0, 1)


# ---------------------------------------------------------------- text


def test_str_is_c_like_with_thread_terms_first_and_the_constant_last():
    assert str(bx * 128 + 3 + tx * 4) == "threadIdx.x*4 + blockIdx.x*128 + 3"
    assert str((tx // 16) * 17) == "(threadIdx.x / 16)*17"
    assert str(tx // 16) == "threadIdx.x / 16"
    assert str((tx + 3) // N) == "(threadIdx.x + 3) / N"
    assert str(tx - 1) == "threadIdx.x - 1"
    assert str(-tx) == "-threadIdx.x"
    assert str(const(0)) == "0"


def test_str_of_opaque_terms():
    assert str(tx ^ ty) == "threadIdx.x ^ threadIdx.y"
    assert str((tx ^ ty) * 4) == "(threadIdx.x ^ threadIdx.y)*4"
    assert str(compare("<", tx, 16)) == "threadIdx.x < 16"
    assert str(select(compare("<", tx, 16), tx, 0)) == "(threadIdx.x < 16) ? threadIdx.x : 0"
    assert str(minimum(tx, N) + 1) == "min(threadIdx.x, N) + 1"


def test_str_is_deterministic():
    e = (tx ^ N) * (ty % M) + unknown("v", Origin.LOADED) * bdx
    assert str(e) == str(copy.deepcopy(e))
    assert str(e) == str(e.subs({"nothing": 1}))


# ---------------------------------------------------------------- robustness and size


def test_a_thousand_term_sum_needs_no_recursion():
    total = const(0)
    for i in range(1000):
        total = total + sym(f"v{i}") * (i + 1)
    assert coefficient_gcd(total) == 1
    assert total.evaluate({f"v{i}": 1 for i in range(1000)}) == 1000 * 1001 // 2
    assert len(str(total)) > 5000
    assert total.subs({"v0": 1}).evaluate({f"v{i}": 1 for i in range(1, 1000)}) == 500500


def test_deeply_nested_terms_are_capped_instead_of_crashing():
    e = tx
    for i in range(1000):
        e = (e ^ sym(f"v{i}")) + 1
    assert is_unknown(e)  # the deep part became an Unknown
    str(e)
    e.subs({"threadIdx.x": 1})


def test_huge_products_stay_opaque():
    a = sum((sym(f"a{i}") for i in range(20)), const(0))
    b = sum((sym(f"b{i}") for i in range(20)), const(0))
    ab = a * b
    assert len(ab.terms()) == 400  # 20 x 20 monomials: still a polynomial
    big = ab * ab  # would be 160,000 monomials
    assert len(big.terms()) == 1  # one opaque product
    env = {f"a{i}": 1 for i in range(20)} | {f"b{i}": 2 for i in range(20)}
    assert big.evaluate(env) == (20 * 40) ** 2
    assert big.subs(env) == (20 * 40) ** 2


def test_expressions_survive_pickle_and_copy():
    e = (tx ^ ty) * 4 + floordiv(bx, N) + 3
    assert pickle.loads(pickle.dumps(e)) == e
    assert copy.deepcopy(e) is e


# ---------------------------------------------------------------- property check against C


def _c_div(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def test_simplified_expressions_evaluate_like_c_for_non_negative_index_arithmetic():
    rng = random.Random(20240611)
    names = ["threadIdx.x", "threadIdx.y", "N"]
    ops = ["+", "*", "/", "%", "<<", ">>", "&", "^", "|", "min", "-"]

    def gen(depth):
        if depth == 0 or rng.random() < 0.3:
            if rng.random() < 0.5:
                n = rng.choice(names)
                return sym(n), (lambda env, n=n: env[n])
            k = rng.choice([0, 1, 2, 3, 4, 7, 8, 16, 31, 32, 33])
            return const(k), (lambda env, k=k: k)
        op = rng.choice(ops)
        (ea, fa), (eb, fb) = gen(depth - 1), gen(depth - 1)
        if op in ("/", "%", "<<", ">>") and rng.random() < 0.7:
            k = rng.choice([1, 2, 4, 8, 16, 32, 3, 6]) if op in ("/", "%") else rng.choice([0, 1, 2, 3, 4])
            eb, fb = const(k), (lambda env, k=k: k)

        def f(env, fa=fa, fb=fb, op=op):
            a, b = fa(env), fb(env)
            if a < 0 or b < 0:
                raise ArithmeticError  # outside the contract: index arithmetic is non-negative
            if (op in ("/", "%") and b == 0) or (op in ("<<", ">>") and b > 8):
                raise ArithmeticError
            return {
                "+": a + b,
                "-": a - b,
                "*": a * b,
                "&": a & b,
                "^": a ^ b,
                "|": a | b,
                "min": min(a, b),
                "<<": a << b if op == "<<" else 0,
                ">>": a >> b if op == ">>" else 0,
                "/": _c_div(a, b) if b else 0,
                "%": a - b * _c_div(a, b) if b else 0,
            }[op]

        e = {
            "+": lambda: ea + eb,
            "-": lambda: ea - eb,
            "*": lambda: ea * eb,
            "/": lambda: ea // eb,
            "%": lambda: ea % eb,
            "<<": lambda: ea << eb,
            ">>": lambda: ea >> eb,
            "&": lambda: ea & eb,
            "^": lambda: ea ^ eb,
            "|": lambda: ea | eb,
            "min": lambda: minimum(ea, eb),
        }[op]()
        return e, f

    checked = 0
    for _ in range(400):
        e, f = gen(4)
        for _ in range(6):
            env = {n: rng.choice([0, 1, 2, 5, 7, 15, 16, 17, 31, 32, 100]) for n in names}
            try:
                want = f(env)
                if want < 0:
                    continue
            except ArithmeticError:
                continue
            assert e.evaluate(env) == want, (str(e), env)
            assert e.subs({"threadIdx.x": env["threadIdx.x"]}).evaluate(env) == want, (str(e), env)
            assert e.subs(env) == want, (str(e), env)
            checked += 1
    assert checked > 500


def test_expressions_that_differ_only_in_numbers_share_one_compilation_and_keep_their_values():
    from analyzer.analysis.symbolic import compiled

    x, k = sym("threadIdx.x"), sym("k")
    compiled._COMPILED.clear()
    first = compile_values([compare("<=", x, k * -224 + 800), x * 4 + 3, None], ["k", "threadIdx.x"])
    second = compile_values([compare("<=", x, k * -224 + 672), x * 8 + 5, None], ["k", "threadIdx.x"])
    assert len(compiled._COMPILED) == 1
    assert first(1, 5) == (1, 23, None) and second(3, 5) == (0, 45, None)
    assert first.compiled == second.compiled == (True, True, False)
    with pytest.raises(ZeroDivisionError):
        compile_values([floordiv(x, k - 2)], ["k", "threadIdx.x"])(2, 1)


def test_each_number_is_a_parameter_of_its_own_so_equal_numbers_make_no_new_source():
    from analyzer.analysis.symbolic import compiled

    x, k = sym("threadIdx.x"), sym("k")
    compiled._COMPILED.clear()
    # the same shape; in the second, the bound equals the coefficient (numbers named by value
    # would have shared a parameter there, and written a second source)
    first = compile_values([compare("<=", x * 4, k + 7), x * 4 + 3], ["k", "threadIdx.x"])
    second = compile_values([compare("<=", x * 4, k + 4), x * 4 + 4], ["k", "threadIdx.x"])
    assert len(compiled._COMPILED) == 1
    assert first(1, 2) == (1, 11) and first(0, 2) == (0, 11)
    assert second(0, 1) == (1, 8) and second(0, 2) == (0, 12)


def test_written_expressions_remembered_keep_their_numbers_in_the_order_of_the_source():
    """`compiled._WRITTEN` remembers each expression's source with its numbers as fields: a
    select writes its value before its condition, whose numbers must come in that order; the
    values with the table warm equal those with it empty, and `evaluate`'s."""
    from analyzer.analysis.symbolic import compiled

    x, k = sym("threadIdx.x"), sym("k")
    chosen = select(compare("<", x * 3 + 1, k + 5), mod(x * 7 + 2, k + 9), floordiv(x * 11 + 4, 6))
    exprs = [chosen, chosen + x * 13 + 17, logical_and(compare("<=", x, 20), compare("!=", k, 2)), None]
    names = ["k", "threadIdx.x"]
    want = [
        tuple(None if e is None else e.evaluate({"k": kv, "threadIdx.x": xv}) for e in exprs)
        for kv in range(4)
        for xv in range(32)
    ]
    compiled._WRITTEN.clear()
    compiled._BY_EXPRS.clear()
    cold = compile_values(exprs, names)
    assert len(compiled._WRITTEN) > 0
    compiled._BY_EXPRS.clear()
    warm = compile_values(exprs, names)
    assert warm is not cold
    for f in (cold, warm):
        assert [f(kv, xv) for kv in range(4) for xv in range(32)] == want
        assert f.compiled == (True, True, True, False)


def test_an_expression_not_compiled_is_remembered_as_such_and_leaves_no_number_behind():
    from analyzer.analysis.symbolic import compiled

    x, k = sym("threadIdx.x"), sym("k")
    partly = x * 5 + unknown("a[i]", Origin.LOADED) * 3 + 2
    compiled._WRITTEN.clear()
    for _ in range(2):  # the table empty, then holding the expression that fails
        compiled._BY_EXPRS.clear()
        f = compile_values([x * 4 + 1, partly, k * 2 + 3], ["k", "threadIdx.x"])
        assert f(3, 2) == (9, None, 9)
        assert f.compiled == (True, False, True)


def test_a_terms_order_is_worked_out_when_first_asked_for():
    """`Term.key` (the order of atoms and of commutative arguments) is made from the
    arguments' sort keys on first use, and `atom_expr` leaves the expression's sort key to be
    made then: a term never ordered costs no key; one asked for has the key it had."""
    n, x = S.sym("n"), S.sym("threadIdx.x")
    lt = S.compare("<", x + 3, n)
    ((t,),) = tuple(lt._p)  # (`terms()` orders the monomials: it asks)
    assert t._key is None and lt._skey is None  # nothing asked yet
    assert t.key == (1, "<", ((x + 3).skey, n.skey))
    assert lt.skey == (((t.key,), 1),)
    u = S.unknown("loaded", S.Origin.LOADED)
    ((ua,),) = tuple(u._p)
    assert ua.key == (2, "loaded", ua.uid) and u._skey == (((ua.key,), 1),)
    # ordered as before: symbols, then terms by operator and arguments, then unknowns
    product = lt * u * n * S.compare("<=", x, n)
    ((atoms, coefficient),) = product.terms()
    assert coefficient == 1
    assert [a.key[:2] for a in atoms] == [(0, 4), (1, "<"), (1, "<="), (2, "loaded")]
