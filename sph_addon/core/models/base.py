"""The material-model contract: what a model declares and the hooks the step calls.

After SPlisHSPlasH's ``NonPressureForceBase`` lifecycle (STYLE.md): a model is
one class, registered in one place (``models/__init__.py``), that

* **declares** its parameters (``parameters``: name, SI unit, range, default,
  description; the scene validator, ``docs/scene_format.md`` and the Blender UI
  are generated from them, and a frozen dataclass ``Params`` is generated for
  the values), its presets, its per-particle arrays with fill values (permuted,
  filtered and checkpointed with the world), the extra per-particle fields it
  writes to the cache, and the time-stepping scheme that advances its
  particles (``integrator``, a key of ``integrators.INTEGRATORS``);
* **implements** hooks, each with an explicit default here (no ``hasattr``):
  particles emitted, the velocity stage (forces and impulses), the position
  stage (constraints on predicted positions), accelerations for force-based
  schemes, the largest stable step, the cost of a substep count, frame
  statistics, and save/load of any state that is not a per-particle array.

A model never sees the simulation object. It is built once per bake from a
:class:`ModelSetup` (the particle spacing, the support radius and the typed
parameters of the materials it owns, from which it packs the per-material
constant arrays its kernels take) and receives a :class:`WorldView` (frame
hooks) or a :class:`StepContext` (stage hooks): positions, velocities, the
per-particle arrays, the neighbour rows, the id map and the step.

Every model acts on every particle of the world: pair terms reach neighbours
of other materials (and other models), which is how liquid, goo and solids
interact. A model's constant arrays are indexed by material id and hold zeros
for materials it does not own.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..passes.heat_parameters import MATERIAL_PARAMETERS as WORLD_MATERIAL_PARAMETERS
from ..scene.params import Parameter, make_params_class
from ..terms.base import POSITION, VELOCITY, ArraySpec, Term, Workspace, per_material
from ..world.state import ArrayAccess


@dataclass(frozen=True)
class CacheField:
    """An extra per-particle property a model writes to the cache's particle PLY frames.

    Attributes
    ----------
    name : PLY property name (snake_case, not one of x y z vx vy vz id material).
    array : name of the per-particle array it is read from.
    component : column of a (n, k) array, or None for a one-value-per-particle array.
    dtype : PLY storage type as a numpy type string ("<f4", "<u4", "u1", ...).
    description : what it holds, with units (for docs and Blender users).
    """

    name: str
    array: str
    component: int | None = None
    dtype: str = "<f4"
    description: str = ""


@dataclass(frozen=True)
class DerivedConstant:
    """A method constant a model derives from a material's physical parameters (``info``, the UI panel).

    Attributes
    ----------
    name : key in the manifest's ``derived`` section (snake_case).
    value : its value, in ``unit``.
    unit : SI unit ("" for a number).
    label : what it is, for one line of the Blender panel.
    """

    name: str
    value: float
    unit: str
    label: str


@dataclass(frozen=True)
class Look:
    """How the replay shades the particles and surface of one preset: Principled BSDF settings, as data.

    Declared by a model beside its presets (``looks``); ``blender/liquid_materials.py`` only turns it into
    a Blender material. Colours are linear RGB, lengths in metres.

    Attributes
    ----------
    color : base colour. roughness : 0 (mirror) .. 1 (matte). ior : index of refraction.
    transmission : 0 (opaque) .. 1 (clear glass-like). subsurface : weight of subsurface scattering.
    subsurface_radius : how far each of red, green, blue scatters, relative. subsurface_scale : m.
    coat, coat_roughness : a clear coat's weight and roughness. specular : specular IOR level.
    glow : (from °C, to °C, strength): a black-body emission at the point's ``temperature``, its strength
        rising from 0 at ``glow[0]`` to ``glow[2]`` at ``glow[1]``; None: no emission.
    """

    color: tuple[float, float, float]
    roughness: float
    ior: float = 1.45
    transmission: float = 0.0
    subsurface: float = 0.0
    subsurface_radius: tuple[float, float, float] = (1.0, 1.0, 1.0)
    subsurface_scale: float = 0.05
    coat: float = 0.0
    coat_roughness: float = 0.03
    specular: float = 0.5
    glow: tuple[float, float, float] | None = None


# The look of a preset whose model declares none for it (a model added later, a test's toy): the light-blue
# glossy look the replay used before looks per preset existed.
NEUTRAL_LOOK = Look(color=(0.30, 0.58, 0.95), roughness=0.15)


class Removed(str):
    """The advice for a parameter a model no longer declares (a value of ``removed_parameters``).

    The string is the scene file's advice, in its field names (the validator refuses the field with it);
    ``panel`` is the same advice in the Blender panel's words (its labels), which the upgrade of an old
    .blend file logs when it drops the stored value (``blender/migrate.py``). A plain string serves both.
    """

    panel: str

    def __new__(cls, scene: str, panel: str = "") -> Removed:
        self = super().__new__(cls, scene)
        self.panel = panel or scene
        return self


@dataclass(frozen=True)
class ModelSetup:
    """What a model is built from, once per bake.

    Attributes
    ----------
    spacing : particle spacing, m. h : support (interaction) radius, m.
    n_materials : number of materials in the scene (length of per-material arrays).
    materials : material id -> typed parameters (the model's ``Params``) of the materials it owns.
    gravity : magnitude of the scene's gravity, m/s² (what a model may estimate its first substeps' work from).
    densities : every material's mass density, kg/m³, by material id, whatever its model (pair terms that
        exchange momentum with other models' particles weigh them by it); empty: all alike.
    solids : by material id, whether its model keeps the shape it was emitted in (``keeps_shape``: a solid,
        whose particles a liquid meets at the body's surface); empty: none.
    """

    spacing: float
    h: float
    n_materials: int
    materials: Mapping[int, Any]
    gravity: float = 9.81
    densities: tuple[float, ...] = ()
    solids: tuple[bool, ...] = ()


@dataclass
class WorldView(ArrayAccess):
    """The particle world as frame-level hooks see it (no neighbour rows).

    ``x``, ``v`` (n,3) float64 m, m/s; ``material`` (n,) uint8; ``ids`` (n,) int64;
    ``arrays``: every per-particle array by name (the model's own included);
    ``h``, ``spacing`` m; ``time`` s.
    """

    arrays: dict[str, np.ndarray]
    h: float
    spacing: float
    time: float = 0.0


@dataclass
class StepContext(WorldView):
    """What a stage hook sees during one substep.

    Attributes (besides :class:`WorldView`'s)
    ----------
    dt : the substep, s.
    nbr, count : neighbour rows (n,K) int32 and their lengths (n,), found on the
        positions predicted at the start of the substep (see simulation.py).
    bucket_start, colour, colour_buckets, colour_units : the supercell ordering of the neighbour
        search and each colour's supercells in balanced units, for race-free Gauss-Seidel sweeps
        (neighbors.py).
    next_id : one past the largest id ever given (size of the id map).
    resize : ``resize(name, width)`` widens a (n, w) per-particle array, new columns
        at its declared fill (the model then reads it again from ``arrays``).
    walls : the colliders as they stand at the end of the substep, sampled once for every term
        (``boundary.walls.Walls``); None without colliders.
    workspace : scratch arrays lent for one call (``terms.base.Workspace``).
    """

    dt: float = 0.0
    nbr: np.ndarray = field(default_factory=lambda: np.zeros((0, 1), np.int32))
    count: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    bucket_start: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))
    colour: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint8))
    colour_buckets: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))
    colour_units: np.ndarray = field(default_factory=lambda: np.zeros((1, 2), np.int64))
    next_id: int = 0
    resize: Any = None
    walls: Any = None
    workspace: Workspace = field(default_factory=Workspace)
    _index_of_id: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self):
        self.workspace.resize(self.n)

    def index_of_id(self) -> np.ndarray:
        """(next_id,) int64 map from stable id to current index, -1 for removed particles."""
        if self._index_of_id is None:
            idx = np.full(self.next_id, -1, np.int64)
            idx[self.ids] = np.arange(self.n)
            self._index_of_id = idx
        return self._index_of_id


class MaterialModel:
    """Base class of every material model; subclasses set the declarations and override hooks.

    Class attributes (declarations)
    -------------------------------
    name : registry key, the scene file's ``materials[i].model``.
    label, description : for the UI and the docs.
    citation : the paper the model implements (module docstrings cite equations).
    parameters : the declared parameters; ``Params`` (a frozen dataclass) is generated from them.
    presets : preset name -> overrides of the defaults, scoped to this model.
    looks : preset name -> its :class:`Look` in the replay (optional; a preset without one is shaded with
        :data:`NEUTRAL_LOOK`).
    arrays : per-particle arrays the model may add (see :meth:`active_arrays`).
    cache_fields : extra properties written to the particle frames.
    integrator : key of ``integrators.INTEGRATORS`` that advances this model's particles.
    terms : the term classes (``core.terms``) the model is made of, in stage order: its velocity terms
        run in this order in the velocity stage, its position terms in the position stage; their
        arrays join ``arrays``, and the hooks below collect their steps, statistics and state.
    density : the name of the parameter holding the material's mass density, kg/m³ (the particles'
        mass, the energies of the diagnostics and of the blow-up watch).
    removed_parameters : parameter name -> what to do instead, for scene files that still set one
        this model no longer has (the validator names it with this advice) and for .blend files that still
        store one (the upgrade drops it with a note): a :class:`Removed` to word the note for the panel.
        Only add entries: old files hold them whatever the model declares today.
    keeps_shape : its particles keep the shape they were emitted in (a solid's rest state): an inflow, which
        emits a stream, cannot carry its materials.
    moved_presets : preset name -> the model that has it now, for scene and .blend files naming a preset
        this model had: they load with that model's preset (``scene/scene_file.py``).
    """

    name: ClassVar[str] = ""
    label: ClassVar[str] = ""
    description: ClassVar[str] = ""
    citation: ClassVar[str] = ""
    parameters: ClassVar[tuple[Parameter, ...]] = ()
    presets: ClassVar[Mapping[str, Mapping[str, Any]]] = {}
    looks: ClassVar[Mapping[str, Look]] = {}
    arrays: ClassVar[Mapping[str, ArraySpec]] = {}
    cache_fields: ClassVar[tuple[CacheField, ...]] = ()
    integrator: ClassVar[str] = "prediction_relaxation"
    terms: ClassVar[tuple[type[Term], ...]] = ()
    density: ClassVar[str] = "density"
    removed_parameters: ClassVar[Mapping[str, str]] = {}
    moved_presets: ClassVar[Mapping[str, str]] = {}
    keeps_shape: ClassVar[bool] = False
    Params: ClassVar[type]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        camel = "".join(part.title() for part in (cls.name or cls.__name__).split("_"))
        # Every material carries the world passes' parameters (heat, phase): declared once, here, after the
        # model's own (a model that lists them itself keeps its order).
        own = {p.name for p in cls.parameters}
        cls.parameters = (*cls.parameters, *(p for p in WORLD_MATERIAL_PARAMETERS if p.name not in own))
        cls.Params = make_params_class(f"{camel}Params", cls.parameters,
                                       f"Parameters of the {cls.name!r} material model.")
        names = {p.name for p in cls.parameters}
        merged = dict(cls.arrays)
        for term in cls.terms:
            missing = set(term.parameters) - names
            if missing:
                raise TypeError(f"{cls.__name__}: term {term.name} reads undeclared parameters {sorted(missing)}")
            merged.update(term.arrays)
        cls.arrays = merged
        for preset, values in cls.presets.items():
            unknown = set(values) - names
            if unknown:
                raise TypeError(f"{cls.__name__}: preset {preset!r} sets undeclared {sorted(unknown)}")
        for preset, look in cls.looks.items():
            if preset not in cls.presets or not isinstance(look, Look):
                raise TypeError(f"{cls.__name__}: looks[{preset!r}] must be a Look of one of its presets")
        if cls.density not in names:
            raise TypeError(f"{cls.__name__}: its density parameter {cls.density!r} is not declared")

    def __init__(self, setup: ModelSetup):
        self.setup = setup
        self.term_objects: list[Term] = [term(setup) for term in self.terms]
        for term in self.term_objects:
            term.link(self.term_objects)

    def term(self, name: str) -> Term:
        """This model's term ``name`` (a term's file name, e.g. ``"viscosity_weiler2018"``)."""
        for term in self.term_objects:
            if term.name == name:
                return term
        raise KeyError(f"model {self.name!r} has no term {name!r}")

    @classmethod
    def density_of(cls, params) -> float:
        """A material's mass density, kg/m³ (the parameter the model declares as ``density``)."""
        return float(getattr(params, cls.density))

    # -- declarations that may depend on the materials ---------------------------------------
    def active_arrays(self) -> Mapping[str, ArraySpec]:
        """The arrays this bake needs: its terms' (each skips the ones its materials do not use); a
        model without terms, all it declares."""
        if not self.terms:
            return self.arrays
        out: dict[str, ArraySpec] = {}
        for term in self.term_objects:
            out.update(term.active_arrays())
        return out

    # -- hooks ------------------------------------------------------------------------------------
    def on_emitted(self, world: WorldView, new: slice) -> None:
        """Particles ``new`` of one of this model's materials were just added (volume fill or inflow).

        Their arrays hold the declared fill values; this is where a model records
        what it needs from the moment of emission (a rest shape, an anchor).
        """

    def velocity_stage(self, ctx: StepContext) -> None:
        """Forces and impulses on the velocities, before positions are predicted (prediction-relaxation):
        the velocity terms in order."""
        for term in self.term_objects:
            if term.stage == VELOCITY:
                term.apply(ctx)

    def position_stage(self, ctx: StepContext) -> None:
        """Constraints on the predicted positions (prediction-relaxation), before collisions: the position
        terms in order."""
        for term in self.term_objects:
            if term.stage == POSITION:
                term.apply(ctx)

    def accelerations(self, ctx: StepContext, idx: np.ndarray, out: np.ndarray) -> None:
        """Add the accelerations (m/s², gravity excluded) of particles ``idx`` into ``out`` (len(idx), 3):
        its terms', in order.

        Called by force-based schemes (leapfrog) at each particle's own step; the
        positions in ``ctx`` are the current ones.
        """
        for term in self.term_objects:
            term.accelerations(ctx, idx, out)

    def max_dt(self, world: WorldView) -> float:
        """Largest stable substep of this model, s (inf: no limit): its terms' smallest."""
        return min((term.max_dt(world) for term in self.term_objects), default=math.inf)

    def particle_dt(self, world: WorldView, idx: np.ndarray) -> np.ndarray:
        """Largest stable step of each particle ``idx``, s (individual time steps): ``max_dt``, or less
        where one of its terms asks for less."""
        out = np.full(len(idx), self.max_dt(world))
        for term in self.term_objects:
            limit = term.particle_dt(world, idx)
            if limit is not None:
                np.minimum(out, limit, out=out)
        return out

    def work_per_substep(self, dt: float) -> float:
        """This model's own work in a substep of ``dt`` s beyond the fixed per-substep work (neighbour
        search, collisions: counted once by the substep policy, whatever the models), in units of that
        fixed work: its terms' sum. A frame of S substeps costs S (1 + the models' sum)."""
        return sum(term.work_per_substep(dt) for term in self.term_objects)

    def frame_stats(self, world: WorldView) -> dict[str, int | float]:
        """Numbers for the manifest's per-frame statistics (JSON-safe): its terms'."""
        out: dict[str, int | float] = {}
        for term in self.term_objects:
            out.update(term.frame_stats(world))
        return out

    def failure(self, stats: dict) -> str | None:
        """Why this frame's ``frame_stats`` show a blow-up (one sentence saying what to try), or None:
        the first of its terms' reasons."""
        for term in self.term_objects:
            reason = term.failure(stats)
            if reason:
                return reason
        return None

    @classmethod
    def derived(cls, params, spacing: float, h: float, dt: float | None = None) -> tuple[DerivedConstant, ...]:
        """Method constants derived from one material's ``params`` (a ``Params``) at a particle
        ``spacing`` and support radius ``h`` (m), and ``dt`` (a substep, s) for those that depend on it.

        Without numba and without building the model: the Blender panel calls it on every redraw.
        """
        return ()

    def derived_constants(self, dt: float | None = None) -> dict[str, float]:
        """:meth:`derived` for this bake's first material of the model (JSON-safe, 6 significant digits),
        for ``info`` and the manifest."""
        if not self.setup.materials:
            return {}
        params = self.setup.materials[min(self.setup.materials)]
        return {c.name: float(f"{c.value:.6g}") for c in self.derived(params, self.setup.spacing, self.setup.h, dt)}

    def state_dict(self) -> dict:
        """State that is not a per-particle array, JSON-safe, for checkpoints: each term's under its name."""
        return {term.name: state for term in self.term_objects if (state := term.state_dict())}

    def load_state_dict(self, state: dict) -> None:
        """Restore what :meth:`state_dict` returned. A checkpoint written before the terms had their own
        entries kept one flat record, which each term reads its own keys from."""
        for term in self.term_objects:
            term.load_state_dict(state.get(term.name, state))

    # -- helpers for subclasses ---------------------------------------------------------------
    def per_material(self, attr: str, dtype=np.float64, convert=float) -> np.ndarray:
        """(n_materials,) array of parameter ``attr`` of the owned materials, zero elsewhere."""
        return per_material(self.setup, attr, dtype, convert)
