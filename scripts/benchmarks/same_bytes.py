"""Does a change leave what the engine computes untouched? Bake the same scenes at a reference commit
and in this checkout and compare every particle frame and checkpoint byte for byte.

    python scripts/benchmarks/same_bytes.py --ref <commit> [--frames 8] [--threads 1 2]

The scenes: ``scripts/scenes/*.json`` (dam break, honey coil, jelly drop), a pool in a mesh tank
(``tests/data/meshes/box_dup_flipped.ply``), one block of every other preset side by side (springs
of each kind, yield stress, viscosity, surface tension), and where the materials meet: the classic sph
liquid poured on a soft jelly bed, a butter block melting on a hot plate under gravity, a rigid box and a
jelly cube of one density floating in water, a hinged paddle in a surge, and an sph putty lump thrown
onto a ball that an sph water surge flows round (the sph model's tension, walls flat and curved), each for
``--frames``
frames, at each of ``--threads`` (numba's thread count). The reference is baked once per commit into
``--work`` (a ``git worktree`` of the commit, removed afterwards) and kept there, so comparing again
after an edit bakes this checkout only. Particle frames and the dynamic bodies' poses are compared byte
for byte; checkpoints by their arrays' bytes and their record's values (the models' state may be
nested differently). Exit 0 when all agree; otherwise each differing file is named and the exit
status is 1.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MESHES = REPO / "tests" / "data" / "meshes"


def extra_scenes(folder: Path) -> list[Path]:
    """The mesh-tank pool and the presets side by side, written into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(MESHES / "box_dup_flipped.ply", folder / "box_dup_flipped.ply")
    base = {"format": "sph_addon.scene/2", "frame_start": 1, "frame_end": 60, "fps": 30,
            "domain": {"min": [-1.5, -1.5, -0.5], "max": [1.5, 1.5, 2.0]}}
    pool = {**base, "name": "mesh_tank_pool", "particle_spacing": 0.05,
            "materials": [{"name": "water", "preset": "water"}],
            "sources": [{"type": "box", "material": "water", "min": [-0.3, -0.3, -0.3], "max": [0.3, 0.3, 0.2]}],
            "colliders": [{"type": "mesh", "path": "box_dup_flipped.ply", "flip_normals": True}]}
    presets = ["oil", "chocolate", "mud", "toothpaste", "slime", "plasticine", "rubber", "dough"]
    blocks = {**base, "name": "presets_side_by_side", "particle_spacing": 0.04,
              "materials": [{"name": p, "preset": p} for p in presets],
              "sources": [{"type": "box", "material": p, "min": [-1.2 + 0.3 * i, -0.1, 0.1],
                           "max": [-1.0 + 0.3 * i, 0.1, 0.3], "velocity": [0.0, 0.0, -0.5]}
                          for i, p in enumerate(presets)],
              "colliders": [{"type": "plane", "name": "floor", "friction": 0.3}]}
    out = []
    for scene in (pool, blocks, *meeting_scenes(base)):
        path = folder / f"{scene['name']}.json"
        path.write_text(json.dumps(scene, indent=1))
        out.append(path)
    return out


def meeting_scenes(base: dict) -> list[dict]:
    """Where the materials meet: an sph liquid on a soft bed, a melting block on a hot plate, bodies
    floating in water, a hinged paddle in a surge, an sph putty lump and water at a ball."""
    tank = {"type": "box_container", "name": "tank", "size": [0.6, 0.4, 0.6], "position": [0.0, 0.0, 0.3]}
    bed = {**base, "name": "sph_liquid_on_soft_bed", "particle_spacing": 0.025,
           "materials": [{"name": "liquid", "model": "sph", "preset": "classic_water"},
                         {"name": "bed", "model": "elastic", "preset": "jelly"}],
           "sources": [{"type": "box", "material": "bed", "min": [-0.25, -0.15, 0.0], "max": [0.25, 0.15, 0.08]},
                       {"type": "box", "material": "liquid", "min": [-0.1, -0.1, 0.15], "max": [0.1, 0.1, 0.3]}],
           "colliders": [tank]}
    melt = {**base, "name": "melting_block_on_hot_plate", "particle_spacing": 0.01,
            "materials": [{"name": "butter", "model": "elastic", "preset": "butter", "params": {"melts_into": "melted",
                                                                             "thermal_conductivity": 200.0}},
                          {"name": "melted", "model": "sph", "preset": "melted_butter",
                           "params": {"thermal_conductivity": 200.0}}],
            "sources": [{"type": "box", "material": "butter", "min": [-0.03, -0.03, 0.005], "max": [0.03, 0.03, 0.065],
                         "temperature": 20.0}],
            "colliders": [{"type": "plane", "name": "plate", "heat_contact": True, "temperature": 80.0}]}
    floats = {**base, "name": "bodies_floating_in_water", "particle_spacing": 0.025,
              "materials": [{"name": "water", "preset": "water", "params": {"pressure_projection": "none"}},
                            {"name": "cube", "model": "elastic", "preset": "jelly", "params": {"density": 500.0}}],
              "sources": [{"type": "box", "material": "water", "min": [-0.29, -0.19, 0.01],
                           "max": [0.29, 0.19, 0.2]},
                          {"type": "box", "material": "cube", "min": [0.08, -0.05, 0.22], "max": [0.18, 0.05, 0.32]}],
              "colliders": [tank, {"type": "box", "name": "crate", "size": [0.1, 0.1, 0.1],
                                   "position": [-0.13, 0.0, 0.27], "dynamic": True, "density": 500.0}]}
    paddle = {**base, "name": "hinged_paddle_in_surge", "particle_spacing": 0.025,
              "materials": [{"name": "water", "preset": "water", "params": {"pressure_projection": "none"}}],
              "sources": [{"type": "box", "material": "water", "min": [-0.29, -0.19, 0.01], "max": [-0.05, 0.19, 0.3]}],
              "colliders": [tank, {"type": "box", "name": "paddle", "size": [0.02, 0.3, 0.2],
                                   "position": [0.15, 0.0, 0.12], "dynamic": True, "density": 800.0,
                                   "hinge_axis": [0, 1, 0]}]}
    # Putty (tension: Monaghan's artificial pressure, α = 1, a yield stress) thrown onto a ball that a surge
    # of the classic water flows round: the tank's faces and edges and the ball's curved wall.
    lump = {**base, "name": "sph_putty_lump", "particle_spacing": 0.02,
            "materials": [{"name": "putty", "model": "sph", "preset": "putty"},
                          {"name": "water", "model": "sph", "preset": "classic_water"}],
            "sources": [{"type": "sphere", "material": "putty", "center": [0.08, 0.0, 0.3], "radius": 0.06,
                         "velocity": [0.0, 0.0, -1.0]},
                        {"type": "box", "material": "water", "min": [-0.29, -0.19, 0.01], "max": [0.0, 0.19, 0.1]}],
            "colliders": [tank, {"type": "sphere", "name": "ball", "radius": 0.06, "position": [0.08, 0.0, 0.06]}]}
    return [bed, melt, floats, paddle, lump]


