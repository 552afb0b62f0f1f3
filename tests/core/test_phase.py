"""Phase (core/passes/phase.py): a melting solid's stiffness falls as 1 - φ, a melt amount keyed on the timeline
melts a jelly into a puddle on cue, a liquid below its target's solidus solidifies into an elastic solid
that keeps the shape it froze in, and a bake killed while its particles melt resumes byte-identically."""

from __future__ import annotations

import json
import subprocess
import sys

import numba
import numpy as np
import pytest
from conftest import REPO, scene_dict
from test_bake_cli import killed_after
from test_elastic_cantilever import _cantilever
from test_heat import _jelly_on_a_plate

from sph_addon.core.errors import InputError
from sph_addon.core.models.presets import MELTING_PAIRS
from sph_addon.core.scene.scene_file import parse_scene
from sph_addon.core.world.simulation import Simulation


def test_a_half_melted_beam_bends_twice_as_far():
    """The cantilever of ``test_elastic_cantilever`` (3 particles across, 1 cm) at melt fraction φ = 0.5:
    its stiffness is (1 - φ) E, so its static deflection is Euler-Bernoulli's at E/2 (within 10 %, as the
    solid one's at E) and about twice the solid beam's (measured 1.91: each is the mean of an oscillation over
    0.2 s, the softer one's period √2 longer)."""
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        solid, half = _cantilever(0.01, 3, 0.18), _cantilever(0.01, 3, 0.18, melt=0.5)
    finally:
        numba.set_num_threads(threads)
    assert abs(half[0] / half[1] - 1.0) < 0.10, half
    assert abs(half[0] / solid[0] / 2.0 - 1.0) < 0.1, (half[0], solid[0])


@pytest.mark.parametrize("solidus", [30.0, 100.0])
def test_the_melt_fraction_rises_linearly_from_the_solidus_to_the_liquidus(solidus):
    """Particles of a jelly (liquidus 40 °C) set to temperatures from 20 to 50 °C: the melt fraction is
    (T - solidus) / (liquidus - solidus) clipped to 0..1 (solidus 30), or 0 until the liquidus when the
    solidus is at or above it (the default 100: a sharp melt); past 40 °C the particles are the liquid."""
    data = _jelly_on_a_plate()
    data["materials"][0]["params"]["solidus"] = solidus
    sim = Simulation(parse_scene(data))
    st = sim.state
    temp = np.linspace(20.0, 50.0, st.n)
    st.arrays["temperature"][:] = temp
    sim.phase.update(st, 1.0)
    solid = temp <= 40.0
    expected = np.clip((temp - solidus) / (40.0 - solidus), 0.0, 1.0) if solidus < 40.0 else np.zeros(st.n)
    np.testing.assert_allclose(st.arrays["melt"][solid], expected[solid], rtol=0, atol=1e-12)
    assert np.all(st.material[solid] == 0) and np.all(st.material[~solid] == 1)
    assert np.all(st.arrays["melt"][~solid] == 1.0)


def _keyed_jelly(frame_end: int = 50) -> dict:
    """A 6 cm jelly cube (1 cm spacing) on a floor, its melt amount keyed 0 at frame 20 and 1 at frame 40,
    melting into the sph model's liquid of its density."""
    return scene_dict(
        particle_spacing=0.01, fps=24, frame_end=frame_end,
        materials=[{"name": "jelly", "model": "elastic", "preset": "jelly", "params": {"melts_into": "melted"}},
                   {"name": "melted", "model": "sph", "preset": "classic_water", "params": {"density": 1050.0}}],
        sources=[{"type": "box", "material": "jelly", "min": [-0.03, -0.03, 0], "max": [0.03, 0.03, 0.06],
                  "melt_keyframes": [{"frame": 20, "amount": 0.0}, {"frame": 40, "amount": 1.0}]}],
        colliders=[{"type": "box_container", "name": "floor", "size": [0.4, 0.4, 0.3], "position": [0, 0, 0.15]}])


