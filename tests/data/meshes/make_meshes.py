"""Generate the small committed test meshes in this folder.

Run from the repository root: ``python tests/data/meshes/make_meshes.py``.
Each mesh targets one robustness case of the mesh SDF (tests/core/test_sdf_mesh.py); the splash
tests of tests/core/test_mesh_collider.py drop water onto each of them:

box_internal_face.ply   unit box [-0.5, 0.5]^3 plus an internal wall at x = 0
two_boxes.obj           two intersecting boxes (union is the solid), mixed OBJ corner forms
box_dup_flipped.ply     unit box, every triangle duplicated, half of them flipped
sphere_hole.ply         radius-0.5 sphere (cube-sphere, n = 8) with one triangle removed at +z
plane_quad.ply          single quad [-0.5, 0.5]^2 at z = 0 (for shell mode)
nonmanifold_fin.obj     unit box plus a fin inside it on the edge y = 0.5, z = 0.5,
                        so that edge is shared by three faces
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from reference.analytic_sdf import box_mesh, cube_sphere  # noqa: E402

from sph_addon.core.cache.plyio import write_ply  # noqa: E402


def _ply(name: str, v: np.ndarray, t: np.ndarray) -> None:
    rec = np.zeros(len(v), dtype=[("x", "<f4"), ("y", "<f4"), ("z", "<f4")])
    rec["x"], rec["y"], rec["z"] = v[:, 0], v[:, 1], v[:, 2]
    write_ply(HERE / name, rec, np.asarray(t, np.int32), comments=[f"sph_addon test mesh {name}"])


def _obj_lines(v: np.ndarray, t: np.ndarray, form: int, base: int = 0) -> list[str]:
    lines = [f"v {x:.9g} {y:.9g} {z:.9g}" for x, y, z in v]
    for a, b, c in t + 1 + base:
        if form == 0:
            lines.append(f"f {a} {b} {c}")
        elif form == 1:
            lines.append(f"f {a}/1 {b}/1 {c}/1")
        elif form == 2:
            lines.append(f"f {a}/1/1 {b}/1/1 {c}/1/1")
        else:
            lines.append(f"f {a}//1 {b}//1 {c}//1")
    return lines


def main() -> None:
    bv, bt = box_mesh()
    # Internal wall at x = 0: its edges lie on the box faces.
    wall = np.array([[0, -0.5, -0.5], [0, 0.5, -0.5], [0, 0.5, 0.5], [0, -0.5, 0.5]], float)
    _ply("box_internal_face.ply", np.vstack([bv, wall]),
         np.vstack([bt, [[8, 9, 10], [8, 10, 11]]]))

    av, at = box_mesh((-0.5, -0.5, -0.5), (0.5, 0.5, 0.5))
    cv, ct = box_mesh((0.2, -0.3, -0.3), (1.1, 0.3, 0.3))
    lines = ["# two intersecting boxes", "vt 0 0", "vn 0 0 1", "o A"]
    lines += _obj_lines(av, at[:6], 0) + [f"f {a}/1/1 {b}/1/1 {c}/1/1" for a, b, c in at[6:] + 1]
    lines += ["o B"] + _obj_lines(cv, ct[:6], 1, base=8)
    # The last six faces of B with negative (relative) indices: -8 is B's first vertex.
    lines += [f"f {a - 8}//1 {b - 8}//1 {c - 8}//1" for a, b, c in ct[6:]]
    (HERE / "two_boxes.obj").write_text("\n".join(lines) + "\n")

    flipped = bt[:, ::-1].copy()
    dup = np.vstack([bt, np.where(np.arange(len(bt))[:, None] % 2 == 0, flipped, bt)])
    _ply("box_dup_flipped.ply", bv, dup)

    sv, st = cube_sphere(8, radius=0.5)
    cen = sv[st].mean(axis=1)
    top = int(np.argmax(cen[:, 2]))
    _ply("sphere_hole.ply", sv, np.delete(st, top, axis=0))

    pv = np.array([[-0.5, -0.5, 0], [0.5, -0.5, 0], [0.5, 0.5, 0], [-0.5, 0.5, 0]], float)
    _ply("plane_quad.ply", pv, np.array([[0, 1, 2], [0, 2, 3]]))

    # Fin from the box edge (y = 0.5, z = 0.5) down into the box to y = z = 0.
    fin_v = np.array([[-0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [0.5, 0.0, 0.0], [-0.5, 0.0, 0.0]])
    vv = np.vstack([bv, fin_v])
    # Reuse the box's own edge vertices for the fin so the edge is truly shared (non-manifold).
    i0 = int(np.flatnonzero((bv == fin_v[0]).all(1))[0])
    i1 = int(np.flatnonzero((bv == fin_v[1]).all(1))[0])
    tt = np.vstack([bt, [[i0, i1, 10], [i0, 10, 11]]])
    lines = ["# unit box with an internal fin on a box edge (3 faces share it)"] + _obj_lines(vv, tt, 0)
    (HERE / "nonmanifold_fin.obj").write_text("\n".join(lines) + "\n")
    # atomic_open writes through mkstemp (mode 0600); committed files should be world-readable.
    for f in HERE.glob("*.ply"):
        f.chmod(0o644)


if __name__ == "__main__":
    main()
