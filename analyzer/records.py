"""Record classes: what `dataclasses` makes, without its start-up cost.

``@record`` makes a class what ``@dataclass(frozen=True, slots=True)`` makes it; its options
``frozen``, ``eq``, ``slots`` and ``order`` mean what dataclasses' do (so ``@record(frozen=False,
slots=False)`` is a plain ``@dataclass``). Fields come from the annotations, bases' first;
``__init__`` takes them with their defaults (`field(default=..., default_factory=...,
metadata=...)`); there are ``__repr__``, ``__eq__``, ordering, ``__hash__`` for a frozen
record, an error on assignment to a frozen one, and pickling. `dataclasses.fields`,
`dataclasses.replace`, `dataclasses.asdict` and `dataclasses.FrozenInstanceError` work on
records as on dataclasses: they are built when first asked for.

Why not `dataclasses`: it writes each of ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
``__setattr__``, ``__delattr__``, ``__getstate__`` and ``__setstate__`` as source and runs
``exec`` on each, builds a slots class twice, and imports `inspect`. For the 120 classes on
the path of ``warplint check`` that was 60 ms of each start-up. Here only ``__init__`` is
generated (it is on the parser's hot path), and only when first looked up (`_LazyInit`): of
the 188 records that ``warplint check`` builds, a one-line kernel makes 70 and
samples/000_bank_stride4.cu 96, and the 92 to 118 ``exec`` calls saved were 45.7 M of the
528.2 M instructions of checking the one-line kernel (callgrind; ``python -c pass`` is 87.8 M).
The other methods are shared functions over the field names. ``record`` carries `typing.dataclass_transform`, so type checkers read a record's
fields and ``__init__`` as a dataclass's (mypy: 766 errors on `analyzer/` before, 246 after).

When to use which:

- ``@record`` for the data products on the path of ``warplint check FILE.cu``: the AST, IR and
  types, the analyses and their costs, findings and diagnostics, options and reports, the
  architecture table. Everything that path imports pays its class-building cost at every
  start-up, and the parser builds nodes by the hundred thousand.
- ``@dataclass`` everywhere else: the simulator (`analyzer/sim`), the PTX front end
  (`analyzer/ptx`), `show`'s pictures, the language server, tests, benchmarks and tools. There
  start-up does not count, and the standard library is what every reader knows.
- A dataclass may extend a record (the simulator's `Simulation` extends `KernelAnalysis`); a
  record extends only records (it reads its bases' fields from ``__record_fields__``).
- Unsure whether a module is on the path: ``python -X importtime -m analyzer check
  samples/000_bank_stride4.cu`` lists what it imports.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from operator import attrgetter
from types import MappingProxyType, MemberDescriptorType
from typing import Any, dataclass_transform

__all__ = ["Field", "field", "fields", "record", "replace"]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
_EMPTY: MappingProxyType = MappingProxyType({})


class Field:
    """One field: its name, its default (or default factory) and its metadata."""

    __slots__ = ("compare", "default", "default_factory", "metadata", "name", "repr")

    def __init__(
        self,
        default: Any = MISSING,
        default_factory: Callable[[], Any] | Any = MISSING,
        metadata: dict | None = None,
        repr: bool = True,
        compare: bool = True,
    ) -> None:
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.metadata = _EMPTY if not metadata else MappingProxyType(dict(metadata))
        self.repr = repr  # shown by __repr__
        self.compare = compare  # part of ==, ordering and the hash

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, default={self.default!r}, default_factory={self.default_factory!r})"


def field(
    *,
    default: Any = MISSING,
    default_factory: Callable[[], Any] | Any = MISSING,
    metadata: dict | None = None,
    repr: bool = True,
    compare: bool = True,
) -> Any:
    """A field with a default, a default factory, metadata, or left out of ``__repr__`` or
    of comparisons, as `dataclasses.field`."""
    return Field(default, default_factory, metadata, repr, compare)


def fields(obj: Any) -> tuple[Field, ...]:
    """The fields of a record class or instance, in order."""
    try:
        return obj.__record_fields__
    except AttributeError:
        raise TypeError(f"{obj!r} is not a record") from None


def replace(obj: Any, **changes: Any) -> Any:
    """A copy of `obj` with some fields changed, as `dataclasses.replace`."""
    for f in fields(obj):
        if f.name not in changes:
            changes[f.name] = getattr(obj, f.name)
    return obj.__class__(**changes)


@dataclass_transform(eq_default=True, order_default=False, frozen_default=True, field_specifiers=(field, Field))
def record(
    cls: type | None = None, *, frozen: bool = True, eq: bool = True, slots: bool = True, order: bool = False
) -> Any:
    """Make `cls` a record (see the module docstring); usable as ``@record`` or ``@record(...)``."""
    if cls is None:
        return lambda c: _build(c, frozen, eq, slots, order)
    return _build(cls, frozen, eq, slots, order)


def _build(cls: type, frozen: bool, eq: bool, slots: bool, order: bool) -> type:
    inherited: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        for f in base.__dict__.get("__record_fields__", ()):
            inherited[f.name] = f
    own: dict[str, Field] = {}
    namespace = dict(cls.__dict__)
    for name, annotation in namespace.get("__annotations__", {}).items():
        if isinstance(annotation, str) and annotation.startswith(("ClassVar", "typing.ClassVar")):
            continue
        value = namespace.pop(name, MISSING)
        f = value if isinstance(value, Field) else Field(default=value)
        if not slots and f.default is not MISSING:
            namespace[name] = f.default  # a class attribute, as dataclasses leaves it
        f.name = name
        own[name] = f
    all_fields = {**inherited, **own}
    ordered = tuple(all_fields.values())
    _check_order(cls, ordered)

    if slots:
        slotted = {s for base in cls.__mro__[1:] for s in base.__dict__.get("__slots__", ())}
        namespace["__slots__"] = tuple(n for n in own if n not in slotted)
        namespace.pop("__dict__", None)
        namespace.pop("__weakref__", None)
    namespace["__record_fields__"] = ordered
    namespace["__dataclass_fields__"] = _DataclassFields()
    namespace["__dataclass_params__"] = _Params(eq, order, frozen)  # read by a dataclass subclass
    names = tuple(f.name for f in ordered)
    namespace["__match_args__"] = names
    namespace["__record_repr__"] = tuple(f.name for f in ordered if f.repr)

    def give(attr: str, value: Any) -> None:  # what the class body defines itself wins, as in dataclasses
        if attr not in cls.__dict__:
            namespace[attr] = value

    lazy_init = _LazyInit(ordered, frozen)
    give("__init__", lazy_init)
    give("__repr__", _repr)
    namespace["_record_values"] = staticmethod(_values_getter(tuple(f.name for f in ordered if f.compare)))
    namespace["_record_state"] = staticmethod(_values_getter(names))
    if eq:
        give("__eq__", _eq)
        if "__hash__" not in cls.__dict__:
            namespace["__hash__"] = _hash if frozen else None
    if order:
        for attr, compare in _ORDER.items():
            give(attr, compare)
    if frozen:
        give("__setattr__", _frozen_setattr)
        give("__delattr__", _frozen_delattr)
        give("__getstate__", _getstate)
        give("__setstate__", _setstate)
    if not slots:
        lazy_init.home = _with_methods(cls, namespace)
        return cls
    new = type(cls)(cls.__name__, cls.__bases__, namespace)
    new.__qualname__ = cls.__qualname__
    lazy_init.home = new
    return new


def _with_methods(cls: type, namespace: dict[str, Any]) -> type:
    """`cls` itself, given what `namespace` adds (a class without slots is not built again)."""
    for attr, value in namespace.items():
        if attr not in ("__dict__", "__weakref__") and cls.__dict__.get(attr, MISSING) is not value:
            setattr(cls, attr, value)
    for name in cls.__dict__.get("__annotations__", {}):  # noqa: RUF063  (inspect costs start-up)  # defaults kept as class attributes only
        if isinstance(cls.__dict__.get(name), Field):
            delattr(cls, name)
    return cls


class _Params:
    """``__dataclass_params__``: the options, as a dataclass built on a record reads them."""

    __slots__ = ("eq", "frozen", "init", "order", "repr", "unsafe_hash")

    def __init__(self, eq: bool, order: bool, frozen: bool) -> None:
        self.init = self.repr = True
        self.unsafe_hash = False
        self.eq, self.order, self.frozen = eq, order, frozen


class _DataclassFields:
    """``__dataclass_fields__``, built on first use, so that `dataclasses.fields`, `replace`,
    `asdict` and `is_dataclass` take records for dataclasses (warplint itself does not use it)."""

    def __get__(self, obj: Any, owner: type) -> dict:
        import dataclasses

        built = {}
        for f in owner.__record_fields__:  # type: ignore[attr-defined]  # set by @record
            real: Any = dataclasses.field(
                default=dataclasses.MISSING if f.default is MISSING else f.default,
                default_factory=dataclasses.MISSING if f.default_factory is MISSING else f.default_factory,
                metadata=dict(f.metadata) or None,
                repr=f.repr,
                compare=f.compare,
            )
            real.name = f.name
            real.type = owner.__dict__.get("__annotations__", {}).get(f.name, "")  # noqa: RUF063  (as above)
            real._field_type = dataclasses._FIELD  # type: ignore[attr-defined]
            real.kw_only = False
            built[f.name] = real
        type.__setattr__(owner, "__dataclass_fields__", built)
        return built


def _values_getter(names: tuple[str, ...]) -> Callable[[Any], tuple]:
    """A function giving the tuple of a record's values of the fields `names`."""
    if len(names) > 1:
        return attrgetter(*names)
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _check_order(cls: type, ordered: tuple[Field, ...]) -> None:
    seen_default = False
    for f in ordered:
        has_default = f.default is not MISSING or f.default_factory is not MISSING
        if seen_default and not has_default:
            raise TypeError(f"{cls.__name__}: non-default field {f.name!r} follows a default field")
        seen_default = seen_default or has_default


