"""Quick setups: a Domain around the selection, sized so that the first bake is a quick look.

What an artist expects from Quick Liquid on the default cube (Mantaflow's quick
effects do the same): the liquid rests on the floor where the cube stood, the
bake covers the scene's frame range, and the first bake takes seconds per frame,
not minutes. Main thread only, like all bpy.
"""

from __future__ import annotations

import math

import bpy
import numpy as np

from . import baking
from . import properties as props
from .export import snapshot as export

# Particles of a first bake: ~20k bakes a frame in about a second on two cores and still shows
# the shape of the flow; the spacing is rounded up, so the count stays between ~15k and 20k.
FIRST_BAKE_PARTICLES = 20_000
_SPACING = props.by_name(props.TOP_PARAMETERS)["particle_spacing"]


def selection_bounds(objects) -> tuple[np.ndarray, np.ndarray] | None:
    """World-space (min, max) corners of the objects' bounding boxes; None for no objects."""
    pts = []
    for ob in objects:
        m = np.array(ob.matrix_world)
        pts.append(np.array([tuple(c) for c in ob.bound_box]) @ m[:3, :3].T + m[:3, 3])
    if not pts:
        return None
    pts = np.concatenate(pts)
    return pts.min(axis=0), pts.max(axis=0)


def first_bake_spacing(volume: float, particles: int = FIRST_BAKE_PARTICLES) -> float:
    """The particle spacing (m) that fills ``volume`` (m³) with at most ``particles`` particles.

    Rounded *up* to two significant digits, so the count is at most ``particles`` and at
    least 0.77 of it ((1.01 / 1.1)³ at worst), and the panel shows a spacing an artist can
    read ("0.074 m").
    """
    if not volume > 0:
        return float(_SPACING.default)
    exact = (volume / particles) ** (1.0 / 3.0)
    step = 10.0 ** (math.floor(math.log10(exact)) - 1)
    spacing = math.ceil(exact / step - 1e-9) * step
    return float(min(max(spacing, _SPACING.minimum), _SPACING.maximum))


def make_domain(context, objects, margin: float = 0.25):
    """A wireframe box Domain around ``objects`` (or a 2 m box at the origin), ready to bake.

    Its sides and top are ``margin`` times the selection's largest extent away from it; its
    floor is the selection's bottom, so a liquid rests where its object stood rather than
    falling through the margin. Its frame range is the scene's, and its particle spacing
    gives a first bake of about :data:`FIRST_BAKE_PARTICLES` from the scene's Fluid objects.
    """
    bounds = selection_bounds(objects)
    if bounds is None:
        lo, hi = np.array((-1.0, -1.0, 0.0)), np.array((1.0, 1.0, 2.0))
    else:
        lo, hi = bounds
        pad = margin * max(hi - lo)
        lo, hi = lo - pad, hi + pad
        lo[2] = bounds[0][2]
    size, center = hi - lo, (lo + hi) / 2
    me = bpy.data.meshes.new("SPH Domain")
    s = size / 2
    verts = [(x * s[0], y * s[1], z * s[2]) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]
    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    me.from_pydata(verts, [], faces)
    ob = bpy.data.objects.new("SPH Domain", me)
    ob.location = tuple(center)
    ob.display_type = 'WIRE'
    ob.hide_render = True
    scene = context.scene
    scene.collection.objects.link(ob)
    ob.sph.role = 'DOMAIN'
    d = ob.sph.domain
    d.frame_start, d.frame_end = scene.frame_start, scene.frame_end
    d.particle_spacing = first_bake_spacing(baking.fluid_volume(export.members(scene, 'FLUID') +
                                                               export.members(scene, 'SOLID')))
    return ob
