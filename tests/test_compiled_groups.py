"""Compiled lane expressions whose parts read some of the names but not all: worked out once
per values of what they read, in a group remembered by the function (`compiled._Hoist`,
`compiled._source`). Small expressions written for the test, shaped as a pyramid kernel's
(hotspot.cu): addresses that do not read a loop counter, masks that join the counter's bounds
to bounds that do not read it."""

from __future__ import annotations

import itertools

import pytest

from analyzer.analysis.symbolic import (
    compare,
    compile_values,
    compiled,
    floordiv,
    logical_and,
    select,
    sym,
)

k, b, n = sym("k"), sym("b"), sym("n")
NAMES = ["k", "b", "n"]


def _tables(function) -> list[dict]:
    """The groups' tables a compiled function keeps (the maker's cells)."""
    return [c.cell_contents for c in function.__closure__ if isinstance(c.cell_contents, dict)]


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.setattr(compiled, "_COMPILED", {})
    monkeypatch.setattr(compiled, "_BY_EXPRS", {})


def test_the_values_are_those_of_evaluate_and_each_group_holds_what_its_names_took():
    address = select(compare("<", b * 16 - n, 0), n - b * 16, b * 4 + 3)  # reads b and n, not k
    counter = compare("<", k, n)  # reads k and n
    mask = logical_and(compare("<=", k + 1, b), compare("<", b * 16 + 15, n))  # the second part: b and n
    exprs = [address, counter, mask, k * 2 + b, None]
    function = compile_values(exprs, NAMES)
    assert function.compiled == (True, True, True, True, False)
    combos = list(itertools.product(range(3), range(4), range(20, 60, 10)))
    for ck, cb, cn in combos:
        env = {"k": ck, "b": cb, "n": cn}
        assert function(ck, cb, cn) == (*(e.evaluate(env) for e in exprs[:4]), None)
    # a group for (b, n): the address and the mask's second part; (k, n): the counter; (k, b):
    # the mask's first part and the last expression
    assert sorted(len(t) for t in _tables(function)) == [3 * 4, 3 * 4, 4 * 4]
    (source,) = compiled._COMPILED
    assert source.startswith("def _maker(") and source.count(".get(") == 3


def test_a_part_that_can_divide_by_zero_is_not_taken_out_of_the_condition_that_guards_it():
    guarded = select(compare("<", k, 1), b, floordiv(n, b))  # n / b read only where k >= 1
    function = compile_values([guarded], NAMES)
    assert function(0, 0, 7) == (0,)  # b = 0: the division is skipped, as `evaluate` skips it
    with pytest.raises(ZeroDivisionError):
        function(1, 0, 7)
    assert function(1, 2, 7) == (3,)
    # the condition (k alone) taken out, the division (b and n) left where it is guarded
    assert [len(t) for t in _tables(function)] == [2]
    (source,) = compiled._COMPILED
    groups, plain = source.split(" def _f(")
    assert "_div" not in groups and "_div" in plain


def test_a_table_starts_afresh_past_its_size(monkeypatch):
    monkeypatch.setattr(compiled, "GROUP_VALUES", 2)
    function = compile_values([b * 4 + n, k + b + n], NAMES)
    for cb in range(5):
        assert function(1, cb, 10) == (cb * 4 + 10, 1 + cb + 10)
    (table,) = _tables(function)
    assert len(table) == 1 and table[(4, 10)] == (26,)


def test_the_numbers_of_a_group_are_read_by_its_own_function_not_at_each_call():
    function = compile_values([b * 4 + n, k + b + n], NAMES)
    # the group's two numbers (4 and 1, h0 and h1) are its function's; the call reads the second's three
    assert function.__code__.co_freevars == ("_g0", "k0", "k1", "k2", "t0")
    cells = dict(zip(function.__code__.co_freevars, function.__closure__))
    assert cells["_g0"].cell_contents.__code__.co_freevars == ("h0", "h1")
    assert function(2, 3, 5) == (17, 10) and function(7, 3, 5) == (17, 15)


def test_expressions_reading_every_name_or_none_stay_the_plain_lambda():
    function = compile_values([k + b + n, sym("threadIdx.x")], NAMES)
    assert function(1, 2, 3) == (6, None)
    (source,) = compiled._COMPILED
    assert source.startswith("lambda")


def test_an_expression_that_takes_nothing_out_is_written_from_the_remembered_source(monkeypatch):
    monkeypatch.setattr(compiled, "_TAKES_OUT", {})
    hoist = compiled._Hoist(NAMES)
    every = compare("<", k * 2, b + n)  # its one term reads every name: nothing taken out
    part = logical_and(compare("<", k, n), compare("<", b * 16, n))  # the second reads b and n
    guarded = compare("<", k, floordiv(b, n))  # b / n may raise: left in place
    assert [hoist.takes_out(e) for e in (every, part, guarded, k + 1)] == [False, True, False, False]
    assert {key[0]: value for key, value in compiled._TAKES_OUT.items() if key[0] in (every, part)} == {
        every: False,
        part: True,
    }
    # written without taking out, the same source and numbers as the remembered way
    anew: list[int] = []
    remembered: list[int] = []
    source = compiled._cc_expr(every, tuple(NAMES), anew, hoist)
    assert source == compiled._cc_expr(every, tuple(NAMES), remembered)
    assert source == "({}*(1 if ({}*a0) < ({}*a1+{}*a2) else 0))"
    assert anew == remembered == [1, 2, 1, 1]
    assert hoist.groups == {}
    function = compile_values([every, part], NAMES)
    assert [function(kk, bb, nn) for kk, bb, nn in itertools.product((0, 3), (0, 1), (2, 20))] == [
        (int(2 * kk < bb + nn), int(kk < nn and 16 * bb < nn))
        for kk, bb, nn in itertools.product((0, 3), (0, 1), (2, 20))
    ]


