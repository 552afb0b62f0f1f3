"""The viscoelastic model's declared parameters (Clavet 2005, in SI units): its name, spring modes and
parameter tuple, read by the scene validator, the docs and the Blender UI without importing numba.

The model itself, and how each parameter enters Clavet's method, is in ``viscoelastic_clavet2005``.
"""

from __future__ import annotations

from ..scene.params import Parameter
from ..terms.pressure_projection_zhu2005 import PROJECTION_CHOICES
from ..terms.springs_clavet2005 import SPRING_MODES

NAME = "viscoelastic"


PARAMETERS: tuple[Parameter, ...] = (
    Parameter("density", 1000.0, "kg/m^3", 1.0, 25000.0, label="Density",
              description="Mass per volume at rest (water 1000, honey 1420, mud ~1700); sets the particle "
                          "mass ρ s³ that surface tension and colliders act on."),
    Parameter("surface_tension", 0.072, "N/m", 0.0, 100.0, label="Surface Tension",
              description="γ: water 0.072, oils ~0.03, soapy water 0.025, mercury 0.49. 0 gives no cohesion: "
                          "the liquid spreads to a film."),
    Parameter("density_error", 0.01, "", 1e-4, 0.2, label="Density Error",
              description="Largest mean compression the density relaxation leaves (0.01 = 1 %); "
                          "it iterates until the material is under it (the maximum under 10 times it)."),
    Parameter("max_iterations", 100, "", 1, 10000, label="Iteration Cap",
              description="Most density relaxation passes per substep; a substep that needs more is "
                          "counted in the frame's statistics (density_capped) and logged."),
    Parameter("kinematic_viscosity", 0.0, "m^2/s", 0.0, 1000.0, label="Viscosity",
              description="ν, kinematic viscosity (dynamic viscosity / density): water 1e-6, olive oil 1e-4, "
                          "honey 2e-3 to 1e-2, molasses ~5e-3, chocolate ~1e-2, lava 1 to 100. Solved "
                          "implicitly: any value is stable."),
    Parameter("pressure_projection", "grid", choices=PROJECTION_CHOICES, label="Pressure Projection",
              description="grid: a coarse grid's pressure solve carries the long-wavelength pressure (a column's "
                          "weight, a dam break's collapse) before the density relaxation, for thin liquids "
                          "(water, oil); none: the relaxation alone (viscous, plastic and elastic materials, as "
                          "their presets measured)."),
    Parameter("yield_stress", 0.0, "Pa", 0.0, 1e6, label="Yield Stress",
              description="τ_y, Bingham yield stress: below it the material holds its shape, above it it "
                          "flows with its viscosity (mayonnaise ~100, toothpaste ~200, wet mud 50-500, "
                          "ketchup ~30 Pa)."),
    Parameter("stiff_viscosity", 0.0, "1/m", 0.0, 1e5, label="Stiff Viscosity",
              description="β, quadratic viscosity impulse (Clavet Algorithm 4): keeps fast particles "
                          "from passing through each other (a numerical aid, not a material property)."),
    Parameter("springs", "none", choices=tuple(SPRING_MODES), label="Viscoelastic Springs",
              description="none; dynamic: springs form, stress-free, between neighbours as the material flows; "
                          "mould: springs made once between the particles a source created (thesis fig. 5.3)."),
    Parameter("youngs_modulus", 0.0, "Pa", 0.0, 1e8, label="Young's Modulus",
              description="E, stiffness of the springs as a material (soft gelatin 1e3-1e4, firm jelly 2e4, "
                          "rubber ~1e6). Clavet's k_spring is derived from it, the density and the spacing; "
                          "the material is incompressible, so E = 3 x its shear modulus."),
    Parameter("relaxation_time", 0.0, "s", 0.0, 1e6, label="Relaxation Time",
              description="τ, Maxwell relaxation of the springs: their stress decays as exp(-t/τ) while held, so "
                          "the material snaps back when pulled faster than τ and flows when left alone, with a "
                          "viscosity η = G τ = E τ / 3 (PVA slime ~1 s). 0: no relaxation. With Plasticity as well, "
                          "rest lengths also flow at its rate past the Elastic Limit (the two add up)."),
    Parameter("plasticity", 0.0, "1/s", 0.0, 1e4, label="Plasticity",
              description="α, rate at which springs take a new rest length (Clavet eq. 5.2); 0 is purely "
                          "elastic."),
    Parameter("yield_ratio", 0.1, "", 0.0, 10.0, label="Elastic Limit",
              description="γ, deformation (fraction of rest length) below which springs stay elastic "
                          "(Clavet eq. 5.2)."),
)
