"""Per-frame diagnostics (core/world/diagnostics.py): kinetic energy, surge front, their manifest keys and ``info``."""

import json
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import scene_dict

from sph_addon.cli import main
from sph_addon.core.bake import bake
from sph_addon.core.errors import InputError
from sph_addon.core.scene.scene_file import parse_scene
from sph_addon.core.world.diagnostics import kinetic_energy, material_densities, particle_masses, surge_front

S = 0.05  # particle spacing of the synthetic rows, m


def _row(xs, axis=0) -> np.ndarray:
    x = np.zeros((len(xs), 3))
    x[:, axis] = xs
    return x


# -- the front ------------------------------------------------------------------------------------
def test_front_is_the_edge_of_the_connected_body_not_a_droplet_ahead():
    body = (np.arange(20) + 0.5) * S            # 0.025 .. 0.975: slabs 0..19, front at 1.0 m
    droplet = [1.5, 1.52]                       # slab 30: an empty slab between it and the body
    assert surge_front(_row(body), S) == pytest.approx(1.0)
    assert surge_front(_row(np.r_[body, droplet]), S) == pytest.approx(1.0)
    # A particle touching the body (the next slab) is part of it.
    assert surge_front(_row(np.r_[body, 1.01]), S) == pytest.approx(1.05)


def test_front_direction_minus_and_origin_and_axis():
    # Liquid from x = 2.0 down to 1.0 running towards -x, measured from the wall at 2.0; a droplet at 0.5.
    xs = np.r_[2.0 - (np.arange(20) + 0.5) * S, 0.5]
    assert surge_front(_row(xs), S, axis=0, origin=2.0, direction=-1) == pytest.approx(1.0)
    # The same along y; particles behind the origin (here beyond 2.0) are ignored.
    assert surge_front(_row(np.r_[xs, 2.3], axis=1), S, axis=1, origin=2.0, direction=-1) == pytest.approx(1.0)


def test_front_of_an_empty_world_or_of_liquid_behind_the_origin_is_none():
    assert surge_front(np.zeros((0, 3)), S) is None
    assert surge_front(_row([-0.3, -0.2]), S, origin=0.0, direction=1) is None


