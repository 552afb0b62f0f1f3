"""What a material costs against water: the same scene, the same particles, only the preset changed.

``material_cost`` (jelly, honey and rubber at most 3x water at the same particle count):
``scripts/scenes/honey_coil.json`` (honey poured from a nozzle), ``scripts/scenes/jelly_drop.json``
(an elastic jelly cube of 1,000 particles dropped on steps, 2 cm spacing), the same with the ``rubber``
preset (E = 1 MPa), and both with a cube twice as wide (8,000 particles, ``jelly_8000``,
``rubber_8000``), each baked for ``--frames`` frames as it is and with its material switched to water,
alternating, ``--repeats`` times; the JIT is warmed up on a first, untimed run of each. Printed per
scene: median seconds of each, their ratio, substeps per frame, relaxation passes, viscosity and
elastic solve iterations per substep, and particles at the end (an inflow emits the same particles
whatever the preset).
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

from sph_addon.core.scene.scene_file import load_scene, parse_scene  # noqa: E402
from sph_addon.core.world.simulation import Simulation  # noqa: E402

JELLY_DROP = REPO / "scripts" / "scenes" / "jelly_drop.json"
# The 8,000-particle cube: the source box of jelly_drop.json twice as wide, its bottom where it was.
WIDE = {"min": [-0.2, -0.2, 0.6], "max": [0.2, 0.2, 1.0]}
# name -> (scene, the preset its material is baked with: None for the scene's own, its first source's box)
SCENES = {"honey": (REPO / "scripts" / "scenes" / "honey_coil.json", None, None),
          "jelly": (JELLY_DROP, None, None),
          "rubber": (JELLY_DROP, "rubber", None),
          "jelly_8000": (JELLY_DROP, None, WIDE),
          "rubber_8000": (JELLY_DROP, "rubber", WIDE)}
DEFAULT = ("honey", "jelly", "rubber")


def _variant(path: Path, preset: str | None, frames: int, box: dict | None = None):
    base = load_scene(path)
    raw = copy.deepcopy(base.raw)
    raw["frame_end"] = raw["frame_start"] + frames - 1
    if box is not None:
        raw["sources"][0].update(copy.deepcopy(box))
    if preset is not None:
        for m in raw["materials"]:
            m["preset"] = preset
            m.pop("params", None)
    return parse_scene(raw, base.base_dir)


def _bake(path: Path, preset: str | None, frames: int, box: dict | None = None) -> dict:
    sim = Simulation(_variant(path, preset, frames, box))
    t0 = time.perf_counter()
    substeps = passes = viscosity = elastic = 0.0
    for _ in range(frames):
        st = sim.advance_frame()
        substeps += st.substeps
        passes += st.extra.get("density_iterations", 0) * st.substeps
        viscosity += st.extra.get("viscosity_iterations", 0) * st.substeps
        elastic += st.extra.get("elastic_iterations", 0) * st.substeps
    return {"seconds": time.perf_counter() - t0, "substeps": int(substeps), "particles": sim.state.n,
            "substeps_per_frame": round(substeps / frames, 2),
            "passes_per_substep": round(passes / max(substeps, 1), 2),
            "viscosity_iterations_per_substep": round(viscosity / max(substeps, 1), 2),
            "elastic_iterations_per_substep": round(elastic / max(substeps, 1), 2)}


def run(frames: int, repeats: int, names=DEFAULT) -> dict:
    out = {}
    for name in names:
        path, own, box = SCENES[name]
        for preset in (own, "water"):
            _bake(path, preset, frames, box)  # compile, every kernel the scene reaches
        runs = {"material": [], "water": []}
        for _ in range(repeats):
            runs["material"].append(_bake(path, own, frames, box))
            runs["water"].append(_bake(path, "water", frames, box))
        med = {k: statistics.median(r["seconds"] for r in v) for k, v in runs.items()}
        out[name] = {"frames": frames, "material_s": round(med["material"], 3), "water_s": round(med["water"], 3),
                     "ratio": round(med["material"] / med["water"], 3),
                     "material": {k: v for k, v in runs["material"][-1].items() if k != "seconds"},
                     "water": {k: v for k, v in runs["water"][-1].items() if k != "seconds"}}
    return out
