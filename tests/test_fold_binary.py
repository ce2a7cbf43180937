"""`fold_binary`: two constants folded with C's semantics (lowering and the host interpreter)."""

from __future__ import annotations

import pytest

from analyzer.ir.lower_scopes import fold_binary


@pytest.mark.parametrize(
    ("op", "a", "b", "value"),
    [
        ("+", 7, 2, 9),
        ("-", 7, 9, -2),
        ("*", -3, 4, -12),
        ("/", 7, 2, 3),
        ("/", -7, 2, -3),  # toward zero, not floor
        ("/", 7, -2, -3),
        ("/", 7.0, 2, 3.5),
        ("%", -7, 2, -1),  # the dividend's sign
        ("%", 7, -2, 1),
        ("<<", 1, 4, 16),
        (">>", -16, 2, -4),
        ("&", 12, 10, 8),
        ("|", 12, 10, 14),
        ("^", 12, 10, 6),
        ("<", 1, 2, 1),
        ("<=", 2, 2, 1),
        (">", 1, 2, 0),
        (">=", 1, 2, 0),
        ("==", 3, 3.0, 1),
        ("!=", 3, 4, 1),
        ("&&", 2, 0, 0),
        ("&&", 2, -1, 1),
        ("||", 0, 0, 0),
        ("||", 0, 5, 1),
        ("<<", 2.0, 1, 4),  # the operands of a shift taken as integers
    ],
)
def test_each_operator_folds_as_c_computes_it(op, a, b, value):
    got = fold_binary(op, a, b)
    assert got == value and type(got) is type(value)


def test_what_c_leaves_undefined_raises():
    with pytest.raises(ValueError):
        fold_binary("<<", 1, 64)
    with pytest.raises(ValueError):
        fold_binary(">>", 1, -1)
    with pytest.raises(OverflowError):
        fold_binary("*", 2**62, 16)
    with pytest.raises(ZeroDivisionError):
        fold_binary("/", 1, 0)
    with pytest.raises(KeyError):
        fold_binary("<=>", 1, 2)
