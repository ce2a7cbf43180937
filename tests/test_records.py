"""`analyzer.records`: records behave as the dataclasses they replace (frozen or not, slots)."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
import sys

import pytest

from analyzer.records import field, fields, record, replace


@record
class Point:
    x: int
    y: int = 0
    tags: tuple = field(default_factory=tuple)


@record
class Point3(Point):
    z: int = 0


@record(frozen=False, eq=False)
class Cell:
    value: int
    seen: list = field(default_factory=list)


@record
class Marked:
    kid: object = field(default=None, metadata={"child": True})
    name: str = "m"

    def __repr__(self) -> str:
        return f"<{self.name}>"


@dataclasses.dataclass(frozen=True, slots=True)
class PointDC:
    x: int
    y: int = 0
    tags: tuple = dataclasses.field(default_factory=tuple)


def test_fields_in_order_with_defaults_and_factories():
    assert [f.name for f in fields(Point)] == ["x", "y", "tags"]
    assert [f.name for f in fields(Point3(1))] == ["x", "y", "tags", "z"]
    p = Point(1)
    assert (p.x, p.y, p.tags) == (1, 0, ())
    assert Point(1, 2, ("a",)).tags == ("a",)
    assert Point(y=5, x=1) == Point(1, 5)


def test_a_default_factory_is_called_for_each_instance():
    a, b = Cell(1), Cell(2)
    a.seen.append(3)
    assert b.seen == []


def test_repr_and_eq_and_hash_as_a_frozen_dataclass():
    assert repr(Point(1, 2)) == repr(PointDC(1, 2)).replace("PointDC", "Point") == "Point(x=1, y=2, tags=())"
    assert Point(1, 2) == Point(1, 2) and Point(1, 2) != Point(2, 1)
    assert hash(Point(1, 2)) == hash(PointDC(1, 2)) == hash((1, 2, ()))
    assert Point(1) != Point3(1)  # another class is never equal
    assert len({Point(1), Point(1), Point(2)}) == 2


def test_frozen_records_refuse_assignment():
    p = Point(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 2  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del p.y  # type: ignore[misc]


def test_a_non_frozen_record_without_eq_compares_by_identity():
    a, b = Cell(1), Cell(1)
    a.value = 3
    assert a.value == 3 and a != b and a == a
    assert hash(a) != hash(b)


def test_slots_and_no_instance_dict():
    assert Point.__slots__ == ("x", "y", "tags")
    assert Point3.__slots__ == ("z",)
    assert not hasattr(Point(1), "__dict__")


def test_the_class_body_wins_and_metadata_is_kept():
    assert repr(Marked()) == "<m>"
    assert fields(Marked)[0].metadata["child"] is True
    assert fields(Marked)[1].metadata == {}


def test_replace_copy_and_pickle():
    p = Point3(1, 2, ("t",), 4)
    assert replace(p, z=9) == Point3(1, 2, ("t",), 9)
    assert copy.copy(p) == p and copy.deepcopy(p) == p
    assert pickle.loads(pickle.dumps(p)) == p
    c = pickle.loads(pickle.dumps(Cell(5, [1])))
    assert (c.value, c.seen) == (5, [1])


def test_a_field_without_default_after_one_with_is_an_error():
    with pytest.raises(TypeError, match="non-default field 'b' follows a default field"):

        @record
        class Bad:
            a: int = 0
            b: int


def test_fields_of_something_else_is_a_type_error():
    with pytest.raises(TypeError, match="is not a record"):
        fields(3)


@record(frozen=False, slots=False)
class Plain:
    a: int
    items: list = field(default_factory=list)
    b: int = 2


@record(order=True)
class Ordered:
    line: int
    col: int


def test_a_plain_mutable_record_is_unhashable_and_keeps_its_defaults_as_class_attributes():
    p = Plain(1)
    p.extra = "allowed without slots"  # type: ignore[attr-defined]
    assert p == Plain(1) and Plain.b == 2 and "items" not in Plain.__dict__
    with pytest.raises(TypeError):
        hash(p)


def test_order_compares_field_by_field():
    assert Ordered(1, 9) < Ordered(2, 0) <= Ordered(2, 0) < Ordered(2, 1)
    assert sorted([Ordered(3, 1), Ordered(1, 2), Ordered(1, 1)]) == [Ordered(1, 1), Ordered(1, 2), Ordered(3, 1)]


def test_dataclasses_functions_take_records():
    p = Point3(1, 2, ("t",), 4)
    assert dataclasses.is_dataclass(p)
    assert [f.name for f in dataclasses.fields(p)] == ["x", "y", "tags", "z"]
    assert dataclasses.replace(p, x=5) == Point3(5, 2, ("t",), 4)
    assert dataclasses.asdict(Plain(1)) == {"a": 1, "items": [], "b": 2}
    assert dataclasses.fields(Marked)[0].metadata["child"] is True
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 0  # type: ignore[misc]


@record(frozen=False, slots=False)
class WithCache:
    key: int
    cache: dict = field(default_factory=dict, repr=False, compare=False)


def test_fields_left_out_of_repr_and_comparison():
    a, b = WithCache(1), WithCache(1, {"x": 1})
    assert a == b and repr(b) == "WithCache(key=1)"
    assert dataclasses.replace(b, key=2).cache == {"x": 1}


def test_a_dataclass_may_extend_a_record():
    @dataclasses.dataclass
    class Extended(Plain):
        c: int = 3

    kinds = {p.kind for p in inspect.signature(Extended).parameters.values()}
    assert kinds == {inspect.Parameter.POSITIONAL_OR_KEYWORD}  # the record's fields are not keyword-only
    e = Extended(1, [], 2, 4)
    assert (e.a, e.b, e.c) == (1, 2, 4) and [f.name for f in dataclasses.fields(e)] == ["a", "items", "b", "c"]


def test_warplint_check_of_a_cuda_file_builds_no_dataclass():
    """The rule of records.py's docstring, held: the path of `warplint check FILE.cu` uses
    records, so it never imports `dataclasses` (the simulator and the PTX front end may)."""
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    probe = (
        "import sys\nfrom analyzer.cli import main\n"
        "main(['check', '--quiet', '--isolated', '--exit-zero', 'samples/000_bank_stride4.cu'])\n"
        "print('dataclasses' in sys.modules, 'inspect' in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True, check=True)
    assert done.stderr.split() == ["False", "False"], done.stderr


def test_record_is_marked_as_a_dataclass_transform_for_type_checkers():
    assert getattr(record, "__dataclass_transform__", None) is not None


def _lazy(cls: type) -> bool:
    """Whether `cls`'s ``__init__`` is still the descriptor that writes it on first use."""
    return type(cls.__dict__["__init__"]).__name__ == "_LazyInit"


