"""Per-frame diagnostics written to the manifest's ``stats[frame]`` beside the models' own statistics.

* ``kinetic_energy_j``: Σ ½ m |v|² over every particle, J. A particle's mass is
  its material's density (the ``density`` parameter of its model, kg/m³, or
  1000 for a model that declares none) times the lattice cell spacing³.
* ``front_m``: for scenes that ask for it (the optional top-level
  ``"diagnostics": {"front": {...}}``), the leading edge of the connected liquid
  along an axis, m from the origin (:func:`surge_front`); ``null`` while no
  particle is ahead of the origin.

Light module (numpy only): the scene validation imports the declarations below.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InputError
from ..scene.params import Parameter, resolve

FRONT_PARAMETERS: tuple[Parameter, ...] = (
    Parameter("axis", "x", choices=("x", "y", "z"),
              description="Axis along which the liquid's leading edge is measured."),
    Parameter("origin", 0.0, "m", description="Coordinate on that axis the front is measured from."),
    Parameter("direction", 1, "", -1, 1,
              description="1: the front runs towards +axis; -1: towards -axis (0 is not allowed)."),
)
DIAGNOSTICS_KEYS = ("front",)


def parse_diagnostics(data: Any, where: str = "diagnostics") -> dict[str, Any]:
    """The scene's ``diagnostics`` object, validated: ``{"front": resolved FRONT_PARAMETERS}`` or ``{}``."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError(where, "expected an object")
    for key in data:
        if key not in DIAGNOSTICS_KEYS:
            raise InputError(f"{where}.{key}", f"unknown field; known fields: {', '.join(DIAGNOSTICS_KEYS)}")
    out: dict[str, Any] = {}
    if data.get("front") is not None:
        front = resolve(FRONT_PARAMETERS, data["front"], f"{where}.front")
        if front["direction"] == 0:
            raise InputError(f"{where}.front.direction", "must be 1 or -1, got 0")
        out["front"] = front
    return out


def particle_masses(densities: np.ndarray, material: np.ndarray, spacing: float) -> np.ndarray:
    """(n,) particle masses, kg: ``densities[material]`` (kg/m³ per material index) × spacing³ (m³)."""
    return np.asarray(densities, np.float64)[material] * spacing**3


def material_densities(materials) -> np.ndarray:
    """Density of each scene material, kg/m³: the parameter its model declares as its density."""
    from ..models import SOLVERS

    return np.array([SOLVERS[m.model].density_of(m.params) for m in materials], np.float64)


def kinetic_energy(v: np.ndarray, mass: np.ndarray) -> float:
    """Σ ½ m_i |v_i|², J, for (n,3) velocities (m/s) and (n,) masses (kg); 0 for no particles."""
    from ..numerics.array_kernels import kinetic_energy_sum

    if len(v) == 0:
        return 0.0
    return float(kinetic_energy_sum(np.ascontiguousarray(v, np.float64), np.ascontiguousarray(mass, np.float64)))


def surge_front(x: np.ndarray, spacing: float, axis: int = 0, origin: float = 0.0,
                direction: int = 1) -> float | None:
    """Leading edge of the connected liquid along an axis: its distance from ``origin``, m.

    The coordinates along ``axis`` are measured from ``origin`` in ``direction`` (1 or -1)
    and binned in slabs one particle ``spacing`` wide, the first starting at the origin;
    particles behind the origin are ignored. Starting at the first occupied slab, the
    front is the far edge of the last slab of that contiguous run of occupied slabs, so
    droplets detached ahead of the body (an empty slab between) do not count.

    Parameters
    ----------
    x : (n,3) positions, m.
    spacing : slab width, m (the particle spacing).
    axis : 0, 1 or 2 (x, y, z).
    origin : coordinate on ``axis`` the front is measured from, m.
    direction : 1 for the +axis side of the origin, -1 for the -axis side.

    Returns
    -------
    The front's distance from the origin, m, a multiple of ``spacing``; None when no
    particle is at or ahead of the origin (an empty world included).
    """
    if len(x) == 0:
        return None
    s = direction * (np.asarray(x)[:, axis] - origin)
    s = s[s >= 0.0]
    if len(s) == 0:
        return None
    slabs = np.unique(np.floor(s / spacing).astype(np.int64))
    gaps = np.flatnonzero(np.diff(slabs) > 1)
    last = slabs[gaps[0]] if len(gaps) else slabs[-1]
    return float((last + 1) * spacing)


def frame_diagnostics(scene, x: np.ndarray, v: np.ndarray, material: np.ndarray) -> dict[str, float | None]:
    """The diagnostics of one frame for ``FrameStats.extra``: kinetic energy, and the front if asked."""
    mass = particle_masses(material_densities(scene.materials), material, scene.particle_spacing)
    out: dict[str, float | None] = {"kinetic_energy_j": float(f"{kinetic_energy(v, mass):.6g}")}
    front = scene.diagnostics.get("front")
    if front is not None:
        f = surge_front(x, scene.particle_spacing, "xyz".index(front["axis"]), front["origin"], front["direction"])
        out["front_m"] = None if f is None else round(f, 6)
    return out