def test_a_keyed_melt_amount_melts_a_jelly_into_a_puddle_on_cue():
    """Until frame 20 the jelly stands as filled (φ = 0); between the keys φ follows them (the mean at
    frame 30 within 0.02 of 0.5) and the softened cube sags but stays a solid; at frame 40 every particle
    is the liquid (counted in the frame statistics), and by frame 50 it is a puddle under a third of the
    cube's height and wider than it, every particle kept."""
    sim = Simulation(parse_scene(_keyed_jelly()))
    n, top0 = sim.state.n, sim.state.x[:, 2].max()
    melted, seen = 0, {}
    for frame in range(2, 51):
        melted += sim.advance_frame().extra["melted"]
        st = sim.state
        seen[frame] = (st.x[:, 2].max(), float(st.arrays["melt"].mean()), int((st.material == 1).sum()),
                       float(np.abs(st.x[:, :2]).max()))
    assert abs(seen[19][0] - top0) < 0.002 and seen[19][1] == 0.0 and seen[19][2] == 0
    assert abs(seen[30][1] - 0.5) < 0.02 and seen[30][2] == 0 and seen[30][0] < seen[19][0]
    assert seen[40][2] == n == sim.state.n == melted
    assert seen[50][0] < top0 / 3 and seen[50][3] > 0.04, seen[50]


def _lava_on_a_cold_plate() -> dict:
    """Lava (the sph liquid) at 1200 °C poured as a 6 x 6 x 3 cm slab (1 cm spacing) onto a plate held at
    20 °C; it solidifies below 1000 °C into basalt (elastic, same density), which melts back above 1200 °C.
    Conductivity raised (α = 4 / (2700 x 10) = 1.5e-4 m²/s) so the crust forms within a few frames."""
    thermal = {"thermal_conductivity": 4.0, "specific_heat": 10.0}
    return scene_dict(
        particle_spacing=0.01, fps=30, frame_end=10,
        materials=[{"name": "lava", "model": "sph", "preset": "classic_water",
                    "params": {**thermal, "density": 2700.0, "kinematic_viscosity": 0.02, "solidifies_into": "basalt"}},
                   {"name": "basalt", "model": "elastic", "preset": "silicone",
                    "params": {**thermal, "density": 2700.0, "melts_into": "lava", "solidus": 1000.0,
                               "liquidus": 1200.0}}],
        sources=[{"type": "box", "material": "lava", "min": [-0.03, -0.03, 0.0], "max": [0.03, 0.03, 0.03],
                  "temperature": 1200.0}],
        colliders=[{"type": "box_container", "name": "plate", "size": [0.3, 0.3, 0.3], "position": [0, 0, 0.15],
                    "heat_contact": True, "temperature": 20.0}])


def test_lava_on_a_cold_plate_crusts_from_below_into_a_solid_that_keeps_its_shape():
    """The lava's bottom layer, against the cold plate, falls below basalt's solidus and becomes basalt:
    bonded to its neighbours with the positions it froze at as its rest shape (melt fraction 0), while the
    lava above stays liquid (melt fraction 1); once frozen a particle stays within 0.2 spacings of where it
    froze (it no longer flows), and no particle is lost."""
    sim = Simulation(parse_scene(_lava_on_a_cold_plate()))
    n = sim.state.n
    froze_at, solidified = {}, 0
    for _ in range(9):
        solidified += sim.advance_frame().extra["solidified"]
        st = sim.state
        for i, x in zip(st.ids[st.material == 1].tolist(), st.x[st.material == 1]):
            froze_at.setdefault(i, x.copy())
    st = sim.state
    crust = st.material == 1
    assert sim.state.n == n and solidified == len(froze_at) == int(crust.sum()) > 0
    assert st.x[crust, 2].mean() < st.x[~crust, 2].mean()
    assert np.all(st.arrays["elastic_bonded"][crust] == 1) and np.all(st.arrays["rest_partner"][crust, 0] >= 0)
    assert np.all(st.arrays["melt"][crust] < 1.0) and np.all(st.arrays["melt"][~crust] == 1.0)
    moved = np.array([np.linalg.norm(x - froze_at[i]) for i, x in zip(st.ids[crust].tolist(), st.x[crust])])
    assert moved.max() < 0.2 * 0.01, moved.max()


