"""docs/adding_a_model.md followed literally: its example (gravity and linear drag: one term and a model
that lists it) is taken from the page, written beside the built-in terms and models as the page says,
imported and registered with the page's import and registry lines, and baked.

Nothing in the package is edited: the files go to a temporary folder joined to the search path of the
``sph_addon.core.terms`` and ``sph_addon.core.models`` packages, and the registry line is the dict entry
the page shows, applied through ``models.register`` (the same checks as a built-in model's)
(``tests/adding_a_model_page.py``, shared with the Blender test that follows the page's step 8).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from adding_a_model_page import page_model
from conftest import scene_dict

import sph_addon.core
from sph_addon.core.models.base import Look
from sph_addon.core.scene.scene_file import parse_scene
from sph_addon.core.terms.base import Term
from sph_addon.core.world.simulation import Simulation

G = 9.81


@pytest.fixture(scope="module")
def drag_model(tmp_path_factory):
    with page_model(sph_addon.core, tmp_path_factory.mktemp("page_model")) as model:
        yield model


def test_the_page_s_model_is_a_list_of_one_term_and_declares_its_looks(drag_model):
    """The page's example is what the page says a model is: a list of terms, here one term (one method
    from one paper, in a file named after it), and the looks of its presets (the replay shades a preset
    without one with the neutral look)."""
    assert drag_model.name == "drag" and len(drag_model.terms) == 1
    (term,) = drag_model.terms
    assert issubclass(term, Term) and term.name == term.__module__.rsplit(".", 1)[1] == "linear_drag_stokes1851"
    assert term.__module__.startswith("sph_addon.core.terms.") and term.parameters == ("drag",)
    assert set(drag_model.looks) < set(drag_model.presets), "one preset with a look, one without"
    assert all(isinstance(look, Look) for look in drag_model.looks.values())


def _fall(substeps: int, drag: float, frames: int) -> float:
    """Mean vertical velocity (m/s) of a block of the drag model falling from rest, after ``frames``."""
    sand = {"name": "sand", "model": "drag", "preset": "sand", "params": {"drag": drag}}
    sim = Simulation(parse_scene(scene_dict(
        frame_end=1 + frames, materials=[sand], colliders=[], simulation={"substeps": substeps},
        sources=[{"type": "box", "material": "sand", "min": [0, 0, 10], "max": [0.2, 0.2, 10.2]}],
        domain={"min": [-1, -1, -50], "max": [1, 1, 11]})))
    for _ in range(frames):
        sim.advance_frame()
    return float(sim.state.v[:, 2].mean())


def test_the_page_s_model_falls_at_the_analytic_velocity_and_converges_at_first_order(drag_model):
    """From rest, v(t) = -(g/k)(1 - e^{-kt}). The scheme kicks by g Δt and the term decays by e^{-kΔt}:
    first order, an error of about k Δt / 2 of the terminal speed (0.8 % at 40 substeps a frame, k =
    20 1/s). Checked after 1 s (terminal speed reached to 2e-9): within 1.2 % at 40 substeps and half
    of that at 80 (order 1 within 10 %)."""
    k, frames = 20.0, 30
    exact = -(G / k) * (1.0 - math.exp(-k * frames / 30))
    errors = [abs(_fall(substeps, k, frames) - exact) / abs(exact) for substeps in (40, 80)]
    assert errors[0] < 0.012, errors
    assert 1.8 < errors[0] / errors[1] < 2.2, errors


def test_a_block_of_it_beside_the_water_leaves_the_water_s_substeps_and_bytes_alone(drag_model):
    """The water in its tank, alone and with a block of the drag model 3 m away: every frame takes
    the same substeps and ends with the water's positions and velocities the same to the bit (the
    drag model reports no work of its own, and its block is slower than the water)."""
    def bake(with_block: bool):
        data = scene_dict(frame_end=6)
        if with_block:
            data["materials"].append({"name": "sand", "model": "drag", "preset": "sand", "params": {"drag": 100.0}})
            data["sources"].append({"type": "box", "material": "sand", "min": [3, 0, 0.2], "max": [3.2, 0.2, 0.4]})
            data.pop("domain", None)
        sim = Simulation(parse_scene(data))
        out = []
        for _ in range(5):
            stats = sim.advance_frame()
            water = sim.state.material == 0
            order = np.argsort(sim.state.ids[water])
            out.append((stats.substeps, sim.state.x[water][order].copy(), sim.state.v[water][order].copy()))
        return out

    alone, beside = bake(False), bake(True)
    for frame, (a, b) in enumerate(zip(alone, beside), start=2):
        assert a[0] == b[0], f"frame {frame}: {a[0]} substeps alone, {b[0]} beside the block"
        assert a[1].tobytes() == b[1].tobytes() and a[2].tobytes() == b[2].tobytes(), f"frame {frame}"
