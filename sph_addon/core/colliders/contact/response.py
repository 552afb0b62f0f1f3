"""Particle-collider contact: Clavet 2005, thesis section 6.2-6.3 (Algorithm 7, lines 12-15).

For every particle near a collider, with the collider's transform at the start
(R0, t0) and end (R1, t1) of the step:

1. look up the signed distance d and normal n at the particle's predicted
   position in the collider's frame at the end of the step;
2. relative velocity v̄ = v_i - v_p, with v_i = (x - x_prev)/Δt (positions are
   already relaxed, as the thesis says) and v_p the velocity of the collider's
   material point under the particle, from the two transforms;
3. contact impulse (eqs. 6.1-6.3): the approaching normal part is removed whole
   (no bounce) and a fraction μ of the tangential part (μ = 0 slip, 1 no-slip).
   The thesis writes I = v̄_normal - μ v̄_tangent; we apply v ← v - v̄_normal -
   μ v̄_tangent, the sign that makes μ = 1 no-slip as the text describes;
4. stickiness (eq. 6.4): within d_stick of the surface, an attraction
   I = -Δt k_stick d (1 - d/d_stick) n;
5. a particle still inside is pushed out along n (end of Algorithm 7).

Velocity changes are applied as position changes Δx = Δt Δv, since the
velocity is recomputed from positions at the end of the step (Algorithm 1).

What the collider received: ``collide`` also returns each particle's velocity
change dv = (x after - x before) / Δt from this collider (contact impulse,
stickiness, push-out and the continuous rewind together), and
:func:`impulse_and_torque` sums it into the impulse and torque on the collider,
equal and opposite to what the particles got. A dynamic rigid body (Clavet
Algorithm 7, two-way coupling) integrates these; for keyframed colliders they
are a report (forces on a wall, on a stirring spoon). Clavet's particles have
no mass, so these are per unit particle mass until the particles carry one.

Continuous collision (not in the thesis, which relies on small steps): Clavet's
test looks only at the predicted position. A particle fast enough to pass a
thin collider (a shell, a thin plate) within one substep is then either past
it, where the field says "outside", or past its middle, where the normal
points to the far side and the push-out completes the crossing: it tunnels.
So when the particle's relative path in the collider's frame cannot be
certified clear of the contact zone (d < radius) by the distances at its two
ends, and the normals at its ends disagree (n0 · n1 < 0: it came from the
other side), the path is marched (sphere tracing on the distance field) to the
first point where it enters the zone; the particle is put back there and
resolved as a contact with the normal at that point. The march only runs for
such particles, so resting and sliding contacts keep Clavet's response
exactly.

A term may give some particles a collider's friction itself (the elastic solve's Coulomb friction on
static colliders, ``terms.elasticity_becker2009_friction``): ``collide`` then takes none off them
(``frictionless``).

Distances are measured to the particle's surface (centre distance minus the
particle radius), as the thesis does (section 6.3, "distance between the object
and the surface of the particle").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...numerics import config
from ...numerics.kernel_cache import njit, prange
from ..shapes.sdf_dispatch import sdf_eval


@njit(**config.NJIT)
def _to_local(r, t, wx, wy, wz):
    """Local coordinates R^T (w - t) of a world point under the transform (R, t)."""
    dx = wx - t[0]
    dy = wy - t[1]
    dz = wz - t[2]
    return (r[0, 0] * dx + r[1, 0] * dy + r[2, 0] * dz,
            r[0, 1] * dx + r[1, 1] * dy + r[2, 1] * dz,
            r[0, 2] * dx + r[1, 2] * dy + r[2, 2] * dz)


@njit(**config.NJIT)
def first_entry(code, params, grid, ax, ay, az, bx, by, bz, radius, lipschitz, min_step):
    """First point of the segment a -> b (local frame) where d - radius < 0, by sphere tracing.

    From a point at gap g = d - radius >= 0, no point closer than g / L can be
    in the zone if the field changes by at most L per metre; steps are
    therefore max(g / L, min_step), and the entry found is refined by bisection
    to within 2^-20 of the segment. ``min_step`` must be below the narrowest
    zone that must not be skipped (the zone around any surface is at least
    2 radius wide).

    Parameters
    ----------
    code, params, grid : the collider's field (``Shape.code``, see ``sdf_dispatch.sdf_eval``).
    ax, ay, az, bx, by, bz : float
        Segment ends in the collider's local frame (m).
    radius : float
        Particle radius (m): the zone is d < radius.
    lipschitz : float
        Bound L of |grad d| (1 for an exact distance; a trilinear grid can reach sqrt 3).
    min_step : float
        Smallest step (m).

    Returns
    -------
    float
        Parameter s in [0, 1] of the last point outside the zone before the
        entry (0 if a is already inside), or -1.0 if the segment stays outside.
    """
    ex = bx - ax
    ey = by - ay
    ez = bz - az
    length = math.sqrt(ex * ex + ey * ey + ez * ez)
    s = 0.0
    prev = 0.0
    # A segment of a few spacings needs a handful of steps; the cap only guards
    # against a zero-length step from a pathological field.
    for _ in range(10000):
        d = sdf_eval(code, params, grid, ax + s * ex, ay + s * ey, az + s * ez)[0]
        if d - radius < 0.0:
            lo = prev
            hi = s
            for _ in range(20):
                mid = 0.5 * (lo + hi)
                if sdf_eval(code, params, grid, ax + mid * ex, ay + mid * ey, az + mid * ez)[0] - radius < 0.0:
                    hi = mid
                else:
                    lo = mid
            return lo
        if s >= 1.0 or length == 0.0:
            return -1.0
        prev = s
        s = min(1.0, s + max((d - radius) / lipschitz, min_step) / length)
    return -1.0


@njit(**config.NJIT_INLINE)
def crossed(code, params, grid, qx, qy, qz, px, py, pz, d, lx, ly, lz, disp, radius, lipschitz, min_step):
    """Where a particle that may have come from the collider's other side entered its contact zone.

    The continuous test of the module docstring, for a path the distances at its ends do not
    certify clear: when it could reach the zone and the normals at its ends disagree, the path
    is marched (:func:`first_entry`).

    Parameters
    ----------
    code, params, grid : the collider's field.
    qx, qy, qz : the path's start, local frame at the step's start (m).
    px, py, pz : its end, local frame at the step's end (m); d, lx, ly, lz : the field there.
    disp : the path's length, m. radius, lipschitz, min_step : as for :func:`first_entry`.

    Returns
    -------
    float
        The parameter in [0, 1] of the point to put the particle at, or -1.0 (leave it).
    """
    d0, mx, my, mz = sdf_eval(code, params, grid, qx, qy, qz)
    # Closest approach along the path is >= (d0 + d - L disp) / 2 (the two cones meet).
    if d0 + d - lipschitz * disp >= 2.0 * radius or not mx * lx + my * ly + mz * lz < 0.0:
        return -1.0
    return first_entry(code, params, grid, qx, qy, qz, px, py, pz, radius, lipschitz, min_step)


@njit(**config.NJIT)
def _impulse(vbx, vby, vbz, nx, ny, nz, touching, gap, dt, friction, k_stick, d_stick):
    """Velocity change (to subtract) of one particle near a collider, m/s.

    Clavet 2005, thesis eqs. 6.1-6.3 when touching (no bounce, a fraction μ =
    ``friction`` of the tangential relative velocity removed), else eq. 6.4
    (stickiness within ``d_stick``).

    Parameters
    ----------
    vbx, vby, vbz : relative velocity v_i - v_object at the contact, world frame, m/s.
    nx, ny, nz : outward unit normal, world frame.
    touching : bool, gap < 0 (or the continuous test found an entry).
    gap : distance from the particle's surface to the collider, m.
    dt : step, s. friction : μ. k_stick : 1/s^2. d_stick : m.

    Returns
    -------
    (ix, iy, iz) : the particle's velocity becomes v - I.
    """
    ix = 0.0
    iy = 0.0
    iz = 0.0
    if touching:
        vn = vbx * nx + vby * ny + vbz * nz
        tx = vbx - vn * nx
        ty = vby - vn * ny
        tz = vbz - vn * nz
        if vn < 0.0:
            ix += vn * nx
            iy += vn * ny
            iz += vn * nz
        ix += friction * tx
        iy += friction * ty
        iz += friction * tz
    elif d_stick > 0.0:
        s = dt * k_stick * gap * (1.0 - gap / d_stick)
        ix += s * nx
        iy += s * ny
        iz += s * nz
    return ix, iy, iz


@njit(**config.NJIT)
def _push_out(code, params, grid, r1, t1, x, i, radius):
    """Push particle ``i`` out along the normal if still inside (Algorithm 7, line 15); mutates x[i]."""
    px, py, pz = _to_local(r1, t1, x[i, 0], x[i, 1], x[i, 2])
    d, lx, ly, lz = sdf_eval(code, params, grid, px, py, pz)
    if d < radius:
        push = radius - d
        x[i, 0] += push * (r1[0, 0] * lx + r1[0, 1] * ly + r1[0, 2] * lz)
        x[i, 1] += push * (r1[1, 0] * lx + r1[1, 1] * ly + r1[1, 2] * lz)
        x[i, 2] += push * (r1[2, 0] * lx + r1[2, 1] * ly + r1[2, 2] * lz)


@njit(**config.NJIT_INLINE)
def _contact(code, params, grid, r0, t0, r1, t1, x, x_prev, i, dt, inv_dt, radius, friction, k_stick, d_stick,
             continuous, lipschitz, min_step):
    """Resolve particle ``i``'s contact with one collider in place (mutates ``x[i]``): :func:`collide`'s body."""
    px, py, pz = _to_local(r1, t1, x[i, 0], x[i, 1], x[i, 2])
    d, lx, ly, lz = sdf_eval(code, params, grid, px, py, pz)
    gap = d - radius
    touching = gap < 0.0
    if continuous:
        # Where the particle started, relative to the collider (its frame at step start).
        qx, qy, qz = _to_local(r0, t0, x_prev[i, 0], x_prev[i, 1], x_prev[i, 2])
        disp = math.sqrt((px - qx) ** 2 + (py - qy) ** 2 + (pz - qz) ** 2)
        if gap >= lipschitz * disp:
            # The whole path is at least ``gap - L disp >= 0`` from the zone.
            if gap >= d_stick:
                return
        else:
            s = crossed(code, params, grid, qx, qy, qz, px, py, pz, d, lx, ly, lz, disp, radius, lipschitz,
                        min_step)
            if s >= 0.0:
                px = qx + s * (px - qx)
                py = qy + s * (py - qy)
                pz = qz + s * (pz - qz)
                d, lx, ly, lz = sdf_eval(code, params, grid, px, py, pz)
                x[i, 0] = r1[0, 0] * px + r1[0, 1] * py + r1[0, 2] * pz + t1[0]
                x[i, 1] = r1[1, 0] * px + r1[1, 1] * py + r1[1, 2] * pz + t1[1]
                x[i, 2] = r1[2, 0] * px + r1[2, 1] * py + r1[2, 2] * pz + t1[2]
                gap = d - radius
                touching = True
    if not touching and gap >= d_stick:
        return
    nx = r1[0, 0] * lx + r1[0, 1] * ly + r1[0, 2] * lz
    ny = r1[1, 0] * lx + r1[1, 1] * ly + r1[1, 2] * lz
    nz = r1[2, 0] * lx + r1[2, 1] * ly + r1[2, 2] * lz
    # Where the same material point of the collider was at the start of the step.
    w0x = r0[0, 0] * px + r0[0, 1] * py + r0[0, 2] * pz + t0[0]
    w0y = r0[1, 0] * px + r0[1, 1] * py + r0[1, 2] * pz + t0[1]
    w0z = r0[2, 0] * px + r0[2, 1] * py + r0[2, 2] * pz + t0[2]
    vbx = (x[i, 0] - x_prev[i, 0]) * inv_dt - (x[i, 0] - w0x) * inv_dt
    vby = (x[i, 1] - x_prev[i, 1]) * inv_dt - (x[i, 1] - w0y) * inv_dt
    vbz = (x[i, 2] - x_prev[i, 2]) * inv_dt - (x[i, 2] - w0z) * inv_dt
    ix, iy, iz = _impulse(vbx, vby, vbz, nx, ny, nz, touching, gap, dt, friction, k_stick, d_stick)
    x[i, 0] -= dt * ix
    x[i, 1] -= dt * iy
    x[i, 2] -= dt * iz
    # In a concave edge or corner the nearest face changes as the particle leaves the
    # first one: push out again along each new nearest face (at most 3 faces meet).
    for _ in range(3):
        _push_out(code, params, grid, r1, t1, x, i, radius)


@njit(**config.NJIT_PARALLEL)
def collide(code, params, grid, r0, t0, r1, t1, x, x0, x_prev, dt, radius, friction, frictionless, k_stick, d_stick,
            continuous, dv):
    """Resolve contacts of all particles with one collider (mutates ``x`` and ``dv``).

    Clavet 2005, thesis sections 6.2-6.3 (Algorithm 7, lines 12-15), with the
    continuous test described in the module docstring.

    Every collider of a substep resolves its contacts from the same positions ``x0``, those
    the models left, never from another collider's result: a wall that saw a paddle's push
    would take back the paddle's velocity with its own impulse (Clavet's response removes
    the whole approaching normal velocity) and put the particle back behind the paddle, so
    particles went through a fast paddle listed before the tank and not after it. A particle
    this collider moves gets its result in ``x`` (the last collider's, when several move it:
    ``Simulation._collide`` then sums their displacements); one it leaves alone keeps what
    ``x`` holds. With one collider, ``x0`` is ``x`` itself.

    Parameters
    ----------
    code : int, the collider's SDF (``Shape.code``; ``sdf_dispatch.sdf_eval`` evaluates it in the
        local frame).
    params : float64[:] shape numbers; grid : float32[:,:,:] sampled field (or dummy).
    r0, r1 : (3,3) float64 rotation (local -> world) at step start / end.
    t0, t1 : (3,) float64 translation at step start / end, m.
    x : (n,3) float64 positions, m; rows this collider moves are overwritten with its result.
    x0 : (n,3) float64 predicted positions before any collider, m (may be ``x``); read only.
    x_prev : (n,3) float64 positions at the start of the step, m.
    dt : step, s. radius : particle radius, m.
    friction : μ in [0, 1]. frictionless : (n,) uint8, 1 for a particle that takes no friction from this
        collider (a term gave it already: ``Walls.friction_given``), or an empty array for none.
        k_stick : stickiness, 1/s^2. d_stick : stickiness range, m.
    continuous : bool, march the paths of particles that may have crossed the collider.
    dv : (n,3) float64, overwritten: each particle's velocity change from this collider, m/s
        (its displacement from ``x0``, divided by dt; 0 for particles it left alone).
        Sum it with :func:`impulse_and_torque`.
    """
    # numba does not check bounds: a short dv would be written past its end.
    if x_prev.shape[0] != x.shape[0] or dv.shape[0] != x.shape[0] or x0.shape[0] != x.shape[0]:
        raise ValueError("collide: x0, x_prev and dv must have as many rows as x")
    if frictionless.shape[0] != 0 and frictionless.shape[0] != x.shape[0]:
        raise ValueError("collide: frictionless must be empty or have as many rows as x")
    masked = frictionless.shape[0] != 0
    inv_dt = 1.0 / dt
    # Bound of |grad d| for the certificate and the march: 1 for exact distances, up to
    # sqrt(3) for a trilinear grid of a distance field; 2 leaves a margin.
    lipschitz = 2.0
    # The contact zone d < radius is at least 2 radius wide: a quarter radius cannot skip it.
    min_step = 0.25 * radius
    for i in prange(x.shape[0]):
        # What the colliders before this one made of the particle, kept unless this one moves it.
        cx = x[i, 0]
        cy = x[i, 1]
        cz = x[i, 2]
        ox = x0[i, 0]
        oy = x0[i, 1]
        oz = x0[i, 2]
        x[i, 0] = ox
        x[i, 1] = oy
        x[i, 2] = oz
        mu = 0.0 if masked and frictionless[i] != 0 else friction
        _contact(code, params, grid, r0, t0, r1, t1, x, x_prev, i, dt, inv_dt, radius, mu, k_stick, d_stick,
                 continuous, lipschitz, min_step)
        if x[i, 0] == ox and x[i, 1] == oy and x[i, 2] == oz:
            x[i, 0] = cx
            x[i, 1] = cy
            x[i, 2] = cz
            dv[i, 0] = 0.0
            dv[i, 1] = 0.0
            dv[i, 2] = 0.0
        else:
            dv[i, 0] = (x[i, 0] - ox) * inv_dt
            dv[i, 1] = (x[i, 1] - oy) * inv_dt
            dv[i, 2] = (x[i, 2] - oz) * inv_dt


@njit(**config.NJIT_PARALLEL)
def distances(code, params, grid, points, out):
    """Signed distance of many local-frame points (m), written to ``out``.

    Parameters
    ----------
    code, params, grid : a collider's field (``Shape.code``, see ``sdf_dispatch.sdf_eval``).
    points : (n, 3) float64, local frame (m).
    out : (n,) float64, overwritten.
    """
    for i in prange(points.shape[0]):
        out[i] = sdf_eval(code, params, grid, points[i, 0], points[i, 1], points[i, 2])[0]


@njit(**config.NJIT_PARALLEL)
def placed_distances(code, params, grid, rot, pos, points, out):
    """Signed distance of many world points (m) to a collider placed at (rot, pos), written to ``out``.

    The same as :func:`distances` of (points - pos) @ rot, without the matrix product: numpy hands
    that to the BLAS library, whose worker threads then spin on the cores numba's threads need
    (measured on the bench's dam break: a substep 17 % slower, the relaxation passes 27 %).

    Parameters
    ----------
    code, params, grid : a collider's field. rot (3,3), pos (3,) : its placement (local -> world).
    points : (n, 3) float64, world frame (m). out : (n,) float64, overwritten.
    """
    for i in prange(points.shape[0]):
        px, py, pz = _to_local(rot, pos, points[i, 0], points[i, 1], points[i, 2])
        out[i] = sdf_eval(code, params, grid, px, py, pz)[0]


def impulse_and_torque(x: np.ndarray, dv: np.ndarray, center, particle_mass: float = 1.0
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Impulse and torque a collider received from one ``collide`` call.

    Equal and opposite to what the particles got (Newton's third law, the
    coupling of Clavet 2005, thesis Algorithm 7 stage 1):
    J = -m Σ dv_i and L = -m Σ (x_i - c) × dv_i, with x_i the positions after
    the call (where the contact was resolved). Sums run in numpy in a fixed
    order (not a parallel reduction), so a bake is reproducible.

    Parameters
    ----------
    x : (n, 3) float64
        Particle positions after ``collide``, m.
    dv : (n, 3) float64
        Velocity changes written by ``collide``, m/s.
    center : (3,) array_like
        Point the torque is taken about (the collider's origin, or a body's centre of mass), m.
    particle_mass : float
        Mass of one particle, kg. Clavet's method is massless: with the default
        1 the results are per unit particle mass (impulse in m/s, torque in
        m^2/s); multiply by a particle's mass once particles carry one.

    Returns
    -------
    impulse : (3,) float64
        Impulse on the collider, kg m/s (m/s per unit particle mass).
    torque : (3,) float64
        Angular impulse about ``center``, kg m^2/s (m^2/s per unit particle mass).
    """
    x = np.ascontiguousarray(x, np.float64)
    dv = np.ascontiguousarray(dv, np.float64)
    if x.ndim != 2 or x.shape[1] != 3 or dv.shape != x.shape:
        raise ValueError(f"x and dv must both be (n, 3), got {x.shape} and {dv.shape}")
    out = np.zeros(6)
    _impulse_sums(x, dv, np.asarray(center, np.float64).reshape(3), out)
    return -particle_mass * out[:3], -particle_mass * out[3:]


@njit(**config.NJIT)
def _impulse_sums(x, dv, center, out):
    """out[:3] += Σ dv_i and out[3:] += Σ (x_i - c) × dv_i over the rows with dv_i != 0, in index
    order (one serial loop: reproducible, and 0.3 ms a call faster than numpy's masks for 24,000 rows)."""
    for i in range(x.shape[0]):
        dx, dy, dz = dv[i, 0], dv[i, 1], dv[i, 2]
        if dx == 0.0 and dy == 0.0 and dz == 0.0:
            continue
        ax, ay, az = x[i, 0] - center[0], x[i, 1] - center[1], x[i, 2] - center[2]
        out[0] += dx
        out[1] += dy
        out[2] += dz
        out[3] += ay * dz - az * dy
        out[4] += az * dx - ax * dz
        out[5] += ax * dy - ay * dx


@dataclass(frozen=True)
class ContactReport:
    """What one collider received from the particles during one substep.

    Attributes
    ----------
    name : the collider's name.
    impulse : (3,) float64, kg m/s (m/s per unit particle mass, see :func:`impulse_and_torque`).
    torque : (3,) float64 angular impulse about ``center``, kg m^2/s (same convention).
    center : (3,) float64 point the torque is taken about, m (the collider's origin at the
        end of the substep).
    """

    name: str
    impulse: np.ndarray
    torque: np.ndarray
    center: np.ndarray

    def plus(self, impulse: np.ndarray, torque: np.ndarray, center: np.ndarray) -> ContactReport:
        """This report with one more call's impulse and torque about ``center`` added, now about ``center``:
        the running torque moves to the new centre first, L_c = L_c' + (c' - c) × J."""
        d, j = self.center - center, self.impulse
        # np.cross's own products, written out: np.cross took 0.1 ms, and this runs at every micro-step.
        moved = np.array([d[1] * j[2] - d[2] * j[1], d[2] * j[0] - d[0] * j[2], d[0] * j[1] - d[1] * j[0]])
        return ContactReport(self.name, self.impulse + impulse, self.torque + moved + torque, center)
