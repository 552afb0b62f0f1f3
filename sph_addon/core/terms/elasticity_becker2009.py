"""Corotated SPH elasticity (Becker, Ihmsen & Teschner 2009, "Corotated SPH for deformable solids",
Eurographics NPH), solved implicitly: soft and stiff solids with the fluid's substeps.

What. Each particle keeps the neighbourhood it had at its first substep (its rest partners and rest
position: eq. 5's fixed neighbourhoods, one body per source), its rotation R_i (eq. 12-13, from F_i's
polar decomposition: see the kernels' docstring for why), the deformation gradient F_i with the
kernel-gradient correction (eq. 14-15), a linear (corotated) or Green strain and the stress from
Young's modulus E and Poisson's ratio ν; the forces are the exact gradient of the elastic energy
(eq. 16's pair forces without hand symmetrisation: linear and angular momentum are conserved), plus
a zero-energy-mode (hourglass) energy (``elasticity_becker2009_kernels``).

How it is integrated. The paper integrates explicitly, which needs Δt < ~0.4 s / c (c = √(E/ρ)): 70
substeps a frame for rubber (1 MPa) at 2 cm. Here the velocity stage solves backward Euler on the
elastic forces linearised about the substep's start with the rotations held (Peer et al. 2018's
matrix-free approach; the "warped stiffness" of Müller & Gross 2004),

    (M + Δt (Δt + τ) H) Δv = Δt f(x) - Δt (Δt + τ) H v,

H the energy's Hessian, τ the material's ``damping_time`` (Kelvin-Voigt: a viscous stress τ E ε̇, i.e.
damping proportional to stiffness, which leaves rigid motion alone), by conjugate gradients
preconditioned with the 3x3 diagonal blocks of the matrix, warm-started from the last substep's Δv
(``elastic_dv``, a particle array, so a resumed bake continues exactly). Backward Euler damps
vibrations whose period is short against the substep (ω Δt ≳ 1) on its own; the slowest modes of a
body, which the eye sees, keep their period (the cantilever test: within 10 % of Euler-Bernoulli).

One world. Particles of other models are not in the solve: a liquid's relaxation pushes the solid's
particles as it pushes its own (mass-weighted, ``relaxation_clavet2005``), so a solid floats or sinks by
its density; colliders act through the contacts with their friction; solids touch each other
through ``contact_macklin2014``.

Acts on every material of the ``elastic`` model; reads ``density``, ``youngs_modulus``,
``poisson_ratio``, ``damping_time`` and ``strain``.
"""

from __future__ import annotations

import math

import numpy as np

from .base import VELOCITY, ArraySpec, Term

# Relative residual |b - A Δv| / |b| at which the solve stops, and its cap.
TOLERANCE = 1e-6
MAX_ITERATIONS = 400
# Zero-energy-mode control: the hourglass energy's stiffness as a share of the shear stiffness 2μ.
HOURGLASS = 0.1
# At most this many spacings of travel a substep for the fastest solid particle: contacts are resolved
# after the solve, so a longer substep pushes an impacting layer into the next before the solid sees it.
# At 0.5, a 6x4x3 cm cuboid (E 1e5) tilted 30° and landing on its edge at 0.65 m/s kept a lattice
# defect (a particle a spacing out of place) and came to rest on it at 15°; at 0.25 it lies flat.
SOLID_CFL = 0.25
# A solid particle closer than this many spacings to a static collider's surface (beyond its radius), or
# that would reach it within the substep, and moving into it is held by the solve (``_held``).
CONTACT_REACH = 0.1


def lame(youngs_modulus: float, poisson_ratio: float) -> tuple[float, float]:
    """Lamé's μ and λ (Pa) from Young's modulus E (Pa) and Poisson's ratio ν."""
    e, nu = youngs_modulus, poisson_ratio
    return e / (2.0 * (1.0 + nu)), e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu))


