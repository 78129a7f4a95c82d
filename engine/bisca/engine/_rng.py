"""The engine's own random generator: every shuffle of every game comes from here.

Why not :mod:`random`?  ``random.Random.shuffle`` is free to change its algorithm between
Python versions (it did in 3.2, and ``randrange`` changed again in 3.12), which would silently
change every recorded match's cards and break replays.  This module fixes the whole sequence
itself, with nothing but integer arithmetic whose meaning Python guarantees:

* the generator is SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
  generators", OOPSLA 2014), the 64-bit mixer also used to seed xoshiro;
* a stream for one deal is derived from ``(match seed, deal number)`` by mixing both through the
  same finaliser, so deal *k* never depends on how deals before it were played;
* ``below(n)`` draws an unbiased integer in ``[0, n)`` by rejection (Lemire's
  multiply-and-reject with 64-bit words), and ``shuffle`` is the textbook Fisher-Yates going
  down from the last position.

``tests/engine/test_rng.py`` pins the first outputs and a shuffle, so an accidental change fails.
"""

from __future__ import annotations

from collections.abc import MutableSequence
from typing import Final, TypeVar

_MASK64: Final = (1 << 64) - 1
_GOLDEN_GAMMA: Final = 0x9E3779B97F4A7C15

T = TypeVar("T")

#: ``below(n)``'s rejection threshold ``2**64 mod n`` for the small ``n`` of card decks.
_SMALL: Final = 64
_THRESHOLDS: Final = tuple(((1 << 64) - n) % n if n else 0 for n in range(_SMALL))


def _mix64(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


class DealRng:
    """SplitMix64 stream for one deal (or hand) of one match.

    Build it with :meth:`for_deal`; the engine never seeds it any other way, so the cards of a
    deal are a pure function of the match seed and the deal number.
    """

    __slots__ = ("_state",)

    def __init__(self, state: int) -> None:
        self._state = state & _MASK64

    @classmethod
    def for_deal(cls, seed: int, deal_number: int, stream: int = 0) -> DealRng:
        """The stream of deal ``deal_number`` of the match seeded with ``seed``.

        ``stream`` separates independent uses inside one deal (0 is the deal's own stream).
        """
        if seed < 0 or deal_number < 0 or stream < 0:
            raise ValueError("seed, deal number and stream must be non-negative")
        state = _mix64((seed & _MASK64) ^ _GOLDEN_GAMMA)
        state = _mix64(state ^ ((deal_number + 1) * _GOLDEN_GAMMA & _MASK64))
        state = _mix64(state ^ ((stream + 1) * 0xD1B54A32D192ED03 & _MASK64))
        return cls(state)

    def next64(self) -> int:
        """The next 64-bit output."""
        self._state = (self._state + _GOLDEN_GAMMA) & _MASK64
        return _mix64(self._state)

    def below(self, n: int) -> int:
        """An unbiased integer in ``[0, n)`` for ``1 <= n < 2**32``."""
        if not 1 <= n < 1 << 32:
            raise ValueError(f"below() takes 1 <= n < 2**32, got {n}")
        # next64() and _mix64() inlined: every deal draws through here, and each call saved
        # is a measurable share of a random playout.  The sequence is the same.
        threshold = _THRESHOLDS[n] if n < _SMALL else ((1 << 64) - n) % n
        state = self._state
        while True:
            state = (state + _GOLDEN_GAMMA) & _MASK64
            z = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
            product = (z ^ (z >> 31)) * n
            if product & _MASK64 >= threshold:
                self._state = state
                return product >> 64

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher-Yates shuffle in place."""
        self.shuffle_top(items, max(len(items) - 1, 0))

    def shuffle_top(self, items: MutableSequence[T], steps: int) -> None:
        """The first ``steps`` steps of :meth:`shuffle`: they fix the last ``steps`` positions
        of ``items`` exactly as the whole shuffle would, and the generator is left where step
        ``steps + 1`` would draw (so a pile can be shuffled lazily, as its top is taken).

        Each step is ``j = below(i + 1)`` for ``i`` from the last position down, inlined
        here: a deal is dozens of draws, and the call per card was most of its cost.
        """
        last = len(items) - 1
        if not 0 <= steps <= max(last, 0):
            raise ValueError(f"a shuffle of {len(items)} items has 0..{max(last, 0)} steps")
        if len(items) >= _SMALL:
            below = self.below
            for i in range(last, last - steps, -1):
                j = below(i + 1)
                items[i], items[j] = items[j], items[i]
            return
        thresholds = _THRESHOLDS
        state = self._state
        for i in range(last, last - steps, -1):
            n = i + 1
            threshold = thresholds[n]
            while True:
                state = (state + _GOLDEN_GAMMA) & _MASK64
                z = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
                z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
                product = (z ^ (z >> 31)) * n
                if product & _MASK64 >= threshold:
                    break
            j = product >> 64
            items[i], items[j] = items[j], items[i]
        self._state = state

    def copy(self) -> DealRng:
        return DealRng(self._state)

    @property
    def state(self) -> int:
        """The whole generator state, so a copied game continues the same sequence."""
        return self._state
