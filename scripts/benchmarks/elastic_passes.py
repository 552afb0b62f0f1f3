"""What one iteration of the elastic solve costs: its two passes over the rest pairs timed on their own.

    NUMBA_NUM_THREADS=2 python scripts/benchmarks/elastic_passes.py [--materials rubber_8000] [--calls 50]

Bakes one frame of a ``material_cost`` scene (the rubber cube of 8,000 particles by default), then times
``deformation`` (a velocity field: the operator's first pass), ``forces`` (its second) and the
positions' ``deformation`` (rotations and stress, once a substep) over the solve's rows, the mean of
``--calls`` calls after one untimed call. Prints the rows, the rest pairs and milliseconds a call.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import material_cost  # noqa: E402

from sph_addon.core.terms import elasticity_becker2009_kernels as k  # noqa: E402
from sph_addon.core.world.simulation import Simulation  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--materials", default="rubber_8000", choices=sorted(material_cost.SCENES))
    ap.add_argument("--calls", type=int, default=50)
    args = ap.parse_args(argv)
    path, preset, box = material_cost.SCENES[args.materials]
    sim = Simulation(material_cost._variant(path, preset, 2, box))
    sim.advance_frame()
    term = sim.models[0].term("elasticity_becker2009")
    ids, rest, (nb, g, grev, kap, krev, kmom, null) = term._rest
    st = sim.state
    rows = np.argsort(st.ids)[np.isin(np.sort(st.ids), ids)]
    n = len(ids)
    x, mat, rot = st.x[rows], st.material[rows], st.arrays["rotation"][rows]
    w = np.random.default_rng(0).normal(size=(n, 3))
    f, m, df, dm = (np.empty((n, 9)) for _ in range(4))
    out = np.empty((n, 3))
    material = (term.mu, term.lam, term.green, term.vol)
    c = np.full(n, 1e-4)

    def timed(call):
        call()
        t0 = time.perf_counter()
        for _ in range(args.calls):
            call()
        return round(1e3 * (time.perf_counter() - t0) / args.calls, 3)

    own = (rest, nb, g, kap, kmom, null, mat, term.solid, *material)
    k.deformation(x, *own, False, rot, f, f, m)
    print({"rows": n, "rest_pairs": int((nb >= 0).sum()),
           "deformation_ms": timed(lambda: k.deformation(w, *own, True, rot, f, df, dm)),
           "forces_ms": timed(lambda: k.forces(w, rest, nb, g, grev, kap, krev, mat, term.solid, c, df, dm, term.mass,
                                               True, out)),
           "positions_ms": timed(lambda: k.deformation(x, *own, False, rot.copy(), f, f, m))})
    return 0


if __name__ == "__main__":
    sys.exit(main())
