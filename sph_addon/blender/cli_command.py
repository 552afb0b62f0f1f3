"""The farm command: ``blender --command sph bake|mesh|sync|alembic|free|info FILE.blend [...]``.

Registered with ``bpy.utils.register_cli_command`` (Blender 4.2+); the return
value is the process exit code, as in the plain-Python CLI: 0 done, 2 bad input
(one line naming the object and setting), 3 the simulation failed, 130
interrupted (SIGINT/SIGTERM stop between frames; ``--resume`` continues). The
command opens the .blend itself (a file given before ``--command`` is not
loaded).

A render without the add-on reads only the frames the file names (the replay's
frame ranges, see ``replay``). So after a bake that created the replay objects
or changed those frames the file is saved (``--no-save`` keeps it untouched),
naming the baked frames for the particles and, when the Domain's Surface is on,
for the surface too: the meshing tasks that follow write them. Meshing tasks
run in parallel and never save; ``sync`` saves the file with the frames the
cache holds, for a cache baked elsewhere.

``alembic`` writes the baked surface (``--particles``: and the particles) to an Alembic file
(``alembic``): other programs read it, and a farm renders it without the add-on through a Mesh
Sequence Cache, on Blender 4.2 too. It never saves the .blend.
"""

from __future__ import annotations

import argparse
import json
import signal

import bpy

from ..core.bake import parse_frames
from ..core.cache.cache_dir import CacheDir
from ..core.errors import (
    EXIT_INPUT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_SIMULATION,
    InputError,
    SimulationError,
    exit_status,
)
from . import alembic, baking, runtime
from .export import snapshot as export
from .replay import objects as replay


class _ArgumentError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse would sys.exit() out of Blender
        raise _ArgumentError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="blender --command sph", description="Bake, mesh, free or inspect an SPH Domain's "
                                                               "cache from a .blend file, without a screen.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in (("bake", "simulate the Domain into its cache directory"),
                       ("mesh", "mesh the surface of the baked frames"),
                       ("sync", "save the file with the frames the cache holds, for renders without the add-on"),
                       ("alembic", "write the baked surface (and particles) to an Alembic file, a sample per frame"),
                       ("free", "delete the files bakes of the Domain wrote"),
                       ("info", "print the cache's state as JSON")):
        p = sub.add_parser(name, help=text)
        p.add_argument("blend", help="the .blend file (opened by the command)")
        p.add_argument("--domain", default="", help="Domain object name (default: the only Domain)")
        if name in {"bake", "mesh"}:
            p.add_argument("--frames", help="A-B: frames to bake or mesh (default: the Domain's range)")
        if name == "alembic":
            p.add_argument("--frames", help="A-B: frames to write (default: every baked frame; frames not baked "
                                            "are left out)")
            p.add_argument("--out", default="", help="the .abc file (default: <cache>/export/<Domain>.abc; "
                                                     "// = beside the .blend)")
            p.add_argument("--particles", action="store_true",
                           help="write the particles too (the vertices of a mesh, with their velocity)")
            p.add_argument("--no-surface", action="store_true", help="leave the surface out")
        if name == "bake":
            p.add_argument("--resume", action="store_true", help="continue from the last checkpoint")
            p.add_argument("--auto-resume", action="store_true",
                           help="resume if the cache holds an unfinished bake of this scene, else start one "
                                "(for farm tasks that may be retried)")
            p.add_argument("--replace", action="store_true", help="replace an existing bake")
            p.add_argument("--no-save", action="store_true",
                           help="do not save the .blend even if the replay objects had to be created")
        if name == "mesh":
            p.add_argument("--replace", action="store_true", help="re-mesh frames that are up to date")
    return parser


def _has_replay(domain) -> bool:
    return any(ob.get("sph_domain") == domain.name for ob in bpy.data.objects)


def _frames_named(domain) -> tuple:
    return tuple(replay.frame_range(ob, render=True) if ob is not None else None for ob in replay.find_replay(domain))


def _name_farm_frames(domain) -> None:
    """The frames a farm render reads: the cache's, and the baked ones for a surface the farm meshes next."""
    replay.sync_frames(domain)
    if domain.sph.domain.surface_enabled:
        replay.expect_surfaces(domain)


