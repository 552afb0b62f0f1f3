"""Synthetic caches for the whitewater tests: particle frames written with the cache's own writer."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from sph_addon.core.cache.cache_dir import CacheDir

S = 0.05


def lattice(lo, hi, spacing: float = S) -> np.ndarray:
    """Cubic lattice points (cell centres) of the box [lo, hi]."""
    axes = [np.arange(a, b - 1e-9, spacing) + 0.5 * spacing for a, b in zip(lo, hi)]
    return np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, 3)


def scene(whitewater: dict | None = None, **extra) -> dict:
    data = {"format": "sph_addon.scene/2", "name": "whitewater", "particle_spacing": S, "fps": 30,
            "frame_start": 1, "frame_end": 6, "materials": [{"name": "water", "preset": "water"}],
            "sources": [{"type": "box", "material": "water", "min": [0, 0, 0], "max": [1, 1, 1]}],
            "whitewater": {"enable": True, **(whitewater or {})}}
    data.update(extra)
    return data


def write_cache(root: Path, frames: dict[int, tuple[np.ndarray, np.ndarray]], scene_data: dict) -> Path:
    """A cache of ``scene_data`` whose frame f holds the liquid ``frames[f]`` = (x, v), material 0."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "scene.json").write_text(json.dumps(scene_data))
    cache = CacheDir(root)
    for f, (x, v) in frames.items():
        cache.write_particles(f, x, v, np.arange(len(x)), np.zeros(len(x), np.uint8))
    return root


def splashing_frames(n_frames: int = 6, seed: int = 0) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """A 0.5 m block of liquid whose particles move at random (2 m/s spread) and upwards (3 m/s): it emits
    spray, foam and bubbles on every frame."""
    rng = np.random.default_rng(seed)
    x = lattice((0, 0, 0), (0.5, 0.5, 0.5))
    out = {}
    for f in range(1, n_frames + 1):
        v = rng.normal(0.0, 2.0, x.shape)
        v[:, 2] += 3.0
        out[f] = (x, v)
    return out
