"""Material presets: named parameter sets, each baked and looked at.

Values are overrides of the model's declared defaults, in SI units (see each
parameter's unit). Tuned at particle spacing 0.02-0.05 m with h = 2.5 spacing
and the automatic substeps; see docs/materials.md for how each was checked.

Beside them, each preset's look in the replay (``*_LOOKS``, a model's ``looks``): bpy-free data that
``blender/liquid_materials.py`` turns into a Blender material.
"""

from __future__ import annotations

from .base import Look

VISCOELASTIC_PRESETS: dict[str, dict] = {
    # Inviscid at any spacing we bake: ν = 1e-6 m²/s (20 °C) is solved, and is far below what the
    # particles resolve. The thesis' quadratic β against interpenetration is off: the near-pressure
    # keeps particles apart (the dam break's front moved by under 1 mm with β = 0.1 1/m).
    "water": dict(density=1000.0, surface_tension=0.072, density_error=0.01, kinematic_viscosity=1e-6),
    # Olive oil at 20 °C: η ≈ 0.08 Pa s, ρ 910 kg/m³, γ 0.032 N/m (CRC Handbook of Chemistry and
    # Physics; Sahasrabudhe et al. 2017, "Density, viscosity and surface tension of five vegetable
    # oils at elevated temperatures"): ν = η/ρ ≈ 1e-4 m²/s. Runs like water, a little slower.
    "oil": dict(density=910.0, surface_tension=0.032, kinematic_viscosity=1e-4),
    # Honey as it pours in a cool kitchen (~12 °C): η ≈ 43 Pa s (ν 0.03 m²/s); at 20 °C honey is 2-10 Pa s
    # (ν 1.4e-3 to 7e-3) and cold or creamed honey 50-100 Pa s; ρ 1420, γ ~ 0.05 N/m. The cool end is
    # chosen so that the threads the particles resolve (4-5 across) coil: a rope coils when its Reynolds
    # number U d / ν is small (Cruickshank & Munson 1981: below ~1) and the stream stays thick enough
    # not to be stretched to one particle by its fall (docs/materials.md, "Coiling"). Runny 20 °C honey
    # coils only in millimetre threads: set Viscosity to 5e-3 and expect folding, not coils.
    "honey": dict(density=1420.0, surface_tension=0.05, kinematic_viscosity=0.03, stiff_viscosity=1.0,
                  pressure_projection="none"),
    # Melted dark chocolate (~45 °C), a Casson fluid: plastic viscosity 2-5 Pa s and apparent
    # viscosity 5-20 Pa s at pouring rates, Casson yield stress 5-20 Pa (Beckett, "Industrial Chocolate
    # Manufacture and Use", 2009, ch. 12; ICA method 46), ρ ≈ 1250-1300 kg/m³: ν = 8e-3 (η ≈ 10 Pa s) and
    # a 15 Pa yield stress, which stops a thin layer (~1 mm) but not a heap. γ ~ 0.04 N/m (fat-based).
    "chocolate": dict(density=1300.0, surface_tension=0.04, kinematic_viscosity=8e-3, yield_stress=15.0,
                      stiff_viscosity=1.0,
                      pressure_projection="none"),
    # Wet mud, a Bingham paste: yield stress 150 Pa (clay and mud slurries span ~10-1000 Pa with
    # their water content; Coussot 1997, "Mudflow rheology and dynamics") and a plastic viscosity of
    # ~10 Pa s. No springs: with plastic springs beside the yield stress its free edges kept the
    # particle lattice (a beaded rim in the render) and it behaved no better.
    "mud": dict(density=1700.0, surface_tension=0.072, kinematic_viscosity=6e-3, yield_stress=150.0,
                stiff_viscosity=0.3,
                pressure_projection="none"),
    # Toothpaste, a stiffer Bingham paste: yield stress 100-300 Pa, plastic viscosity 20-100 Pa s,
    # ρ 1300-1600 kg/m³ (Ahuja, Potanin & Joshi 2018, "Two-dimensional ... yield stress of toothpaste",
    # J. Non-Newtonian Fluid Mech.; Kalyon et al. 1990): τ_y 200 Pa, η ≈ 50 Pa s, ρ 1450. A ribbon keeps
    # its section; a 10 cm cube slumps to a heap (τ' = τ_y/(ρgH) = 0.14).
    "toothpaste": dict(density=1450.0, surface_tension=0.04, kinematic_viscosity=0.035, yield_stress=200.0,
                       stiff_viscosity=0.3,
                       pressure_projection="none"),
    # PVA-borax slime, a Maxwell viscoelastic liquid: plateau shear modulus G ~ 100-1000 Pa and a
    # relaxation time τ ~ 0.5-2 s (Cadars et al. 2005; the "slime" rheometry of Casassa et al. 1986,
    # J. Chem. Educ.), so its zero-shear viscosity G τ is ~100-1000 Pa s: it strings and snaps back when
    # pulled faster than τ and spreads when left alone. E = 3G; dynamic springs relax as a Maxwell
    # element (``relaxation_time``) and re-form between new neighbours as it flows.
    "slime": dict(density=1050.0, surface_tension=0.25, kinematic_viscosity=0.02, stiff_viscosity=0.3,
                  springs="dynamic", youngs_modulus=300.0, relaxation_time=1.0, plasticity=0.0, yield_ratio=0.1,
                  pressure_projection="none"),
    # A moulded solid that keeps a dent: springs made once, plastic past a 2 % yield strain (Clavet
    # eq. 5.2), a yield stress of about E x 0.02 = 800 Pa: a 10 cm drop dents it (a 10 cm cube lands to
    # 87 % of its height and creeps 1 % in the next half second). E = 40 kPa now that the springs are
    # implicit (7 kPa with a 300 Pa yield stress beside it crept); real modelling clay is stiffer still
    # (E ~ 0.1-1 MPa) and would barely dent from 10 cm.
    "plasticine": dict(density=1600.0, kinematic_viscosity=0.01, stiff_viscosity=0.3,
                       springs="mould", youngs_modulus=40000.0, plasticity=8.0, yield_ratio=0.02,
                       pressure_projection="none"),
    # Bread dough, viscoelastic-plastic: storage modulus ~1-10 kPa, flows over minutes (apparent
    # viscosity 1e3-1e5 Pa s), ρ ≈ 1200 kg/m³ (Dobraszczyk & Morgenstern 2003, "Rheology and the
    # breadmaking process", J. Cereal Sci.). Mould springs softer than plasticine's that yield at a larger
    # strain and flow slower, and the low end of its viscosity, ν = 1 m²/s (η 1200 Pa s): with the implicit
    # springs ν = 0.1 let a 10 cm ball slump to 56 % of its height and still creep 9 % in half a second.
    "dough": dict(density=1200.0, surface_tension=0.05, kinematic_viscosity=1.0, stiff_viscosity=0.3,
                  springs="mould", youngs_modulus=3000.0, plasticity=2.0, yield_ratio=0.05,
                  pressure_projection="none"),
}