class _LazyInit:
    """A record's ``__init__`` until it is first looked up (the first instance, `inspect`,
    ``super().__init__``, ``Cls.__init__``): then `_make_init` writes it and it replaces this
    descriptor in the record's class, so that later instances pay nothing for the laziness.
    Most records are never made in a run (see the module docstring for the counts), and
    writing an ``__init__`` is an `exec`."""

    __slots__ = ("fields", "frozen", "home")

    def __init__(self, fields: tuple[Field, ...], frozen: bool) -> None:
        self.fields, self.frozen = fields, frozen
        self.home: type = object  # the record's class, set once it is built

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        init = _make_init(self.home.__qualname__, self.fields, self.frozen, self.home)
        type.__setattr__(self.home, "__init__", init)
        return init if obj is None else init.__get__(obj, owner)


def _make_init(qualname: str, ordered: tuple[Field, ...], frozen: bool, home: type = object) -> Callable[..., None]:
    """The one generated method: ``__init__`` is on the parser's hot path, so it sets each
    slot directly, as the ``__init__`` that dataclasses writes does.

    A frozen record's slot is set through its member descriptor's bound ``__set__``
    (`_slot_setters`) rather than ``object.__setattr__`` where the instance is of `home`
    itself (``object.__setattr__`` finds that same descriptor first, so the value lands in the
    same slot). Why: ``object.__setattr__`` is called through a tuple of its arguments and
    looks the name up in the type; the descriptor's setter skips the look-up (timeit,
    2026-11-29: a two-field init 0.63 us -> 0.45 us). Measured 2026-11-29 under callgrind:
    the parse of the twenty cuda-samples files of issue 16 (preprocessed as `check -I
    cuda-samples/Common` does, in one process, 232 M of start-up included) 2.866 G -> 2.782 G
    instructions; `check` of the twenty files 12.696 G -> 12.592 G."""
    env: dict[str, Any] = {"_set": object.__setattr__, "_MISSING": MISSING, "_home": home, "_type_of": type}
    setters = _slot_setters(home, ordered) if frozen else {}
    params, body, fast = [], [], []
    for f in ordered:
        n = f.name
        if f.default_factory is not MISSING:
            env[f"_f_{n}"] = f.default_factory
            params.append(f"{n}=_MISSING")
            value = f"_f_{n}() if {n} is _MISSING else {n}"
        else:
            if f.default is not MISSING:
                env[f"_d_{n}"] = f.default
                params.append(f"{n}=_d_{n}")
            else:
                params.append(n)
            value = n
        body.append(f"  _set(self, {n!r}, {value})" if frozen else f"  self.{n} = {value}")
        if n in setters:
            env[f"_s_{n}"] = setters[n]
            fast.append(f"    _s_{n}(self, {value})")
        else:
            fast.append(f"    _set(self, {n!r}, {value})")
    if setters:  # (the slow way for an instance of a class built on the record)
        body = ["  if _type_of(self) is _home:", *fast, "    return", *body]
    source = f"def __init__(self, {', '.join(params)}):\n" + ("\n".join(body) or "  pass") + "\n"
    exec(source, env)  # noqa: S102 - the source is built from the class's own field names
    init = env["__init__"]
    init.__qualname__ = f"{qualname}.__init__"
    return init


