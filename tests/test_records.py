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
