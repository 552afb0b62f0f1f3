"""Particles to a surface mesh: field, sparse marching cubes, smoothing, attributes.

References: Clavet 2005 thesis section 7.2; Desbrun & Cani 1996 section 4;
Taubin 1995. See :mod:`.marching_cubes` for the polygonisation and
``docs/surface.md`` for the whole pipeline.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from .attributes import interpolate_to_vertices
from .fields import FIELDS
from .marching_cubes import extract
from .settings import SurfaceSettings
from .smoothing import taubin_smooth, vertex_normals

log = logging.getLogger(__name__)


@dataclass
class SurfaceMesh:
    """A triangle mesh with per-vertex attributes.

    Attributes
    ----------
    vertices : (V, 3) float64 positions (m).
    faces : (F, 3) int32, counter-clockwise seen from outside (outward normals).
    velocity : (V, 3) float64 (m/s), kernel-weighted particle velocity.
    normals : (V, 3) float64 unit outward normals, or None if not requested.
    material : (V,) uint8 material id of the particles that made each vertex.
    """

    vertices: np.ndarray
    faces: np.ndarray
    velocity: np.ndarray
    normals: np.ndarray | None
    material: np.ndarray

    @classmethod
    def empty(cls, normals: bool = True) -> SurfaceMesh:
        """A mesh with no vertices and no faces."""
        return cls(np.zeros((0, 3)), np.zeros((0, 3), np.int32), np.zeros((0, 3)),
                   np.zeros((0, 3)) if normals else None, np.zeros(0, np.uint8))


def _check_particles(x: np.ndarray, v: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != 3:
        raise ValueError(f"positions must be (N, 3), got shape {x.shape}")
    if v is None:
        v = np.zeros_like(x)
    v = np.asarray(v, dtype=np.float64)
    if v.shape != x.shape:
        raise ValueError(f"velocities must have the shape of positions {x.shape}, got {v.shape}")
    if not (np.isfinite(x).all() and np.isfinite(v).all()):
        raise ValueError("positions and velocities must be finite")
    return np.ascontiguousarray(x), np.ascontiguousarray(v)


def reconstruct_surface(x: np.ndarray, v: np.ndarray | None, settings: SurfaceSettings,
                        material: int = 0) -> SurfaceMesh:
    """Mesh the surface of one set of particles.

    Parameters
    ----------
    x : (N, 3) float particle positions (m). Not mutated.
    v : (N, 3) float particle velocities (m/s), or None (zero velocity).
    settings : resolved settings (:func:`.settings.surface_settings`).
    material : id written to every vertex's ``material``.

    Returns
    -------
    SurfaceMesh
        closed, 2-manifold, outward-oriented, welded; empty for N = 0.

    Raises
    ------
    ValueError
        on bad shapes or non-finite input.
    """
    x, v = _check_particles(x, v)
    if len(x) == 0:
        return SurfaceMesh.empty(settings.normals)
    field = FIELDS[settings.field]
    verts, faces = extract(x, settings.support, settings.cube_size, settings.iso,
                           field.kind, settings.min_radius)
    if len(faces) == 0:
        return SurfaceMesh.empty(settings.normals)
    verts = taubin_smooth(verts, faces, settings.smoothing_iterations,
                          settings.smoothing_lambda, settings.smoothing_mu)
    # Half the support: a local average is what motion blur needs, and it scans
    # 8x fewer particles than the full support (docs/surface.md, "Velocity").
    vel = interpolate_to_vertices(verts, x, v, 0.5 * settings.support,
                                  fallback_radius=settings.support + np.sqrt(3.0) * settings.cube_size)
    normals = vertex_normals(verts, faces) if settings.normals else None
    return SurfaceMesh(verts, faces, vel, normals, np.full(len(verts), material, np.uint8))


def reconstruct_materials(x: np.ndarray, v: np.ndarray | None, material: np.ndarray | None,
                          settings: SurfaceSettings) -> SurfaceMesh:
    """Mesh each material's particles separately and concatenate the meshes.

    Water and jelly must not fuse into one blob, and Blender splits the one
    object per frame by the per-vertex ``material`` attribute (docs/surface.md,
    "Several materials"). Meshes are concatenated in increasing material id.

    Parameters
    ----------
    x, v : as in :func:`reconstruct_surface`.
    material : (N,) integer material id per particle (0..255), or None (all 0).
    settings : resolved settings.

    Returns
    -------
    SurfaceMesh
        every component closed and oriented; ``material`` per vertex.
    """
    x, v = _check_particles(x, v)
    if material is None:
        material = np.zeros(len(x), np.uint8)
    material = np.asarray(material)
    if material.shape != (len(x),):
        raise ValueError(f"material must be (N,), got {material.shape}")
    parts = []
    for mat in np.unique(material):  # a handful of materials, not particles
        sel = material == mat
        parts.append(reconstruct_surface(x[sel], v[sel], settings, int(mat)))
    if not parts:
        return SurfaceMesh.empty(settings.normals)
    offsets = np.cumsum([0] + [len(p.vertices) for p in parts])
    return SurfaceMesh(
        vertices=np.concatenate([p.vertices for p in parts]),
        faces=np.concatenate([p.faces + o for p, o in zip(parts, offsets[:-1], strict=True)])
        .astype(np.int32),
        velocity=np.concatenate([p.velocity for p in parts]),
        normals=np.concatenate([p.normals for p in parts]) if settings.normals else None,
        material=np.concatenate([p.material for p in parts]),
    )
