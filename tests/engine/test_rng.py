"""The engine's generator is fixed by the engine itself: these pins must never change."""

from collections import Counter

import pytest

from bisca.engine import DealRng


def test_splitmix64_reference_output() -> None:
    # SplitMix64 seeded with 0 (the published reference sequence).
    rng = DealRng(0)
    assert rng.next64() == 0xE220A8397B1DCDAF
    assert rng.next64() == 0x6E789E6AA1B965F4


def test_deal_streams_are_pinned() -> None:
    rng = DealRng.for_deal(42, 0)
    assert [rng.next64() for _ in range(3)] == [
        5435267632349149299,
        7523804766597586011,
        253944492032632687,
    ]
    rng = DealRng.for_deal(42, 7, 1)
    assert [rng.below(10) for _ in range(10)] == [1, 7, 6, 8, 8, 2, 8, 1, 2, 6]
    items = list(range(10))
    DealRng.for_deal(1, 2).shuffle(items)
    assert items == [2, 0, 5, 7, 8, 3, 4, 9, 1, 6]


def test_streams_differ_by_seed_deal_and_stream() -> None:
    firsts = {
        DealRng.for_deal(seed, deal, stream).next64()
        for seed in range(4)
        for deal in range(4)
        for stream in range(3)
    }
    assert len(firsts) == 48


def test_below_is_unbiased_enough() -> None:
    rng = DealRng.for_deal(7, 0)
    counts = Counter(rng.below(3) for _ in range(30_000))
    assert set(counts) == {0, 1, 2}
    assert all(9_400 < count < 10_600 for count in counts.values())


def test_copy_continues_the_same_sequence() -> None:
    rng = DealRng.for_deal(5, 5)
    rng.next64()
    twin = rng.copy()
    assert [rng.next64() for _ in range(5)] == [twin.next64() for _ in range(5)]


@pytest.mark.parametrize("bad", [0, 1 << 32, -1])
def test_below_refuses_out_of_range(bad: int) -> None:
    with pytest.raises(ValueError, match="below"):
        DealRng(1).below(bad)


def test_negative_seed_is_refused() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        DealRng.for_deal(-1, 0)


@pytest.mark.parametrize("size", [0, 1, 2, 10, 32, 40, 63, 64, 100])
def test_shuffle_is_below_step_by_step(size: int) -> None:
    # shuffle() inlines the generator for deck-sized lists: it must still be exactly the
    # textbook Fisher-Yates over below(), and leave the generator where it would.
    for seed in range(5):
        shuffled, reference = list(range(size)), list(range(size))
        rng = DealRng.for_deal(seed, size)
        step_by_step = rng.copy()
        rng.shuffle(shuffled)
        for i in range(size - 1, 0, -1):
            j = step_by_step.below(i + 1)
            reference[i], reference[j] = reference[j], reference[i]
        assert shuffled == reference
        assert rng.state == step_by_step.state


def test_shuffle_top_fixes_the_top_as_the_whole_shuffle_would() -> None:
    whole, top = list(range(40)), list(range(40))
    DealRng.for_deal(3, 1).shuffle(whole)
    rng = DealRng.for_deal(3, 1)
    rng.shuffle_top(top, 21)
    assert top[-21:] == whole[-21:]
    rest = top[:19]
    rng.shuffle_top(rest, 18)
    assert rest == whole[:19]
    with pytest.raises(ValueError):
        rng.shuffle_top(list(range(5)), 5)
