"""Numba kernels of Clavet's springs (thesis Algorithm 5, eqs. 5.1-5.2; dynamic springs from the SCA
2005 paper, mould springs as in thesis fig. 5.3): creation, plasticity and Maxwell relaxation of the
rest lengths, and the springs' linearised forces for the implicit solve (``viscosity_weiler2018``).

Conventions and deviations, each for a stated reason:

* **Springs** are stored per particle, in both endpoints' rows, keyed by the
  partner's stable id, and their rest lengths updated in Jacobi form (each row
  from the same positions); both copies evolve from identical inputs and stay
  equal. Their forces are not Algorithm 5's explicit displacements but a
  backward-Euler solve with the viscosity (:func:`spring_terms`).
* **Whole pair terms**, like the thesis (not the SCA paper, which splits each pair term half and
  half), so stiffness values match the thesis' scale.
* **Coincident particles** (r = 0) are left out of every pair term: their
  direction r̂_ij is undefined.
* **Materials.** Springs only join particles of the same material.
"""

from __future__ import annotations

from ..numerics import config
from ..numerics.kernel_cache import njit, prange
from ..numerics.pair_kernels import pair_offset


@njit(**config.NJIT_PARALLEL)
def add_springs(x, ids, mat, source, bonded, nbr, count, dynamic, mould, h, partner, rest, used_out):
    """Create springs (SCA 2005 Algorithm 5 preamble; thesis fig. 5.3 for moulds).

    Dynamic materials: every same-material neighbour pair with q < 1 and no spring
    gets one with its current distance as rest length, so it is stress-free when made
    and its elasticity is set by E alone (SCA 2005 gives it rest length h, which
    exerts nothing until plasticity has shortened it: an elasticity that depended on
    the history). Mould materials: particles not yet bonded get springs to
    same-material, same-source, not-yet-bonded neighbours with their current
    distance as rest length (then ``bonded`` is set by the caller).

    Parameters
    ----------
    x : (n,3) positions, m. ids : (n,) int64 stable ids. mat : (n,) uint8.
    source : (n,) int16. bonded : (n,) uint8.
    dynamic, mould : per-material uint8 flags of the spring mode (neither: no springs).
    partner : (n,S) int64, mutated: partner ids, -1 for a free slot.
    rest : (n,S) float64, mutated: rest lengths L, m.

    used_out : (n,) int64, mutated: slots each row needed. Where that exceeds S the
    caller grows S and calls again; rows are completed on the second call because
    existing springs are skipped.
    """
    n = x.shape[0]
    width = partner.shape[1]
    inv_h = 1.0 / h
    for i in prange(n):
        mi = mat[i]
        is_dynamic = dynamic[mi] != 0
        is_mould = mould[mi] != 0
        used = 0
        for s in range(width):
            if partner[i, s] >= 0:
                used += 1
        if not (is_dynamic or is_mould) or (is_mould and bonded[i] != 0):
            used_out[i] = used
            continue
        for kk in range(count[i]):
            j = nbr[i, kk]
            if mat[j] != mi:
                continue
            if is_mould and (bonded[j] != 0 or source[j] != source[i]):
                continue
            ex, ey, ez, r = pair_offset(x, i, j)
            if r * inv_h >= 1.0:
                continue
            pid = ids[j]
            exists = False
            free = -1
            for s in range(width):
                p = partner[i, s]
                if p == pid:
                    exists = True
                    break
                if p < 0 and free < 0:
                    free = s
            if exists:
                continue
            used += 1
            if free >= 0:
                partner[i, free] = pid
                rest[i, free] = r
        used_out[i] = used