# Soft solids of the ``elastic`` model (Becker 2009). Gels and rubbers are nearly incompressible (ν 0.45-0.5);
# 0.45 keeps λ = 7 μ, which the implicit solve converges on in tens of iterations (ν → 0.5 makes λ unbounded).
ELASTIC_PRESETS: dict[str, dict] = {
    # Gelatin dessert: E 5-20 kPa for 2-8 % gelatin (Czerner, Fellay, Suárez, Frontini & Fasce 2015,
    # "Determination of elastic modulus of gelatin gels by indentation experiments", Procedia Mater. Sci. 8),
    # ρ 1050 kg/m³ (mostly water). A wobble that dies out in a few periods.
    "jelly": dict(density=1050.0, youngs_modulus=1e4, poisson_ratio=0.45, damping_time=0.01),
    # Gummy candy (gelatin, sugar, glucose syrup): firmer than a dessert gel (more gelatin, less water);
    # E = 0.2 MPa is our estimate between gelatin gels and soft silicone, ρ ~1300 kg/m³ (sugar-rich).
    "gummy": dict(density=1300.0, youngs_modulus=2e5, poisson_ratio=0.45, damping_time=0.005),
    # Soft platinum silicone (Smooth-On Ecoflex 00-30): 100 % modulus 69 kPa (10 psi) and specific gravity
    # 1.07 (Smooth-On technical bulletin); E ~0.1 MPa at small strain.
    "silicone": dict(density=1070.0, youngs_modulus=1e5, poisson_ratio=0.45, damping_time=0.005),
    # Soft rubber (natural or synthetic): E 1-5 MPa, ρ 1100-1200 kg/m³ (Gent, "Engineering with Rubber",
    # 3rd ed., 2012, ch. 1); bounces back whole.
    "rubber": dict(density=1100.0, youngs_modulus=1e6, poisson_ratio=0.45, damping_time=0.002),
    # Soft tissue (relaxed muscle, fat): E 1-100 kPa, ~30 kPa typical of muscle at rest, ρ 1060 kg/m³
    # (McKee, Last, Russell & Murphy 2011, "Indentation versus tensile measurements of Young's modulus for
    # soft biological tissues", Tissue Eng. B 17(3)); heavily damped.
    "flesh": dict(density=1060.0, youngs_modulus=3e4, poisson_ratio=0.45, damping_time=0.03),
    # Foods and materials that melt (``phase``): each pairs with the sph model's liquid of the same name
    # below (``MELTING_PAIRS``), of its density (a particle keeps its mass as it melts). Thermal values at
    # room temperature; the solids' real stiffness (chocolate and wax ~0.1-1 GPa, basalt ~50 GPa) would
    # only add solver iterations to what the eye sees as rigid, so E is that of a firm rubber (1 MPa) and says so.
    # Dark chocolate: k 0.2 W/(m K), c_p 1600 J/(kg K), ρ 1300 (as the viscoelastic "chocolate" above);
    # cocoa butter's form V softens from ~28 °C and is molten at 34 °C (Beckett 2009, ch. 12).
    "dark_chocolate": dict(density=1300.0, youngs_modulus=1e6, poisson_ratio=0.4, damping_time=0.005,
                           thermal_conductivity=0.2, specific_heat=1600.0, solidus=28.0, liquidus=34.0),
    # Butter: ρ 911, k 0.2, c_p 2100; softens from ~20 °C, its fat molten by 35 °C (Rønholt et al. 2013,
    # "Effect of cooling rate on butter microstructure"); soft at room temperature (E ~0.1 MPa there).
    "butter": dict(density=911.0, youngs_modulus=1e5, poisson_ratio=0.4, damping_time=0.01,
                   thermal_conductivity=0.2, specific_heat=2100.0, solidus=20.0, liquidus=35.0),
    # Paraffin candle wax: ρ 900, k 0.25, c_p 2500 (solid), melting 50-62 °C (CRC Handbook).
    "candle_wax": dict(density=900.0, youngs_modulus=1e6, poisson_ratio=0.4, damping_time=0.005,
                       thermal_conductivity=0.25, specific_heat=2500.0, solidus=50.0, liquidus=62.0),
    # Ice cream with 50 % overrun: ρ ~600 (air whipped in), k ~0.2 (air-filled), c_p ~3000; it softens
    # from -6 °C and is a liquid by 0 °C (Goff & Hartel, "Ice Cream", 2013). Soft: E 0.1 MPa.
    "ice_cream": dict(density=600.0, youngs_modulus=1e5, poisson_ratio=0.4, damping_time=0.02,
                      thermal_conductivity=0.2, specific_heat=3000.0, solidus=-6.0, liquidus=0.0),
    # Mozzarella-like cheese: ρ 1050, k 0.35, c_p 2600; softens from ~40 °C and flows by 60 °C
    # (Guinee, "Pasta-filata cheeses", 2011). E 0.1-0.5 MPa at room temperature.
    "cheese": dict(density=1050.0, youngs_modulus=3e5, poisson_ratio=0.45, damping_time=0.02,
                   thermal_conductivity=0.35, specific_heat=2600.0, solidus=40.0, liquidus=60.0),
    # Basalt, the rock basaltic lava cools into: ρ 2700, k 1.5, c_p 840; solid below ~1000 °C, molten above
    # ~1200 °C (Harris & Rowland 2001, "FLOWGO", J. Geophys. Res.; Keszthelyi 1995).
    "basalt": dict(density=2700.0, youngs_modulus=1e6, poisson_ratio=0.3, damping_time=0.005,
                   thermal_conductivity=1.5, specific_heat=840.0, solidus=1000.0, liquidus=1200.0),
}

