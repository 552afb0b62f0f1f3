"""The ``sph`` model's declared parameters (Desbrun & Cani 1996; the classic SPH liquid of Treuille's
lecture), in SI units: its name and parameter tuple, read by the scene validator, the docs and the
Blender UI without importing numba.

The model is in ``sph_desbrun1996``; how each parameter enters the equations is in its terms:
``terms.density_pressure_desbrun1996``, ``terms.artificial_viscosity_monaghan1992``,
``terms.viscosity_morris1997`` and the shared ones it lists.
"""

from __future__ import annotations

from ..scene.params import Parameter

NAME = "sph"
WALL_CHOICES = ("slip", "no_slip")

PARAMETERS: tuple[Parameter, ...] = (
    Parameter("density", 1000.0, "kg/m^3", 1.0, 25000.0, label="Density",
              description="ρ0, mass per volume at rest; the particle mass is ρ0 s³ and the state equation "
                          "pushes the kernel-sum density (Desbrun & Cani eq. 3) back to it."),
    Parameter("speed_of_sound", 20.0, "m/s", 0.1, 1000.0, label="Speed of Sound",
              description="c, with the state equation P = c² (ρ - ρ0) (Desbrun & Cani eq. 6, Treuille's "
                          "κ = c²): a flow at speed v compresses by about (v/c)² and a column of depth H by "
                          "g H / c² (20 m/s: 1 % for 2 m/s or a 0.4 m pool). The time step falls as c rises "
                          "(eq. 8): soft lumps want 1-5 m/s, water 10-40 m/s."),
    Parameter("kinematic_viscosity", 1e-6, "m^2/s", 0.0, 10.0, label="Viscosity",
              description="ν, the liquid's kinematic viscosity (water 1e-6, olive oil 1e-4, honey 5e-3), the "
                          "viscous Laplacian of Treuille's lecture in Morris' form. Explicit: the step is at "
                          "most h²/(8ν), so thick pastes take their firmness from Artificial Viscosity."),
    Parameter("walls", "slip", choices=WALL_CHOICES, label="Walls",
              description="slip: the colliders push the liquid off but do not drag it; no_slip: colliders at "
                          "rest hold it (Morris, Fox & Zhu's boundary, the viscosity's share at the walls): a "
                          "viscous current then spreads as Huppert 1982's, within 10 % for lava at 2 cm "
                          "(slip: 2-5 times too far)."),
    Parameter("artificial_viscosity", 0.05, "", 0.0, 10.0, label="Artificial Viscosity",
              description="α of Desbrun & Cani's artificial viscosity Π = α (-c μ + 2 μ²)/ρ̄ (eq. 5, α = 1 in "
                          "the paper): damps approaching particles only, with a shear viscosity of about "
                          "α c h / 10 (m²/s). 0.02-0.1 for liquids, 0.5-2 for soft inelastic lumps."),
    Parameter("tensile_strength", 0.0, "Pa", 0.0, 1e7, label="Cohesion",
              description="Largest tension the state equation keeps (P ≥ -this): 0 for a liquid (no negative "
                          "pressure, splashes separate), a few hundred to thousands of Pa for a cohesive lump "
                          "that holds together, splits when struck harder and merges on contact (eq. 6 with "
                          "tension, Desbrun & Cani section 3.1)."),
    Parameter("yield_stress", 0.0, "Pa", 0.0, 1e6, label="Yield Stress",
              description="τ_y, Bingham yield stress: below it the material holds its shape (a lump on a "
                          "table, a heap), above it it flows. Solved implicitly at every micro-step (Papanastasiou "
                          "1987's regularisation in Weiler 2018's viscosity solve); 0: none. A lump of height H "
                          "stands when τ_y > ρ g H / 2 (Pashias 1996)."),
    Parameter("surface_tension", 0.0, "N/m", 0.0, 10.0, label="Surface Tension",
              description="γ, the liquid's surface tension (water 0.072, oil ~0.03): Brackbill 1992's "
                          "continuum surface force, applied at every micro-step; it limits the substep to "
                          "0.2 sqrt(ρ s³/γ). 0: none (the classic liquid of the lecture)."),
)
