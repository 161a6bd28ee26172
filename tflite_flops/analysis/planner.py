"""The two arena planners this package simulates, on plain ``(size, first step, last step)`` buffers.

TFLite's ``SimpleMemoryArena`` (best fit at 64-byte-aligned offsets among the buffers whose
lifetimes overlap) and TensorFlow Lite Micro's ``GreedyMemoryPlanner`` (largest first, first fit
from offset 0). Which tensors become buffers, and their lifetimes, is decided by
:mod:`~tflite_flops.analysis.memory` (TFLite) and :mod:`~tflite_flops.analysis.tflm` (TFLM).
"""
from __future__ import annotations

from bisect import bisect_right, insort
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
        self.alive: list[list[tuple[int, int, int]]] = [[] for _ in range(steps)]
        self.starts: list[list[tuple[int, int, int]]] = [[] for _ in range(steps)]
        self.start_steps: list[int] = []  # the steps where a placed buffer starts, in order
        self.latest = -1  # the last step where a placed buffer starts
        self.high = floor  # the arena size so far
        self.steps, self.alignment, self.floor = steps, alignment, floor

    def fork(self) -> "Arena":
        """An independent copy (placing into one does not change the other)."""
        other = Arena.__new__(Arena)
        other.alive = [list(at) for at in self.alive]
        other.starts = [list(at) for at in self.starts]
        other.start_steps = list(self.start_steps)
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
            here = others = alive[lo]
            if hi > lo < latest:
                first = bisect_right(start_steps, lo)
                last = bisect_right(start_steps, hi, first)
                if last > first:
                    others = here.copy()
                    for step in start_steps[first:last]:
                        others += starts[step]
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
            if not started:
                insort(start_steps, lo)
            started.append(entry)
            if hi == lo + 1:
                alive[hi].append(entry)
            elif hi > lo:
                for step in range(lo + 1, hi + 1):
                    alive[step].append(entry)
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
