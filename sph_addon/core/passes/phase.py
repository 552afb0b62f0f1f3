"""Phase: solids that soften, melt into a liquid and solidify back (Becker et al. 2009, section 5), driven
by the temperature (``heat``) or by a melt amount keyed on the timeline, in one particle array.

Each particle of a material that melts (``melts_into``) carries its melt fraction φ ∈ [0, 1] (the
array ``melt``, written to the cache), the larger of

* the temperature's, φ_T = (T - T_s) / (T_l - T_s) clipped to [0, 1] between the material's ``solidus`` T_s
  and ``liquidus`` T_l (a solidus at or above the liquidus: 0 below the liquidus), and
* its source's keyed ``melt_keyframes`` amount at the frame (linear between keys), for shots that melt on cue.

What φ does (the declared curve): an elastic solid's stress falls as (1 - φ) while its Kelvin-Voigt
damping's viscous stress τ E ε̇ stays (``elasticity_becker2009``), so a warm solid sags and, near the
liquidus, flows as a thick liquid of viscosity about τ μ. Past the liquidus (T > T_l) or at a keyed amount of
1, the particle becomes the liquid material: the id alone changes, so it keeps its place, velocity, mass
(the liquid has the solid's density) and temperature, leaves the solid's rest state (its partners see it
gone) and is taken up by the liquid's model at the next substep. The liquid's particles carry φ = 1.

Solidifying: a material with ``solidifies_into`` becomes that material once its temperature falls below the
target's solidus (and its source's keyed amount is below 1); an elastic target's body (the particles of
that material from the same source) takes the positions of that moment as its new rest shape, the new
particles bonded in (``elastic_bonded`` cleared: the rest state is rebuilt at the next substep). Lava
crusts this way into basalt; while it freezes the crust's elastic strain is let go at every substep a
particle joins it (it creeps under a load then), and it holds its shape once no more particles freeze.

No latent heat: the heat a particle takes to melt is that of warming it by the same degrees (c_p alone), so
the melt front is the liquidus isotherm of the conduction (``tests/core/test_heat.py``), a few per cent
ahead of a front that would have to absorb a latent heat L with a Stefan number c_p ΔT / L of order 1.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..scene.params import resolve
from .base import PassSetup, WorldPass
from .heat_parameters import MELT_KEY_PARAMETERS


def parse_melt_keys(keys, where: str) -> list[dict]:
    """Checked ``melt_keyframes`` of a source: a list of {frame, amount} in increasing frame order."""
    if not isinstance(keys, list):
        raise InputError(f"{where}.melt_keyframes", "expected a list of {frame, amount}")
    out: list[dict] = []
    for k, key in enumerate(keys):
        kp = resolve(MELT_KEY_PARAMETERS, key, f"{where}.melt_keyframes[{k}]")
        if out and kp["frame"] <= out[-1]["frame"]:
            raise InputError(f"{where}.melt_keyframes[{k}].frame", "keyframes must be in increasing frame order")
        out.append(kp)
    return out


def check_phases(materials, densities: list[float], sources) -> None:
    """A material that melts or solidifies names another material of the scene, of its own density (a
    particle keeps its mass); a source's keyed melt amount needs a material that melts."""
    names = [m.name for m in materials]
    for k, m in enumerate(materials):
        for field in ("melts_into", "solidifies_into"):
            into = getattr(m.params, field)
            if not into:
                continue
            where = f"materials[{k}].params.{field}"
            if into not in names or into == m.name:
                raise InputError(where, f"{into!r} is not another material of the scene; name one of "
                                        f"{', '.join(n for n in names if n != m.name) or '(none: add one)'}")
            other = densities[names.index(into)]
            if abs(other - densities[k]) > 1e-9 * densities[k]:
                raise InputError(where, f"{into!r} has density {other:g} kg/m^3 and {m.name!r} {densities[k]:g}: a "
                                        f"particle keeps its mass when it changes phase, so give both the same "
                                        f"density")
    for field in ("melts_into", "solidifies_into"):
        _refuse_rings(materials, names, field)
    for k, (_, p) in enumerate(sources):
        if p.get("melt_keyframes") and not getattr(materials[names.index(p["material"])].params, "melts_into", ""):
            raise InputError(f"sources[{k}].melt_keyframes", f"{p['material']!r} does not melt: set its Melts Into "
                                                             "to the liquid it becomes, or remove the melt keys")


def _refuse_rings(materials, names: list[str], field: str) -> None:
    """Materials that ``field`` leads round back to where they started (a melts into b, b into c, c into a):
    every particle would change material at every substep. A pair that melts one way and solidifies the
    other (lava and basalt) is two fields, not a ring."""
    for k in range(len(materials)):
        seen = [k]
        into = getattr(materials[k].params, field)
        while into:
            j = names.index(into)
            if j == k:
                ring = " -> ".join(names[i] for i in seen + [k])
                verb = "melt" if field == "melts_into" else "solidify"
                raise InputError(f"materials[{k}].params.{field}", f"these materials {verb} into one another in a "
                                                                     f"ring ({ring}), so every particle would change "
                                                                     "material every substep: end the ring at a "
                                                                     "material that does not")
            if j in seen:
                break  # a ring that does not pass through k: reported from a material on it
            seen.append(j)
            into = getattr(materials[j].params, field)


