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

One world. Particles of other models are not in the solve: a liquid's relaxation holds the solid's
particles where they are and hands what it would have moved them (the impulse it gives its own kind)
to the solve as a velocity at the next substep (``LIQUID_PUSH``, :meth:`ElasticityBecker2009._take_liquid_push`),
so a solid floats or sinks by its density with its stiffness resisting the liquid's pressure; a static
collider holds the solid particles that touch it within the solve, with Coulomb friction of the
collider's ``friction`` (``elasticity_becker2009_friction``), moving colliders act through the contact
pass; solids touch each other through ``contact_macklin2014``.

Acts on every material of the ``elastic`` model; reads ``density``, ``youngs_modulus``,
``poisson_ratio``, ``damping_time`` and ``strain``.
"""

from __future__ import annotations

import math

import numpy as np

from .base import VELOCITY, ArraySpec, Term
from .pressure_projection_zhu2005 import GRID_PUSH
from .relaxation_clavet2005 import LIQUID_PUSH

# Relative residual |b - A Δv| / |b| at which the solve stops, and its cap.
TOLERANCE = 1e-6
MAX_ITERATIONS = 400
# Zero-energy-mode control: the hourglass energy's stiffness as a share of the shear stiffness 2μ.
HOURGLASS = 0.1
# At most this many spacings of travel a substep for the fastest solid particle: contacts between solid
# particles are resolved after the solve, so a longer substep pushes an impacting layer into the next before
# the solid sees it. A 6x4x3 cm cuboid (E 1e5) tilted 30° and landing on its edge at 0.65 m/s lies flat at
# 0.5 (-30.0°, the lattice within 0.002 spacings of a rigid fit) and came to rest on a lattice defect at 1.0
# (-35.8°). Each halving of this doubles a falling solid's substeps.
SOLID_CFL = 0.5
# A solid particle closer than this many spacings to a static collider's surface (beyond its radius), or
# that would reach it within the substep, and moving into it is held by the solve (``_held``).
CONTACT_REACH = 0.1
# Solves a substep may take while contacts that would pull are let go (``apply``): a body the liquid
# lifts off the floor leaves it in the substep it would.
RELEASE_ROUNDS = 3
# With friction (``elasticity_becker2009_friction``) a round may also let a contact slide: a few more.
FRICTION_ROUNDS = 6


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
        LIQUID_PUSH: ArraySpec((3,), np.float64, 0, "the velocity a liquid's relaxation gave the particle in the last "
                                                    "substep, taken at the start of the next, m/s"),
        GRID_PUSH: ArraySpec((3,), np.float64, 0, "the velocity a liquid's grid projection gave the particle in the "
                                                  "last substep, taken at the start of the next, m/s"),
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
        self._rest = None  # (the solve's ids, their rest positions, rest_pairs of them)
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
    def bond(self, ctx) -> bool:
        """Give particles without a rest state their rest partners, position and rotation (identity);
        whether there were any."""
        a = ctx.arrays
        new = (a["elastic_bonded"] == 0) & self.owned[ctx.material]
        if not new.any():
            return False
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
        return True

    # -- the solve --------------------------------------------------------------------------------
    def apply(self, ctx) -> None:
        """The solve on the solid sub-world: the bonded solid particles with partners, gathered into
        contiguous rows in the order of their ids (``partner`` ids mapped to those rows), so its
        iterations cost nothing for the liquid around them and what the rest state gives
        (``rest_pairs``) holds from one substep to the next until a particle bonds or leaves."""
        bonded_now = self.bond(ctx)
        a = ctx.arrays
        self._take_liquid_push(ctx)
        idx = np.flatnonzero((a["elastic_bonded"] == 1) & (a["rest_partner"][:, 0] >= 0) & self.owned[ctx.material])
        if not len(idx):
            return
        from . import elasticity_becker2009_kernels as k

        idx = idx[np.argsort(ctx.ids[idx], kind="stable")]
        ids = ctx.ids[idx]
        if bonded_now or self._rest is None or not np.array_equal(self._rest[0], ids):
            row_of_id = np.full(ctx.next_id, -1, np.int64)  # -1: gone, or not in the solve
            row_of_id[ids] = np.arange(len(idx))
            rest = a["rest_position"][idx]
            self._rest = (ids, rest, rest_pairs(rest, a["rest_partner"][idx], row_of_id, ctx.material[idx], self.solid,
                                                self.hourglass, ctx.h))
        _, rest, (nb, g, grev, kap, krev, kmom, null) = self._rest
        dt = ctx.dt
        mat, rot = ctx.material[idx], a["rotation"][idx]
        # A melting particle's elastic energy weighs 1 - φ (``phase``) and its damping's viscous stress stays:
        # (M + Δt (Δt (1 - φ) + τ) H) Δv, so the mush flows as a thick liquid, kept from collapsing by the
        # contacts between melting partners (``contact_macklin2014``).
        soft = 1.0 - a["melt"][idx] if "melt" in a else np.ones(len(idx))
        c = dt * (dt * soft + self.tau[mat])
        x, v, mass = ctx.x[idx], ctx.v[idx], self.mass[ctx.material[idx]]
        f, m, df, dm = (np.empty((len(idx), 9)) for _ in range(4))
        material = (self.mu, self.lam, self.green, self.vol)
        own = (rest, nb, g, kap, kmom, null, mat, self.solid, *material)
        pairs = (rest, nb, g, grev, kap, krev, mat, self.solid)
        k.deformation(x, *own, False, rot, f, f, m)
        b = np.empty((len(idx), 3))
        k.forces(x, *pairs, soft, f, m, self.mass, False, b)
        b *= dt
        tmp = np.empty_like(b)
        k.deformation(v, *own, True, rot, f, df, dm)
        k.forces(v, *pairs, c, df, dm, self.mass, False, tmp)
        b += tmp
        blocks = np.empty((len(idx), 9))
        k.preconditioner(nb, g, grev, kap, krev, mat, self.solid, self.mu, self.lam, self.vol, self.mass, c, rot,
                         blocks)
        dv = a["elastic_dv"][idx]
        # The residual's floor: a velocity error of TOLERANCE g Δt on every particle (a body at rest
        # has b ~ 0, and a relative test chased rounding).
        floor = float(np.sqrt(np.sum(mass ** 2))) * max(self.setup.gravity, 1.0) * dt
        held = self._held(ctx, idx)
        friction = None
        if held is None:
            hi, hn, contact = np.zeros(0, np.int64), np.zeros((0, 3)), np.zeros(0, bool)
        else:
            # The held components start at their targets, and the filtered solve keeps them there.
            row = np.empty(ctx.n, np.int64)
            row[idx] = np.arange(len(idx))
            hi, hn, target, contact = row[held[0]], held[1], held[2], held[3]
            k.project_out(dv, hi, hn, np.empty(len(hi)))
            np.add.at(dv, hi, (target - np.einsum("ij,ij->i", v[hi], hn))[:, None] * hn)
            friction = self._friction(ctx, held[0], hi, hn, contact)
            if friction is not None:
                # Sliding: faster than friction at μ g could stop it within the substep.
                friction.start(v, friction.mu * max(self.setup.gravity, 1.0) * dt)
        system = (own, pairs, material, c, rot, f, blocks, floor)
        iterations, residual, hi, hn = self._solve_rounds(k, v, dv, b, system, hi, hn, contact, friction)
        if friction is not None:
            ctx.walls.friction_given = friction.given(ctx.n, idx)
        body = a["source"][idx].astype(np.int64)
        free = np.ones(int(body.max()) + 1, np.bool_)
        free[body[hi]] = False
        # The linearisation's net impulse on each free body, given back (``keep_momenta`` says why).
        k.keep_momenta(x, dv, np.arange(len(idx)), body, free, mass)
        a["rotation"][idx] = rot
        ctx.v[idx] += dv
        a["elastic_dv"][idx] = dv
        self._count(iterations, residual)

    def _solve_rounds(self, k, v, dv, b, system, hi, hn, contact, friction):
        """The filtered solve (``k.solve``) from ``dv`` (mutated) with the held rows ``hi`` along ``hn``, in
        rounds: a contact whose wall would pull is let go, and with ``friction`` (``Friction``, or None) a
        sticking contact outside Coulomb's cone slides; (iterations, residual, the rows held at the end)."""
        own, pairs, material, c, rot, f, blocks, floor = system
        rest, nb, g, kap, kmom, null, mat = own[:7]
        grev, krev = pairs[3], pairs[5]
        df, dm = np.empty((len(dv), 9)), np.empty((len(dv), 9))
        iterations = 0
        for _ in range(RELEASE_ROUNDS if friction is None else FRICTION_ROUNDS):
            if friction is not None:
                friction.hold(dv, v)
            rows, dirs = (hi, hn) if friction is None else friction.held(hi, hn)
            rhs = b if friction is None else friction.right_side(b)
            its, residual = k.solve(rest, nb, g, grev, kap, krev, kmom, null, mat, self.solid, *material, self.mass,
                                    c, rot, f, rhs, dv, blocks, rows, dirs, TOLERANCE, floor, MAX_ITERATIONS)
            iterations += its
            if not len(rows):
                break
            # A contact only pushes: a held row whose wall would have to pull it (the rest of the body,
            # or the liquid's push, lifting it off) is let go and the solve goes on from where it is.
            ap = np.empty_like(b)
            k.deformation(dv, *own, True, rot, f, df, dm)
            k.forces(dv, *pairs, c, df, dm, self.mass, True, ap)
            left = rhs - ap
            pulling = contact & (np.einsum("ij,ij->i", left[hi], hn) > 0.0)
            slid = friction is not None and friction.update(left, v + dv)
            if not pulling.any() and not slid:
                break
            if friction is not None:
                friction.drop(pulling)
            hi, hn, contact = hi[~pulling], hn[~pulling], contact[~pulling]
        return iterations, residual, hi, hn

    def _friction(self, ctx, held, hi, hn, contact):
        """The held contacts (world rows ``held``, solve rows ``hi``, normals ``hn``; ``contact``: not a
        clamp) with friction, as a ``Friction`` (None if none): μ of the nearest static collider, the
        particles a clamp holds left out (their rows are held every way already)."""
        from .elasticity_becker2009_friction import Friction

        mine = contact & ~np.isin(hi, hi[~contact])
        if not mine.any():
            return None
        walls = ctx.walls
        static = walls.static()
        placed = [p[0] for p in walls.placed]
        near = static.nearest(ctx.x[held[mine]])
        mu = np.array([p[0].friction for p in static.placed])[near]
        collider = np.array([placed.index(p[0]) for p in static.placed], np.int64)[near]
        some = mu > 0.0
        if not some.any():
            return None
        of = np.flatnonzero(mine)[some]
        return Friction(of, hi[of], hn[of], mu[some], collider[some])

    def _count(self, iterations: int, residual: float) -> None:
        st = self.stats
        st["solves"] += 1
        st["iterations"] += iterations
        st["most_iterations"] = max(st["most_iterations"], iterations)
        st["worst_residual"] = max(st["worst_residual"], residual)

    def _take_liquid_push(self, ctx) -> None:
        """The liquid's push of the last substep (``relaxation_clavet2005`` holds a solid's particles where they
        are and gives what it would have moved them as a velocity, ``LIQUID_PUSH``), added before the solve.

        Why through the solve: moved by the relaxation, a solid's surface layer took the liquid's whole
        correction as the lighter partner of each pair, and the solve only pulled it back in the next
        substep, after which the passes pushed it in again. A 0.1 m cube of 500 kg/m³ (E = 0.1 MPa) dropped
        in water ended with its bottom two layers 0.3 spacings apart and 70 % of its height, and floated
        0.67 submerged where Archimedes gives 0.5 (a 750 kg/m³ one sank). As a velocity the push meets the
        body's stiffness in the implicit solve, as a force on its surface would."""
        own = self.owned[ctx.material]
        for name in (LIQUID_PUSH, GRID_PUSH):  # the relaxation's, and the grid projection's pressure
            push = ctx.arrays[name]
            ctx.v[own] += push[own]
            push[own] = 0.0

    def _held(self, ctx, idx) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """The solid particles that touch a static collider or would reach it within the substep: (their
        indices, the surface normals, the normal velocity each must end the substep with: the gap
        closed, -gap/Δt, and True for each: a contact, which only pushes; a row held both ways, a
        clamp, would say False). A particle landing is held in the substep it lands in: held only once it
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
        return idx[into], normal[into], target[into], np.ones(int(into.sum()), bool)

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
