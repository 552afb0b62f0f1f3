"""The first bake on a machine says that it is compiling the solver (``numerics/compile_watch.py``).

numba fires its compile event only when it compiles a function, not when it loads one from the kernel
cache, so the watch speaks exactly when a bake compiles. The tests compile a fresh function (``cache=False``,
defined in the test: nothing can have compiled it before) inside a bake, and check that a bake whose
kernels are all compiled says nothing.
"""

from __future__ import annotations

import numpy as np
from conftest import scene_dict

from sph_addon import cli
from sph_addon.core import bake as core_bake
from sph_addon.core.numerics.compile_watch import watch_compiles


def _fresh_kernel():
    """A function numba has not compiled yet (a new closure each call)."""
    from numba import njit

    @njit(cache=False)
    def twice(a):
        return 2.0 * a.sum()

    return twice


def _pool() -> dict:
    return scene_dict(particle_spacing=0.05, frame_end=2,
                      materials=[{"name": "water", "preset": "water"}],
                      sources=[{"type": "box", "material": "water", "min": [0, 0, 0], "max": [0.2, 0.2, 0.1]}],
                      colliders=[{"type": "box_container", "size": [0.2, 0.2, 0.4], "position": [0.1, 0.1, 0.2]}])


def test_a_compile_is_announced_then_summed_up_and_a_cached_call_says_nothing():
    said = []
    kernel = _fresh_kernel()
    with watch_compiles(said.append, every=0.0):
        assert kernel(np.ones(3)) == 6.0
    assert said[0].startswith("compiling the solver (the first bake on this machine only")
    assert said[-1].startswith("compiled 1 kernel in ")
    assert len(said) == 3  # the start, one progress line (every=0), the end
    said.clear()
    with watch_compiles(said.append):
        kernel(np.ones(3))
    assert said == []


def test_a_bake_tells_its_notice_while_it_compiles_and_nothing_when_warm(tmp_path, write_scene):
    """The notice is heard during the bake (a kernel compiled from the progress callback, inside the bake) and
    not at all on a second bake of the same scene, whose kernels are all compiled by then."""
    scene = write_scene(_pool())
    notes = []
    kernel = _fresh_kernel()
    core_bake.bake(scene, tmp_path / "a", progress=lambda p: kernel(np.ones(2)), notice=notes.append)
    assert any(n.startswith("compiling the solver") for n in notes), notes
    assert notes[-1].startswith("compiled ")
    notes.clear()
    core_bake.bake(scene, tmp_path / "b", notice=notes.append)
    assert notes == []


def test_the_command_line_prints_the_notice_on_stderr(tmp_path, write_scene, monkeypatch, capsys):
    """``python -m sph_addon bake`` passes a notice that prints: a compile inside the bake reaches stderr."""
    scene = write_scene(_pool())
    kernel = _fresh_kernel()
    locked = core_bake._bake_locked

    def compiling(*args):
        kernel(np.ones(2))
        return locked(*args)

    monkeypatch.setattr(core_bake, "_bake_locked", compiling)
    assert cli.main(["bake", str(scene), "--out", str(tmp_path / "c")]) == 0
    err = capsys.readouterr().err
    assert "compiling the solver (the first bake on this machine only" in err
    assert "compiled 1 kernel in " in err