def scenes(folder: Path) -> list[Path]:
    return sorted((REPO / "scripts" / "scenes").glob("*.json")) + extra_scenes(folder)


def bake_all(code: Path, scene_files: list[Path], out: Path, frames: int, threads: int) -> None:
    env = {**os.environ, "PYTHONPATH": str(code), "NUMBA_NUM_THREADS": str(threads)}
    for scene in scene_files:
        cache = out / f"{scene.stem}_t{threads}"
        if (cache / "manifest.json").exists():
            continue
        cmd = [sys.executable, "-m", "sph_addon", "bake", str(scene), "--out", str(cache), "--frames", f"1-{frames}"]
        proc = subprocess.run(cmd, env=env, cwd=code, capture_output=True, text=True)
        if proc.returncode:
            raise SystemExit(f"{scene.stem} at {code}: exit {proc.returncode}\n{proc.stderr[-3000:]}")
        print(f"baked {scene.stem} with {code} on {threads} thread(s)", flush=True)


def _leaves(tree, out: dict) -> dict:
    """The leaves of a nested dict by their own key (the models' state, however the terms nest it)."""
    for key, value in tree.items():
        if isinstance(value, dict):
            _leaves(value, out)
        else:
            out[key] = value
    return out


def _checkpoint(path: Path) -> bytes:
    """A checkpoint's arrays' bytes and its record, the models' state flattened to its values: the same
    state saved in another layout compares equal."""
    import numpy as np

    with np.load(path) as z:
        meta = json.loads(z["meta"].tobytes())
        meta["models"] = {name: _leaves(state, {}) for name, state in meta.get("models", {}).items()}
        arrays = b"".join(name.encode() + z[name].tobytes() for name in sorted(z.files) if name != "meta")
    return arrays + json.dumps(meta, sort_keys=True).encode()


def files(cache: Path) -> dict[str, bytes]:
    out = {p.relative_to(cache).as_posix(): p.read_bytes() for p in sorted((cache / "particles").iterdir())}
    out.update({p.relative_to(cache).as_posix(): _checkpoint(p) for p in sorted((cache / "state").glob("*.npz"))})
    out.update({p.relative_to(cache).as_posix(): p.read_bytes() for p in sorted((cache / "bodies").glob("*.json"))})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ref", required=True, help="the commit to compare with")
    ap.add_argument("--frames", type=int, default=8)
    ap.add_argument("--threads", type=int, nargs="+", default=[2], help="numba thread counts to bake at")
    ap.add_argument("--only", nargs="*", default=None, help="bake only the scenes whose name contains one of these")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "sph_same_bytes")
    args = ap.parse_args()
    commit = subprocess.run(["git", "rev-parse", args.ref], cwd=REPO, capture_output=True, text=True,
                            check=True).stdout.strip()
    ref_out = args.work / f"{commit[:12]}_{args.frames}"
    scene_files = [s for s in scenes(args.work / "scenes") if args.only is None or any(o in s.stem for o in args.only)]
    stems = [f"{s.stem}_t{n}" for s in scene_files for n in args.threads]
    if not all((ref_out / stem / "manifest.json").exists() for stem in stems):
        tree = args.work / "tree"
        if tree.exists():
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, check=False)
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), commit], cwd=REPO, check=True,
                       capture_output=True)
        try:
            for n in args.threads:
                bake_all(tree, scene_files, ref_out, args.frames, n)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, check=False)
    here_out = args.work / "here"
    shutil.rmtree(here_out, ignore_errors=True)
    for n in args.threads:
        bake_all(REPO, scene_files, here_out, args.frames, n)
    differ = []
    for stem in stems:
        mine, theirs = files(here_out / stem), files(ref_out / stem)
        if sorted(mine) != sorted(theirs):
            differ.append(f"{stem}: different files {sorted(set(mine) ^ set(theirs))}")
        differ += [f"{stem}/{name}" for name in sorted(mine) if name in theirs and mine[name] != theirs[name]]
    for line in differ:
        print("DIFFERS", line)
    verdict = "identical" if not differ else f"{len(differ)} differ"
    print(f"{len(scene_files)} scenes, {args.frames} frames, threads {args.threads}: {verdict}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
