"""The bake's deformed source meshes: ``DIR/deformed/source_<k>_####.ply`` for every ``mesh`` source with
``bind_mesh`` (``bound_mesh`` binds and deforms; this module feeds it the world and writes the frames).

Each file holds the source's mesh as the particles carry it at that frame: one vertex element,
``x y z`` float32 (world frame, metres), in the mesh file's own vertex order and count, no faces
(the topology is the source mesh's, unchanged). The replay moves the artist's own mesh with it.

The particles' rest state is the elastic model's per-particle arrays (``rest_position``,
``rotation``, ``elastic_bonded``): a particle bonds at its first substep, where it was emitted. A
particle not bonded yet (the bake's first frame is written before any substep) is at rest where it
stands, with no rotation.

Resume: the binding is made again from the simulation as it is set up, before the checkpoint is
restored (the sources' particles where they were emitted: a pure function of the scene), and the
vertices' last positions are read back from the checkpoint frame's files, so a resumed bake writes
the same bytes as an uninterrupted one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..colliders.shapes.mesh_files import resolve_mesh_path
from ..sources.bound_mesh import Binding, bind, deform
from .plyio import write_ply

FOLDER = "deformed"
VERTEX_DTYPE = np.dtype([("x", "<f4"), ("y", "<f4"), ("z", "<f4")])
# The elastic model's per-particle rest state (models/elastic_becker2009.py).
REST_POSITION, ROTATION, BONDED = "rest_position", "rotation", "elastic_bonded"
_IDENTITY = np.eye(3).ravel()
# The manifest's record of each bound source's vertex count ({"<source index>": count}): the mesh file
# lies beside the scene, not in the cache, and a reader checks every frame against it.
DEFORMED_KEY = "deformed_vertices"
_NAME = re.compile(r"source_(\d+)_(-?\d+)\.ply")  # CacheDir.deformed_path


def bound_sources(scene) -> list[int]:
    """Indices of the scene's sources whose mesh the bake deforms (``bind_mesh``)."""
    return [k for k, (kind, p) in enumerate(scene.sources) if kind == "mesh" and p.get("bind_mesh")]


def rest_state(arrays: dict[str, np.ndarray], rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rest positions (r, 3) and rotations (r, 9) of the particles ``rows`` (float64).

    A particle not bonded yet (or a world with no elastic arrays) rests where it is, unrotated.
    """
    x = arrays["x"][rows].astype(np.float64)
    rot = np.broadcast_to(_IDENTITY, (len(rows), 9)).copy()
    if BONDED in arrays and REST_POSITION in arrays and ROTATION in arrays:
        bonded = arrays[BONDED][rows] != 0
        x[bonded] = arrays[REST_POSITION][rows][bonded]
        rot[bonded] = arrays[ROTATION][rows][bonded]
    return x, rot


def read_frames(cache, frames: list[int], counts: dict | None = None) -> dict[int, tuple[int, int]]:
    """Every deformed mesh of ``frames`` read through its checks: source -> (frames with a mesh, vertices).

    ``counts``: the manifest's ``DEFORMED_KEY`` record (checked by ``checks.check_manifest``). A cache
    written without it has every frame of a source compared with the count most of them have.
    InputError names the first damaged file.
    """
    folder = cache.root / FOLDER
    if not folder.is_dir():
        return {}
    wanted = set(frames)
    found: dict[int, list[int]] = {}
    for path in folder.iterdir():
        m = _NAME.fullmatch(path.name)
        if m and int(m[2]) in wanted and path.name == cache.deformed_path(int(m[1]), int(m[2])).name:
            found.setdefault(int(m[1]), []).append(int(m[2]))
    out = {}
    for source, numbers in sorted(found.items()):
        numbers.sort()
        count = (counts or {}).get(str(source))
        sizes = [len(cache.read_deformed(source, f, count)) for f in numbers]
        if count is None:
            values, seen = np.unique(sizes, return_counts=True)
            count = int(values[np.argmax(seen)])
            for f in (f for f, n in zip(numbers, sizes) if n != count):
                cache.read_deformed(source, f, count)  # raises, naming the file and both counts
        out[source] = (len(numbers), count)
    return out


@dataclass
class _Bound:
    source: int
    binding: Binding
    last: np.ndarray  # (m, 3) float64: what the last frame written showed


class DeformedMeshes:
    """The bound meshes of one bake: made from a freshly set-up simulation's world, written every frame.

    Parameters
    ----------
    scene : the validated scene.
    arrays : the world's per-particle arrays right after the simulation was set up (before any
        substep, before a checkpoint is restored): the bound sources' particles where they were
        emitted, which is where they bond.
    """

    def __init__(self, scene, arrays: dict[str, np.ndarray]):
        from .mesh_io import load_mesh

        self.bound: list[_Bound] = []
        source = arrays["source"]
        for k in bound_sources(scene):
            vertices, _ = load_mesh(resolve_mesh_path(scene.base_dir, scene.sources[k][1]["path"]),
                                    f"sources[{k}].path")
            rows = np.flatnonzero(source == k)
            rest, _ = rest_state(arrays, rows)
            binding = bind(vertices, rest, arrays["id"][rows], scene.particle_spacing)
            self.bound.append(_Bound(k, binding, binding.rest.copy()))

    def __bool__(self) -> bool:
        return bool(self.bound)

    def vertex_counts(self) -> dict[str, int]:
        """Each bound source's vertex count, as the manifest records it (``DEFORMED_KEY``)."""
        return {str(b.source): len(b.last) for b in self.bound}

    def restore(self, cache, frame: int) -> None:
        """Take the vertices' last positions from ``frame``'s files (the checkpoint a resume starts from).

        Only vertices whose particles are all gone keep them; a missing file leaves them at rest.
        Raises InputError naming a damaged file.
        """
        for b in self.bound:
            if cache.deformed_path(b.source, frame).exists():
                b.last = cache.read_deformed(b.source, frame, len(b.last))

    def write(self, cache, arrays: dict[str, np.ndarray], frame: int) -> None:
        """Deform every bound mesh to the world as it is and write ``frame``'s files (atomically)."""
        source = arrays["source"]
        for b in self.bound:
            rows = np.flatnonzero(source == b.source)
            x = arrays["x"][rows]
            _, rot = rest_state(arrays, rows)
            b.last = deform(b.binding, arrays["id"][rows], x, rot, b.last)
            rec = np.empty(len(b.last), VERTEX_DTYPE)
            rec["x"], rec["y"], rec["z"] = b.last[:, 0], b.last[:, 1], b.last[:, 2]
            write_ply(cache.deformed_path(b.source, frame), rec, comments=[f"source {b.source} frame {frame}"])
