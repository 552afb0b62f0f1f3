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
Distances are measured to the particle's surface (centre distance minus the
particle radius), as the thesis does (section 6.3, "distance between the object
and the surface of the particle").
"""

from __future__ import annotations

from numba import njit, prange

from .. import config


@njit(**config.NJIT_PARALLEL)
def collide(sdf, params, grid, r0, t0, r1, t1, x, x_prev, dt, radius, friction, k_stick, d_stick,
            contact):
    """Resolve contacts of all particles with one collider (mutates ``x``).

    Parameters
    ----------
    sdf : numba function (params, grid, px, py, pz) -> (d, nx, ny, nz), local frame.
    params : float64[:] shape numbers; grid : float32[:,:,:] sampled field (or dummy).
    r0, r1 : (3,3) float64 rotation (local -> world) at step start / end.
    t0, t1 : (3,) float64 translation at step start / end, m.
    x : (n,3) float64 predicted positions, m; mutated.
    x_prev : (n,3) float64 positions at the start of the step, m.
    dt : step, s. radius : particle radius, m.
    friction : μ in [0, 1]. k_stick : stickiness, 1/s^2. d_stick : stickiness range, m.
    contact : (n,) uint8, mutated: set to 1 where the particle touched this collider.
    """
    inv_dt = 1.0 / dt
    for i in prange(x.shape[0]):
        dxw = x[i, 0] - t1[0]
        dyw = x[i, 1] - t1[1]
        dzw = x[i, 2] - t1[2]
        px = r1[0, 0] * dxw + r1[1, 0] * dyw + r1[2, 0] * dzw
        py = r1[0, 1] * dxw + r1[1, 1] * dyw + r1[2, 1] * dzw
        pz = r1[0, 2] * dxw + r1[1, 2] * dyw + r1[2, 2] * dzw
        d, lx, ly, lz = sdf(params, grid, px, py, pz)
        gap = d - radius
        if gap >= d_stick and gap >= 0.0:
            continue
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
        ix = 0.0
        iy = 0.0
        iz = 0.0
        if gap < 0.0:
            contact[i] = 1
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
        x[i, 0] -= dt * ix
        x[i, 1] -= dt * iy
        x[i, 2] -= dt * iz
        # Push out what is still inside (Algorithm 7, line 15).
        dxw = x[i, 0] - t1[0]
        dyw = x[i, 1] - t1[1]
        dzw = x[i, 2] - t1[2]
        px = r1[0, 0] * dxw + r1[1, 0] * dyw + r1[2, 0] * dzw
        py = r1[0, 1] * dxw + r1[1, 1] * dyw + r1[2, 1] * dzw
        pz = r1[0, 2] * dxw + r1[1, 2] * dyw + r1[2, 2] * dzw
        d, lx, ly, lz = sdf(params, grid, px, py, pz)
        if d < radius:
            push = radius - d
            x[i, 0] += push * (r1[0, 0] * lx + r1[0, 1] * ly + r1[0, 2] * lz)
            x[i, 1] += push * (r1[1, 0] * lx + r1[1, 1] * ly + r1[1, 2] * lz)
            x[i, 2] += push * (r1[2, 0] * lx + r1[2, 1] * ly + r1[2, 2] * lz)
