"""3x3 matrices as 9-tuples (row-major) inside numba kernels: products, the symmetric eigenproblem, the
pseudo-inverse and the rotation of a polar decomposition.

Tuples of floats stay in registers: a kernel that allocated a (3,3) array per particle and pass spent
more time in the allocator than in the arithmetic. Numba's ``np.linalg`` needs SciPy's LAPACK, which
the extension does not ship, so the eigensolver is a cyclic Jacobi iteration (exact to rounding for
3x3) and the rotation is Müller et al.'s iteration (2016, "A Robust Method to Extract the Rotational
Part of Deformations", MIG '16), warm-started from the last substep's rotation, which is defined for
rank-deficient matrices too and keeps a rotation continuous in time (an SVD may flip its axes).
"""

from __future__ import annotations

import math

from . import config
from .kernel_cache import njit


@njit(**config.NJIT)
def mat_mul(a, b):
    return (a[0] * b[0] + a[1] * b[3] + a[2] * b[6], a[0] * b[1] + a[1] * b[4] + a[2] * b[7],
            a[0] * b[2] + a[1] * b[5] + a[2] * b[8],
            a[3] * b[0] + a[4] * b[3] + a[5] * b[6], a[3] * b[1] + a[4] * b[4] + a[5] * b[7],
            a[3] * b[2] + a[4] * b[5] + a[5] * b[8],
            a[6] * b[0] + a[7] * b[3] + a[8] * b[6], a[6] * b[1] + a[7] * b[4] + a[8] * b[7],
            a[6] * b[2] + a[7] * b[5] + a[8] * b[8])


@njit(**config.NJIT)
def mat_t(a):
    return (a[0], a[3], a[6], a[1], a[4], a[7], a[2], a[5], a[8])


@njit(**config.NJIT)
def mat_vec(a, x, y, z):
    return (a[0] * x + a[1] * y + a[2] * z, a[3] * x + a[4] * y + a[5] * z, a[6] * x + a[7] * y + a[8] * z)


@njit(**config.NJIT)
def mat_add(a, b, s):
    """a + s b."""
    return (a[0] + s * b[0], a[1] + s * b[1], a[2] + s * b[2], a[3] + s * b[3], a[4] + s * b[4],
            a[5] + s * b[5], a[6] + s * b[6], a[7] + s * b[7], a[8] + s * b[8])


@njit(**config.NJIT)
def outer_add(a, s, ux, uy, uz, vx, vy, vz):
    """a + s u vᵀ."""
    return (a[0] + s * ux * vx, a[1] + s * ux * vy, a[2] + s * ux * vz,
            a[3] + s * uy * vx, a[4] + s * uy * vy, a[5] + s * uy * vz,
            a[6] + s * uz * vx, a[7] + s * uz * vy, a[8] + s * uz * vz)


@njit(**config.NJIT)
def load(arr, i):
    return (arr[i, 0], arr[i, 1], arr[i, 2], arr[i, 3], arr[i, 4], arr[i, 5], arr[i, 6], arr[i, 7], arr[i, 8])


@njit(**config.NJIT)
def store(arr, i, a):
    for k in range(9):
        arr[i, k] = a[k]


@njit(**config.NJIT)
def inverse(a):
    """The inverse of a (assumed invertible: a block of an SPD matrix)."""
    c0 = a[4] * a[8] - a[5] * a[7]
    c1 = a[5] * a[6] - a[3] * a[8]
    c2 = a[3] * a[7] - a[4] * a[6]
    inv_det = 1.0 / (a[0] * c0 + a[1] * c1 + a[2] * c2)
    return (c0 * inv_det, (a[2] * a[7] - a[1] * a[8]) * inv_det, (a[1] * a[5] - a[2] * a[4]) * inv_det,
            c1 * inv_det, (a[0] * a[8] - a[2] * a[6]) * inv_det, (a[2] * a[3] - a[0] * a[5]) * inv_det,
            c2 * inv_det, (a[1] * a[6] - a[0] * a[7]) * inv_det, (a[0] * a[4] - a[1] * a[3]) * inv_det)


@njit(**config.NJIT)
def _rotate(a, v, p, q):
    """One Jacobi rotation zeroing a[p,q] of the symmetric ``a`` (a (3,3) array), accumulated into v."""
    apq = a[p, q]
    if apq == 0.0:
        return
    theta = (a[q, q] - a[p, p]) / (2.0 * apq)
    t = (1.0 if theta >= 0.0 else -1.0) / (abs(theta) + math.sqrt(theta * theta + 1.0))
    c = 1.0 / math.sqrt(t * t + 1.0)
    s = t * c
    for k in range(3):
        akp = a[k, p]
        akq = a[k, q]
        a[k, p] = c * akp - s * akq
        a[k, q] = s * akp + c * akq
    for k in range(3):
        apk = a[p, k]
        aqk = a[q, k]
        a[p, k] = c * apk - s * aqk
        a[q, k] = s * apk + c * aqk
    for k in range(3):
        vkp = v[k, p]
        vkq = v[k, q]
        v[k, p] = c * vkp - s * vkq
        v[k, q] = s * vkp + c * vkq