def test_a_number_is_written_as_its_field_among_expressions_and_groups():
    from analyzer.analysis.symbolic import const

    exprs = [const(4), None, k + b + n, const(0), b * 16 + n, const(-7), sym("threadIdx.x")]
    function = compile_values(exprs, NAMES)
    assert function.compiled == (True, False, True, True, True, True, False)
    assert function(1, 2, 3) == (4, None, 6, 0, 35, -7, None)
    (source,) = compiled._COMPILED
    # the numbers are fields in the order they stand, the group's named apart (h0, h1)
    assert source.endswith(" return ((k0), None, (k1*a0+k2*a1+k3*a2), (k4), g0[0], (k5), None)\n return _f\n")
    # the same shape with other numbers: the same source, the new numbers
    again = compile_values([const(9), None, k + b + n, const(2), b * 16 + n, const(5), sym("threadIdx.x")], NAMES)
    assert len(compiled._COMPILED) == 1
    assert again(1, 2, 3) == (9, None, 6, 2, 35, 5, None)


def test_an_expression_met_again_is_written_and_worked_out_once():
    again = compare("<", k + b, n)  # a walked loop's condition, the same at every lane
    varying = k * 2 + b * 4 + n
    exprs = [again, varying, again, None, again, k * 2 + b * 4 + n]
    function = compile_values(exprs, NAMES)
    assert function.compiled == (True, True, True, False, True, True)
    for ck, cb, cn in itertools.product(range(3), range(3), (1, 2)):
        env = {"k": ck, "b": cb, "n": cn}
        assert function(ck, cb, cn) == tuple(None if e is None else e.evaluate(env) for e in exprs)
    (source,) = compiled._COMPILED
    # the first of each named where it stands, the others read that name: each written once
    assert source.count(":=") == 2 and source.count("<") == 1
    assert source == (
        "lambda k0, k1, k2, k3, k4, k5, k6: lambda a0, a1, a2: ((v0 := (k0*(1 if (k1*a0+k2*a1) < (k3*a2) else 0))), "
        "(v1 := (k4*a0+k5*a1+k6*a2)), v0, None, v0, v1)"
    )


def test_an_expression_met_again_that_raises_raises_where_it_is_first_met():
    divides = floordiv(n, b)
    function = compile_values([k + b + n, divides + k, divides + k], NAMES)
    assert function(1, 2, 7) == (10, 4, 4)
    with pytest.raises(ZeroDivisionError):
        function(1, 0, 7)


def test_a_group_entry_met_again_is_read_from_the_group():
    part = b * 16 + n  # reads b and n of k, b, n: worked out in a group
    function = compile_values([part, k + b + n, part], NAMES)
    assert function(1, 2, 3) == (35, 6, 35) and function(4, 2, 3) == (35, 9, 35)
    (source,) = compiled._COMPILED
    assert ":=" not in source and source.count("g0[0]") == 2


def test_parts_compiled_one_by_one_give_the_values_flags_and_first_raise_of_the_whole():
    """`compile_parts`: the values one function of all the expressions gives, in order; the
    flags of what was compiled; where a part divides by zero, the raise (a part before it is
    worked out first, as in the whole); each part remembered on its own, so that a part met
    again with other parts is not written again."""
    addresses = [b * 4 + c for c in range(4)]
    masks = [logical_and(compare("<=", k + 1, b), compare("<", b * 16 + c, n)) for c in range(4)]
    conds = [compare("<", k, n), None, compare("<", k * 3, n + b)]
    divides = [floordiv(n, b)]
    parts = [addresses, masks, conds, divides]
    flat = [e for part in parts for e in part]
    joined = compiled.compile_parts(parts, NAMES)
    whole = compile_values(flat, NAMES)
    assert joined.compiled == whole.compiled == (*[True] * 8, True, False, True, True)
    for ck, cb, cn in itertools.product(range(3), range(1, 4), range(20, 60, 10)):
        assert joined(ck, cb, cn) == whole(ck, cb, cn)
        env = {"k": ck, "b": cb, "n": cn}
        assert joined(ck, cb, cn)[4] == masks[0].evaluate(env)
    with pytest.raises(ZeroDivisionError):
        joined(1, 0, 30)  # b = 0: the last part divides by zero, as the whole does
    with pytest.raises(ZeroDivisionError):
        whole(1, 0, 30)
    written = len(compiled._BY_EXPRS)
    other = compiled.compile_parts([[b * 8 + c for c in range(4)], masks, conds, divides], NAMES)
    assert len(compiled._BY_EXPRS) == written + 1  # only the new addresses were written
    assert other(2, 3, 40)[4:] == joined(2, 3, 40)[4:]
    assert compiled.compile_parts([[], masks], NAMES) is compiled.compile_parts([masks], NAMES)
    assert compiled.compile_parts([[k], [b], [n], [k + b], [k + n], [b + n]], NAMES)(1, 2, 3) == (1, 2, 3, 3, 4, 5)
