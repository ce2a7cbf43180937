"""`Origin`: where an unknown value comes from (`expressions.unknown`), which analyses decide by."""

from __future__ import annotations

from enum import StrEnum


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
