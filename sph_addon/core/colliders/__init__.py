"""Colliders: registry of shapes, rigid motion (``motion``), contact response (``response``).

``COLLIDERS`` maps a scene-file collider ``type`` to its declared parameters
and a builder returning a :class:`Shape` (the numba SDF function with its
``params`` and ``grid``, see ``sdf_analytic``; the collision kernels get the
function's integer code from ``sdf_dispatch``). Builders import numba code
lazily so that the registry can be read (docs, validation, Blender UI) without
compiling anything. A mesh collider is one more entry with a grid-sampled SDF
(``mesh_files`` declares and checks its fields without numba, ``mesh_collider``
builds it).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError
from ..passes.heat_parameters import COLLIDER_PARAMETERS as HEAT_COLLIDER_PARAMETERS
from ..scene.params import Parameter, check_name, resolve
from .shapes import BuildContext, Shape
from .shapes.mesh_files import MESH_DESCRIPTION, MESH_PARAMETERS, check_mesh_files, is_deforming

if TYPE_CHECKING:
    # Only for the annotation: motion imports euler_xyz_matrix from here.
    from .motion import Motion

# A collider the fluid moves (``rigid_body``, ``core/passes/bodies.py``).
DYNAMIC_PARAMETERS: tuple[Parameter, ...] = (
    Parameter("dynamic", False, label="Dynamic",
              description="A rigid body the fluid moves and that pushes the fluid back (Clavet 2005, "
                          "Algorithm 7): its mass from its density and its closed shape's volume, under "
                          "gravity, in contact with the other colliders. Boxes, spheres and closed "
                          "meshes (mode solid); keyframes only until animated_until."),
    Parameter("density", 500.0, "kg/m^3", 1.0, 25000.0, label="Density",
              description="A dynamic body's density: water 1000, pine 500, a hollow plastic duck ~100."),
    Parameter("body_friction", 0.5, "", 0.0, 10.0, label="Body Friction",
              description="A dynamic body's Coulomb friction against other colliders (Blender's rigid-"
                          "body friction); how the liquid slides along it is its Liquid Friction."),
    Parameter("restitution", 0.0, "", 0.0, 1.0, label="Bounciness",
              description="A dynamic body's bounce off other colliders (Blender's rigid-body "
                          "restitution): 0 none, 1 elastic. Approaches under 0.2 m/s do not bounce."),
    Parameter("linear_velocity", (0.0, 0.0, 0.0), "m/s", label="Initial Velocity",
              description="A dynamic body's velocity at the first frame."),
    Parameter("angular_velocity", (0.0, 0.0, 0.0), "rad/s", label="Initial Angular Velocity",
              description="A dynamic body's angular velocity at the first frame, world axes."),
    Parameter("animated_until", 0.0, "", 0.0, 1e6, label="Animated Until",
              description="A dynamic body follows its keyframes (or stays where it is placed, without "
                          "keyframes) until this frame, pushing the fluid without being pushed, then the "
                          "fluid moves it from the velocity its keyframes gave it (Blender's Animated rigid "
                          "body keyed off). 0, or a frame not after the first: dynamic from the start; the "
                          "initial velocities apply then only."),
    Parameter("hinge_axis", (0.0, 0.0, 0.0), "", label="Hinge Axis",
              description="A dynamic body on an axle through its origin that turns about this world axis "
                          "only (a paddle wheel, a water wheel, a swinging door); (0, 0, 0): free."),
)

COMMON_PARAMETERS: tuple[Parameter, ...] = (
    Parameter("name", "", description="Name shown in messages (the Blender object's name)."),
    Parameter("friction", 0.0, "", 0.0, 1.0, label="Liquid Friction",
              description="How the liquid slides along the collider (μ of Clavet's eq. 6.3): 0 lets it "
                          "slide, 1 makes it stick tangentially. For an elastic body on a collider that does "
                          "not move, Coulomb's coefficient."),
    Parameter("stickiness", 0.0, "1/s^2", 0.0, 1e6, label="Stickiness",
              description="k_stick (Clavet eq. 6.4): attraction towards the surface within the stick "
                          "distance."),
    Parameter("stick_distance", 0.0, "m", 0.0, 10.0, label="Stick Distance",
              description="d_stick (Clavet eq. 6.4); 0 uses half the particle spacing."),
    Parameter("position", (0.0, 0.0, 0.0), "m", description="Location of the collider's origin."),
    Parameter("rotation", (0.0, 0.0, 0.0), "rad",
              description="Rotation as Euler XYZ angles (Blender's default order)."),
    Parameter("continuous", True, label="Continuous Collision",
              description="Test the path of particles fast enough to cross the collider within one "
                          "substep, so thin colliders do not leak."),
    *DYNAMIC_PARAMETERS,
    *HEAT_COLLIDER_PARAMETERS,
)


def _analytic(name: str, *values: float, radius: float = math.inf) -> Shape:
    from .shapes import sdf_analytic

    return Shape(getattr(sdf_analytic, name), np.asarray(values, np.float64), radius=radius)


def _box(name: str, size) -> Shape:
    half = [0.5 * s for s in size]
    return _analytic(name, *half, radius=math.hypot(*half))


# The faces of a box_container, in the order of sdf_box_open's flags; (name, label).
CONTAINER_SIDES = (("x_min", "-X"), ("x_max", "+X"), ("y_min", "-Y"), ("y_max", "+Y"), ("z_min", "-Z"),
                   ("z_max", "+Z"))
OPEN_SIDE_PARAMETERS: tuple[Parameter, ...] = tuple(
    Parameter(f"open_{side}", False, label=f"Open {label}",
              description=f"The container's {label} face is open: particles pass through it (a domain "
                          f"box removes them once they are outside).")
    for side, label in CONTAINER_SIDES)


def _container(p: dict[str, Any], ctx: BuildContext) -> Shape:
    half = [0.5 * s for s in p["size"]]
    # .get: a builder called with unresolved fields (tests, scripts) gets the declared default, closed.
    flags = [1.0 if p.get(par.name, par.default) else 0.0 for par in OPEN_SIDE_PARAMETERS]
    if not any(flags):
        return _box("sdf_box_container", p["size"])  # the closed tank, bit for bit as before open faces
    # Beyond the box the solid's surface runs along the open faces' planes: unbounded (radius inf).
    return _analytic("sdf_box_open", *half, *flags)


def _never(p: dict[str, Any]) -> bool:
    return False


@dataclass(frozen=True)
class ColliderType:
    """One entry of ``COLLIDERS``.

    Attributes
    ----------
    parameters : declared fields of this type (besides ``COMMON_PARAMETERS``).
    build : ``build(p, ctx) -> Shape`` with ``p`` the resolved fields and ``ctx`` a
        :class:`BuildContext`; raises InputError for bad content (mesh files).
    description : one paragraph for the docs.
    list_fields : fields holding lists (not declarable as a ``Parameter``); scene
        validation leaves them to ``check``.
    check : ``check(p, item, where, base_dir, frames)``, run at scene validation:
        parses the ``list_fields`` of ``item`` into ``p`` and checks that referenced
        files exist and can be read, for every frame in ``frames`` (first, last).
    deforming : ``deforming(p)``: whether the shape must be rebuilt every frame.
    """

    parameters: tuple[Parameter, ...]
    build: Callable[[dict[str, Any], BuildContext], Shape]
    description: str = ""
    list_fields: tuple[str, ...] = ()
    check: Callable[..., None] | None = None
    deforming: Callable[[dict[str, Any]], bool] = _never


def _build_mesh(p: dict[str, Any], ctx: BuildContext) -> Shape:
    from .shapes.mesh_collider import build_mesh_collider

    return build_mesh_collider(p, ctx)


COLLIDERS: dict[str, ColliderType] = {
    "plane": ColliderType((), lambda p, ctx: _analytic("sdf_plane"),
                          "Infinite ground: the half-space below the local XY plane is solid."),
    "box": ColliderType(
        (Parameter("size", (1.0, 1.0, 1.0), "m", 1e-6, None,
                   description="Full extents along local X, Y, Z."),),
        lambda p, ctx: _box("sdf_box", p["size"]),
        "A solid box centred on its position."),
    "box_container": ColliderType(
        (Parameter("size", (1.0, 1.0, 1.0), "m", 1e-6, None,
                   description="Inner extents along local X, Y, Z."),
         *OPEN_SIDE_PARAMETERS),
        _container,
        "A tank: particles are kept inside the box. Faces may be open (`open_x_max` etc.): the walls "
        "then stop at that face's plane, so liquid pours out of an open side or splashes over the rim "
        "of an open top; beside a `domain` of the same box, what leaves is removed."),
    "sphere": ColliderType(
        (Parameter("radius", 0.5, "m", 1e-6, None, description="Radius."),),
        lambda p, ctx: _analytic("sdf_sphere", p["radius"], radius=p["radius"]),
        "A solid ball centred on its position."),
    "mesh": ColliderType(MESH_PARAMETERS, _build_mesh, MESH_DESCRIPTION, list_fields=("frame_paths",),
                         check=check_mesh_files, deforming=is_deforming),
}


def parse_placed(item: Any, where: str, kinds, what: str,
                 placement: tuple[Parameter, ...]) -> tuple[str, ColliderType, dict[str, Any]]:
    """A placed scene item (a collider or an outflow): its type, the type's registry entry and its
    fields resolved against ``placement`` plus the type's own, ``keyframes`` included.

    ``kinds``: the type names allowed; ``what``: their name in messages ("collider type").
    """
    if not isinstance(item, dict):
        raise InputError(where, "expected an object")
    kind = check_name(item.get("type"), kinds, f"{where}.type", what)
    ct = COLLIDERS[kind]
    body = {k: v for k, v in item.items() if k not in ("type", "keyframes", *ct.list_fields)}
    p = resolve(placement + ct.parameters, body, where)
    p["keyframes"] = _keyframes(item.get("keyframes", []), p, where)
    return kind, ct, p


def _keyframes(keys: Any, p: dict[str, Any], where: str) -> list[dict[str, Any]]:
    """``keyframes``: ``{frame, position, rotation}`` in frame order; a key's missing position or
    rotation is the item's own (``p``, resolved)."""
    if not isinstance(keys, list):
        raise InputError(f"{where}.keyframes", "expected a list of {frame, position, rotation}")
    by_name = {q.name: q for q in COMMON_PARAMETERS}
    key_params = (Parameter("frame", 1.0, "", None, None), by_name["position"], by_name["rotation"])
    resolved = []
    for k, key in enumerate(keys):
        kp = resolve(key_params, key, f"{where}.keyframes[{k}]",
                     base={"position": p["position"], "rotation": p["rotation"]})
        if resolved and kp["frame"] <= resolved[-1]["frame"]:
            raise InputError(f"{where}.keyframes[{k}].frame", "keyframes must be in increasing frame order")
        resolved.append(kp)
    return resolved


