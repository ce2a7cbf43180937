"""The simulator's memory: one flat 64-bit address space cut into windows, one region each.

Every buffer the kernel can reach (a global pointer parameter, a `__device__`/`__constant__`
variable, a `__shared__` array, a thread-local array) gets its own window of 2**40 bytes at
`window << 40`. Pointers are then plain integers: pointer arithmetic, selects between two
arrays and casts need no special case, and the region an address lands in gives its space.
A window's base is aligned far beyond 256 bytes, so a region starts at bank 0 and on a
cache-line boundary: what `cudaMalloc` guarantees for global pointers and what the static
analysis assumes for the start of every shared array (`Architecture.address_period`).

Global buffers have no size in CUDA source, so they grow on demand ("sized from the largest
index seen") up to `MAX_GROWABLE_BYTES`; new bytes get the chosen contents (zeros, iota, or
random numbers from the seed), generated per fixed-size chunk so that the contents do not
depend on the order in which the kernel touches them. A chunk's contents are a function of
(seed, buffer number, chunk) alone, so they are made only when an access first reaches the
chunk: a kernel that reads rows far apart (a matrix of 64 MiB, eight blocks of it read) makes
those chunks, not every chunk below the highest one. Accesses outside every region are
counted, never a crash: a load gives 0 there and a store is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from analyzer.ir import types as T

WINDOW_BITS = 40
#: The reductions that `ndarray.min`, `ndarray.max` and `ndarray.all` make, called without the
#: Python function numpy wraps each in (`numpy._core._methods`): the simulator reduces a
#: block's lanes at every access, and those wrappers were 5% of `check --verify
#: samples/001_matmul_v2_coalesced.cu` (py-spy).
lowest = np.minimum.reduce
highest = np.maximum.reduce
every = np.logical_and.reduce

CHUNK_BITS = 16
CHUNK_BYTES = 1 << CHUNK_BITS  # contents are generated per chunk of this many bytes
MAX_GROWABLE_BYTES = 1 << 28  # a global buffer grows up to 256 MiB, then accesses are out of bounds
MAX_GROWN_BYTES = 1 << 28  # and all of them together up to 256 MiB (memory stays bounded)
RANDOM_INT_LIMIT = 256  # random integer contents lie in [0, 256): small enough to index a histogram
FILLS = ("zeros", "iota", "random")


def dtype_of(t: T.CType) -> np.dtype | None:
    """The numpy type that holds a C scalar or pointer; None for structs and unknown types."""
    if isinstance(t, T.PointerType):
        return _LONG
    if not isinstance(t, T.ScalarType):
        return None
    if t.is_bool:
        return _BOOL
    if t.is_float:
        return _FLOATS.get(t.size, _DOUBLE)
    return (_SIGNED if t.is_signed else _UNSIGNED).get(t.size, _LONG)


# (dtype_of runs for nearly every value the simulator makes: its answers are made once)
_BOOL, _DOUBLE, _LONG = np.dtype(np.bool_), np.dtype(np.float64), np.dtype(np.int64)
_FLOATS: dict[int, np.dtype] = {2: np.dtype(np.float16), 4: np.dtype(np.float32)}
_SIGNED: dict[int, np.dtype] = {size: np.dtype(f"i{size}") for size in (1, 2, 4, 8)}
_UNSIGNED: dict[int, np.dtype] = {size: np.dtype(f"u{size}") for size in (1, 2, 4, 8)}


def fill_scalar(t: T.CType | None) -> T.ScalarType:
    """The scalar a buffer of `t` is filled as: the type itself, a struct's first scalar field
    (float for float3), else a byte."""
    while True:
        if isinstance(t, T.ScalarType):
            return t
        if isinstance(t, T.StructType) and t.fields:
            t = t.fields[0].type
        elif isinstance(t, T.ArrayType):
            t = t.element
        else:
            return T.UCHAR


@dataclass
class Region:
    name: str
    space: str  # global shared local constant
    base: int
    limit: int  # bytes addressable from base
    fill: str  # zeros iota random
    scalar: T.ScalarType  # what the contents are made of
    seed: int
    number: int  # distinguishes the random contents of two buffers
    growable: bool = False
    stride: int = 0  # for per-block / per-thread copies: bytes from one copy to the next
    extent: int = 0  # bytes of each copy that belong to the variable (the rest is out of bounds)
    data: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint8))
    touched: int = 0  # one past the highest byte accessed
    made: np.ndarray = field(default_factory=lambda: np.zeros(0, np.bool_))  # per chunk of `data`: contents made

    def ensure(self, end: int, most: int | None = None) -> None:
        """Make bytes [0, end) exist: zeros until `make` gives a chunk its contents (only the
        chunks made are copied here, the others being zeros still). A growable buffer at least
        doubles (up to `most` bytes), so that one read a little further at a time costs linear
        time, not a copy of the whole buffer each time (quadratic: 8 s for 8,000 loads)."""
        if end <= len(self.data):
            return
        old = len(self.data)
        if self.growable:
            end = max(end, min(2 * old, self.limit if most is None else most))
            end = min(self.limit, -(-end // CHUNK_BYTES) * CHUNK_BYTES)
        else:
            end = self.limit
        new = np.zeros(end, np.uint8)  # (pages of zeros cost nothing until written)
        for first, stop in _runs(self.made):  # the others are zeros, never written
            span = slice(first * CHUNK_BYTES, min(stop * CHUNK_BYTES, old))
            new[span] = self.data[span]
        self.data = new
        # a growable buffer's length is a whole number of chunks (or its limit): no chunk is cut
        # short and then grown, so each chunk is made once, from the same (start, stop) as before
        made = np.zeros(-(-end // CHUNK_BYTES), np.bool_)
        made[: len(self.made)] = self.made
        self.made = made

    def make(self, first: int, end: int, offsets: np.ndarray | None = None, size: int = 1) -> None:
        """Give the chunks that bytes [first, end) reach their contents, where not made yet;
        with `offsets` (values of `size` bytes from each), only the chunks those values reach."""
        made = self.made
        lo, hi = first // CHUNK_BYTES, (end - 1) // CHUNK_BYTES
        if made[lo] if lo == hi else every(made[lo : hi + 1]):
            return  # the common case: one chunk, or one slice
        if offsets is None or hi == lo:
            chunks = np.arange(lo, hi + 1)
        else:
            chunks = offsets >> CHUNK_BITS  # (offsets are never negative here)
            if size > 1:
                chunks = np.concatenate([chunks, (offsets + (size - 1)) >> CHUNK_BITS])
            if made[chunks].all():
                return
            chunks = np.unique(chunks)
        for chunk in chunks[~made[chunks]].tolist():
            if self.fill != "zeros":  # (`ensure` made them zeros)
                start = chunk * CHUNK_BYTES
                stop = min(start + CHUNK_BYTES, len(self.data))
                self.data[start:stop] = self._contents(start, stop)
            made[chunk] = True

    def _contents(self, start: int, stop: int) -> np.ndarray:
        if self.fill == "zeros":
            return np.zeros(stop - start, np.uint8)
        dt = dtype_of(self.scalar) or np.dtype(np.uint8)
        size = dt.itemsize
        first, last = start // size, -(-stop // size)
        count = last - first
        if self.fill == "iota":
            values = np.arange(first, last).astype(dt)
        else:
            rng = np.random.default_rng([self.seed, self.number, start // CHUNK_BYTES])
            if dt.kind == "f":
                values = rng.random(count).astype(dt)
            elif dt.kind == "b":
                values = rng.integers(0, 2, count).astype(dt)
            else:
                values = rng.integers(0, RANDOM_INT_LIMIT, count).astype(dt)
        raw = values.view(np.uint8)
        skip = start - first * size
        return raw[skip : skip + stop - start]

    def reset(self) -> None:
        """Fresh contents (a new block's shared and local memory)."""
        self.data = np.zeros(0, np.uint8)
        self.made = np.zeros(0, np.bool_)
        self.touched = 0


def _runs(made: np.ndarray) -> list[tuple[int, int]]:
    """The runs of consecutive chunks made, (first, one past the last): each copied in one slice
    when a buffer grows (`Region.ensure`), not chunk by chunk (001_matmul's matrices, read row
    after row: 3.6% of `check --verify samples/` went to copying chunk by chunk, py-spy)."""
    chunks = np.flatnonzero(made)
    if not len(chunks):
        return []
    breaks = np.flatnonzero(np.diff(chunks) != 1) + 1
    firsts = chunks[np.concatenate(([0], breaks))]
    lasts = chunks[np.concatenate((breaks - 1, [len(chunks) - 1]))]
    return list(zip(firsts.tolist(), (lasts + 1).tolist()))


class Memory:
    """All regions, found by the window number of an address."""

    def __init__(self, fill: str = "zeros", seed: int = 0) -> None:
        if fill not in FILLS:
            raise ValueError(f"unknown fill {fill!r}; choose one of {', '.join(FILLS)}")
        self.fill = fill
        self.seed = seed
        self.regions: dict[int, Region] = {}
        self.out_of_bounds = 0  # lane accesses outside every region
        self.grown = 0  # bytes the growable buffers hold together (at most MAX_GROWN_BYTES)

    def add(
        self,
        name: str,
        space: str,
        size: int | None,
        element: T.CType | None,
        fill: str | None = None,
        stride: int = 0,
        extent: int = 0,
    ) -> Region:
        window = len(self.regions) + 1  # window 0 stays empty: a null or garbage pointer
        growable = size is None
        region = Region(
            name,
            space,
            window << WINDOW_BITS,
            MAX_GROWABLE_BYTES if size is None else size,
            fill or self.fill,
            fill_scalar(element),
            self.seed,
            window,
            growable,
            stride,
            extent,
        )
        self.regions[window] = region
        return region

    def region_at(self, address: int) -> Region | None:
        return self.regions.get(int(address) >> WINDOW_BITS)

    def _groups(self, addrs: np.ndarray, size: int) -> list[tuple[Region | None, np.ndarray, np.ndarray]]:
        """(region, indices into addrs, offsets) per window touched; offsets checked in bounds."""
        windows = addrs >> WINDOW_BITS
        first = windows[0] if len(windows) else 0
        if len(windows) and (windows == first).all():
            parts = [(int(first), np.arange(len(addrs)))]
        else:
            parts = [(int(w), np.nonzero(windows == w)[0]) for w in np.unique(windows)]
        out: list[tuple[Region | None, np.ndarray, np.ndarray]] = []
        for w, idx in parts:
            region = self.regions.get(w)
            if region is None:
                self.out_of_bounds += len(idx)
                out.append((None, idx, idx))
                continue
            off = addrs[idx] - region.base
            ok = (off >= 0) & (off + size <= region.limit)
            if region.stride:
                ok &= off % region.stride + size <= region.extent
            if not ok.all():
                self.out_of_bounds += int((~ok).sum())
                out.append((None, idx[~ok], idx[~ok]))
                idx, off = idx[ok], off[ok]
            if len(idx) and region.growable:
                idx, off = self._within_growth(region, idx, off, size, out)
            if len(idx):
                end = int(off.max()) + size
                region.ensure(end)
                region.make(int(off.min()), end, off, size)
                region.touched = max(region.touched, end)
                out.append((region, idx, off))
        return out

    def _within_growth(
        self,
        region: Region,
        idx: np.ndarray,
        off: np.ndarray,
        size: int,
        out: list[tuple[Region | None, np.ndarray, np.ndarray]],
    ) -> tuple[np.ndarray, np.ndarray]:
        """The lanes a growable buffer can serve while all of them together stay within
        MAX_GROWN_BYTES; the others are out of bounds (added to `out`, counted)."""
        before = len(region.data)
        room = before + MAX_GROWN_BYTES - self.grown
        ok = off + size <= room
        if not ok.all():
            self.out_of_bounds += int((~ok).sum())
            out.append((None, idx[~ok], idx[~ok]))
            idx, off = idx[ok], off[ok]
        if len(idx):
            end = int(off.max()) + size
            if end > before:
                region.ensure(end, most=room)
                self.grown += len(region.data) - before
        return idx, off

    def _whole_values(self, addrs: np.ndarray, size: int) -> tuple[Region, np.ndarray] | None:
        """(region, element indices) when every address is a whole, aligned value of `size`
        bytes inside the bytes one region already holds (no stride, nothing to grow or count
        out of bounds): what `_groups` would find, told from the lowest and highest address
        alone. Most loads and stores are so, and `_groups`' per-lane masks cost an access 50 µs
        of numpy calls (`check --verify samples/`: 10,700 reads, 1.5 s of 4.3 s)."""
        if not len(addrs) or size & (size - 1):
            return None
        low, high = int(lowest(addrs)), int(highest(addrs))
        region = self.regions.get(low >> WINDOW_BITS)
        if region is None or region.stride or high >> WINDOW_BITS != low >> WINDOW_BITS:
            return None
        first, end = low - region.base, high - region.base + size
        if first < 0 or end > len(region.data) or end > region.limit or len(region.data) % size:
            return None
        # a region's base is a multiple of every size (a window), so an offset is aligned where
        # its address is: the low bits of all of them at once, one reduction
        if size > 1 and int(np.bitwise_or.reduce(addrs)) & (size - 1):
            return None
        off = addrs - region.base
        region.make(first, end, off)  # (an aligned value never crosses a chunk: chunks are whole values)
        region.touched = max(region.touched, end)
        return region, off >> (size.bit_length() - 1)

    def read(self, addrs: np.ndarray, dt: np.dtype) -> np.ndarray:
        """The values of type `dt` at each address (0 outside every region)."""
        size = dt.itemsize
        whole = self._whole_values(addrs, size)
        if whole is not None:
            return whole[0].data.view(dt)[whole[1]]
        result = np.zeros(len(addrs), dt)
        for region, idx, off in self._groups(addrs, size):
            if region is None or not len(idx):
                continue
            if not len(region.data) % size and not (off % size).any():  # aligned: one gather of whole values
                result[idx] = region.data.view(dt)[off // size]
                continue
            raw = region.data[off[:, None] + np.arange(size)]
            result[idx] = np.ascontiguousarray(raw).view(dt).reshape(len(idx))
        return result

    def write(self, addrs: np.ndarray, values: np.ndarray, dt: np.dtype) -> None:
        """Store `values` (converted to `dt`); with several lanes on one address the last wins."""
        size = dt.itemsize
        whole = self._whole_values(addrs, size)
        if whole is not None:  # numpy's assignment through repeated indices keeps the last, as below
            whole[0].data.view(dt)[whole[1]] = np.asarray(values).astype(dt)
            return
        raw = np.ascontiguousarray(np.asarray(values).astype(dt)).view(np.uint8).reshape(len(addrs), size)
        for region, idx, off in self._groups(addrs, size):
            if region is None or not len(idx):
                continue
            region.data[off[:, None] + np.arange(size)] = raw[idx]

    def buffer(self, name: str, t: T.CType) -> np.ndarray:
        """The contents of the region called `name` (a kernel parameter), as far as it was
        touched, as an array of `t`."""
        region = next(r for r in self.regions.values() if r.name == name)
        dt = dtype_of(t) or np.dtype(np.uint8)
        end = region.touched - region.touched % dt.itemsize
        if end:
            region.make(0, end)
        return region.data[:end].view(dt).copy()
