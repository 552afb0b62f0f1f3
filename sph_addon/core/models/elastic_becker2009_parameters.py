"""The elastic model's declared parameters (Becker, Ihmsen & Teschner 2009, in SI units): its name and
parameter tuple, read by the scene validator, the docs and the Blender UI without importing numba.

The model itself, and how each parameter enters the method, is in ``elastic_becker2009`` and
``terms.elasticity_becker2009``.
"""

from __future__ import annotations

from ..scene.params import Parameter

NAME = "elastic"
STRAIN_CHOICES = ("linear", "green")

PARAMETERS: tuple[Parameter, ...] = (
    Parameter("density", 1000.0, "kg/m^3", 1.0, 25000.0, label="Density",
              description="Mass per volume at rest (gelatin 1050, rubber 1100-1200, soft tissue 1060); sets the "
                          "particle mass ρ s³, how the solid floats or sinks in a liquid."),
    Parameter("youngs_modulus", 1e5, "Pa", 10.0, 1e9, label="Young's Modulus",
              description="E, stiffness in tension: gelatin dessert 1e4, soft tissue 3e4, gummy candy 2e5, "
                          "soft silicone 1e5-1e6, rubber 1e6-5e6. Solved implicitly: stiffness does not shorten "
                          "the substeps."),
    Parameter("poisson_ratio", 0.4, "", 0.0, 0.49, label="Poisson's Ratio",
              description="ν, how much a stretched bar thins (lateral strain / axial strain): cork 0, metals "
                          "0.3, gels and rubber 0.45-0.5 (nearly incompressible)."),
    Parameter("damping_time", 0.01, "s", 0.0, 10.0, label="Damping Time",
              description="τ, Kelvin-Voigt retardation time: an internal viscosity η = τ E that damps a "
                          "vibration of angular frequency ω by a ratio ζ = ω τ / 2 (0: undamped but for the "
                          "time integration's own damping)."),
    Parameter("strain", "linear", choices=STRAIN_CHOICES, label="Strain",
              description="linear: corotated linear strain (Becker eq. 14-15), right for any rotation and "
                          "moderate stretch; green: Green-Saint-Venant strain, stiffer under large stretch."),
)