class Phase(WorldPass):
    """The melt fraction and phase changes of a bake: built from the scene, none when nothing melts or
    solidifies (no ``melt`` array, the cache as before)."""

    name = "phase"

    @classmethod
    def build(cls, setup: PassSetup) -> Phase:
        return cls(setup.scene, setup.state)

    def __init__(self, scene, state):
        mats = scene.materials
        names = [m.name for m in mats]

        def ids(field: str) -> np.ndarray:
            return np.array([names.index(getattr(m.params, field)) if getattr(m.params, field) else -1
                             for m in mats], np.int64)

        self.into, self.freezes_into = ids("melts_into"), ids("solidifies_into")
        self.liquidus = np.array([float(m.params.liquidus) for m in mats])
        self.solidus = np.minimum([float(m.params.solidus) for m in mats], self.liquidus)
        # Materials that are a liquid phase (some material melts into them, or they solidify): φ = 1.
        self.liquid = np.zeros(len(mats), bool)
        self.liquid[self.into[self.into >= 0]] = True
        self.liquid[self.freezes_into >= 0] = True
        self.keys = [(np.array([q["frame"] for q in p.get("melt_keyframes") or []], np.float64),
                      np.array([q["amount"] for q in p.get("melt_keyframes") or []], np.float64))
                     for _, p in scene.sources]
        self.active = bool(np.any(self.into >= 0) or np.any(self.freezes_into >= 0))
        self.melted = self.solidified = 0
        if self.active:
            state.add_array("melt", (), np.float64, fill=0.0)

    def _keyed(self, source: np.ndarray, frame: float) -> np.ndarray:
        """Each particle's source's keyed melt amount at ``frame`` (0 for a source without keys)."""
        amount = np.array([float(np.interp(frame, f, a)) if len(f) else 0.0 for f, a in self.keys] or [0.0])
        return amount[source]

    def apply(self, state, nbr, count, dt: float, frame: float, walls=None) -> None:
        """The phase changes at the substep's end (``frame``): :meth:`update`."""
        self.update(state, frame)

    def update(self, state, frame: float) -> None:
        """The melt fractions at ``frame`` from the temperatures (when heat is computed) and the keys, then
        the phase changes they bring (module docstring)."""
        if not self.active or not state.n:
            return
        mat, melt = state.material, state.arrays["melt"]
        temp = state.arrays.get("temperature")
        keyed = self._keyed(state.arrays["source"], frame)
        if temp is not None:
            target = self.freezes_into[mat]
            freezing = (target >= 0) & (keyed < 1.0)
            freezing[freezing] = temp[freezing] < self.solidus[target[freezing]]
            if freezing.any():
                mat[freezing] = target[freezing]
                self._rebond(state, freezing)
                self.solidified += int(freezing.sum())
        melts = self.into[mat] >= 0
        phi = keyed.copy()
        melting = melts & (keyed >= 1.0)
        if temp is not None:
            ts, tl = self.solidus[mat], self.liquidus[mat]
            width = tl - ts
            phi_t = np.clip((temp - ts) / np.where(width > 0.0, width, np.inf), 0.0, 1.0)
            np.maximum(phi, phi_t, out=phi)
            melting |= melts & (temp > tl)
        if melting.any():
            mat[melting] = self.into[mat[melting]]
            self.melted += int(melting.sum())
        melt[:] = np.where(self.into[mat] >= 0, np.minimum(phi, 1.0), self.liquid[mat].astype(np.float64))

    @staticmethod
    def _rebond(state, frozen: np.ndarray) -> None:
        """The bodies particles ``frozen`` joined (their material and source) take their present shape as
        their rest shape, the new particles bonded in with the rest: rest partners are only formed among
        particles bonding together (``elasticity_becker2009_kernels.bond``, symmetric lists), so a crust
        bonded a layer at a time came apart at every layer (and a particle freezing alone had no partner)."""
        if "elastic_bonded" not in state.arrays:
            return
        mat, source = state.material.astype(np.int64), state.arrays["source"].astype(np.int64)
        key = mat * 65536 + source
        state.arrays["elastic_bonded"][np.isin(key, np.unique(key[frozen]))] = 0

    def frame_stats(self, state) -> dict:
        """Particles melted and solidified over the frame."""
        if not self.active:
            return {}
        out = {"melted": self.melted, "solidified": self.solidified}
        self.melted = self.solidified = 0
        return out

    def cache_fields(self, state) -> dict:
        """``melt`` (the melt fraction, float32) for the particle frames, when something melts."""
        return {"melt": (state.arrays["melt"], "<f4")} if self.active else {}