def _slot_setters(home: type, ordered: tuple[Field, ...]) -> dict[str, Callable[[Any, Any], None]]:
    """By field name: the bound ``__set__`` of the slot that ``object.__setattr__`` on an
    instance of `home` would set (the first class of its MRO that holds the name holds a slot's
    member descriptor); a field held otherwise (or a `home` not yet built) has none."""
    setters: dict[str, Callable[[Any, Any], None]] = {}
    for f in ordered:
        for klass in home.__mro__:
            held = klass.__dict__.get(f.name, MISSING)
            if held is not MISSING:
                if type(held) is MemberDescriptorType:
                    setters[f.name] = held.__set__
                break
    return setters


def _repr(self: Any) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__record_repr__)
    return f"{self.__class__.__qualname__}({shown})"


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        return self is other or self._record_values(self) == other._record_values(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(self._record_values(self))


def _ordering(compare: Callable[[tuple, tuple], bool]) -> Callable[[Any, Any], Any]:
    """``__lt__`` and its kin: `compare` on the compared fields, as dataclasses' order=True."""

    def method(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return compare(self._record_values(self), other._record_values(other))
        return NotImplemented

    method.__name__ = f"__{compare.__name__}__"
    return method


_ORDER = {f"__{op.__name__}__": _ordering(op) for op in (operator.lt, operator.le, operator.gt, operator.ge)}


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    from dataclasses import FrozenInstanceError  # (only when it is raised: a mistake)

    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    from dataclasses import FrozenInstanceError

    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _getstate(self: Any) -> tuple:
    return self._record_state(self)


def _setstate(self: Any, state: tuple) -> None:
    for f, value in zip(self.__record_fields__, state):
        object.__setattr__(self, f.name, value)
