"""Scalar fields whose iso-surface is the liquid's surface.

References
----------
Clavet, S. (2005). *Animation de fluides viscoélastiques à base de particules*.
M.Sc. thesis, Université de Montréal, section 7.2, eq. 7.1.

Desbrun, M. and Cani(-Gascuel), M.-P. (1996). *Smoothed Particles: A new
paradigm for animating highly deformable bodies*. Eurographics Workshop on
Computer Animation and Simulation, section 3.2 (the anti-clustering kernel)
and section 4.2 (the iso-density 2 W_h(h)).

A field is a pair of njit functions:

- ``weight(q)``: the contribution of one particle at normalised distance
  ``q = r / support`` in [0, 1) (zero beyond the support);
- ``finish(s)``: maps the sum of weights at a grid point to the field value.

Deviation from STYLE.md convention 5 (pass njit functions into drivers): numba
cannot cache a kernel that takes functions as arguments, so every process (and
every meshing worker) would pay ~6 s of compilation. The registry therefore
resolves the name once to a small integer ``kind`` and the kernels call
:func:`field_weight` / :func:`field_finish`, which dispatch on it (an integer
branch, never a string).

Both fields are dimensionless and grow towards the inside of the liquid; the
surface is the level ``field == iso``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ..numerics import config
from ..numerics.kernel_cache import njit


@njit(**config.NJIT)
def clavet_weight(q):
    """Clavet's per-particle term (1 - r/h)^2, thesis eq. 7.1.

    Parameters
    ----------
    q : float
        r / h with h the support radius (Clavet's interaction radius), in [0, 1).

    Returns
    -------
    float
        (1 - q)^2, dimensionless.
    """
    a = 1.0 - q
    return a * a


@njit(**config.NJIT)
def clavet_finish(s):
    """Square root of the summed terms, Clavet thesis eq. 7.1.

    The square root makes the field behave like a distance (constant slope)
    near the iso-surface, so the linear placement of vertices along grid edges
    does not make a moving surface flicker (Clavet 7.2).

    Parameters
    ----------
    s : float
        sum of :func:`clavet_weight` over the particles (>= 0).

    Returns
    -------
    float
        phi = sqrt(s), dimensionless.
    """
    return math.sqrt(s)


@njit(**config.NJIT)
def density_weight(q):
    """Desbrun-Cani's anti-clustering kernel normalised by its value at h.

    Desbrun & Cani 1996, section 3.2: W_h(r) = 15 / (pi (4h)^3) (2 - r/h)^3 for
    r <= 2h. The support radius here is 2h, so with q = r / (2h),
    W_h(r) / W_h(h) = (2 - 2q)^3 = 8 (1 - q)^3. Dividing by W_h(h) (and by the
    particle mass, all particles being equal) makes the field dimensionless
    and the paper's first-choice iso-density 2 W_h(h) (section 4.2) the number 2.

    Parameters
    ----------
    q : float
        r / (2h), in [0, 1).

    Returns
    -------
    float
        8 (1 - q)^3.
    """
    a = 1.0 - q
    return 8.0 * a * a * a


@njit(**config.NJIT)
def identity_finish(s):
    """The density field is the plain sum (Desbrun & Cani 1996, eq. 3 up to the constant m W_h(h)).

    Parameters
    ----------
    s : float
        sum of :func:`density_weight`.

    Returns
    -------
    float
        s unchanged.
    """
    return s


CLAVET = 0
DENSITY = 1


@njit(**config.NJIT)
def field_weight(kind, q):
    """Per-particle term of field ``kind`` (CLAVET or DENSITY) at q = r / support in [0, 1)."""
    if kind == CLAVET:
        return clavet_weight(q)
    return density_weight(q)


@njit(**config.NJIT)
def field_finish(kind, s):
    """Field value of ``kind`` from the summed terms ``s`` (>= 0)."""
    if kind == CLAVET:
        return clavet_finish(s)
    return identity_finish(s)


@dataclass(frozen=True)
class Field:
    """A registered scalar field.

    Attributes
    ----------
    name : registry key, as in the scene file's ``surface.field``.
    kind : integer id passed to the kernels (:func:`field_weight`).
    weight, finish : njit functions, see the module docstring.
    support_factor : default support radius in particle spacings.
    iso : default iso-value (dimensionless) for that support.
    reference : what the defaults come from.
    """

    name: str
    kind: int
    weight: Callable
    finish: Callable
    support_factor: float
    iso: float
    reference: str


# Default support and iso, calibrated so that a cubic lattice of spacing s
# filling a sphere of radius R meshes to the volume N s^3 the particles stand
# for: within 1.5 % for R = 5 s .. 12 s at cube size s / 2, axis-aligned or
# rotated lattice (docs/surface.md "Calibration"; test_surface_reconstruct.py).
#
# clavet: support 2 s (about 33 neighbours, the support splashsurf uses with
#   its usual smoothing length 2 r) and iso 1.24; in the bulk phi ~ 1.9. A lone
#   particle peaks at phi = 1 < iso: without the thin-feature floor
#   (``min_radius``) isolated drops vanish, which is why that floor is on by
#   default.
# density: we keep the paper's first choice iso = 2 W_h(h) (section 4.2) and
#   choose the smoothing length instead: support 2h = 1.36 s encloses the
#   particles' volume, and a lone particle then shows as a sphere of radius
#   (2 - 2^(1/3)) h = 0.50 s, the particle radius: the paper's
#   two-particle argument and volume preservation agree at this h.
FIELDS: dict[str, Field] = {
    "clavet": Field("clavet", CLAVET, clavet_weight, clavet_finish, 2.0, 1.24,
                    "Clavet 2005, thesis section 7.2, eq. 7.1"),
    "density": Field("density", DENSITY, density_weight, identity_finish, 1.36, 2.0,
                     "Desbrun & Cani 1996, sections 3.2 and 4.2"),
}