def euler_xyz_matrix(rx: float, ry: float, rz: float) -> np.ndarray:
    """Rotation matrix (local -> world) of Euler XYZ angles (rad), composed as Blender does: Rz Ry Rx."""
    cx, sx = math.cos(rx), math.sin(rx)
    cy, sy = math.cos(ry), math.sin(ry)
    cz, sz = math.cos(rz), math.sin(rz)
    rxm = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    rym = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    rzm = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    return rzm @ rym @ rxm


@dataclass
class Collider:
    """A collider in the simulation: shape, motion and contact response settings.

    Attributes
    ----------
    name : shown in messages and contact reports.
    shape : the signed distance field in the local frame; replaced every frame
        for deforming meshes (``rebuild``).
    motion : ``motion.Motion`` giving the local -> world transform at any
        fractional frame (static, keyframed; later a dynamic rigid body).
    friction : μ in [0, 1] (Clavet eq. 6.3).
    stickiness : k_stick, 1/s^2 (Clavet eq. 6.4).
    stick_distance : d_stick, m (Clavet eq. 6.4).
    continuous : march the paths of fast particles (``response.collide``).
    rebuild : ``rebuild(frame) -> Shape`` for deforming meshes, else None.
    """

    name: str
    shape: Shape
    motion: Motion
    friction: float
    stickiness: float
    stick_distance: float
    continuous: bool = True
    rebuild: Callable[[int], Shape] | None = None  # shape of a frame, for deforming meshes

    def transform(self, frame: float) -> tuple[np.ndarray, np.ndarray]:
        """(R (3,3) local -> world, t (3,) m) at a fractional frame: ``motion.transform``."""
        return self.motion.transform(frame)

    @property
    def moving(self) -> bool:
        """Whether the collider's pose may change (``motion.moving``)."""
        return self.motion.moving

    def surface_speed(self, frame: float, fps: float, points: np.ndarray, margin: float) -> float:
        """Fastest speed of the collider's surface where it may meet ``points`` from ``frame`` to the next, m/s.

        The origin's speed plus |ω| R, with ω the angle the collider turns through over the frame
        (``Motion.turn``: the Euler angles' change, which bounds it) and R the largest distance from
        the origin of the surface (``Shape.radius``) or of the points (particles, grown by how far
        the origin moves and ``margin``, m), whichever is smaller.

        Parameters
        ----------
        frame : float. fps : frames per second.
        points : (n, 3) float64 world positions of the particles, m.
        margin : m, added to the points' distance (a support radius: a particle reaches that far).
        """
        _, p0 = self.transform(frame)
        _, p1 = self.transform(frame + 1)
        shift = float(np.linalg.norm(p1 - p0))
        speed = shift * fps
        angle = self.motion.turn(frame, frame + 1)
        if angle == 0.0:
            return speed
        reach = self.shape.radius
        if len(points):
            d = points - p0
            reach = min(reach, math.sqrt(float(np.max(np.einsum("ij,ij->i", d, d)))) + shift + margin)
        elif math.isinf(reach):
            reach = 0.0
        return speed + angle * fps * reach
