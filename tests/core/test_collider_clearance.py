"""Particles out of the colliders' reach are left out of the contact pass (colliders/clearance.py): the
bake is the same bit for bit as when every particle is collided, and most of a resting pool is skipped."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import scene_dict
from reference.analytic_sdf import box_mesh, write_mesh_ply

from sph_addon.core.colliders.contact import clearance
from sph_addon.core.scene.scene_file import parse_scene
from sph_addon.core.world.simulation import Simulation


def _bake(data: dict, folder, frames: int, skip: bool, monkeypatch) -> tuple[Simulation, list[float]]:
    """The simulation after ``frames`` frames, and the share of particles each contact pass looked at."""
    shares = []
    rows = clearance.Clearance.rows

    def counted(self, idx, x, x_prev):
        out = rows(self, idx, x, x_prev)
        shares.append(len(out[1]) / len(x))
        return out

    with monkeypatch.context() as m:
        m.setattr(clearance.Clearance, "rows", counted)
        if not skip:
            m.setattr(clearance.Clearance, "measure", lambda self, *a: setattr(self, "_clearance", None))
        sim = Simulation(parse_scene(data, folder))
        for _ in range(frames):
            sim.advance_frame()
    return sim, shares


@pytest.mark.parametrize("model", ["viscoelastic", "sph"])
def test_skipping_far_particles_changes_no_bit(tmp_path, monkeypatch, model):
    """Honey (prediction-relaxation) and the classic liquid (leapfrog, a contact pass at every micro-step) poured
    over a sticky tank, a ball and a mesh block: positions, velocities and what every collider received
    are the same bytes with and without the clearance, which skipped more than a tenth of the passes'
    particles."""
    write_mesh_ply(tmp_path / "block.ply", *box_mesh((-0.05, -0.05, -0.05), (0.05, 0.05, 0.05)))
    preset = {"viscoelastic": "honey", "sph": "classic_water"}[model]
    data = scene_dict(
        particle_spacing=0.03,
        materials=[{"name": "goo", "model": model, "preset": preset}],
        sources=[{"type": "box", "material": "goo", "min": [0.02, 0.02, 0.02], "max": [0.38, 0.38, 0.3],
                  "velocity": [0.3, 0, -1]}],
        colliders=[{"type": "box_container", "name": "tank", "size": [0.4, 0.4, 1.0], "position": [0.2, 0.2, 0.5],
                    "stickiness": 50.0, "stick_distance": 0.02},
                   {"type": "sphere", "name": "ball", "radius": 0.06, "position": [0.12, 0.2, 0.08]},
                   {"type": "mesh", "name": "block", "path": "block.ply", "position": [0.3, 0.2, 0.06]}])
    frames = 4
    skipped, shares = _bake(data, tmp_path, frames, True, monkeypatch)
    every, all_rows = _bake(data, tmp_path, frames, False, monkeypatch)
    assert all(s == 1.0 for s in all_rows)
    assert np.mean(shares) < 0.9, np.mean(shares)
    assert skipped.state.x.tobytes() == every.state.x.tobytes()
    assert skipped.state.v.tobytes() == every.state.v.tobytes()
    for a, b in zip(skipped.contacts, every.contacts, strict=True):
        assert a.impulse.tobytes() == b.impulse.tobytes() and a.torque.tobytes() == b.torque.tobytes()
    assert any(np.any(c.impulse != 0) for c in skipped.contacts)
