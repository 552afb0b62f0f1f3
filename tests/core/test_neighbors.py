"""Neighbour search against the O(n^2) brute force, on random and clustered data."""

import numpy as np
import pytest
from reference.naive import brute_force_neighbors

from sph_addon.core.world.neighbors import CANDIDATES, NeighborSearch, find_neighbors


def _same(x, radius):
    fast = find_neighbors(x, radius)
    slow = brute_force_neighbors(x, radius)
    assert len(fast) == len(slow)
    for i, (a, b) in enumerate(zip(fast, slow)):
        assert np.array_equal(a, b), f"particle {i}: {a} vs {b}"


@pytest.mark.parametrize("seed", [0, 1])
def test_random_points_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    _same(rng.uniform(-1, 1, (1500, 3)), 0.15)


def test_clustered_points_match_brute_force():
    # Dense clumps force rows wider than the initial width (the table must grow, not truncate).
    rng = np.random.default_rng(3)
    centers = rng.uniform(-2, 2, (6, 3))
    x = np.concatenate([c + rng.normal(0, 0.03, (250, 3)) for c in centers])
    _same(x, 0.1)


def test_a_neighbourhood_with_more_candidates_than_the_work_arrays_hold_at_first():
    # 1,200 particles within a few cells: a cell's 27 neighbours hold more than CANDIDATES, so the
    # lists' work arrays must grow mid-loop (a second clump keeps a cell with few candidates beside it).
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.normal(0, 0.04, (1200, 3)), 1.0 + rng.normal(0, 0.04, (20, 3))])
    ns = NeighborSearch(0.1)
    ns.sort(x)
    assert ns.dense
    # Each (sorted) particle's cell population, then the particles of the densest cell's 27 neighbours.
    population = np.diff(ns.cell_start)[np.searchsorted(ns.cell_start, np.arange(len(x)), "right") - 1]
    densest = ns.cell[np.argmax(population)]
    assert np.sum(np.all(np.abs(ns.cell - densest) <= 1, axis=1)) > CANDIDATES
    _same(x, 0.1)


def test_particles_on_cell_boundaries_and_negative_coordinates():
    # A lattice whose points sit exactly on cell faces (spacing = cell size / 2).
    g = np.arange(-4, 5) * 0.05
    x = np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3)
    _same(x, 0.1)


def test_sparse_scene_uses_hash_fallback_and_is_exact():
    # Two far clusters: the dense bounding grid would be huge, so the hash path runs.
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(0, 0.3, (300, 3)), 1000 + rng.uniform(0, 0.3, (300, 3))])
    ns = NeighborSearch(0.1)
    ns.sort(x)
    assert not ns.dense
    _same(x, 0.1)


def test_empty_and_single():
    assert find_neighbors(np.zeros((0, 3)), 0.1) == []
    (only,) = find_neighbors(np.zeros((1, 3)), 0.1)
    assert only.size == 0


def test_nan_rejected():
    with pytest.raises(ValueError, match="non-finite"):
        find_neighbors(np.array([[0.0, np.nan, 0.0]]), 0.1)


@pytest.mark.parametrize("layout", ["dense", "hashed"])
def test_balanced_units_cover_every_cell_and_supercell_once(layout):
    """The parallel loops' work units (``NeighborSearch.sort``): every non-empty cell in exactly one
    unit of the lists' loop; every supercell (bucket) under each colour its particles have, once; and
    the units of a colour about equal in particles (off by at most one bucket) even when the particles
    fill one corner of their bounding box, where prange's equal blocks of buckets left one thread idle."""
    rng = np.random.default_rng(3)
    dense_block = rng.uniform(0.0, 1.0, (1500, 3))
    far = rng.uniform(0.0, 1.0, (20, 3)) + (3.0 if layout == "dense" else 300.0)
    x = np.vstack([dense_block, far])
    ns = NeighborSearch(0.1)
    order = ns.sort(x)
    assert ns.dense == (layout == "dense")
    nbr, count = ns.lists(x[order], 0.1)
    start, keys = ns.cell_start, ns.key_units
    assert keys[0] == 0 and keys[-1] == len(start) - 1 and np.all(np.diff(keys) >= 0)
    bs, units, buckets = ns.bucket_start, ns.colour_units, ns.colour_buckets
    for c in range(units.shape[0]):
        mine = buckets[units[c, 0]:units[c, -1]]
        has_c = [b for b in range(len(bs) - 1) if np.any(ns.colour[bs[b]:bs[b + 1]] == c)]
        assert sorted(mine.tolist()) == has_c and len(set(mine.tolist())) == len(mine)
        held = [sum(bs[b + 1] - bs[b] for b in buckets[units[c, u]:units[c, u + 1]])
                for u in range(units.shape[1] - 1)]
        largest = max((bs[b + 1] - bs[b] for b in mine), default=0)
        assert max(held) - sum(held) / len(held) <= largest, held
    # The rows themselves are still exact.
    ref = brute_force_neighbors(x[order], 0.1)
    for i in range(0, len(x), 97):
        assert sorted(nbr[i, :count[i]].tolist()) == sorted(ref[i].tolist())
