"""Elastic solids by corotated SPH (Becker, Ihmsen & Teschner 2009): the model, a list of terms.

Reference: M. Becker, M. Ihmsen, M. Teschner, *Corotated SPH for deformable solids*, Eurographics
Workshop on Natural Phenomena 2009 (``shared/papers/004``).

The model declares its parameters (``elastic_becker2009_parameters``), its presets (``presets.py``,
SI values with sources) and its terms:

* velocity stage: the corotated elastic forces, solved implicitly (``elasticity_becker2009``: rest
  state at a particle's first substep, rotations, strain, stress from E and ν, damping);
* position stage: contacts between solid particles that are not rest partners (``contact_macklin2014``).

Particles are advanced by Clavet's prediction-relaxation scheme with the liquids, so one substep sees
solids and liquids together: the liquid's relaxation treats solid particles as a wall and the solve
takes the impulse it would have given them (buoyancy); a static collider's contacts, with Coulomb
friction of its ``friction``, are held in the elastic solve, a moving collider's act on them as on any
particle.
"""

from __future__ import annotations

from ..terms.contact_macklin2014 import ContactMacklin2014
from ..terms.elasticity_becker2009 import ElasticityBecker2009, lame
from .base import DerivedConstant, MaterialModel
from .elastic_becker2009_parameters import NAME, PARAMETERS
from .presets import ELASTIC_LOOKS, ELASTIC_PRESETS


class ElasticModel(MaterialModel):
    """Every material whose model is ``elastic`` (Becker 2009), on the model contract (base.py)."""

    name = NAME
    label = "Elastic"
    description = "Becker 2009 corotated SPH solids, implicit: jelly, gummy, silicone, rubber, flesh"
    citation = "Becker, Ihmsen, Teschner, Corotated SPH for deformable solids, Eurographics NPH 2009"
    parameters = PARAMETERS
    presets = ELASTIC_PRESETS
    looks = ELASTIC_LOOKS
    integrator = "prediction_relaxation"
    terms = (ElasticityBecker2009, ContactMacklin2014)
    density = "density"
    keeps_shape = True

    @classmethod
    def derived(cls, params, spacing: float, h: float, dt: float | None = None) -> tuple[DerivedConstant, ...]:
        """Lamé's constants, the speeds of sound and the explicit step the implicit solve avoids."""
        mu, lam = lame(params.youngs_modulus, params.poisson_ratio)
        c_p = ((lam + 2.0 * mu) / params.density) ** 0.5
        c_s = (mu / params.density) ** 0.5
        return (DerivedConstant("shear_modulus", mu, "Pa", "Shear modulus μ"),
                DerivedConstant("lame_lambda", lam, "Pa", "Lamé's λ"),
                DerivedConstant("pressure_wave_speed", c_p, "m/s", "Speed of pressure waves"),
                DerivedConstant("shear_wave_speed", c_s, "m/s", "Speed of shear waves"),
                DerivedConstant("explicit_dt", 0.4 * spacing / c_p, "s", "Substep an explicit solver would need"))
