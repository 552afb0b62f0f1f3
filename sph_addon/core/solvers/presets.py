"""Material presets: named parameter sets, each baked and looked at.

Values are overrides of the model's declared defaults, in SI units (see each
parameter's unit). Tuned at particle spacing 0.02-0.05 m with h = 2.5 spacing
and the automatic substeps; see docs/materials.md for how each was checked.
"""

from __future__ import annotations

VISCOELASTIC_PRESETS: dict[str, dict] = {
    # Inviscid. The thesis adds a small quadratic viscosity against interpenetration
    # (section 5.1); here the near-pressure already keeps particles apart, and at
    # β = 0.1 1/m the impulses are ~1e-3 m/s: the dam break's surge front was the
    # same to 1 mm at frames 5, 10 and 15 with and without it, so the stage is off.
    "water": dict(density=1000.0, surface_tension=0.072, density_error=0.01, viscosity=0.0,
                  stiff_viscosity=0.0),
    # Very viscous in compression and in stretching (viscous_stretching), so a poured
    # thread stays whole, piles up instead of running flat, and buckles on the pile.
    "honey": dict(viscosity=1000.0, stiff_viscosity=1.0,
                  viscous_stretching=True),
    # Thick, keeps dents: plastic springs with a yield threshold (eq. 5.2).
    "mud": dict(viscosity=20.0, stiff_viscosity=0.3,
                springs="dynamic", spring_stiffness=400.0, plasticity=1.0, yield_ratio=0.15),
    # Sticky, stringy: strong cohesion (rest density above the lattice) and soft springs.
    "slime": dict(surface_tension=0.25, viscosity=10.0,
                  stiff_viscosity=0.3, springs="dynamic", spring_stiffness=150.0, plasticity=2.0,
                  yield_ratio=0.2),
    # A moulded solid that keeps a dent: springs made once, plastic past a small yield.
    "plasticine": dict(viscosity=5.0, stiff_viscosity=0.3,
                       springs="mould", spring_stiffness=8000.0, plasticity=8.0, yield_ratio=0.02),
    # A moulded elastic solid that springs back: springs made once, no plasticity.
    "jelly": dict(viscosity=2.0, stiff_viscosity=0.3,
                  springs="mould", spring_stiffness=20000.0, plasticity=0.0, yield_ratio=0.1),
}
