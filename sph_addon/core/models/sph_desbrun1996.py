"""Smoothed particles (Desbrun & Cani 1996) and the classic SPH liquid (Treuille): the ``sph`` model.

References: M. Desbrun, M.-P. Cani, *Smoothed Particles: A new paradigm for animating highly
deformable bodies*, EGCAS 1996 (``shared/papers/000``); A. Treuille, lecture *Particle-based Liquids*
(``002``).

One model for both: the classic liquid is the state equation without tension (``tensile_strength``
0) and a small artificial viscosity; Desbrun's soft inelastic lumps (putty, clay, mashed potato, wet
snow) keep tension down to a cohesive strength and take a strong artificial viscosity (α ~ 1, the
paper's). Its first three terms give the accelerations: the density, state equation and pressure
(``density_pressure_desbrun1996``), Monaghan's artificial viscosity (``artificial_viscosity_monaghan1992``)
and Morris' viscous Laplacian (``viscosity_morris1997``), summed in the first one's loop over pairs (its
docstring says why). The particles are advanced by the leapfrog scheme with individual power-of-two
steps (section 5.2, eq. 8; ``integrators.Leapfrog``), each particle's level written to the cache as
``time_level``. The shared
terms act at every micro-step, after the kicks that open steps and before the drift (first-order
operator splitting; ``integrators.Leapfrog``): surface tension (``surface_tension_brackbill1992``)
and a yield stress (``yield_papanastasiou1987``) solved implicitly (``viscosity_weiler2018``), which
gives a lump the shear strength the state equation lacks: isotropic pressure alone lets any lump
slump under its weight, cohesion or not.

Physical units: density (kg/m³), speed of sound (m/s, the state equation's κ = c²), kinematic
viscosity (m²/s), the cohesion as a tensile strength (Pa), the yield stress (Pa), the surface tension
(N/m); the artificial viscosity's α is the method's own number. The kernels' radius is the scene's h
(support), Desbrun's h being h/2.
"""

from __future__ import annotations

from ..terms.artificial_viscosity_monaghan1992 import ArtificialViscosityMonaghan1992
from ..terms.density_pressure_desbrun1996 import DensityPressureDesbrun1996, calm_step, lattice_sums
from ..terms.surface_tension_brackbill1992 import SurfaceTensionBrackbill1992
from ..terms.viscosity_morris1997 import ViscosityMorris1997
from ..terms.viscosity_weiler2018 import AddedViscosityWeiler2018
from ..terms.yield_papanastasiou1987 import YieldPapanastasiou1987
from .base import CacheField, DerivedConstant, MaterialModel
from .presets import SPH_LOOKS, SPH_PRESETS
from .sph_desbrun1996_parameters import NAME, PARAMETERS

GRAVITY = 9.81  # m/s², for the column depth the panel reports


class SphModel(MaterialModel):
    """Every material whose model is ``sph`` (Desbrun & Cani 1996, Treuille), on the model contract."""

    name = NAME
    label = "SPH"
    description = ("Desbrun-Cani 1996 smoothed particles and the classic SPH liquid, individual time steps: "
                   "water, putty, clay, mashed potato, wet snow")
    citation = "Desbrun & Cani, Smoothed Particles: A new paradigm for animating highly deformable bodies, 1996"
    parameters = PARAMETERS
    presets = SPH_PRESETS
    looks = SPH_LOOKS
    integrator = "leapfrog"
    terms = (DensityPressureDesbrun1996, ArtificialViscosityMonaghan1992, ViscosityMorris1997,
             SurfaceTensionBrackbill1992, YieldPapanastasiou1987, AddedViscosityWeiler2018)
    cache_fields = (CacheField("time_level", "time_level", None, "u1",
                               "individual time-step level l of the particle's last substep (its step is the "
                               "substep / 2^l)"),)
    density = "density"

    @classmethod
    def derived(cls, params, spacing, h, dt=None):
        """κ = c², the column that the state equation holds within 1 %, the step eq. 8 allows at rest,
        the artificial viscosity's shear viscosity, the lattice's kernel sum."""
        c = params.speed_of_sound
        eps = 0.5 * h
        calm = calm_step(c, params.artificial_viscosity, params.kinematic_viscosity, h)
        full = lattice_sums(spacing, h)[0]
        return (DerivedConstant("stiffness", c * c, "m^2/s^2", "κ = c² of P = κ (ρ - ρ0)"),
                DerivedConstant("depth_at_1_percent", 0.01 * c * c / GRAVITY, "m",
                                "Column depth compressed by 1 %"),
                DerivedConstant("calm_dt", calm, "s", "Step of a particle at rest (eq. 8)"),
                DerivedConstant("artificial_shear_viscosity", params.artificial_viscosity * c * eps / 10.0, "m^2/s",
                                "Shear viscosity of the artificial viscosity"),
                DerivedConstant("lattice_sum", full, "", "Kernel sum over the lattice (divides the density)"))
