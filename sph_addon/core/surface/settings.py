"""Declared surface settings (the scene file's top-level ``"surface"`` object).

Every length is in metres. A length left at 0 means "automatic": a multiple of
the scene's ``particle_spacing`` chosen by the calibration documented in
``docs/surface.md`` (and in :mod:`.fields`). This module imports no numba, so
the scene validator and the Blender UI can read it cheaply.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import InputError
from ..scene.params import Parameter, resolve

# Bump when a change of the meshing code changes its output for the same
# settings, so that caches meshed by an older version are re-meshed.
ALGORITHM_VERSION = 1

# Calibrated defaults per field, in particle spacings (kept here rather than
# imported from .fields so this module stays numba-free; test_surface_settings
# checks the two agree).
FIELD_DEFAULTS = {
    "clavet": {"support_factor": 2.0, "iso": 1.24},
    "density": {"support_factor": 1.36, "iso": 2.0},
}
CUBE_FACTOR = 0.5          # cube size = spacing / 2: ~4 cubes per support radius
MIN_RADIUS_FACTOR = 0.5    # thin-feature radius = particle radius (spacing / 2)

SURFACE_PARAMETERS: tuple[Parameter, ...] = (
    Parameter("field", "clavet", choices=("clavet", "density"), label="Field",
              description="Implicit function meshed: 'clavet' = phi = (sum (1 - r/h)^2)^1/2 "
                          "(Clavet 2005, eq. 7.1); 'density' = iso-density of Desbrun-Cani's "
                          "anti-clustering kernel (Desbrun & Cani 1996, section 4)"),
    Parameter("support", 0.0, "m", 0.0, None, label="Smoothing Radius",
              description="Support radius of the field (h in Clavet, 2h in Desbrun-Cani); "
                          "0 = automatic (2.0 spacings for clavet, 1.36 for density)"),
    Parameter("iso", 0.0, "", 0.0, None, label="Iso Value",
              description="Level of the field that is the surface; 0 = automatic "
                          "(1.24 for clavet, 2 = 2 W_h(h) for density), calibrated to keep volume"),
    Parameter("cube_size", 0.0, "m", 0.0, None, label="Mesh Resolution",
              description="Edge of a marching-cubes cell; 0 = automatic (half the particle spacing)"),
    Parameter("thin_features", True, label="Keep Droplets",
              description="Show every particle as at least a sphere of radius min_radius, "
                          "so single drops and thin filaments do not vanish"),
    Parameter("min_radius", 0.0, "m", 0.0, None, label="Particle Radius",
              description="Smallest radius of a particle's blob when thin_features is on; "
                          "0 = automatic (half the particle spacing)"),
    Parameter("smoothing_iterations", 5, "", 0, 500, label="Smoothing",
              description="Taubin lambda/mu smoothing passes (volume-preserving); 0 = none"),
    Parameter("smoothing_lambda", 0.5, "", 0.01, 1.0, label="Smoothing Lambda",
              description="Taubin shrink step lambda (Taubin 1995)"),
    Parameter("smoothing_mu", -0.53, "", -1.0, -0.01, label="Smoothing Mu",
              description="Taubin inflate step mu (negative, |mu| slightly above lambda)"),
    Parameter("mesh_during_bake", False, label="Mesh During Bake",
              description="Mesh each frame as soon as it is simulated (otherwise run the mesh stage later)"),
    Parameter("normals", False, label="Normals",
              description="Write per-vertex normals (nx ny nz) into the surface files (Blender shades the "
                          "surface smooth without them, and loads each frame ~30 % faster)"),
)


@dataclass(frozen=True)
class SurfaceSettings:
    """Resolved surface settings, every length in metres.

    Attributes
    ----------
    field : "clavet" or "density" (key of :data:`.fields.FIELDS`).
    support : field support radius (m).
    iso : iso-value (dimensionless).
    cube_size : marching-cubes cell edge (m).
    min_radius : thin-feature radius (m); 0 = off.
    smoothing_iterations : Taubin passes (each a lambda then a mu step).
    smoothing_lambda, smoothing_mu : Taubin factors.
    normals : write vertex normals.
    """

    field: str = "clavet"
    support: float = 0.1
    iso: float = 1.24
    cube_size: float = 0.025
    min_radius: float = 0.025
    smoothing_iterations: int = 5
    smoothing_lambda: float = 0.5
    smoothing_mu: float = -0.53
    normals: bool = False

    def digest(self) -> str:
        """A short hash of these settings and the algorithm version (skip test of the stage)."""
        text = json.dumps({"v": ALGORITHM_VERSION, **asdict(self)}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def settings_from_values(values: Mapping[str, Any], spacing: float,
                         where: str = "surface") -> SurfaceSettings:
    """Turn resolved parameter values into :class:`SurfaceSettings` (absolute metres).

    Parameters
    ----------
    values : output of ``params.resolve(SURFACE_PARAMETERS, ...)``.
    spacing : particle spacing (m), > 0; automatic lengths are multiples of it.
    where : JSON path used in error messages.

    Raises
    ------
    InputError
        if the combination is inconsistent (min_radius >= support).
    """
    if not spacing > 0:
        raise InputError("particle_spacing", f"must be a positive number of metres, got {spacing!r}")
    d = FIELD_DEFAULTS[values["field"]]
    support = values["support"] or d["support_factor"] * spacing
    iso = values["iso"] or d["iso"]
    cube = values["cube_size"] or CUBE_FACTOR * spacing
    min_radius = 0.0
    if values["thin_features"]:
        min_radius = values["min_radius"] or MIN_RADIUS_FACTOR * spacing
        if min_radius >= support:
            raise InputError(f"{where}.min_radius",
                             f"must be smaller than the support radius {support:g} m, got {min_radius:g} m")
    if support / cube > 64:
        raise InputError(f"{where}.cube_size",
                         f"{cube:g} m is too fine for the support {support:g} m (more than 64 cubes "
                         "per support radius); use a larger cube size")
    return SurfaceSettings(field=values["field"], support=float(support), iso=float(iso),
                           cube_size=float(cube), min_radius=float(min_radius),
                           smoothing_iterations=int(values["smoothing_iterations"]),
                           smoothing_lambda=float(values["smoothing_lambda"]),
                           smoothing_mu=float(values["smoothing_mu"]), normals=bool(values["normals"]))


def surface_settings(scene: Mapping[str, Any]) -> SurfaceSettings:
    """Resolve the surface settings of a scene dict (``scene["surface"]``, ``scene["particle_spacing"]``).

    Raises
    ------
    InputError
        naming the JSON path of the first bad field.
    """
    spacing = scene.get("particle_spacing")
    if isinstance(spacing, bool) or not isinstance(spacing, (int, float)) or not spacing > 0:
        raise InputError("particle_spacing", f"expected a positive number of metres, got {spacing!r}")
    values = resolve(SURFACE_PARAMETERS, scene.get("surface"), "surface")
    return settings_from_values(values, float(spacing))


def default_settings(spacing: float, **overrides: Any) -> SurfaceSettings:
    """Settings for particles of ``spacing`` metres, with scene-file style ``overrides``."""
    return settings_from_values(resolve(SURFACE_PARAMETERS, overrides, "surface"), spacing)
