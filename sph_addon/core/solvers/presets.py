"""Material presets: named parameter sets, each baked and looked at.

Values are overrides of the model's declared defaults, in SI units (see each
parameter's unit). Tuned at particle spacing 0.02-0.05 m with h = 2.5 spacing
and the automatic substeps; see docs/materials.md for how each was checked.
"""

from __future__ import annotations

VISCOELASTIC_PRESETS: dict[str, dict] = {
    # Inviscid at any spacing we bake: ν = 1e-6 m²/s (20 °C) is solved, and is far below what the
    # particles resolve. The thesis' quadratic β against interpenetration is off: the near-pressure
    # keeps particles apart (the dam break's front moved by under 1 mm with β = 0.1 1/m).
    "water": dict(density=1000.0, surface_tension=0.072, density_error=0.01, kinematic_viscosity=1e-6),
    # Honey at ~20 °C: η ~ 7 Pa s (2-10 depending on water content), ρ 1420, γ ~ 0.05 N/m.
    "honey": dict(density=1420.0, surface_tension=0.05, kinematic_viscosity=0.03, stiff_viscosity=1.0),
    # Wet mud, a Bingham paste: yield stress 150 Pa (clay and mud slurries span ~10-1000 Pa with
    # their water content; Coussot 1997, "Mudflow rheology and dynamics") and a plastic viscosity of
    # ~10 Pa s. No springs: with plastic springs beside the yield stress its free edges kept the
    # particle lattice (a beaded rim in the render) and it behaved no better.
    "mud": dict(density=1700.0, surface_tension=0.072, kinematic_viscosity=6e-3, yield_stress=150.0,
                stiff_viscosity=0.3),
    # Sticky, stringy: PVA slime's η ~ 20 Pa s, strong cohesion and soft springs.
    "slime": dict(density=1050.0, surface_tension=0.25, kinematic_viscosity=0.02, stiff_viscosity=0.3,
                  springs="dynamic", youngs_modulus=100.0, plasticity=2.0, yield_ratio=0.2),
    # A moulded solid that keeps a dent: springs made once, plastic past a small yield.
    "plasticine": dict(density=1600.0, kinematic_viscosity=0.01, stiff_viscosity=0.3,
                       springs="mould", youngs_modulus=7000.0, plasticity=8.0, yield_ratio=0.02),
    # A moulded elastic solid that springs back: springs made once, no plasticity; gelatin is mostly water.
    "jelly": dict(density=1050.0, kinematic_viscosity=1e-3, stiff_viscosity=0.3,
                  springs="mould", youngs_modulus=10000.0, plasticity=0.0, yield_ratio=0.1),
}
