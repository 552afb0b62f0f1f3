"""Viscoelastic fluids by prediction-relaxation (Clavet 2005): the model, a list of terms.

Reference: S. Clavet, *Animation de fluides viscoélastiques à base de
particules*, M.Sc. thesis, Université de Montréal, 2005 (English short form:
Clavet, Beaudoin, Poulin, "Particle-based Viscoelastic Fluid Simulation",
SCA 2005).

This module declares the model: its parameters (``viscoelastic_clavet2005_parameters``, read by the
scene validator, the docs and the Blender UI without importing numba), its presets, and the terms
it is made of (``core.terms``), in the order Clavet's Algorithm 1 applies them:

* velocity stage (line 5, impulses before the prediction): XSPH smoothing
  (``xsph_monaghan1989``), surface tension as a continuum surface force (``surface_tension_brackbill1992``:
  a drop rings at Rayleigh's frequency; a pair cohesion force made the liquid a solid with a yield
  stress), the implicit viscosity (``viscosity_weiler2018``) with the yield stress's viscosity
  (``yield_papanastasiou1987``) and the springs' forces (``springs_clavet2005``) in the same solve,
  Clavet's quadratic pair viscosity β (``viscosity_clavet2005``), and the coarse grid's pressure
  projection of the thin liquids (``pressure_projection_zhu2005``: a column's weight, a dam break's
  collapse, which the relaxation's passes crept along);
* position stage (lines 12-16, on the predicted positions): spring creation, plasticity and
  Maxwell relaxation (``springs_clavet2005``), then the double density relaxation to the material's
  density error (``relaxation_clavet2005``).

Physical units: the artist sets density ρ (kg/m³), surface tension γ (N/m), the largest mean
compression (``density_error``), a kinematic viscosity ν (m²/s), a yield stress (Pa), Young's
modulus E (Pa) and a relaxation time (s); each term derives Clavet's constants from them, the
spacing, the radius h and the substep (``lattice`` and each term's module), and :meth:`derived`
reports them. Materials of other models get zero constants: they exert no viscoelastic terms of
their own but are pushed by viscoelastic neighbours.
"""

from __future__ import annotations

import math

from ..numerics.lattice import rest_densities
from ..terms.pressure_projection_zhu2005 import PressureProjectionZhu2005
from ..terms.relaxation_clavet2005 import RelaxationClavet2005, relaxation_gains
from ..terms.springs_clavet2005 import SpringsClavet2005
from ..terms.surface_tension_brackbill1992 import SurfaceTensionBrackbill1992, surface_tension_stable_dt
from ..terms.viscosity_clavet2005 import ViscosityClavet2005
from ..terms.viscosity_weiler2018 import ViscosityWeiler2018
from ..terms.xsph_monaghan1989 import XsphMonaghan1989
from ..terms.yield_papanastasiou1987 import YieldPapanastasiou1987
from .base import DerivedConstant, MaterialModel, Removed
from .presets import VISCOELASTIC_LOOKS, VISCOELASTIC_PRESETS
from .viscoelastic_clavet2005_parameters import NAME, PARAMETERS