def test_sigkill_while_a_jelly_melts_resumes_byte_identically(tmp_path, write_scene):
    """Killed after frame 3 of the jelly on a hot plate (its bottom layers melted, the rest softening), the
    resumed bake writes the same particle frames, with their temperature and melt fields, as the
    uninterrupted one."""
    data = _jelly_on_a_plate()
    data["materials"][0]["params"]["solidus"] = 30.0
    scene = write_scene(data)
    full, killed = tmp_path / "full", tmp_path / "killed"
    cmd = [sys.executable, "-m", "sph_addon", "bake", str(scene), "--quiet", "--out"]
    assert subprocess.run([*cmd, str(full)], cwd=REPO, capture_output=True).returncode == 0
    stats = json.loads((full / "manifest.json").read_text())["stats"]
    assert stats["3"]["melted"] > 0 and sum(stats[str(f)]["melted"] for f in range(4, 13)) > 0
    done = killed_after(cmd, killed, 3)
    assert 3 <= len(done) < 12, done
    assert subprocess.run([*cmd, str(killed), "--resume"], cwd=REPO, capture_output=True).returncode == 0
    for f in range(1, 13):
        a = (full / "particles" / f"particles_{f:04d}.ply").read_bytes()
        assert a == (killed / "particles" / f"particles_{f:04d}.ply").read_bytes(), f"frame {f} differs"
    assert b"melt" in a and b"temperature" in a


@pytest.mark.parametrize("change, field, says", [
    ({"solidifies_into": "nowhere"}, "materials[0].params.solidifies_into", "not another material"),
    ({"solidifies_into": "lava"}, "materials[0].params.solidifies_into", "not another material"),
])
def test_a_liquid_that_solidifies_into_something_it_cannot_is_refused(change, field, says):
    data = _lava_on_a_cold_plate()
    data["materials"][0]["params"].update(change)
    with pytest.raises(InputError) as err:
        parse_scene(data)
    assert field in str(err.value) and says in str(err.value), str(err.value)


@pytest.mark.parametrize("field", ["melts_into", "solidifies_into"])
def test_materials_that_melt_or_solidify_into_each_other_in_a_ring_are_refused(field):
    """Three jellies each melting (or solidifying) into the next would change every particle's material at
    every substep: refused at the first material's field, naming the ring. Lava and basalt, which melt
    and solidify into each other through the two fields, stay a valid scene."""
    data = _lava_on_a_cold_plate()
    jelly = {"model": "elastic", "preset": "silicone", "params": {"density": 2700.0}}
    data["materials"] = [{**jelly, "name": n, "params": {**jelly["params"], field: into}}
                         for n, into in (("a", "b"), ("b", "c"), ("c", "a"))]
    data["sources"][0]["material"] = "a"
    with pytest.raises(InputError) as err:
        parse_scene(data)
    assert f"materials[0].params.{field}" in str(err.value) and "a -> b -> c -> a" in str(err.value), str(err.value)
    data["materials"][2]["params"].pop(field)
    parse_scene(data)
    parse_scene(_lava_on_a_cold_plate())


def test_melt_keys_on_a_material_that_does_not_melt_are_refused():
    data = _keyed_jelly()
    del data["materials"][0]["params"]["melts_into"]
    with pytest.raises(InputError) as err:
        parse_scene(data)
    assert "sources[0].melt_keyframes" in str(err.value) and "does not melt" in str(err.value)
    data = _keyed_jelly()
    data["sources"][0]["melt_keyframes"][1]["frame"] = 10
    with pytest.raises(InputError) as err:
        parse_scene(data)
    assert "sources[0].melt_keyframes[1].frame" in str(err.value)


@pytest.mark.parametrize("solid, liquid", sorted(MELTING_PAIRS.items()))
def test_every_melting_preset_melts_into_its_liquid(solid, liquid):
    """Each melting preset of the elastic model, melting into its liquid preset of the sph model: the pair is
    a valid scene (the same density), the solid softens over a range (solidus below liquidus) and both
    conduct, so a warm plate melts it."""
    data = scene_dict(particle_spacing=0.02, frame_end=2, materials=[
        {"name": "solid", "model": "elastic", "preset": solid, "params": {"melts_into": "liquid"}},
        {"name": "liquid", "model": "sph", "preset": liquid}],
        sources=[{"type": "box", "material": "solid", "min": [0, 0, 0], "max": [0.1, 0.1, 0.1]}])
    scene = parse_scene(data)
    solid_params, liquid_params = scene.materials[0].params, scene.materials[1].params
    assert solid_params.solidus < solid_params.liquidus
    assert solid_params.thermal_conductivity > 0 and liquid_params.thermal_conductivity > 0