def test_init_is_written_on_the_first_instance_and_then_is_a_plain_function():
    @record
    class Fresh:
        a: int
        b: int = 7
        c: list = field(default_factory=list)

    assert _lazy(Fresh)
    one = Fresh(1)
    assert not _lazy(Fresh) and Fresh.__dict__["__init__"].__qualname__.endswith("Fresh.__init__")
    assert (one.a, one.b, one.c) == (1, 7, []) and Fresh(1, c=[2]).c == [2] and Fresh(1).c is not one.c
    assert one == Fresh(1) and one != Fresh(1, 8) and Fresh(1, 2, [3]) == Fresh(1, 2, [3])
    assert repr(Fresh(2, 3, [4])).endswith("<locals>.Fresh(a=2, b=3, c=[4])")
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'a'"):
        one.a = 2  # type: ignore[misc]
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'a'"):
        Fresh()  # type: ignore[call-arg]


def test_a_subclass_made_first_leaves_its_base_lazy_and_both_take_their_own_fields():
    @record
    class Base:
        x: int
        y: int = 1

    @record
    class Child(Base):
        z: int = 2

    assert Child(5) == Child(5, 1, 2) and (Child(5).x, Child(5).y, Child(5).z) == (5, 1, 2)
    assert _lazy(Base) and not _lazy(Child)
    assert Base(3).y == 1 and not _lazy(Base)
    assert [f.name for f in fields(Child)] == ["x", "y", "z"]


