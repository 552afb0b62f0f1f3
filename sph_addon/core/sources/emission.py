"""Particle sources: volumes filled at the start, inflow emitters that add particles per substep.

Volumes (box, sphere) are filled on a cubic lattice of the scene's particle
spacing, aligned to the world origin so neighbouring sources tile without gaps
or overlaps. An inflow emits layers of particles across a disc or rectangle:
a layer is added each time the emitted volume falls behind the requested rate,
offset along the flow by the distance the layer has already travelled, so the
stream has the lattice density whatever the substep.

A mesh source fills the inside of a closed PLY/OBJ mesh (world coordinates,
path relative to the scene file) through the mesh's signed distance field
(``mesh_fill.fill_mesh``, Clavet 2005 section 6.1), on a lattice centred in the
mesh's bounding box rather than on the world lattice: the mesh's extents are
arbitrary, and centring splits the leftover evenly on both sides.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..colliders.shapes.mesh_files import check_file, resolve_mesh_path
from ..errors import InputError
from ..numerics import config
from ..passes.heat_parameters import SOURCE_PARAMETERS as HEAT_SOURCE_PARAMETERS
from ..scene.params import Parameter, resolve

_MATERIAL = Parameter("material", "", description="Name of a material in the scene's materials list.")
_VELOCITY = Parameter("velocity", (0.0, 0.0, 0.0), "m/s", description="Initial velocity of the particles.")
_SPIN = Parameter("angular_velocity", (0.0, 0.0, 0.0), "rad/s", label="Angular Velocity",
                  description="Initial spin about world axes through the source's centre: each particle starts at "
                              "velocity + ω × (x - c), c the centre of the box (of min and max), of the ball, or "
                              "of a mesh source's particles (their centroid: the spin adds no momentum).")
_HEAT = HEAT_SOURCE_PARAMETERS

SOURCES: dict[str, tuple[Parameter, ...]] = {
    "box": (
        _MATERIAL, _VELOCITY, _SPIN, *_HEAT,
        Parameter("min", (0.0, 0.0, 0.0), "m", description="Lower corner of the box."),
        Parameter("max", (1.0, 1.0, 1.0), "m", description="Upper corner of the box."),
    ),
    "sphere": (
        _MATERIAL, _VELOCITY, _SPIN, *_HEAT,
        Parameter("center", (0.0, 0.0, 0.0), "m", description="Centre of the ball."),
        Parameter("radius", 0.5, "m", 1e-6, None, description="Radius of the ball."),
    ),
    "inflow": (
        _MATERIAL, *_HEAT,
        Parameter("shape", "disc", choices=("disc", "rectangle"), description="Emitter outline."),
        Parameter("center", (0.0, 0.0, 0.0), "m", description="Centre of the emitter."),
        Parameter("velocity", (0.0, 0.0, -1.0), "m/s",
                  description="Velocity of emitted particles; the emitter faces along it."),
        Parameter("radius", 0.1, "m", 1e-6, None, description="Disc radius."),
        Parameter("size", (0.2, 0.2, 0.0), "m",
                  description="Rectangle width and height (third value unused)."),
        Parameter("rate", 0.0, "m^3/s", 0.0, None,
                  description="Emitted volume per second; 0 means area x speed (a continuous stream)."),
        Parameter("frame_start", 1, "", None, None, description="First frame that emits."),
        Parameter("frame_end", 1000000, "", None, None, description="Last frame that emits."),
        Parameter("nozzle_length", 0.0, "m", 0.0, None, label="Nozzle Length",
                  description="Length of pipe behind the emitter: particles move at the emitter's velocity "
                              "until they have travelled this far, as liquid does inside a nozzle, so a "
                              "viscous thread hangs from it instead of falling away in slabs (0: no pipe)."),
        Parameter("inherit_velocity", 0.0, "", -10.0, 10.0, label="Inherit Velocity",
                  description="Fraction of the emitter's own velocity (from its keyframes) added to the emitted "
                              "particles: 1 carries a moving nozzle's motion into the stream, 0 ignores it."),
    ),
    "mesh": (
        _MATERIAL, _VELOCITY, _SPIN, *_HEAT,
        Parameter("path", "", label="Mesh File",
                  description="Closed PLY or OBJ mesh (world coordinates) whose inside is filled, relative "
                              "to the scene file."),
        Parameter("jitter", 0.0, "", 0.0, 0.99, label="Jitter",
                  description="Random displacement of each lattice point, as a fraction of the spacing."),
        Parameter("seed", 0, "", 0, 2**31 - 1, description="Seed of the jitter: same seed, same particles."),
        Parameter("bind_mesh", False, label="Deform Mesh",
                  description="Bind this mesh to its particles and write it, deformed as they carry it, into "
                              "the cache every frame (deformed/source_<k>_####.ply: the mesh's vertices in "
                              "their order, world coordinates); needs a material of model elastic."),
    ),
}


# An inflow's optional ``keyframes``: its centre and velocity at Blender frames, interpolated per substep.
INFLOW_KEY_PARAMETERS: tuple[Parameter, ...] = (
    Parameter("frame", 1.0, "", None, None, description="Frame of the key (fractional frames allowed)."),
    Parameter("center", (0.0, 0.0, 0.0), "m", description="Centre of the emitter at this frame."),
    Parameter("velocity", (0.0, 0.0, -1.0), "m/s",
              description="Velocity of emitted particles at this frame; the emitter faces along it."),
)


def parse_inflow_keys(keys, p: dict, where: str) -> list[dict]:
    """Checked ``keyframes`` of an inflow (absent fields take the inflow's own ``center``/``velocity``).

    Raises InputError at ``<where>.keyframes[k]`` for a key out of frame order or with no velocity.
    """
    if not isinstance(keys, list):
        raise InputError(f"{where}.keyframes", "expected a list of {frame, center, velocity}")
    out: list[dict] = []
    for k, key in enumerate(keys):
        kp = resolve(INFLOW_KEY_PARAMETERS, key, f"{where}.keyframes[{k}]",
                     base={"center": p["center"], "velocity": p["velocity"]})
        if out and kp["frame"] <= out[-1]["frame"]:
            raise InputError(f"{where}.keyframes[{k}].frame", "keyframes must be in increasing frame order")
        if math.hypot(*kp["velocity"]) == 0:
            raise InputError(f"{where}.keyframes[{k}].velocity",
                             "an inflow needs a non-zero velocity (it sets the direction)")
        out.append(kp)
    return out


def check_source_files(kind: str, p: dict, base_dir: Path, where: str) -> None:
    """Scene validation of the files a source references (a mesh source's ``path``).

    Raises InputError naming ``sources[k].path`` for no path, an unsupported
    suffix, a missing or unreadable file. Content (an open mesh, NaN vertices)
    is checked when the source is filled, see :func:`fill_mesh_source`.
    """
    if kind != "mesh":
        return
    if not p["path"]:
        raise InputError(f"{where}.path", "required: a closed PLY or OBJ mesh, relative to the scene file")
    check_file(resolve_mesh_path(base_dir, p["path"]), f"{where}.path")


def fill_mesh_source(p: dict, spacing: float, base_dir: Path, where: str,
                     memory_budget: int = config.DEFAULT_MEMORY_BUDGET) -> np.ndarray:
    """Particle positions (N,3) filling a mesh source's closed mesh at the scene's ``spacing`` (m).

    Raises InputError at ``sources[k].path`` for a bad file or a mesh with no
    inside (an open sheet), see ``mesh_fill.fill_mesh``.
    """
    from ..cache.mesh_io import load_mesh
    from .mesh_fill import fill_mesh

    path = resolve_mesh_path(base_dir, p["path"])
    vertices, triangles = load_mesh(path, f"{where}.path")
    return fill_mesh(vertices, triangles, spacing, jitter=p["jitter"], seed=p["seed"],
                     memory_budget=memory_budget, where=f"{where}.path")


def lattice_box(lo, hi, spacing: float) -> np.ndarray:
    """Lattice points (k,3) inside the box [lo, hi], on the world lattice of ``spacing``.

    Points sit at (i + 1/2) spacing, so a box from 0 to 1 m at 0.05 m holds
    exactly 20 points per axis.
    """
    lo = np.asarray(lo, float)
    hi = np.asarray(hi, float)
    axes = []
    for a in range(3):
        i0 = math.ceil(lo[a] / spacing - 0.5 - 1e-9)
        i1 = math.floor(hi[a] / spacing - 0.5 + 1e-9)
        axes.append((np.arange(i0, i1 + 1) + 0.5) * spacing)
    g = np.meshgrid(*axes, indexing="ij")
    return np.column_stack([c.ravel() for c in g])


def lattice_sphere(center, radius: float, spacing: float) -> np.ndarray:
    """Lattice points (k,3) within ``radius`` of ``center``."""
    c = np.asarray(center, float)
    pts = lattice_box(c - radius, c + radius, spacing)
    return pts[np.sum((pts - c) ** 2, axis=1) <= radius * radius]


def fill_volume(kind: str, p: dict, spacing: float, base_dir: Path, where: str, memory_budget: int) -> np.ndarray:
    """Initial particle positions (k,3) of a volume source (``box``, ``sphere`` or ``mesh``), m."""
    if kind == "box":
        return lattice_box(p["min"], p["max"], spacing)
    if kind == "sphere":
        return lattice_sphere(p["center"], p["radius"], spacing)
    if kind == "mesh":
        return fill_mesh_source(p, spacing, base_dir, where, memory_budget)
    raise KeyError(f"{kind!r} is not a volume source")


def spin_centre(kind: str, p: dict, x: np.ndarray) -> np.ndarray:
    """The point (3,) m a volume source spins about (``angular_velocity``): the box's centre (of ``min`` and
    ``max``), the ball's ``center``, the centroid of a mesh source's particles ``x`` (k,3)."""
    if kind == "box":
        return 0.5 * (np.asarray(p["min"], float) + np.asarray(p["max"], float))
    if kind == "sphere":
        return np.asarray(p["center"], float)
    return x.mean(axis=0) if len(x) else np.zeros(3)


def initial_velocities(kind: str, p: dict, x: np.ndarray) -> np.ndarray:
    """The initial velocities (k,3) m/s of a volume source's particles at ``x`` (k,3): ``velocity`` + ω × (x - c),
    ω its ``angular_velocity`` (rad/s, world axes), c :func:`spin_centre`. Without a spin, ``velocity``
    itself, broadcast."""
    if not any(p["angular_velocity"]):
        return np.broadcast_to(p["velocity"], x.shape)
    omega = np.asarray(p["angular_velocity"], float)
    return np.asarray(p["velocity"], float) + np.cross(omega, x - spin_centre(kind, p, x))


# A sphere source whose bounding lattice holds at most this many points is counted point by point (8 MB
# of coordinates at most); a larger one by its volume's upper bound, which the memory checks need only.
EXACT_SPHERE_POINTS = 3.5e5


def count_box(lo, hi, spacing: float) -> int:
    """Number of lattice points :func:`lattice_box` would make, without making them."""
    n = 1
    for a in range(3):
        i0 = math.ceil(lo[a] / spacing - 0.5 - 1e-9)
        i1 = math.floor(hi[a] / spacing - 0.5 + 1e-9)
        n *= max(0, i1 - i0 + 1)
    return n


def estimate_count(kind: str, p: dict, spacing: float, duration: float, base_dir: Path = Path("."),
                   where: str = "sources") -> int:
    """Upper estimate of the particles a source creates over ``duration`` seconds (memory checks).

    A box counts exactly what it makes, a sphere too up to ``EXACT_SPHERE_POINTS`` in its bounds; a mesh
    source counts the lattice points of its bounding box (no distance field is built, so the check
    stays cheap); ``base_dir`` locates its file and ``where`` names it in errors.
    """
    if kind == "mesh":
        from ..cache.mesh_io import load_mesh

        vertices, _ = load_mesh(resolve_mesh_path(base_dir, p["path"]), f"{where}.path")
        extent = np.ptp(vertices, axis=0)  # finite and bounded (mesh_io.check_coordinates)
        return math.prod(int(e / spacing + 1e-9) + 1 for e in extent)
    if kind == "box":
        return count_box(p["min"], p["max"], spacing)
    if kind == "sphere":
        across = 2.0 * p["radius"] / spacing + 2.0
        if across**3 <= EXACT_SPHERE_POINTS:  # what the bake makes (a bound of twice as many misled the preflight)
            return len(lattice_sphere(p["center"], p["radius"], spacing))
        return int(4.0 / 3.0 * math.pi * (p["radius"] / spacing + 1) ** 3) + 1
    if kind == "inflow":
        area = _area(p)
        # The emitted rate follows the keys' speeds (Inflow.place), so the fastest key bounds it.
        speed = max(float(np.linalg.norm(k["velocity"])) for k in p.get("keyframes") or [p])
        rate = p["rate"] if p["rate"] > 0 else area * speed
        return int(rate * duration / spacing**3) + 1
    raise KeyError(kind)


def emitted_speeds(p: dict, fps: float) -> list[tuple[str, float]]:
    """The speeds an inflow emits at, m/s, each with the field that sets it (a JSON path suffix).

    Without keyframes its ``velocity``; with keyframes each key's velocity, at the start of
    the first and at both ends of every segment with the inherited share (``inherit_velocity``)
    of the emitter's own motion over that segment. Between keys the speed is interpolated, so
    the largest of these bounds what the substep rule (``Inflow.peak_speed``) and the
    preflight's speed checks must allow.

    Parameters
    ----------
    p : a resolved inflow source (``keyframes`` parsed).
    fps : timeline frames per second of physics (fps / time_scale).
    """
    keys = p.get("keyframes") or []
    if not keys:
        return [(".velocity", float(np.linalg.norm(p["velocity"])))]
    out = [(".keyframes[0].velocity", float(np.linalg.norm(keys[0]["velocity"])))]
    share = p["inherit_velocity"]
    for j, (a, b) in enumerate(zip(keys, keys[1:])):
        carrier = (np.asarray(b["center"], float) - np.asarray(a["center"], float)) * (fps / (b["frame"] - a["frame"]))
        out += [(f".keyframes[{j + i}].velocity", float(np.linalg.norm(np.asarray(k["velocity"], float)
                                                                         + share * carrier)))
                for i, k in enumerate((a, b))]
    return out


def _area(p: dict) -> float:
    if p["shape"] == "disc":
        return math.pi * p["radius"] ** 2
    return p["size"][0] * p["size"][1]


@dataclass
class Inflow:
    """A running inflow emitter (state: emitted volume, checkpointed).

    With ``keyframes`` the emitter follows its object: before each substep :meth:`emit` moves it to
    the centre and velocity interpolated at that time (centre linearly; direction along the shorter
    arc, speed linearly), so a moving or turning nozzle paints a trail. Its own velocity (the
    centre's rate of change, m/s) times ``inherit_velocity`` is added to what it emits. Without keys
    nothing moves and the emitter is placed once.
    """

    index: int
    material: int
    params: dict
    spacing: float
    fps: float = 30.0  # timeline frames per second of physics (fps / time_scale), for keyed motion
    emitted_volume: float = 0.0

    def __post_init__(self) -> None:
        p = self.params
        s = self.spacing
        if p["shape"] == "disc":
            r = p["radius"]
            k = int(math.ceil(r / s))
            a = (np.arange(-k, k + 1)) * s
            gu, gw = np.meshgrid(a, a, indexing="ij")
            keep = gu**2 + gw**2 <= r * r
            gu, gw = gu[keep], gw[keep]
        else:
            hw, hh = 0.5 * p["size"][0], 0.5 * p["size"][1]
            au = (np.arange(int(round(2 * hw / s))) + 0.5) * s - hw
            aw = (np.arange(int(round(2 * hh / s))) + 0.5) * s - hh
            gu, gw = np.meshgrid(au, aw, indexing="ij")
            gu, gw = gu.ravel(), gw.ravel()
        self.lattice = (gu, gw)
        # Lateral extent of the nozzle's bore: the outermost emitted row plus half a spacing.
        self.bore = (np.abs(gu).max(initial=0.0) + 0.5 * s, np.abs(gw).max(initial=0.0) + 0.5 * s)
        self.layer_volume = len(gu) * s**3
        self.keys = p.get("keyframes") or []
        self.carrier = np.zeros(3)  # the emitter's own velocity, m/s
        if self.keys:
            self.place(self.keys[0]["frame"])
        else:
            self._place(np.asarray(p["center"], float), np.asarray(p["velocity"], float))
        self.peak_speed = max(speed for _, speed in emitted_speeds(p, self.fps))

    def _place(self, center: np.ndarray, vel: np.ndarray) -> None:
        """Put the emitter at ``center`` emitting at ``vel`` (m/s): its layer and frame across the flow."""
        speed = float(np.linalg.norm(vel))
        self.direction = vel / speed if speed > 0 else np.array([0.0, 0.0, -1.0])
        self.speed = speed
        # An orthonormal frame (u, w) across the flow.
        helper = np.array([1.0, 0, 0]) if abs(self.direction[0]) < 0.9 else np.array([0, 1.0, 0])
        u = np.cross(self.direction, helper)
        u /= np.linalg.norm(u)
        w = np.cross(self.direction, u)
        gu, gw = self.lattice
        self.center = center
        self.layer = self.center + np.outer(gu, u) + np.outer(gw, w)
        self.frame_uw = np.stack([u, w])
        self.rate = self.params["rate"] if self.params["rate"] > 0 else _area(self.params) * speed
        # What emitted particles move at: the emitter's velocity, plus the inherited share of its own.
        self.velocity = self.direction * self.speed
        self.drift = self.params["inherit_velocity"] * self.carrier
        if self.drift.any():
            self.velocity = self.velocity + self.drift

    def place(self, frame: float) -> None:
        """Move a keyframed emitter to where it is at ``frame`` (held before the first key, after the last)."""
        keys = self.keys
        frames = [k["frame"] for k in keys]
        j = int(np.searchsorted(frames, frame, side="right"))
        if j == 0 or j == len(keys):
            key = keys[0] if j == 0 else keys[-1]
            self.carrier = np.zeros(3)
            self._place(np.asarray(key["center"], float), np.asarray(key["velocity"], float))
            return
        a, b = keys[j - 1], keys[j]
        f = (frame - a["frame"]) / (b["frame"] - a["frame"])
        c0, c1 = np.asarray(a["center"], float), np.asarray(b["center"], float)
        v0, v1 = np.asarray(a["velocity"], float), np.asarray(b["velocity"], float)
        s0, s1 = float(np.linalg.norm(v0)), float(np.linalg.norm(v1))
        d = (1 - f) * v0 / s0 + f * v1 / s1
        if np.linalg.norm(d) < 1e-9:  # opposite directions: no shorter arc, take the nearer key's
            d = v0 / s0 if f < 0.5 else v1 / s1
        self.carrier = (c1 - c0) * (self.fps / (b["frame"] - a["frame"]))
        self._place((1 - f) * c0 + f * c1, d / np.linalg.norm(d) * ((1 - f) * s0 + f * s1))

    def carried(self, x: np.ndarray, dt: float) -> np.ndarray:
        """Where particles in the nozzle at ``x`` are after ``dt`` s: moved at :attr:`velocity`."""
        x_end = x + dt * self.speed * self.direction
        return x_end + dt * self.drift if self.drift.any() else x_end

    def held(self, x: np.ndarray, source: np.ndarray) -> np.ndarray:
        """Indices of this emitter's particles still inside its nozzle (``nozzle_length`` behind it).

        The nozzle is a pipe of the emitter's outline: its particles move at the emitter's
        velocity whatever acts on them (the pipe's wall takes the difference), so the
        stream below hangs from it. Empty when the emitter has no nozzle.
        """
        length = self.params["nozzle_length"]
        if length <= 0.0 or not len(x):
            return np.zeros(0, np.int64)
        mine = np.flatnonzero(source == self.index)
        rel = x[mine] - self.center
        axial = rel @ self.direction
        across = rel @ self.frame_uw.T
        if self.params["shape"] == "disc":
            inside = np.hypot(across[:, 0], across[:, 1]) <= self.bore[0]
        else:
            inside = (np.abs(across[:, 0]) <= self.bore[0]) & (np.abs(across[:, 1]) <= self.bore[1])
        return mine[inside & (axial >= -0.5 * self.spacing) & (axial < length)]

    def emit(self, frame: float, t: float, dt: float) -> np.ndarray | None:
        """Positions (k,3) to add at the start of a substep of length ``dt`` at time ``t``, or None."""
        p = self.params
        if self.keys:
            self.place(frame)
        if not (p["frame_start"] <= frame <= p["frame_end"]) or self.rate <= 0 or len(self.layer) == 0:
            return None
        self.emitted_volume += self.rate * dt
        layers = []
        # Each layer left the emitter when the volume owed reached a layer's worth; place it
        # where it would be by now, so consecutive layers are one spacing apart.
        while self.emitted_volume >= self.layer_volume:
            self.emitted_volume -= self.layer_volume
            age = self.emitted_volume / self.rate
            layer = self.layer + self.direction * (self.speed * age)
            layers.append(layer + self.drift * age if self.drift.any() else layer)
        if not layers:
            return None
        return np.concatenate(layers)
