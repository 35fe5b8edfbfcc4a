"""scripts/e53-trace's two analyses of a shared drop-tail queue, on made-up counts: the split of
a difference in losses into where in their runs a group's packets come and how often the
queue drops each place, and the per-seed curve that tells a difference in which packets are
lost (q) from one in what a loss costs (k)."""

from __future__ import annotations

from collections import Counter, defaultdict
from types import ModuleType

import pytest
from conftest import load_script


def load_tool() -> ModuleType:
    return load_script("e53-trace")


def by_place(copies: tuple[int, int, int], lost: tuple[int, int, int]) -> Counter:
    counts = Counter()
    for place, (c, d) in enumerate(zip(copies, lost, strict=True), start=1):
        counts[(place, "copies")] = c
        counts[(place, "lost")] = d
    return counts


def test_swapped_places_separates_the_mix_from_the_drop_rates() -> None:
    tool = load_tool()
    # Both drop 0, 1 % and 10 % of first, second and third-or-later packets; the second
    # backend sends twice as many of its packets third or later.
    few_runs = by_place((500, 400, 100), (0, 4, 10))
    more_runs = by_place((400, 400, 200), (0, 4, 20))
    measured, other_mix, other_rates = tool.swapped_places(few_runs, more_runs)
    assert measured == pytest.approx(14 / 1000)
    # With the other's mix: 0.4 * 1 % + 0.2 * 10 %.
    assert other_mix == pytest.approx(0.024)
    # The drop rates per place are the same: the mix explains the whole difference.
    assert other_rates == pytest.approx(measured)
    measured, other_mix, other_rates = tool.swapped_places(more_runs, few_runs)
    assert (measured, other_mix, other_rates) == pytest.approx((0.024, 0.014, 0.024))

    # The same mix and a queue that drops more in each place: the rates explain it all.
    harsher = by_place((500, 400, 100), (0, 8, 20))
    measured, other_mix, other_rates = tool.swapped_places(few_runs, harsher)
    assert other_mix == pytest.approx(measured)
    assert other_rates == pytest.approx(0.028)


def seed_counts(per_seed: dict[int, tuple[float, float, int, int, int, int]]) -> defaultdict:
    """Per seed: MPTCP's and TCP's goodput, then episodes and segments of MPTCP and of TCP."""
    stats = defaultdict(Counter)
    for seed, (g_m, g_t, e_m, s_m, e_t, s_t) in per_seed.items():
        stats["mptcp"][("goodput", seed)] = g_m
        stats["tcp"][("goodput", seed)] = g_t
        stats["mptcp"][("episodes", seed)] = e_m
        stats["mptcp"][("segments", seed)] = s_m
        stats["tcp"][("episodes", seed)] = e_t
        stats["tcp"][("segments", seed)] = s_t
    return stats


def test_the_loss_event_curve_per_seed() -> None:
    tool = load_tool()
    stats = seed_counts(
        {
            # MPTCP meets loss episodes four times as often per segment: on the square-root
            # curve it takes half, k = 1.
            1: (5.0, 10.0, 40, 10_000, 10, 10_000),
            # As often as TCP, and a third less: a loss costs it more, k = 2/3.
            2: (6.0, 9.0, 10, 20_000, 5, 10_000),
            # The TCP flow met no loss episode: no q.
            3: (7.0, 8.0, 3, 10_000, 0, 10_000),
        }
    )
    rows = tool.loss_event_curve(stats, 3)
    seed, ratio, mptcp, tcp, q, k = rows[0]
    assert (seed, ratio, mptcp, tcp, q, k) == pytest.approx((1, 0.5, 0.004, 0.001, 4.0, 1.0))
    assert rows[1][4:] == pytest.approx((1.0, 2 / 3))
    assert rows[2] == pytest.approx((3, 7 / 8))
