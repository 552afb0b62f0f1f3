"""What a material costs against water: the same scene, the same particles, only the preset changed.

``material_cost`` (issue 11's cost item: jelly and honey at most 3x water at the same particle
count): ``scripts/scenes/honey_coil.json`` (honey poured from a nozzle) and
``scripts/scenes/jelly_drop.json`` (a jelly cube dropped on steps), each baked for ``--frames``
frames as it is and with its material switched to water, alternating, ``--repeats`` times; the
JIT is warmed up on a first, untimed run of each. Printed per scene: median seconds of each,
their ratio, substeps, relaxation passes and viscosity iterations per substep, and particles at
the end (an inflow emits the same particles whatever the preset).
"""

from __future__ import annotations

import copy
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from sph_addon.core.scene import load_scene, parse_scene  # noqa: E402
from sph_addon.core.simulation import Simulation  # noqa: E402

SCENES = {"honey": REPO / "scripts" / "scenes" / "honey_coil.json",
          "jelly": REPO / "scripts" / "scenes" / "jelly_drop.json"}


def _variant(path: Path, preset: str | None, frames: int):
    base = load_scene(path)
    raw = copy.deepcopy(base.raw)
    raw["frame_end"] = raw["frame_start"] + frames - 1
    if preset is not None:
        for m in raw["materials"]:
            m["preset"] = preset
            m.pop("params", None)
    return parse_scene(raw, base.base_dir)


def _bake(path: Path, preset: str | None, frames: int) -> dict:
    sim = Simulation(_variant(path, preset, frames))
    t0 = time.perf_counter()
    substeps = passes = viscosity = 0.0
    for _ in range(frames):
        st = sim.advance_frame()
        substeps += st.substeps
        passes += st.extra.get("density_iterations", 0) * st.substeps
        viscosity += st.extra.get("viscosity_iterations", 0) * st.substeps
    return {"seconds": time.perf_counter() - t0, "substeps": int(substeps), "particles": sim.state.n,
            "passes_per_substep": round(passes / max(substeps, 1), 2),
            "viscosity_iterations_per_substep": round(viscosity / max(substeps, 1), 2)}


def run(frames: int, repeats: int) -> dict:
    out = {}
    for name, path in SCENES.items():
        for preset in (None, "water"):
            _bake(path, preset, 2)  # compile
        runs = {"material": [], "water": []}
        for _ in range(repeats):
            runs["material"].append(_bake(path, None, frames))
            runs["water"].append(_bake(path, "water", frames))
        med = {k: statistics.median(r["seconds"] for r in v) for k, v in runs.items()}
        out[name] = {"frames": frames, "material_s": round(med["material"], 3), "water_s": round(med["water"], 3),
                     "ratio": round(med["material"] / med["water"], 3),
                     "material": {k: v for k, v in runs["material"][-1].items() if k != "seconds"},
                     "water": {k: v for k, v in runs["water"][-1].items() if k != "seconds"}}
    return out
