"""A simulation's whole state as a checkpoint, and back: what ``bake`` writes and ``--resume`` reads.

The per-particle arrays go as they are; the rest (time, ids, removed counts, the inflows' emitted
volumes, the models' and the blow-up watch's state, the world passes' (the dynamic bodies')) as JSON-safe values, floats
exact (JSON round-trips them), so a resumed bake continues to the same bytes.
"""

from __future__ import annotations

import numpy as np


def capture(sim) -> tuple[dict[str, np.ndarray], dict]:
    """(arrays, meta) of a ``simulation.Simulation``."""
    st = sim.state
    meta = {"frame": sim.frame, "time": st.time, "next_id": st.next_id,
            "removed": {str(k): v for k, v in st.removed.items()},
            "inflow_volume": [f.emitted_volume for f in sim.inflows],
            "models": {m.name: m.state_dict() for m in sim.models}, "watch": sim.watch.state_dict(),
            "substeps": sim.last_substeps}
    for p in sim.passes:  # a pass that is none writes nothing: the checkpoints of scenes without it as before
        if p.checkpointed:
            meta[p.name] = p.state_dict()
    return dict(st.arrays), meta


def restore(sim, arrays: dict[str, np.ndarray], meta: dict) -> None:
    """Load into ``sim`` a checkpoint :func:`capture` made of the same scene."""
    st = sim.state
    for name, arr in arrays.items():
        st.arrays[name] = np.ascontiguousarray(arr)
        st._specs[name] = (arr.shape[1:], arr.dtype)
    st.next_id = int(meta["next_id"])
    st.time = float(meta["time"])
    st.removed = {int(k): int(v) for k, v in meta["removed"].items()}
    sim.frame = int(meta["frame"])
    sim.last_substeps = int(meta.get("substeps", 0))
    for f, vol in zip(sim.inflows, meta["inflow_volume"]):
        f.emitted_volume = float(vol)
    for model in sim.models:
        model.load_state_dict(meta.get("models", {}).get(model.name, {}))
    sim.watch.load_state_dict(meta.get("watch"))
    for p in sim.passes:
        if p.checkpointed:
            p.load_state_dict(meta[p.name])