SPH_PRESETS: dict[str, dict] = {
    # Water as the classic weakly compressible liquid: c = 20 m/s holds a 0.4 m column and 2 m/s flows
    # within 1 % (Monaghan 1994, "Simulating free surface flows with SPH", J. Comput. Phys. 110: c at
    # least 10 times the largest speed); α = 0.05 in the range Monaghan uses for water (0.01-0.1).
    "classic_water": dict(density=1000.0, speed_of_sound=20.0, kinematic_viscosity=1e-6, artificial_viscosity=0.05,
                          tensile_strength=0.0, surface_tension=0.0),
    # Soft inelastic lumps (Desbrun & Cani's "highly deformable bodies"): cohesion through tension in the
    # state equation and the paper's strong artificial viscosity (α ~ 1), and a Bingham yield stress that
    # holds their shape (pressure alone, isotropic, lets any lump slump under its weight). The speed of
    # sound is the lump's stiffness (a numerical one: real pastes carry sound at hundreds of m/s); the
    # tensile strength caps the tension a stretched lump holds before it tears; the yield stresses are
    # our estimates, of the order vane rheometry gives such pastes (hundreds of Pa for purées and wet
    # snow, thousands for putty and clay), each above ρ g H / 2 of a 10 cm lump so a handful stands
    # (Pashias 1996). What the lumps do is tested (tests/core/test_sph_lumps.py): putty stands, holds
    # together, merges, and splits when thrown at a wall at 25 m/s; clay is stiffer and stronger;
    # mashed potato and wet snow weaker and lighter. Densities: glazier's putty (chalk in linseed oil)
    # 1700-2000 kg/m³; wet potter's clay ~1800-2000; mashed potato ~1050-1100; wet snow 300-600
    # (Paterson, "The Physics of Glaciers", 1994, table 2.1).
    "putty": dict(density=1800.0, speed_of_sound=10.0, kinematic_viscosity=0.0, artificial_viscosity=1.0,
                  tensile_strength=20000.0, yield_stress=3000.0),
    "clay": dict(density=1900.0, speed_of_sound=12.0, kinematic_viscosity=0.0, artificial_viscosity=1.5,
                 tensile_strength=40000.0, yield_stress=6000.0),
    "mashed_potato": dict(density=1080.0, speed_of_sound=6.0, kinematic_viscosity=0.0, artificial_viscosity=0.8,
                          tensile_strength=3000.0, yield_stress=600.0),
    "wet_snow": dict(density=450.0, speed_of_sound=6.0, kinematic_viscosity=0.0, artificial_viscosity=0.6,
                     tensile_strength=3000.0, yield_stress=400.0),
    # The melted materials (``MELTING_PAIRS``), classic liquids of their solid's density and thermal values.
    # Viscosity is explicit here (step ≤ h²/(8ν)), so the thickest take their body from a yield stress.
    # Melted dark chocolate: η ~10 Pa s, Casson yield stress ~15 Pa (the viscoelastic "chocolate" preset's).
    "melted_chocolate": dict(density=1300.0, speed_of_sound=10.0, kinematic_viscosity=8e-3, artificial_viscosity=0.1,
                             yield_stress=15.0, thermal_conductivity=0.2, specific_heat=1600.0),
    # Melted butter (butter oil and whey): η ~0.05 Pa s.
    "melted_butter": dict(density=911.0, speed_of_sound=10.0, kinematic_viscosity=5e-5, artificial_viscosity=0.05,
                          thermal_conductivity=0.2, specific_heat=2100.0),
    # Molten paraffin: η ~3 mPa s at 70 °C (it is ~780 kg/m³ molten; kept at the solid's 900: mass is kept).
    "molten_wax": dict(density=900.0, speed_of_sound=10.0, kinematic_viscosity=4e-6, artificial_viscosity=0.05,
                       thermal_conductivity=0.15, specific_heat=2900.0),
    # Melted ice cream, a thick cream: η ~0.1-1 Pa s.
    "melted_ice_cream": dict(density=600.0, speed_of_sound=10.0, kinematic_viscosity=5e-4, artificial_viscosity=0.1,
                             thermal_conductivity=0.2, specific_heat=3000.0),
    # Melted cheese: stringy, η ~1000 Pa s at low shear (Guinee 2011); here a 50 Pa yield stress and ν 0.02.
    "melted_cheese": dict(density=1050.0, speed_of_sound=10.0, kinematic_viscosity=0.02, artificial_viscosity=0.5,
                          yield_stress=50.0, tensile_strength=200.0, thermal_conductivity=0.35, specific_heat=2600.0),
    # Basaltic lava near 1150 °C: η 100-1000 Pa s (Harris & Rowland 2001): ν 0.04 m²/s (η ≈ 110 Pa s), ρ 2700.
    # Set Solidifies Into to a basalt material to let it crust.
    "lava": dict(density=2700.0, speed_of_sound=10.0, kinematic_viscosity=0.04, artificial_viscosity=0.5,
                 thermal_conductivity=1.5, specific_heat=840.0),
}