class ViscoelasticModel(MaterialModel):
    """Every material whose model is ``viscoelastic`` (Clavet 2005), on the model contract (base.py).

    Spring state lives in the particle arrays ``spring_partner`` (n,S) int64 (partner ids, -1 free)
    and ``spring_rest`` (n,S) float64, and ``bonded`` (n,) uint8 for mould springs, so it is permuted,
    filtered and checkpointed with everything else; they are only added when a material uses springs.
    """

    name = NAME
    label = "Viscoelastic"
    description = ("Clavet 2005 prediction-relaxation: liquids, oil, honey, chocolate, mud, toothpaste, slime, "
                   "dough, plasticine")
    citation = "Clavet, Beaudoin, Poulin, Particle-based Viscoelastic Fluid Simulation, SCA 2005 (thesis 2005)"
    parameters = PARAMETERS
    presets = VISCOELASTIC_PRESETS
    looks = VISCOELASTIC_LOOKS
    integrator = "prediction_relaxation"
    terms = (XsphMonaghan1989, SurfaceTensionBrackbill1992, YieldPapanastasiou1987, ViscosityWeiler2018,
             ViscosityClavet2005, PressureProjectionZhu2005, SpringsClavet2005, RelaxationClavet2005)
    density = "density"
    # Springs approximated these solids until the elastic model (Becker 2009) came; files naming them bake it.
    moved_presets = {"jelly": "elastic", "rubber": "elastic"}
    # Parameters scene format 1 (and layout 1 of the .blend settings) had: a scene file overriding one is
    # refused at its JSON path with this advice; a .blend file storing one has it dropped, noted in the
    # panel's words.
    removed_parameters = {
        "stiffness": Removed(
            "removed in scene format 2: Clavet's stiffness is now derived from density_error (largest "
            "mean compression, e.g. 0.01); delete this field and set density_error",
            "Clavet's stiffness is now derived from Density Error (the largest mean compression, e.g. 0.01)"),
        "repulsion_factor": Removed(
            "removed in scene format 2: Clavet's near-pressure stiffness is now derived from the "
            "particle spacing and support_factor (it keeps particles apart at any resolution); "
            "delete this field (density_error sets how incompressible the liquid is)",
            "the near-pressure is now derived from the Domain's Particle Spacing and Interaction Radius"),
        "rest_density": Removed(
            "removed in scene format 2: the rest density is now the density of the particle lattice "
            "and cohesion is now surface_tension in N/m (water 0.072; a rest_density above 1 was "
            "stronger cohesion: raise surface_tension); delete this field and set surface_tension",
            "cohesion is now Surface Tension in N/m (water 0.072; a Rest Density above 1 was stronger cohesion)"),
        "viscosity": Removed(
            "removed in scene format 2: Clavet's σ in 1/s depended on the particle spacing; viscosity "
            "is now kinematic_viscosity in m²/s (water 1e-6, olive oil 1e-4, honey 5e-3, lava 1-100); "
            "delete this field and set kinematic_viscosity",
            "viscosity is now a kinematic Viscosity in m²/s (water 1e-6, honey 5e-3; Clavet's value in 1/s "
            "depended on the particle spacing)"),
        "spring_stiffness": Removed(
            "removed in scene format 2: Clavet's k_spring in 1/s² depended on the particle "
            "spacing; springs are now set by youngs_modulus in Pa (soft gelatin 1e3-1e4, firm "
            "jelly 2e4, rubber 1e6): delete this field and set youngs_modulus",
            "springs are now set by Young's Modulus in Pa (Clavet's Spring Force in 1/s² depended on the "
            "particle spacing)"),
        "viscous_stretching": Removed(
            "removed in scene format 2: the implicit viscosity (kinematic_viscosity) resists "
            "stretching as much as compression; delete this field",
            "the implicit Viscosity resists stretching as much as compression"),
    }

    @classmethod
    def derived(cls, params, spacing: float, h: float, dt: float | None = None) -> tuple[DerivedConstant, ...]:
        """Clavet's constants as a bake derives them: the lattice's rest densities, the relaxation's
        gains, and with a substep ``dt`` the stiffnesses k and k^near (m/s², eqs. 4.2, 4.4) and the
        longest step the surface tension allows."""
        rho0, rho0_near = rest_densities(spacing, h)
        gain, gain_near = relaxation_gains(spacing, h)
        out = [DerivedConstant("rest_density", rho0, "", "Rest density (a lattice sum)"),
               DerivedConstant("rest_density_near", rho0_near, "", "Near rest density (a lattice sum)"),
               DerivedConstant("gain_m", gain, "m", "Gain k Δt² (Clavet's density has none)"),
               DerivedConstant("gain_near_m", gain_near, "m", "Gain k_near Δt² (the relaxation uses it alone)")]
        if dt:
            out += [DerivedConstant("stiffness", gain / dt**2, "m/s^2", "Stiffness k"),
                    DerivedConstant("stiffness_near", gain_near / dt**2, "m/s^2", "Stiffness k_near")]
        tension_dt = surface_tension_stable_dt(params.surface_tension, params.density, spacing)
        if math.isfinite(tension_dt):
            out.append(DerivedConstant("tension_dt", tension_dt, "s", "Longest substep the surface tension allows"))
        return tuple(out)
