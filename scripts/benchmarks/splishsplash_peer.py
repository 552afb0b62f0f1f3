"""Run SPlisHSPlasH's DFSPH or WCSPH (pysplishsplash) on the dam break and print JSON timings and its surge front.

Benchmark-only: runs in the bench virtual environment (``scripts/bench.py
--vs splishsplash`` starts it in a subprocess with ``libGLdispatch.so.0``
preloaded, which the wheel needs to import on a machine without a GPU stack).
The scene mirrors ``scripts/scenes/dam_break.json``: a 4 x 1.5 x 3 m tank, a
1 x 1.5 x 2 m water column against one end, particle spacing 0.05 m (radius
0.025 m), Z up, standard parameters of SPlisHSPlasH's own DamBreak example.

The surge front is measured as for our model (``martin_moyce.front``): after the
first time step that reaches each frame time (1/30 s apart), from the fluid's
``position`` field buffer, at that step's actual time. ``wall_s`` excludes the
time spent measuring it. Its initial lattice lies on the bin edges (x = k times
the spacing, in float32), so the front at T = 0 reads short (Z = 0.35 at 0.05 m:
rounding leaves a bin empty) until the particles leave the lattice (by the first
frame); the slope's window (T >= 1.2) is long after.

Usage: python splishsplash_peer.py --seconds 1.0 --spacing 0.05 --threads 2
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

import martin_moyce as mm
import numpy as np

FPS = 30.0
UNIT_BOX_OBJ = """v -0.5 -0.5 -0.5
v 0.5 -0.5 -0.5
v 0.5 0.5 -0.5
v -0.5 0.5 -0.5
v -0.5 -0.5 0.5
v 0.5 -0.5 0.5
v 0.5 0.5 0.5
v -0.5 0.5 0.5
f 1 3 2
f 1 4 3
f 5 6 7
f 5 7 8
f 1 2 6
f 1 6 5
f 2 3 7
f 2 7 6
f 3 4 8
f 3 8 7
f 4 1 5
f 4 5 8
"""


# SPlisHSPlasH's simulationMethod numbers; WCSPH (Becker & Teschner 2007) with its default Tait
# stiffness 50000 and exponent 7, for a side by side with the classic SPH liquid.
METHODS = {"wcsph": 0, "dfsph": 4}


def scene(spacing: float, seconds: float, box_path: str, method: str = "dfsph") -> dict:
    return {
        "Configuration": {
            "particleRadius": spacing / 2, "numberOfStepsPerRenderUpdate": 1, "density0": 1000,
            "simulationMethod": METHODS[method], "gravitation": [0, 0, -9.81], "cflMethod": 1, "cflFactor": 1,
            "cflMaxTimeStepSize": 0.005, "maxIterations": 100, "maxError": 0.01, "maxIterationsV": 100,
            "maxErrorV": 0.1, "enableDivergenceSolver": True, "boundaryHandlingMethod": 0,
            "stopAt": seconds, "enablePartioExport": False, "enableVTKExport": False,
            "enableStateExport": False, "dataExportFPS": 30,
        },
        "Materials": [{"id": "Fluid", "viscosity": 0.01, "viscosityMethod": 1}],
        "RigidBodies": [{
            "geometryFile": box_path, "translation": [2, 0.75, 1.5], "rotationAxis": [1, 0, 0],
            "rotationAngle": 0, "scale": [4, 1.5, 3], "isDynamic": False, "isWall": True,
            "mapInvert": True, "mapThickness": 0.0, "mapResolution": [20, 20, 20], "samplingMode": 1,
        }],
        "FluidBlocks": [{"denseMode": 0, "start": [0, 0, 0], "end": [1, 1.5, 2],
                         "translation": [0, 0, 0], "scale": [1, 1, 1]}],
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--spacing", type=float, default=0.05)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--method", choices=sorted(METHODS), default="dfsph")
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    import pysplishsplash as sph

    work = tempfile.mkdtemp(prefix="splish_")
    box = os.path.join(work, "UnitBox.obj")
    with open(box, "w") as fh:
        fh.write(UNIT_BOX_OBJ)
    path = os.path.join(work, "dam_break.json")
    with open(path, "w") as fh:
        json.dump(scene(args.spacing, args.seconds, box, args.method), fh)
    base = sph.Exec.SimulatorBase()
    t0 = time.perf_counter()
    base.init(["SPlisHSPlasH", "--no-gui", "--no-cache", "--output-dir", work, "--stopAt", str(args.seconds),
               path], "SPlisHSPlasH")
    base.initSimulation()
    sim = sph.Simulation.getCurrent()
    fluid = sim.getFluidModel(0)
    n = fluid.numActiveParticles()
    t1 = time.perf_counter()
    tm = sph.TimeManager.getCurrent()
    cfg = scene(args.spacing, args.seconds, box, args.method)
    body, block = cfg["RigidBodies"][0], cfg["FluidBlocks"][0]
    wall = body["translation"][0] - body["scale"][0] / 2  # the tank's back wall (x)
    width = block["end"][0] - block["start"][0]  # a, the column's width along the surge
    g = float(np.linalg.norm(cfg["Configuration"]["gravitation"]))
    x0 = np.asarray(fluid.getFieldBuffer("position"))[:n, 0]
    run = {"steps": 0, "next_frame": 1, "measure_s": 0.0,
           "fronts": [(0.0, round(mm.front(x0, wall, args.spacing) / width, 4))]}

    # runSimulation loops until stopAt without a GUI; timeStepNoGUI() called from
    # Python segfaults in 2.19.0 (measured), so count steps (and take the front at
    # each frame time) through the callback, which runs after every time step.
    def after_step():
        run["steps"] += 1
        t = tm.getTime()
        if t < run["next_frame"] / FPS - 1e-9:
            return
        m0 = time.perf_counter()
        x = np.asarray(fluid.getFieldBuffer("position"))[:fluid.numActiveParticles(), 0]
        z = mm.front(x, wall, args.spacing)
        run["fronts"].append((round(mm.nondim_time(t, width, g), 4), round(z / width, 4)))
        while run["next_frame"] / FPS <= t + 1e-9:
            run["next_frame"] += 1
        run["measure_s"] += time.perf_counter() - m0

    base.setTimeStepCB(after_step)
    base.runSimulation()
    t2 = time.perf_counter()
    simulated = tm.getTime()  # read before cleanup(), which frees the time manager
    base.cleanup()
    slope = mm.front_slope(run["fronts"])
    json.dump({"particles": int(n), "init_s": t1 - t0, "wall_s": t2 - t1 - run["measure_s"], "steps": run["steps"],
               "simulated_s": simulated, "front_slope": slope, "front_error": mm.front_error(slope),
               "fronts": run["fronts"]}, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