# Each melting solid (elastic) and the liquid (sph) it becomes: set the solid's Melts Into to the name of a
# material of the liquid's preset (and the liquid's Solidifies Into to the solid's, for lava that crusts).
MELTING_PAIRS: dict[str, str] = {
    "dark_chocolate": "melted_chocolate", "butter": "melted_butter", "candle_wax": "molten_wax",
    "ice_cream": "melted_ice_cream", "cheese": "melted_cheese", "basalt": "lava",
}


# The replay's look of each preset (a model's ``looks``), chosen from what each substance does to light:
#
# - water: clear, refractive (IOR 1.333), barely tinted, almost mirror smooth;
# - honey: amber, refractive (IOR 1.49, about that of honey), light through thin parts and a deep amber
#   through thick ones (the tint is applied at each surface crossing);
# - mud: opaque dark brown with a thin glossy wet film (a clear coat);
# - slime: green, mostly transmissive and glossy;
# - plasticine: opaque, matte, with a little subsurface softness;
# - oil: golden and clear, refractive (IOR 1.47, olive oil's), smooth;
# - chocolate: opaque dark brown, glossy (a clear coat on a fat surface);
# - toothpaste: opaque white, a soft sheen, a touch of subsurface (a paste scatters light);
# - dough: pale beige, matte, soft subsurface scattering (flour and water).
VISCOELASTIC_LOOKS: dict[str, Look] = {
    "water": Look(color=(0.85, 0.95, 1.0), roughness=0.01, ior=1.333, transmission=1.0),
    "honey": Look(color=(1.0, 0.42, 0.03), roughness=0.05, ior=1.49, transmission=1.0),
    "mud": Look(color=(0.09, 0.055, 0.03), roughness=0.55, coat=0.35, coat_roughness=0.12),
    "slime": Look(color=(0.35, 0.9, 0.08), roughness=0.08, ior=1.4, transmission=0.85, coat=0.2),
    "plasticine": Look(color=(0.7, 0.25, 0.09), roughness=0.8, specular=0.25, subsurface=0.1,
                       subsurface_radius=(1.0, 0.5, 0.3), subsurface_scale=0.005),
    "oil": Look(color=(0.95, 0.72, 0.12), roughness=0.02, ior=1.47, transmission=1.0),
    "chocolate": Look(color=(0.09, 0.035, 0.015), roughness=0.2, coat=0.8, coat_roughness=0.05),
    "toothpaste": Look(color=(0.92, 0.93, 0.94), roughness=0.35, subsurface=0.3,
                       subsurface_radius=(1.0, 1.0, 1.0), subsurface_scale=0.005),
    "dough": Look(color=(0.86, 0.74, 0.55), roughness=0.85, specular=0.3, subsurface=0.4,
                  subsurface_radius=(1.0, 0.8, 0.6), subsurface_scale=0.01),
}