@njit(**config.NJIT)
def pseudo_inverse_sym(m, a, v, rel_tol):
    """(pseudo-inverse of the symmetric m, projector onto its null space), eigenvalues below ``rel_tol``
    times the largest taken as zero. ``a``, ``v`` : (3,3) scratch arrays."""
    for r in range(3):
        for c in range(3):
            a[r, c] = m[3 * r + c]
            v[r, c] = 1.0 if r == c else 0.0
    for _ in range(12):
        off = a[0, 1] * a[0, 1] + a[0, 2] * a[0, 2] + a[1, 2] * a[1, 2]
        if off <= 1e-30 * (a[0, 0] * a[0, 0] + a[1, 1] * a[1, 1] + a[2, 2] * a[2, 2]):
            break
        _rotate(a, v, 0, 1)
        _rotate(a, v, 0, 2)
        _rotate(a, v, 1, 2)
    top = max(abs(a[0, 0]), abs(a[1, 1]), abs(a[2, 2]))
    inv = (0.0,) * 9
    null = (0.0,) * 9
    for k in range(3):
        lam = a[k, k]
        if top > 0.0 and lam > rel_tol * top:
            inv = outer_add(inv, 1.0 / lam, v[0, k], v[1, k], v[2, k], v[0, k], v[1, k], v[2, k])
        else:
            null = outer_add(null, 1.0, v[0, k], v[1, k], v[2, k], v[0, k], v[1, k], v[2, k])
    return inv, null


@njit(**config.NJIT)
def _quat_of(r):
    """Unit quaternion (w, x, y, z) of the rotation matrix r (Shepperd's method)."""
    tr = r[0] + r[4] + r[8]
    if tr > 0.0:
        s = 2.0 * math.sqrt(tr + 1.0)
        w, x, y, z = 0.25 * s, (r[7] - r[5]) / s, (r[2] - r[6]) / s, (r[3] - r[1]) / s
    elif r[0] > r[4] and r[0] > r[8]:
        s = 2.0 * math.sqrt(1.0 + r[0] - r[4] - r[8])
        w, x, y, z = (r[7] - r[5]) / s, 0.25 * s, (r[1] + r[3]) / s, (r[2] + r[6]) / s
    elif r[4] > r[8]:
        s = 2.0 * math.sqrt(1.0 + r[4] - r[0] - r[8])
        w, x, y, z = (r[2] - r[6]) / s, (r[1] + r[3]) / s, 0.25 * s, (r[5] + r[7]) / s
    else:
        s = 2.0 * math.sqrt(1.0 + r[8] - r[0] - r[4])
        w, x, y, z = (r[3] - r[1]) / s, (r[2] + r[6]) / s, (r[5] + r[7]) / s, 0.25 * s
    n = 1.0 / math.sqrt(w * w + x * x + y * y + z * z)
    return w * n, x * n, y * n, z * n


@njit(**config.NJIT)
def _matrix_of(w, x, y, z):
    return (1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y),
            2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x),
            2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y))


@njit(**config.NJIT)
def polar_rotation(f, r0, tol, max_iterations, null_rank=0.0):
    """The rotation R maximising tr(Rᵀ f) (that of f's polar decomposition when f is invertible), by
    Müller et al. 2016's iteration from the rotation ``r0``: R turns about ω = Σ_k r_k × f_k / |Σ_k r_k · f_k|
    (r_k, f_k the columns) until |ω| < ``tol`` rad.

    ``null_rank`` = tr N for an f that is rank-deficient with null-space projector N: the iteration is then
    that of the completed matrix f + R N with R the current iterate, so the result is the fixed point
    R = polar(f + R N) rather than a blend with ``r0``: R N's columns add no torque (Σ_k r_k × (R N)_k = 0,
    N symmetric) and tr(Rᵀ R N) = tr N to the denominator. Where f's rank is 1 (a rod), the turn about
    its axis is free and stays that of ``r0``."""
    qw, qx, qy, qz = _quat_of(r0)
    r = _matrix_of(qw, qx, qy, qz)
    for _ in range(max_iterations):
        ox = (r[3] * f[6] - r[6] * f[3]) + (r[4] * f[7] - r[7] * f[4]) + (r[5] * f[8] - r[8] * f[5])
        oy = (r[6] * f[0] - r[0] * f[6]) + (r[7] * f[1] - r[1] * f[7]) + (r[8] * f[2] - r[2] * f[8])
        oz = (r[0] * f[3] - r[3] * f[0]) + (r[1] * f[4] - r[4] * f[1]) + (r[2] * f[5] - r[5] * f[2])
        dot = (r[0] * f[0] + r[3] * f[3] + r[6] * f[6] + r[1] * f[1] + r[4] * f[4] + r[7] * f[7]
               + r[2] * f[2] + r[5] * f[5] + r[8] * f[8]) + null_rank
        scale = 1.0 / (abs(dot) + 1e-300)
        ox *= scale
        oy *= scale
        oz *= scale
        angle = math.sqrt(ox * ox + oy * oy + oz * oz)
        if angle < tol:
            break
        s = math.sin(0.5 * angle) / angle
        aw, ax, ay, az = math.cos(0.5 * angle), ox * s, oy * s, oz * s
        qw, qx, qy, qz = (aw * qw - ax * qx - ay * qy - az * qz, aw * qx + ax * qw + ay * qz - az * qy,
                          aw * qy - ax * qz + ay * qw + az * qx, aw * qz + ax * qy - ay * qx + az * qw)
        n = 1.0 / math.sqrt(qw * qw + qx * qx + qy * qy + qz * qz)
        qw, qx, qy, qz = qw * n, qx * n, qy * n, qz * n
        r = _matrix_of(qw, qx, qy, qz)
    return r
