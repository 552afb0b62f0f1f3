"""Heat's declared settings, in SI units with temperatures in degrees Celsius: every material model's
thermal parameters, the air's, a source's and a collider's. Read by the scene validator, the docs and
the Blender UI without importing numba; the conduction itself is in ``heat``.

Temperatures are in °C throughout (scene, cache, Blender): a difference of 1 °C is 1 K, and the
conduction only sees differences.
"""

from __future__ import annotations

from ..scene.params import Parameter

# Every material model lists these after its own parameters.
MATERIAL_PARAMETERS: tuple[Parameter, ...] = (
    Parameter("thermal_conductivity", 0.0, "W/(m K)", 0.0, 1e4, label="Thermal Conductivity",
              description="k, how well heat flows through the material (water 0.6, chocolate 0.2, butter 0.2, "
                          "wax 0.25, basalt lava 1-2, copper 400). 0: the material neither conducts nor takes "
                          "heat from a collider (no temperature is computed unless some material conducts)."),
    Parameter("melts_into", "", label="Melts Into",
              description="The scene material this one becomes past its Liquidus (chocolate into liquid "
                          "chocolate): the particle keeps its place, velocity and mass and continues in that "
                          "material's model; it must have this material's density. Empty: it does not melt."),
    Parameter("liquidus", 100.0, "°C", -273.15, 1e4, label="Liquidus",
              description="The temperature past which the material melts (Melts Into): dark chocolate 32, "
                          "butter 35, paraffin wax 60, basalt lava 1200 (solidifies near 1000)."),
    Parameter("solidus", 100.0, "°C", -273.15, 1e4, label="Solidus",
              description="The temperature the material starts to soften at, when it melts (Melts Into): between "
                          "Solidus and Liquidus an elastic solid's stiffness falls linearly to zero while its "
                          "damping's viscosity stays, so it sags and flows like a thick liquid before it melts "
                          "(dark chocolate 28, butter 20, paraffin 50, basalt 1000); at or above Liquidus: none."),
    Parameter("solidifies_into", "", label="Solidifies Into",
              description="The scene material this one becomes below that material's Solidus (lava into "
                          "basalt): an elastic solid takes the shape the particles have then as its rest shape. "
                          "Empty: it does not solidify."),
    Parameter("specific_heat", 4186.0, "J/(kg K)", 1.0, 1e5, label="Specific Heat",
              description="c_p, the heat that warms a kilogram by one degree (water 4186, chocolate 1600, wax "
                          "2500, basalt 840); with the density and k it gives the diffusivity k / (ρ c_p), "
                          "m²/s, at which a temperature difference spreads."),
)

SIMULATION_PARAMETERS: tuple[Parameter, ...] = (
    Parameter("ambient_temperature", 20.0, "°C", -273.15, 1e4, label="Ambient Temperature",
              description="The air's temperature, which Air Heat Transfer draws the particles at a free surface "
                          "towards."),
    Parameter("air_heat_transfer", 0.0, "W/(m^2 K)", 0.0, 1e5, label="Air Heat Transfer",
              description="h, the heat a free surface exchanges with the air per area and degree (still air "
                          "5-10, a fan 20-100, water sprayed on 1000+); 0: the air insulates."),
)

SOURCE_PARAMETERS: tuple[Parameter, ...] = (
    Parameter("temperature", 20.0, "°C", -273.15, 1e4, label="Temperature",
              description="The emitted particles' temperature (used when a material conducts heat)."),
)

# A source's optional ``melt_keyframes``: the melt amount of its particles at Blender frames, linear between keys.
MELT_KEY_PARAMETERS: tuple[Parameter, ...] = (
    Parameter("frame", 1.0, "", None, None, description="Frame of the key (fractional frames allowed)."),
    Parameter("amount", 0.0, "", 0.0, 1.0, label="Melt Amount",
              description="0 solid, 1 molten: the same melt fraction a temperature between Solidus and Liquidus "
                          "gives (the larger of the two is taken); at 1 the particle becomes its Melts Into."),
)

COLLIDER_PARAMETERS: tuple[Parameter, ...] = (
    Parameter("heat_contact", False, label="Held Temperature",
              description="The surface is held at Temperature (a hot plate, a cold floor) and conducts heat into "
                          "the particles within the interaction radius, at their own conductivity; off: it "
                          "insulates."),
    Parameter("temperature", 20.0, "°C", -273.15, 1e4, label="Temperature",
              description="The surface's temperature when it is held (Held Temperature)."),
)