# Lava and basalt glow where hot (by their ``temperature`` attribute): dull red from ~600 °C to yellow-white at
# 1200 °C, as cooling lava's crust darkens.
_LAVA_GLOW = (600.0, 1200.0, 12.0)

# The soft solids:
#
# - jelly: red, translucent by subsurface scattering (light enters, scatters, comes out reddened), with a
#   glossy skin;
# - gummy: orange, translucent (mostly transmissive, IOR 1.47 of a sugar gel) with a frosted surface and some
#   scattering inside;
# - silicone: off-white, matte, translucent by wide subsurface scattering (IOR 1.41, silicone's);
# - rubber: opaque charcoal, a satin sheen;
# - flesh: a skin tone, subsurface scattering that reaches farthest in red (as skin's does);
#
# and the melting solids: a tempered bar's satin gloss for dark chocolate; butter, wax, ice cream and cheese
# opaque-to-translucent by subsurface scattering; basalt dark rock that glows where hot.
ELASTIC_LOOKS: dict[str, Look] = {
    "jelly": Look(color=(0.9, 0.08, 0.12), roughness=0.12, ior=1.4, subsurface=1.0,
                  subsurface_radius=(1.0, 0.2, 0.2), subsurface_scale=0.08, coat=0.6),
    "gummy": Look(color=(1.0, 0.3, 0.01), roughness=0.3, ior=1.47, transmission=0.8, subsurface=0.3,
                  subsurface_radius=(1.0, 0.4, 0.1), subsurface_scale=0.02),
    "silicone": Look(color=(0.88, 0.87, 0.83), roughness=0.6, ior=1.41, subsurface=1.0,
                     subsurface_radius=(1.0, 0.95, 0.85), subsurface_scale=0.03, specular=0.4),
    "rubber": Look(color=(0.04, 0.04, 0.045), roughness=0.45, specular=0.4),
    "flesh": Look(color=(0.8, 0.5, 0.4), roughness=0.45, ior=1.4, subsurface=1.0,
                  subsurface_radius=(1.0, 0.2, 0.1), subsurface_scale=0.01),
    "dark_chocolate": Look(color=(0.08, 0.03, 0.013), roughness=0.3, coat=0.5, coat_roughness=0.1),
    "butter": Look(color=(0.95, 0.8, 0.35), roughness=0.45, subsurface=0.4, subsurface_radius=(1.0, 0.9, 0.5),
                   subsurface_scale=0.01),
    "candle_wax": Look(color=(0.93, 0.9, 0.85), roughness=0.4, subsurface=1.0, subsurface_radius=(1.0, 0.8, 0.6),
                       subsurface_scale=0.02),
    "ice_cream": Look(color=(0.98, 0.9, 0.78), roughness=0.7, subsurface=0.6, subsurface_radius=(1.0, 0.9, 0.8),
                      subsurface_scale=0.01, specular=0.3),
    "cheese": Look(color=(0.95, 0.78, 0.3), roughness=0.5, subsurface=0.5, subsurface_radius=(1.0, 0.8, 0.4),
                   subsurface_scale=0.01),
    "basalt": Look(color=(0.03, 0.028, 0.026), roughness=0.85, specular=0.3, glow=_LAVA_GLOW),
}