def rest_pairs(rest, partner, index_of_id, mat, solid, hourglass, h) -> tuple[np.ndarray, ...]:
    """What the substep's passes read of the rest state, computed once (``elasticity_becker2009_kernels``'
    ``rest_fit`` and ``pair_weights``): (partner indices, g_ij, g_ji, κ_ij, κ_ji, K_i, N_i)."""
    from .elasticity_becker2009_kernels import pair_weights, rest_fit

    n, width = partner.shape
    corr, wsum, null = np.zeros((n, 27)), np.zeros(n), np.zeros((n, 9))
    rest_fit(rest, partner, index_of_id, mat, solid, h, corr, wsum, null)
    nb = np.full((n, width), -1, np.int64)
    g, grev = np.zeros((n, width, 3)), np.zeros((n, width, 3))
    kap, krev, kmom = np.zeros((n, width)), np.zeros((n, width)), np.zeros((n, 9))
    pair_weights(rest, partner, index_of_id, mat, solid, hourglass, h, corr, wsum, nb, g, grev, kap, krev, kmom)
    return nb, g, grev, kap, krev, kmom, null


class ElasticityBecker2009(Term):
    """Rest state at a particle's first substep, then the implicit corotated elastic solve (velocity stage)."""

    name = "elasticity_becker2009"
    citation = ("M. Becker, M. Ihmsen, M. Teschner, Corotated SPH for deformable solids, Eurographics Workshop on "
                "Natural Phenomena 2009")
    stage = VELOCITY
    parameters = ("density", "youngs_modulus", "poisson_ratio", "damping_time", "strain")
    arrays = {
        "rest_partner": ArraySpec((24,), np.int64, -1, "ids of the particle's rest neighbours, -1 for a free slot"),
        "rest_position": ArraySpec((3,), np.float64, 0, "position at the particle's first substep (rest), m"),
        "rotation": ArraySpec((9,), np.float64, 0, "rotation R from the rest neighbourhood to the current one, "
                                                  "row-major"),
        "elastic_bonded": ArraySpec((), np.uint8, 0, "1 once the particle has its rest state"),
        "elastic_dv": ArraySpec((3,), np.float64, 0, "the elastic solve's last velocity change (warm start), m/s"),
    }

    def __init__(self, setup):
        super().__init__(setup)
        n = setup.n_materials
        self.mu = np.zeros(n)
        self.lam = np.zeros(n)
        for m, p in setup.materials.items():
            self.mu[m], self.lam[m] = lame(p.youngs_modulus, p.poisson_ratio)
        self.tau = self.per_material("damping_time")
        self.green = self.per_material("strain", np.uint8, lambda s: 1 if s == "green" else 0)
        self.solid = self.owned.astype(np.uint8)
        self.vol = setup.spacing ** 3
        self.mass = self.per_material("density") * self.vol
        self.hourglass = HOURGLASS * 2.0 * self.mu * self.vol
        self.last_iterations = 0.0  # the last frame's mean, for the substep policy's cost
        self._reset_stats()

    def _reset_stats(self) -> None:
        self.stats = {"solves": 0, "iterations": 0, "most_iterations": 0, "worst_residual": 0.0}

    def active_arrays(self):
        return self.arrays if self.owned.any() else {}

    def max_dt(self, world) -> float:
        """``SOLID_CFL`` spacings of travel for the fastest solid particle; the stiffness sets no limit."""
        v = world.v[self.owned[world.material]]
        fastest = float(np.sqrt(np.max(np.einsum("ij,ij->i", v, v)))) if len(v) else 0.0
        return SOLID_CFL * self.setup.spacing / fastest if fastest > 0.0 else math.inf

    def work_per_substep(self, dt: float) -> float:
        """About one neighbour pass per iteration of the last solve, a tenth of the fixed work each."""
        return 0.1 * (3.0 + self.last_iterations)

    # -- the rest state -------------------------------------------------------------------------
    def bond(self, ctx) -> None:
        """Give particles without a rest state their rest partners, position and rotation (identity)."""
        a = ctx.arrays
        new = (a["elastic_bonded"] == 0) & self.owned[ctx.material]
        if not new.any():
            return
        from .elasticity_becker2009_kernels import bond

        used = np.zeros(ctx.n, np.int64)
        while True:
            bond(ctx.x, ctx.ids, ctx.material, a["source"], a["elastic_bonded"], self.solid, ctx.nbr, ctx.count,
                 ctx.h, a["rest_partner"], used)
            need = int(used.max())
            if need <= a["rest_partner"].shape[1]:
                break
            ctx.resize("rest_partner", need + 4)
        a["rest_position"][new] = ctx.x[new]
        a["rotation"][new] = np.eye(3).ravel()
        a["elastic_dv"][new] = 0.0
        a["elastic_bonded"][new] = 1

    # -- the solve --------------------------------------------------------------------------------
    def apply(self, ctx) -> None:
        self.bond(ctx)
        a = ctx.arrays
        rows = (a["elastic_bonded"] == 1) & (a["rest_partner"][:, 0] >= 0) & self.owned[ctx.material]
        if not rows.any():
            return
        from . import elasticity_becker2009_kernels as k

        dt = ctx.dt
        c = dt * (dt + self.tau)
        unit = np.ones_like(c)
        mat, partner, rot = ctx.material, a["rest_partner"], a["rotation"]
        rest = a["rest_position"]
        pairs = rest_pairs(rest, partner, ctx.index_of_id(), mat, self.solid, self.hourglass, ctx.h)
        nb, g, grev, kap, krev, kmom, null = pairs
        with ctx.workspace.borrow((9,), (9,), (9,), (9,), (9,), (3,), (3,)) as (f, m, df, dm, blocks, force, tmp):
            material = (self.mu, self.lam, self.green, self.vol)
            k.deformation(ctx.x, rest, nb, g, kap, kmom, null, mat, self.solid, *material, False, rot, f, f, m)
            wide = (rest, nb, g, grev, kap, krev, mat, self.solid)

            def operator(w, out):
                """out = (M + c H) w on the solid rows."""
                k.deformation(w, rest, nb, g, kap, kmom, null, mat, self.solid, *material, True, rot, f, df, dm)
                k.forces(w, *wide, c, df, dm, out)
                out[rows] = self.mass[mat[rows], None] * w[rows] - out[rows]
                out[~rows] = 0.0

            k.forces(ctx.x, *wide, unit, f, m, force)
            b = np.zeros((ctx.n, 3))
            b[rows] = dt * force[rows]
            k.deformation(ctx.v, rest, nb, g, kap, kmom, null, mat, self.solid, *material, True, rot, f, df, dm)
            k.forces(ctx.v, *wide, c, df, dm, tmp)
            b[rows] += tmp[rows]
            k.preconditioner(nb, g, grev, kap, krev, mat, self.solid, self.mu, self.lam, self.vol, self.mass, c, rot,
                             blocks)
            dv = np.where(rows[:, None], a["elastic_dv"], 0.0)
            # The residual's floor: a velocity error of TOLERANCE g Δt on every particle (a body at rest
            # has b ~ 0, and a relative test chased rounding).
            floor = float(np.sqrt(np.sum(self.mass[mat[rows]] ** 2))) * max(self.setup.gravity, 1.0) * dt
            held = self._held(ctx, rows)
            iterations, residual = self._cg(operator, b, dv, blocks, mat, nb, tmp, held, ctx.v, floor)
            self._keep_momenta(ctx, rows, dv, held)
        ctx.v[rows] += dv[rows]
        a["elastic_dv"][rows] = dv[rows]
        st = self.stats
        st["solves"] += 1
        st["iterations"] += iterations
        st["most_iterations"] = max(st["most_iterations"], iterations)
        st["worst_residual"] = max(st["worst_residual"], residual)

    def _keep_momenta(self, ctx, rows, dv, held) -> None:
        """Give back what the linearisation took from each free body's linear and angular momentum.

        The elastic forces are internal and exert no net force or torque (eq. 16 as an energy's
        gradient), and x += Δt (v + Δv) keeps L = Σ m x × v exactly when Σ m x × Δv = 0. The solve's
        Δv breaks that by the CG residual and by the operator: with the rotations held, a rigid turn
        of a strained neighbourhood changes the linear stress R (2μ sym(RᵀδF) + λ tr(RᵀδF) I), so the
        implicit term exerts a torque (a spinning jelly cube lost 4.5e-4 of L in 0.5 s, 1e-5 with
        Green strain). Bodies with a particle held on a collider are not free and keep their Δv."""
        from .elasticity_becker2009_kernels import keep_momenta

        idx = np.flatnonzero(rows)
        body = ctx.arrays["source"][idx].astype(np.int64)
        free = np.ones(int(body.max()) + 1, np.bool_)
        if held is not None:
            free[ctx.arrays["source"][held[0]]] = False
        keep_momenta(ctx.x, dv, idx, body, free, self.mass[ctx.material[idx]])

    def _held(self, ctx, rows) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The solid particles that touch a static collider or would reach it within the substep: (their
        indices, the surface normals, the normal velocity each must end the substep with: the gap
        closed, -gap/Δt). A particle landing is held in the substep it lands in: held only once it
        touched (within ``CONTACT_REACH``), the layer landing first was stopped by the collisions
        after a solve that had let it go on, and the next layer passed through it (a silicone cube
        dropped 5 cm at 1 cm spacing ended with its two bottom layers swapped).

        The solve holds them there (Baraff & Witkin 1998's filtered conjugate gradients), so the body's
        elastic response sees its support within the substep: with the contact left to the collisions
        after the solve, a body resting on the floor sank g Δt² a substep into it, and at two substeps a
        frame its layers fell through each other."""
        walls = ctx.walls.static() if ctx.walls is not None else None
        if walls is None:
            return None
        idx = np.flatnonzero(rows)
        radius = 0.5 * ctx.spacing
        gap = walls.distance(ctx.x[idx]) - radius
        speed = np.sqrt(np.einsum("ij,ij->i", ctx.v[idx], ctx.v[idx]))
        near = gap < CONTACT_REACH * ctx.spacing + speed * ctx.dt
        if not near.any():
            return None
        idx, gap = idx[near], gap[near]
        normal = walls.normals(ctx.x[idx], 0.25 * ctx.spacing)
        vn = np.einsum("ij,ij->i", ctx.v[idx], normal)
        target = -np.maximum(gap, 0.0) / ctx.dt
        into = vn < target
        if not into.any():
            return None
        return idx[into], normal[into], target[into]

    def _cg(self, operator, b, x, blocks, mat, nb, scratch, held, v, floor) -> tuple[int, float]:
        """Preconditioned conjugate gradients on ``operator`` x = b from the given x (mutated), with the
        normal velocity v + x of the ``held`` particles prescribed (Baraff & Witkin 1998, section 5.3: the
        residual and the search directions filtered); the iterations taken and the residual relative to
        |b|, or to ``floor`` where |b| is smaller.
        A particle may be listed once per direction held, the directions of one particle orthonormal
        (three pin it: the projections of a vector on them add up to the vector)."""
        from .elasticity_becker2009_kernels import apply_blocks

        if held is not None:
            hi, hn, target = held
            v_now = np.einsum("ij,ij->i", v[hi], hn)

            def filtered(w):
                np.subtract.at(w, hi, np.einsum("ij,ij->i", w[hi], hn)[:, None] * hn)
                return w

            filtered(x)
            np.add.at(x, hi, (target - v_now)[:, None] * hn)
        else:
            def filtered(w):
                return w
        ap = scratch
        operator(x, ap)
        r = filtered(b - ap)
        b_norm = max(math.sqrt(float(np.vdot(b, b))), floor)
        z = np.empty_like(r)
        apply_blocks(blocks, r, mat, self.solid, nb, z)
        pdir = filtered(z.copy())
        rz = float(np.vdot(r, pdir))
        res = math.sqrt(float(np.vdot(r, r))) / b_norm
        it = 0
        while res > TOLERANCE and it < MAX_ITERATIONS:
            operator(pdir, ap)
            filtered(ap)
            alpha = rz / float(np.vdot(pdir, ap))
            x += alpha * pdir
            r -= alpha * ap
            res = math.sqrt(float(np.vdot(r, r))) / b_norm
            it += 1
            apply_blocks(blocks, r, mat, self.solid, nb, z)
            rz_new = float(np.vdot(r, z))
            pdir *= rz_new / rz
            pdir += z
            filtered(pdir)
            rz = rz_new
        return it, res

    def frame_stats(self, world) -> dict[str, int | float]:
        """The solves' iterations (mean and most) and worst relative residual over the frame."""
        st = self.stats
        out = {"elastic_iterations": round(st["iterations"] / max(st["solves"], 1), 2),
               "elastic_most_iterations": st["most_iterations"],
               "elastic_residual": float(f"{st['worst_residual']:.3g}")}
        if st["solves"]:
            self.last_iterations = out["elastic_iterations"]
        self._reset_stats()
        return out

    def failure(self, stats: dict) -> str | None:
        if stats.get("elastic_residual", 0.0) > 1e-2:
            return ("the elastic solve did not converge (relative residual {:.3g}): lower Young's modulus or raise "
                    "the substeps".format(stats["elastic_residual"]))
        return None
