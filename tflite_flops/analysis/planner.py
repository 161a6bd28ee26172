"""The two arena planners this package simulates, on plain ``(size, first step, last step)`` buffers.

TFLite's ``SimpleMemoryArena`` (best fit at 64-byte-aligned offsets among the buffers whose
lifetimes overlap) and TensorFlow Lite Micro's ``GreedyMemoryPlanner`` (largest first, first fit
from offset 0). Which tensors become buffers, and their lifetimes, is decided by
:mod:`~tflite_flops.analysis.memory` (TFLite) and :mod:`~tflite_flops.analysis.tflm` (TFLM).
"""
from __future__ import annotations

from operator import itemgetter
from typing import Iterable, Sequence

TFLITE_ALIGNMENT = 64  # kDefaultTensorAlignment (tflite/util.h) and kDefaultArenaAlignment
TFLM_ALIGNMENT = 16  # MicroArenaBufferAlignment()

def align(n: int, alignment: int) -> int:
    """``n`` rounded up to a multiple of ``alignment``."""
    return -(-n // alignment) * alignment


def place_buffers(buffers: Iterable[tuple[int, int, int]], steps: int, alignment: int = 0,
                  floor: int = 0) -> tuple[list[int], int]:
    """Offsets of ``(size, first step, last step)`` buffers placed in the given order, and the arena size.

    Each buffer is compared only with the placed buffers alive at some step of its own lifetime
    (lifetimes are inclusive). ``alignment`` > 0: TFLite's ``SimpleMemoryArena::Allocate``, the
    smallest gap that fits at an aligned offset, else the aligned end of the overlapping buffers.
    ``alignment`` 0: TFLM's ``GreedyMemoryPlanner``, the first gap from offset 0 that fits.
    ``floor``: the end of buffers placed before, end to end from offset 0 and alive at every step
    (TFLite's whole-run buffers, which every other buffer overlaps): a buffer with a lifetime is
    searched a place from there on instead of from 0, since no gap among them fits one with bytes.
    The arena size counts them.
    """
    arena = Arena(steps, alignment, floor)
    return arena.place(buffers), arena.high


class Arena:
    """The buffers placed so far by :func:`place_buffers`' rule (its arguments), which more buffers can
    join (:meth:`place`); :meth:`fork` copies it, so that two plans sharing their first buffers (TFLM's
    head with and without the kernels' scratch) place those once."""

    __slots__ = ("alive", "starts", "start_steps", "latest", "high", "steps", "alignment", "floor")

    def __init__(self, steps: int, alignment: int = 0, floor: int = 0) -> None:
        # (offset, end, first step) of the placed buffers alive at each step, and of those that start at each step
        # (None until one is: a step's list is made when a buffer first joins it, not one per step up front)
        self.alive: list[list[tuple[int, int, int]] | None] = [None] * steps
        self.starts: list[list[tuple[int, int, int]] | None] = [None] * steps
        # 1 at the steps where a placed buffer starts: found by bytearray.find (memchr), where a sorted list of
        # the steps cost a memmove per insertion (quadratic: seconds on a 100,000-op chain)
        self.start_steps = bytearray(steps)
        self.latest = -1  # the last step where a placed buffer starts
        self.high = floor  # the arena size so far
        self.steps, self.alignment, self.floor = steps, alignment, floor

    def fork(self) -> "Arena":
        """An independent copy (placing into one does not change the other)."""
        other = Arena.__new__(Arena)
        other.alive = [None if at is None else list(at) for at in self.alive]
        other.starts = [None if at is None else list(at) for at in self.starts]
        other.start_steps = bytearray(self.start_steps)
        other.latest, other.high, other.steps, other.alignment, other.floor = (
            self.latest, self.high, self.steps, self.alignment, self.floor)
        return other

    def place(self, buffers: Iterable[tuple[int, int, int]]) -> list[int]:
        """Place ``buffers`` in order after those placed before; their offsets (:attr:`high`: the arena size)."""
        alive, starts, start_steps, latest, high, alignment, floor = (
            self.alive, self.starts, self.start_steps, self.latest, self.high, self.alignment, self.floor)
        offsets: list[int] = []
        append = offsets.append
        base = -(-floor // alignment) * alignment if alignment else floor  # the first offset above the floor
        for size, lo, hi in buffers:
            if hi < lo:  # a tensor read before it is written in a malformed graph: it overlaps nothing
                append(0)
                if size > high:
                    high = size
                continue
            # A placed buffer overlaps [lo, hi] when it is alive at lo or starts within (lo, hi]: two
            # disjoint sets, so no buffer is seen twice. Only the steps where some buffer starts are visited.
            here = alive[lo]
            if here is None:
                here = alive[lo] = []
            others = here
            if hi > lo < latest:
                step = start_steps.find(1, lo + 1, hi + 1)
                if step >= 0:
                    others = here.copy()
                    while step >= 0:
                        others += starts[step]
                        step = start_steps.find(1, step + 1, hi + 1)
            others.sort()  # (a step's own list is sorted in place: the order of its buffers does not matter)
            if alignment:
                best = best_gap = -1
                current, start = floor, base  # start: current rounded up to the alignment
                for offset, end, _ in others:
                    if start + size <= offset and (best_gap < 0 or offset - start < best_gap):
                        best, best_gap = start, offset - current
                        if best_gap == 0:
                            break
                    if end > current:
                        current = end
                        start = -(-end // alignment) * alignment
                at = best if best >= 0 else start
            else:
                at = floor
                for offset, end, _ in others:
                    if offset - at >= size:
                        break
                    if end > at:
                        at = end
            end = at + size
            entry = (at, end, lo)
            here.append(entry)
            started = starts[lo]
            if started is None:
                starts[lo] = [entry]
                start_steps[lo] = 1
            else:
                started.append(entry)
            if hi > lo:
                for step in range(lo + 1, hi + 1):
                    at_step = alive[step]
                    if at_step is None:
                        alive[step] = [entry]
                    else:
                        at_step.append(entry)
            if lo > latest:
                latest = lo
            if end > high:
                high = end
            append(at)
        self.latest, self.high = latest, high
        return offsets


def greedy_plan(buffers: Sequence[tuple[int, int, int]], steps: int | None = None) -> int:
    """GreedyMemoryPlanner's arena size for ``(size, first_used, last_used)`` buffers in the order they
    are added: largest first, equal sizes in the reverse of that order (:func:`greedy_order`), each at
    the first gap from offset 0 among the buffers alive at the same time.

    Lifetimes are time steps from -1 (TFLM's "never used") to ``steps - 2``.
    """
    if steps is None:
        steps = max((b[2] for b in buffers), default=0) + 2
    shifted = [(size, first + 1, last + 1) for size, first, last in buffers]  # -1 ("never used") -> step 0
    return first_fit_arena(greedy_order(shifted), steps)


def greedy_order(buffers: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """``GreedyMemoryPlanner::CalculateOffsetsIfNeeded``'s order of the buffers added to it (in place):
    it lists the online-planned buffers from the end of its array backwards, then bubble-sorts them by
    size, largest first, swapping only strictly smaller ones: equal sizes keep the reversed order."""
    buffers.reverse()
    buffers.sort(key=itemgetter(0), reverse=True)  # stable
    return buffers


def first_fit_arena(buffers: Sequence[tuple[int, int, int]], steps: int) -> int:
    """The arena size of :func:`place_buffers` (alignment 0, first fit) for buffers ordered largest first,
    with lifetimes shifted so that step 0 is TFLM's "never used".

    TFLM plans the tensors no op uses as well (those of a multi-signature model's other signatures:
    thousands in an LLM), all with the lifetime "never used". When no other buffer is alive at that
    step, they overlap one another and nothing else, so first fit stacks them end to end: their
    arena is their sum, found without comparing each with all the others placed before it.
    """
    if all(lo > 0 or hi == 0 for _, lo, hi in buffers):
        unused = sum([size for size, lo, hi in buffers if lo == hi == 0])
        rest = [b for b in buffers if not b[1] == b[2] == 0]
        return max(place_buffers(rest, steps)[1], unused)
    return place_buffers(buffers, steps)[1]


def first_fit_arenas(first: Sequence[tuple[int, int, int]], second: Sequence[tuple[int, int, int]], steps: int
                     ) -> tuple[int, int]:
    """``(first_fit_arena(first, steps), first_fit_arena(second, steps))``, the buffers the two orders
    begin with placed once (first fit places a buffer by those before it alone): TFLM's head with and
    without the kernels' scratch buffers, which come after every larger tensor in the planner's order."""
    plans = []
    for buffers in (first, second):
        if all(lo > 0 or hi == 0 for _, lo, hi in buffers):  # first_fit_arena's shortcut for never-used buffers
            plans.append((sum([size for size, lo, hi in buffers if lo == hi == 0]),
                          [b for b in buffers if not b[1] == b[2] == 0]))
        else:
            plans.append((0, list(buffers)))
    (unused_a, a), (unused_b, b) = plans
    shared = 0
    for x, y in zip(a, b):
        if x != y:
            break
        shared += 1
    arena = Arena(steps)
    arena.place(a[:shared])
    high_a = arena.high
    if shared < len(a):  # the first order goes on apart: a copy, the shared buffers' placement kept
        rest = arena.fork()
        rest.place(a[shared:])
        high_a = rest.high
    arena.place(b[shared:])
    return max(high_a, unused_a), max(arena.high, unused_b)


# LiteRT's ArenaPlanner lists a run's tensors node by node, each node's from a std::unordered_set<int>
# (nodes_to_tensors_), and orders them with std::sort: tensors of equal size allocated at the same
# node keep the order these two leave them in. Both are simulated as GNU libstdc++ implements them.
_FAST_BUCKETS = (2, 2, 2, 3, 5, 5, 7, 7, 11, 11, 11, 11, 13, 13)  # _Prime_rehash_policy::_M_next_bkt
_PRIMES = (17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 103, 109, 113, 127, 137,
           139, 149, 157, 167, 179, 193, 199, 211, 227, 241, 257, 277, 293, 313, 337, 359, 383, 409, 439, 467,
           503, 541, 577, 619, 661, 709, 761, 823, 887, 953, 1031, 1109, 1193, 1289, 1381, 1493, 1613, 1741,
           1879, 2029, 2179, 2357, 2549, 2753, 2971, 3209, 3469, 3739, 4027, 4349, 4703, 5087, 5503, 5953,
           6427, 6949, 7517, 8123, 8783, 9497, 10273, 11113, 12011, 12983, 14033, 15173, 16411, 17749)


def unordered_set_order(keys: Iterable[int]) -> list[int]:
    """The iteration order of a ``std::unordered_set<int>`` (libstdc++) after inserting ``keys`` in
    order: one forward list, each key put at the head of its bucket's run of keys, or at the front of
    the list when its bucket is empty; the buckets a prime count, grown as the load passes 1."""
    order: list[int] = []
    seen: set[int] = set()
    buckets, next_resize = 1, 0
    for key in keys:
        if key in seen:
            continue
        count = len(order)
        if count + 1 > next_resize:
            wanted = max(count + 1, 0 if next_resize else 11)
            if wanted >= buckets:
                n = max(wanted + 1, 2 * buckets)
                buckets = _FAST_BUCKETS[n] if n < len(_FAST_BUCKETS) else next(
                    (p for p in _PRIMES if p >= n), n | 1)
                next_resize = buckets
                old, order = order, []
                for k in old:  # _M_rehash: the list walked in order, each key re-inserted
                    _insert(order, k, buckets)
            else:
                next_resize = buckets
        _insert(order, key, buckets)
        seen.add(key)
    return order


def _insert(order: list[int], key: int, buckets: int) -> None:
    bucket = key % buckets
    for i, k in enumerate(order):
        if k % buckets == bucket:
            order.insert(i, key)
            return
    order.insert(0, key)


def std_sort(items: list, key) -> list:
    """``items`` ordered by ``key`` as libstdc++'s ``std::sort`` orders them (introsort: median-of-three
    quicksort down to runs of 16, heapsort past the depth limit, then insertion sort), comparing
    ``key(a) < key(b)``: the order items of equal keys end in is that algorithm's, not a stable one's."""
    n = len(items)
    if n > 1:
        pairs = [(key(item), item) for item in items]
        _introsort(pairs, 0, n, 2 * (n.bit_length() - 1))
        _insertion_sort(pairs, 0, n)
        items[:] = [item for _, item in pairs]
    return items


def _introsort(a: list, first: int, last: int, depth: int) -> None:
    while last - first > 16:
        if depth == 0:  # std::partial_sort (heapsort): rare; its order of equal keys is not simulated
            a[first:last] = sorted(a[first:last], key=itemgetter(0))
            return
        depth -= 1
        mid = first + (last - first) // 2
        x, y, z = a[first + 1][0], a[mid][0], a[last - 1][0]  # __move_median_to_first
        if x < y:
            m = mid if y < z else last - 1 if x < z else first + 1
        else:
            m = first + 1 if x < z else last - 1 if y < z else mid
        a[first], a[m] = a[m], a[first]
        lo, hi = first + 1, last  # __unguarded_partition around a[first]
        pivot = a[first][0]
        while True:
            while a[lo][0] < pivot:
                lo += 1
            hi -= 1
            while pivot < a[hi][0]:
                hi -= 1
            if not lo < hi:
                break
            a[lo], a[hi] = a[hi], a[lo]
            lo += 1
        _introsort(a, lo, last, depth)
        last = lo


def _insertion_sort(a: list, first: int, last: int) -> None:
    for i in range(first + 1, last):
        value = a[i]
        k = value[0]
        j = i
        while j > first and k < a[j - 1][0]:
            a[j] = a[j - 1]
            j -= 1
        a[j] = value


def litert_ranks(nodes: Sequence[Sequence[int]], stops: Sequence[int],
                 keys: dict[int, tuple[bool, int, int]]) -> dict[int, int]:
    """Each tensor's position in ArenaPlanner's allocation order within its run of nodes (the runs
    end at ``stops``): ``GetTensorsToAllocate`` lists a run's tensors node by node, each node's
    ``nodes_to_tensors_`` set (``nodes``: its keys in insertion order) in ``unordered_set`` order,
    and ``CreateTensorAllocationVector`` sorts the planned ones (``keys``: tensor -> (alive the whole
    run, bytes, allocating node)) with ``std::sort``: whole-run ones first by index, then the larger
    first, then the earlier allocated; ties as the sort leaves them."""
    rank: dict[int, int] = {}
    start = 0
    for stop in stops:
        listed = [t for i in range(start, min(stop, len(nodes) - 1) + 1) for t in unordered_set_order(nodes[i])
                  if t in keys]
        start = stop + 1

        def order(t: int) -> tuple[int, int, int]:  # whole-run first by index, then larger, then earlier
            whole, size, first = keys[t]
            return (0, t, 0) if whole else (1, -size, first)

        rank.update((t, position) for position, t in enumerate(std_sort(listed, order)))
    return rank


def litert_order(rest: list, outputs: Sequence[Sequence[int]], entry: Sequence[int],
                 temporaries: Sequence[tuple[int, int, bool]], count: int, stops: Sequence[int],
                 others: dict[int, tuple[bool, int, int]]) -> list:
    """The memory pass's arena buffers ``rest`` (``(run, -bytes, first op, tensor, bytes, ...)``,
    sorted) with their ties in ArenaPlanner's order (:func:`litert_ranks`): each node lists its
    outputs (``outputs``; node 0 the variables and inputs first, ``entry``), then the temporaries its
    Prepare added (``temporaries``: ``(op, bytes, persistent)``, numbered from ``count`` on); ``others``:
    the tensors sorted with them (whole-run, persistent, shared) as :func:`litert_ranks` keys them."""
    nodes = [[*(entry if i == 0 else ()), *outs] for i, outs in enumerate(outputs)]
    keys = dict(others)
    for k, (op, size, persistent) in enumerate(temporaries, count):
        nodes[op].append(k)
        if persistent and size:
            keys[k] = (False, size, op)
    keys.update((e[3], (False, e[4], e[2])) for e in rest)
    rank = litert_ranks(nodes, [*stops, len(nodes) - 1], keys)
    return sorted(rest, key=lambda e: (e[0], rank.get(e[3], -1), e[1:]))