# The lumps and the liquids:
#
# - classic_water: water's look (it is water);
# - putty: off-white cream (chalk in linseed oil), matte, a trace of subsurface scattering;
# - clay: terracotta brown, a faint wet sheen (a thin clear coat);
# - mashed_potato: pale yellow, matte, soft subsurface scattering;
# - wet_snow: white with a blue cast, translucent by wide subsurface scattering (IOR 1.31, ice's);
#
# and the melted materials, glossier than their solids: melted chocolate is the viscoelastic model's chocolate
# (the same substance); lava dark rock that glows where hot, like basalt.
SPH_LOOKS: dict[str, Look] = {
    "classic_water": VISCOELASTIC_LOOKS["water"],
    "putty": Look(color=(0.78, 0.74, 0.62), roughness=0.7, specular=0.3, subsurface=0.05,
                  subsurface_radius=(1.0, 0.9, 0.7), subsurface_scale=0.003),
    "clay": Look(color=(0.42, 0.2, 0.11), roughness=0.6, specular=0.35, coat=0.15, coat_roughness=0.2),
    "mashed_potato": Look(color=(0.93, 0.82, 0.52), roughness=0.75, specular=0.35, subsurface=0.3,
                          subsurface_radius=(1.0, 0.85, 0.5), subsurface_scale=0.005),
    "wet_snow": Look(color=(0.9, 0.93, 0.97), roughness=0.5, ior=1.31, subsurface=1.0,
                     subsurface_radius=(0.8, 0.9, 1.0), subsurface_scale=0.02),
    "melted_chocolate": VISCOELASTIC_LOOKS["chocolate"],
    "melted_butter": Look(color=(1.0, 0.78, 0.2), roughness=0.05, ior=1.47, transmission=0.9),
    "molten_wax": Look(color=(0.95, 0.92, 0.85), roughness=0.05, ior=1.44, transmission=0.7, subsurface=0.3,
                       subsurface_scale=0.01),
    "melted_ice_cream": Look(color=(0.98, 0.9, 0.78), roughness=0.2, subsurface=0.6,
                             subsurface_radius=(1.0, 0.9, 0.8), subsurface_scale=0.01),
    "melted_cheese": Look(color=(1.0, 0.75, 0.2), roughness=0.25, subsurface=0.5, subsurface_radius=(1.0, 0.7, 0.3),
                          subsurface_scale=0.01, coat=0.3),
    "lava": Look(color=(0.03, 0.025, 0.02), roughness=0.6, specular=0.3, glow=_LAVA_GLOW),
}