@njit(**config.NJIT_PARALLEL)
def spring_plasticity(x, mat, index_of_id, partner, rest, alpha, gamma, relax, h, dt):
    """Maxwell relaxation, spring plasticity (Clavet eq. 5.2) and spring removal, on the predicted positions.

    Maxwell relaxation first: L += (r - L) c with c = 1 - exp(-Δt/τ) (``relax``). A spring is then
    a spring in series with a dashpot: held at a fixed length r, its extension r - L, hence its
    force, decays exactly as exp(-t/τ) whatever the substep; with the network's shear modulus
    G = E/3 its dashpot is a viscosity η = G τ. Then Clavet's plasticity on top: rest lengths
    change by ΔL = Δt α sign(r-L) max(0, |r-L| - γL); springs whose
    partner is gone or whose L reaches h are removed (SCA 2005), since the factor
    (1 - L/h) of Algorithm 5 would otherwise reverse the force. Deviation from
    Algorithm 5: the springs' displacements are not applied here; their forces are
    solved implicitly with the velocities (``viscosity_weiler2018_kernels.spring_terms``),
    so the substep no longer depends on k_spring.

    Parameters
    ----------
    x : (n,3) predicted positions, m (read).
    index_of_id : (max_id+1,) int64 current index of each id, -1 if gone.
    partner, rest : (n,S) spring rows; mutated (plasticity, removal).
    alpha (1/s), gamma : per-material arrays.
    relax : per-material share 1 - exp(-Δt/τ) of (r - L) removed this substep (0: no relaxation).
    """
    n = x.shape[0]
    width = partner.shape[1]
    for i in prange(n):
        mi = mat[i]
        al = alpha[mi]
        ga = gamma[mi]
        c = relax[mi]
        for s in range(width):
            pid = partner[i, s]
            if pid < 0:
                continue
            j = index_of_id[pid] if pid < index_of_id.shape[0] else -1
            if j < 0:
                partner[i, s] = -1
                continue
            L = rest[i, s]
            if al > 0.0 or c > 0.0:
                ex, ey, ez, r = pair_offset(x, i, j)
                if c > 0.0:
                    L += (r - L) * c
                    rest[i, s] = L
                dev = r - L
                excess = abs(dev) - ga * L
                if excess > 0.0:
                    L += dt * al * excess * (1.0 if dev > 0.0 else -1.0)
                    rest[i, s] = L
            if L >= h:
                partner[i, s] = -1


@njit(**config.NJIT_PARALLEL)
def spring_terms(x, mat, index_of_id, partner, rest, k_spring, h, dt, sj, sw, se, dv):
    """The springs' part of the backward-Euler system at the current positions (Clavet Algorithm 5).

    For each spring of particle i (rows as ``springs_clavet2005_kernels.add_springs`` stores
    them, both endpoints' rows), rest length L < h, partner j at distance r > 0 along r̂_ij:

    * its force per unit mass, Clavet's displacement D / Δt² made a force,
      a_ij = k_spring (1 - L/h) (r - L) r̂_ij, and ``dv[i] = Δt Σ_j a_ij`` (the explicit impulse);
    * its stiffness, the Jacobian of a_ij in x_j: κ_ij r̂ r̂ᵀ (axial, κ_ij = k_spring (1 - L/h), 1/s²)
      plus κ_ij (1 - L/r) (I - r̂ r̂ᵀ) (transverse, the geometric term), stored as
      ``sw[i, s] = (Δt² κ_ij, Δt² κ_ij max(0, 1 - L/r))`` (dimensionless) with ``se[i, s] = r̂_ij``
      and ``sj[i, s] = j``.

    The transverse term is kept for stretched springs only (as Choi & Ko 2002 do for cloth): for
    compressed ones it is negative and could make the system indefinite, so it stays in the explicit
    force (a physical buckling drive). Keeping the stretched springs' part matters: left explicit,
    it is a stiffness Δt² κ (1 - L/r) per spring that grows with E, and a rubber block (E = 1 MPa)
    boiled at 5 substeps per frame without it (measured). Springs whose partner is gone, at L >= h,
    or with coincident endpoints get ``sj = -1`` (removal itself stays with the plasticity kernel,
    in the position stage).

    Parameters
    ----------
    x : (n,3) positions, m. mat : (n,) material ids. index_of_id : (m,) int64 index of each id, -1 gone.
    partner : (n,S) int64 partner ids, -1 free. rest : (n,S) float64 rest lengths, m.
    k_spring : per-material Clavet k_spring, 1/s². h : interaction radius, m. dt : substep, s.
    sj : (n,S) int64, sw : (n,S,2) float64, se : (n,S,3) float64, dv : (n,3) float64 (m/s): written.
    """
    n = x.shape[0]
    width = partner.shape[1]
    inv_h = 1.0 / h
    for i in prange(n):
        ks = k_spring[mat[i]]
        sx = 0.0
        sy = 0.0
        sz = 0.0
        for s in range(width):
            sj[i, s] = -1
            pid = partner[i, s]
            if pid < 0 or ks == 0.0:
                continue
            j = index_of_id[pid] if pid < index_of_id.shape[0] else -1
            L = rest[i, s]
            if j < 0 or L >= h:
                continue
            ex, ey, ez, r = pair_offset(x, i, j)
            if r == 0.0:
                continue
            ex /= r
            ey /= r
            ez /= r
            kappa = ks * (1.0 - L * inv_h)
            f = dt * kappa * (r - L)
            sx += f * ex
            sy += f * ey
            sz += f * ez
            sj[i, s] = j
            sw[i, s, 0] = dt * dt * kappa
            sw[i, s, 1] = dt * dt * kappa * max(0.0, 1.0 - L / r)
            se[i, s, 0] = ex
            se[i, s, 1] = ey
            se[i, s, 2] = ez
        dv[i, 0] = sx
        dv[i, 1] = sy
        dv[i, 2] = sz