# -- kinetic energy --------------------------------------------------------------------------------
def test_kinetic_energy_uses_the_density_each_material_s_model_declares():
    mats = [SimpleNamespace(model="viscoelastic", params=SimpleNamespace(density=1420.0)),
            SimpleNamespace(model="viscoelastic", params=SimpleNamespace(density=1000.0))]
    rho = material_densities(mats)
    assert rho.tolist() == [1420.0, 1000.0]
    mass = particle_masses(rho, np.array([0, 1, 1]), 0.1)
    assert mass == pytest.approx([1.42, 1.0, 1.0])
    v = np.array([[0.0, 0.0, 2.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    assert kinetic_energy(v, mass) == pytest.approx(0.5 * 1.42 * 4 + 0.5 * 1.0 * 1)
    assert kinetic_energy(np.zeros((0, 3)), np.zeros(0)) == 0.0


# -- the scene section -----------------------------------------------------------------------------
@pytest.mark.parametrize("section,where", [
    ({"front": {"axis": "w"}}, "diagnostics.front.axis"),
    ({"front": {"direction": 0}}, "diagnostics.front.direction"),
    ({"front": {"direction": 2}}, "diagnostics.front.direction"),
    ({"front": {"orgin": 1.0}}, "diagnostics.front.orgin"),
    ({"energy": True}, "diagnostics.energy"),
    ([1], "diagnostics"),
])
def test_bad_diagnostics_section_names_the_field(section, where):
    with pytest.raises(InputError) as err:
        parse_scene(scene_dict(diagnostics=section))
    assert err.value.where == where


def test_diagnostics_section_defaults():
    assert parse_scene(scene_dict()).diagnostics == {}
    front = parse_scene(scene_dict(diagnostics={"front": {}})).diagnostics["front"]
    assert front == {"axis": "x", "origin": 0.0, "direction": 1}


# -- bakes -------------------------------------------------------------------------------------------
def _info(capsys, out, *args) -> str:
    capsys.readouterr()
    assert main(["info", str(out), *args]) == 0
    return capsys.readouterr().out


def test_free_fall_manifest_has_energy_and_density_stats(tmp_path, write_scene, capsys):
    """A block falling freely (no collider): kinetic energy is ½ M (g t)² (surface tension moves the
    corners, measured at 4e-5 of it; 0.5 % allowed), and no front is recorded or printed unasked."""
    scene = parse_scene(scene_dict(colliders=[], frame_end=4))
    out = tmp_path / "c"
    manifest = bake(write_scene(scene.raw), out)
    n = manifest["stats"]["1"]["particles"]
    mass = n * 1000.0 * scene.particle_spacing**3  # the water preset's density
    for f in (1, 2, 3, 4):
        s = manifest["stats"][str(f)]
        t = (f - scene.frame_start) / scene.fps
        assert s["kinetic_energy_j"] == pytest.approx(0.5 * mass * (9.81 * t) ** 2, rel=5e-3, abs=1e-9)
        assert 0.0 <= s["density_error_mean"] <= s["density_error_max"] < 0.2
        assert s["density_capped"] == 0 and "front_m" not in s
        if f > 1:
            assert 1 <= s["density_iterations"] <= s["density_iterations_max"]
    text = _info(capsys, out)
    for header in ("density_err_%(mean/max)", "passes(mean/max)", "capped", "kinetic_J"):
        assert header in text.splitlines()[1]
    assert "front" not in text
    assert f"kinetic energy peak {manifest['stats']['4']['kinetic_energy_j']:.4g} J (frame 4)" in text  # < 1000 J


def test_small_dam_break_front_advances_and_info_prints_it(tmp_path, write_scene, capsys):
    data = scene_dict(frame_end=9, sources=[{"type": "box", "material": "water", "min": [0, 0, 0],
                                             "max": [0.3, 0.1, 0.4]}],
                      colliders=[{"type": "box_container", "size": [1.0, 0.1, 0.6], "position": [0.5, 0.05, 0.3]}],
                      diagnostics={"front": {"axis": "x", "origin": 0.0, "direction": 1}})
    out = tmp_path / "dam"
    manifest = bake(write_scene(data), out)
    fronts = [manifest["stats"][str(f)]["front_m"] for f in manifest["frames_done"]]
    assert fronts[0] == pytest.approx(0.3), "the block's own width at the start"
    assert all(b >= a - 0.05 for a, b in zip(fronts, fronts[1:])), f"the front must not retreat: {fronts}"
    assert fronts[-1] >= fronts[0] + 0.15, f"the front must advance: {fronts}"
    assert all(m["kinetic_energy_j"] >= 0 for m in manifest["stats"].values())

    text = _info(capsys, out)
    lines = text.splitlines()
    # header, columns, 9 frames, summary, front line, the derived constants
    assert "front_m" in lines[1] and len(lines) == 2 + 9 + 3
    # The grid projection's solve, a column of its own: iterations every simulated frame, none capped.
    assert "grid_solve(mean/max)" in lines[1]
    assert all(manifest["stats"][str(f)]["projection_iterations"] > 0 for f in range(2, 10))
    assert not any(m["projection_capped"] for m in manifest["stats"].values())
    assert lines[-1].startswith("derived (viscoelastic, first frame's substep): rest_density=")
    assert "gain_m=" in lines[-1] and "stiffness=" in lines[-1]
    derived = manifest["derived"]["viscoelastic"]
    assert derived["stiffness"] == pytest.approx(derived["gain_m"] * (30.0 * manifest["stats"]["2"]["substeps"]) ** 2,
                                                 rel=1e-5)
    assert f"front {fronts[-1]:.3f} m" in text and "along +x from x = 0 m" in text
    # Long bakes: every Nth frame and always the last.
    short = _info(capsys, out, "--every", "4").splitlines()
    assert [int(line.split()[0]) for line in short[2:5]] == [1, 5, 9] and "one frame in 4" in short[5]
    # --json is the manifest: the new keys included.
    stats = json.loads(_info(capsys, out, "--json"))["stats"]["9"]
    assert {"front_m", "kinetic_energy_j", "density_error_mean", "density_error_max", "density_iterations",
            "density_iterations_max", "density_capped"} <= set(stats)