def run(argv: list[str], echo=baking.console) -> int:
    """Parse ``argv`` and run the command; return the exit code. Every line for the user goes to ``echo``."""
    try:
        args = build_parser().parse_args(argv)
        frames = parse_frames(getattr(args, "frames", None))
    except (_ArgumentError, InputError) as exc:
        code, line = exit_status(exc)
        echo(line)
        return code
    stop = {"requested": False}

    def on_signal(signum, _frame):
        stop["requested"] = True
        echo(f"received signal {signum}: stopping after this frame (resumable)")

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            bpy.ops.wm.open_mainfile(filepath=args.blend, load_ui=False)
        except RuntimeError as exc:
            echo(f"error: {args.blend}: cannot be opened ({str(exc).strip()})")
            return EXIT_INPUT
        scene = bpy.context.scene
        domain = export.find_domain(scene, args.domain)
        start, end = frames if frames else (0, 0)
        if args.command == "info":
            echo(json.dumps(cache_info(domain), indent=2))
            return EXIT_OK
        if args.command == "free":
            echo(f"freed {baking.free(domain)} files in {export.cache_dir(domain)}")
            return EXIT_OK
        if args.command == "alembic":
            params = alembic.AlembicParams(args.out, start, end, not args.no_surface, args.particles)
            done = alembic.export_alembic(bpy.context, domain, params)
            echo(f"wrote {done.path}: frames {done.frame_start}-{done.frame_end} of {', '.join(done.objects)}")
            return EXIT_OK
        named = _frames_named(domain)
        if args.command == "sync":
            if not _has_replay(domain):
                echo(f"error: {domain.name} has no replay objects: bake it first")
                return EXIT_INPUT
            _name_farm_frames(domain)
            if _frames_named(domain) != named:
                bpy.ops.wm.save_mainfile()
                echo(f"saved {bpy.data.filepath}: frames {_frames_named(domain)}")
            return EXIT_OK
        if args.command == "bake":
            had_replay = _has_replay(domain)
            resume, replace = args.resume, args.replace
            if args.auto_resume:
                # A retried farm task continues from the last checkpoint; a bake killed before its
                # first checkpoint left nothing to resume from, so it starts over.
                cache = CacheDir(export.cache_dir(domain))
                resume = cache.summary().checkpoint is not None
                replace = replace or (not resume and cache.has_bake())
            task = baking.prepare_bake(scene, domain, start, end, resume=resume, replace=replace)
        else:
            had_replay = True
            task = baking.prepare_mesh(scene, domain, start, end, replace=args.replace)
        result = baking.run_sync(scene, task, echo=echo, should_stop=lambda: stop["requested"])
        if args.command == "bake":
            _name_farm_frames(domain)
            if (not had_replay or _frames_named(domain) != named) and not args.no_save:
                bpy.ops.wm.save_mainfile()
                echo(f"saved {bpy.data.filepath} with the replay objects and the frames they read")
        if stop["requested"]:
            return EXIT_INTERRUPTED
        if args.command == "mesh" and result.get("failed"):
            for frame, reason in result["failed"].items():
                echo(f"error: frame {frame}: {reason}")
            return EXIT_SIMULATION
        return EXIT_OK
    except (InputError, SimulationError, runtime.NumbaUnavailable, OSError) as exc:
        code, line = exit_status(exc)
        echo(line)
        return code
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def cache_info(domain) -> dict:
    """What ``info`` prints: the Domain's cache directory and, once baked, its frames and meshes."""
    root = export.cache_dir(domain)
    state = CacheDir(root).summary()
    info = {"domain": domain.name, "cache_directory": str(root), "baked": state.baked}
    if state.baked:
        info.update(complete=state.complete,
                    frames_done=[state.first_frame, state.last_frame] if state.frames_done else [],
                    checkpoint=state.checkpoint, surfaces=state.frames_meshed)
    return info


def _execute(argv) -> int:
    return run(list(argv))


_handle = None


def register():
    global _handle
    if hasattr(bpy.utils, "register_cli_command"):
        _handle = bpy.utils.register_cli_command("sph", _execute)


def unregister():
    global _handle
    if _handle is not None:
        bpy.utils.unregister_cli_command(_handle)
        _handle = None