def test_a_plain_subclass_calls_the_records_init_which_is_written_on_the_record():
    @record(frozen=False, slots=False)
    class Holder:
        value: int
        seen: list = field(default_factory=list)

    class Counted(Holder):
        def __init__(self, value: int) -> None:
            super().__init__(value * 2)
            self.extra = True

    class Bare(Holder):
        pass

    c = Counted(3)
    assert (c.value, c.seen, c.extra) == (6, [], True)
    assert "__init__" not in Bare.__dict__ and Bare(4).value == 4 and not _lazy(Holder)


def test_a_lazy_init_has_the_fields_signature_and_an_init_in_the_body_is_kept():
    @record
    class Sig:
        a: int
        b: str = "s"

    assert list(inspect.signature(Sig).parameters) == ["a", "b"] and not _lazy(Sig)

    @record
    class Own:
        a: int

        def __init__(self, a: int) -> None:
            object.__setattr__(self, "a", a + 1)

    assert Own(1).a == 2 and not _lazy(Own)


@record
class Never:  # made by no test but the one below, and by it only without __init__ at first
    a: int
    b: tuple = ()


def test_records_never_made_pickle_copy_and_replace_as_before():
    made = Never.__new__(Never)
    made.__setstate__((1, (2,)))
    assert _lazy(Never)  # unpickling and __setstate__ do not call __init__
    back = pickle.loads(pickle.dumps(made))
    assert _lazy(Never) and (back.a, back.b) == (1, (2,))
    assert copy.deepcopy(made) == back and hash(back) == hash((1, (2,))) and _lazy(Never)
    assert replace(made, b=(3,)) == dataclasses.replace(made, b=(3,)) == Never(1, (3,)) and not _lazy(Never)


def test_a_dataclass_extending_a_lazy_record_writes_its_own_init():
    @record(frozen=False, slots=False)
    class Lazy:
        a: int

    @dataclasses.dataclass
    class Ext(Lazy):
        b: int = 2

    assert (Ext(1).a, Ext(1).b) == (1, 2) and _lazy(Lazy)


def test_frozen_init_sets_slots_through_their_descriptors():
    """A frozen slots record's `__init__` sets each field through its slot's setter (`_slot_setters`),
    base records' fields too; the values and the frozen error are as through `object.__setattr__`."""
    from analyzer.records import _slot_setters

    assert set(_slot_setters(Point3, fields(Point3))) == {"x", "y", "tags", "z"}
    assert "value" in _slot_setters(Cell, fields(Cell))  # (not frozen: its init sets `self.value = ` all the same)
    p = Point3(1, 2, ("a",), 3)
    assert {"_s_x", "_s_z"} <= set(Point3.__init__.__code__.co_names)  # the setters are what it calls
    assert "_s_value" not in Cell.__init__.__code__.co_names
    assert (p.x, p.y, p.tags, p.z) == (1, 2, ("a",), 3)
    assert Point3(4).tags == () and Point3(4) == Point3(4, 0, (), 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 5  # type: ignore[misc]


def test_frozen_init_of_a_class_built_on_a_record_goes_the_slow_way():
    """An instance of a plain class built on a frozen record is set by `object.__setattr__`, which
    finds what that class puts in front of the slot (here a property, whose setter runs)."""
    seen: list[int] = []

    class Shadowed(Point):
        @property
        def x(self) -> int:
            return seen[-1]

        @x.setter
        def x(self, value: int) -> None:
            seen.append(value)

        def __setattr__(self, name: str, value: object) -> None:  # (not frozen, as a subclass may be)
            object.__setattr__(self, name, value)

    s = Shadowed(7, 8)
    assert seen == [7] and s.x == 7 and s.y == 8
    assert Point(7, 8).x == 7 and seen == [7]  # the record's own instances: the slot itself
