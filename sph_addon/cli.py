"""Command line of the bpy-free core (DESIGN.md section 4).

Exit codes: 0 done; 2 bad input (one sentence naming the field or file, no
traceback, nothing written); 3 the simulation failed (which frame, why);
130 interrupted (the cache stays consistent and resumable).
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import time
from pathlib import Path

from . import __version__
from .core.durations import eta_seconds, format_duration
from .core.errors import EXIT_INPUT, EXIT_INTERRUPTED, EXIT_OK, InputError, SimulationError, exit_status


def _say(text: str, error: bool = False) -> None:
    """One line of the command's result for the user: stdout, or stderr for errors and warnings.

    The only place the command line writes text besides its progress lines; the library
    below logs instead.
    """
    (sys.stderr if error else sys.stdout).write(text + "\n")


class _ProgressPrinter:
    """A bar with ETA on a terminal, one plain line per frame otherwise (farm logs)."""

    def __init__(self, stream=sys.stderr):
        self.stream = stream
        self.tty = stream.isatty()

    def __call__(self, p) -> None:
        if self.tty:
            width = 30
            fill = int(width * p.fraction)
            self.stream.write(f"\rframe {p.frame}/{p.frame_end} [{'#' * fill}{'.' * (width - fill)}] "
                              f"{p.particles:,} particles, {p.substeps} substeps, {p.frame_seconds:.2f} s/frame, "
                              f"ETA {format_duration(p.eta_seconds)}   ")
            if p.frame == p.frame_end:
                self.stream.write("\n")
        else:
            self.stream.write(f"frame {p.frame}/{p.frame_end}: {p.particles} particles, {p.substeps} substeps, "
                              f"{p.frame_seconds:.2f} s, ETA {format_duration(p.eta_seconds)}\n")
        self.stream.flush()


class _MeshProgress:
    def __init__(self, stream=sys.stderr):
        self.stream = stream
        self.t0 = time.perf_counter()

    def __call__(self, done: int, total: int, frame: int) -> None:
        eta = eta_seconds(time.perf_counter() - self.t0, done, total - done)
        end = "\n" if not self.stream.isatty() or done == total else ""
        lead = "\r" if self.stream.isatty() else ""
        self.stream.write(f"{lead}meshed frame {frame} ({done}/{total}), ETA {format_duration(eta)}   {end}")
        self.stream.flush()


def _cmd_validate(args) -> int:
    from .core.scene import load_scene

    scene = load_scene(args.scene)
    _say(f"{args.scene}: valid; about {scene.estimate_particles():,} particles, "
          f"frames {scene.frame_start}-{scene.frame_end} at {scene.fps:g} fps, "
          f"estimated memory {scene.estimate_bytes() / 2**20:,.0f} MiB")
    return EXIT_OK


def _cmd_bake(args) -> int:
    from .core.bake import bake, parse_frames

    frames = parse_frames(args.frames)
    stop = {"requested": False}

    def on_signal(signum, frame):
        # First signal: stop after the frame in progress (nothing half-written);
        # the atomic writes make an immediate stop safe too, so a second one raises.
        if stop["requested"]:
            raise KeyboardInterrupt
        stop["requested"] = True

    old = signal.signal(signal.SIGTERM, on_signal)
    t0 = time.perf_counter()
    try:
        manifest = bake(args.scene, args.out, frames=frames, resume=args.resume, force=args.force,
                        progress=None if args.quiet else _ProgressPrinter(),
                        should_stop=lambda: stop["requested"])
    finally:
        signal.signal(signal.SIGTERM, old)
    if not manifest.get("complete"):
        _say(f"interrupted at frame {manifest['frames_done'][-1]}; continue with --resume", error=True)
        return EXIT_INTERRUPTED
    last = manifest["stats"][str(manifest["frame_end"])]
    _say(f"baked {len(manifest['frames_done'])} frames into {args.out} in {time.perf_counter() - t0:.1f} s; "
          f"{last['particles']:,} particles at the last frame")
    return EXIT_OK


def _cmd_mesh(args) -> int:
    from .core.bake import parse_frames
    from .core.surface.stage import mesh_cache

    frames = parse_frames(args.frames)
    progress = None if args.quiet else _MeshProgress()
    report = mesh_cache(args.dir, frames=None if frames is None else range(frames[0], frames[1] + 1),
                        jobs=args.jobs, force=args.force, progress=progress)
    failed = report.get("failed") or {}
    for frame, why in sorted(failed.items()):
        _say(f"frame {frame}: {why}", error=True)
    _say(f"meshed {len(report.get('meshed', []))} frames, skipped {len(report.get('skipped', []))}, "
          f"failed {len(failed)}")
    return EXIT_INPUT if failed else EXIT_OK


_INFO_COLUMNS = {"frame", "particles", "substeps", "max_speed", "bounds_min", "bounds_max", "removed",
                 "sdf_build_s"}


def _cmd_info(args) -> int:
    from .core.cache import CacheDir

    cache = CacheDir(args.dir)
    m = cache.read_manifest()
    if args.json:
        _say(json.dumps(m, indent=2))
        return EXIT_OK
    done = m["frames_done"]
    _say(f"{args.dir}: scene {m['scene']!r}, engine {m['engine_version']}, frames {m['frame_start']}-"
          f"{m['frame_end']}, {len(done)} done{' (complete)' if m.get('complete') else ''}, "
          f"checkpoint at {m.get('checkpoint')}, removed {m.get('removed') or 0}")
    _say("frame  particles  substeps  max_speed  bounds_min                bounds_max               models")
    for f in done:
        s = m["stats"][str(f)]
        lo = " ".join(f"{v:7.3f}" for v in s["bounds_min"])
        hi = " ".join(f"{v:7.3f}" for v in s["bounds_max"])
        # Whatever the models and time-stepping schemes report (springs, time levels, ...).
        extra = " ".join(f"{k}={v}" for k, v in s.items() if k not in _INFO_COLUMNS)
        _say(f"{f:5d}  {s['particles']:9d}  {s['substeps']:8d}  {s['max_speed']:9.3f}  {lo}   {hi}   {extra}")
    return EXIT_OK


def _cmd_preview(args) -> int:
    from .core.bake import parse_frames
    from .core.preview import render_frames

    frames = parse_frames(args.frames)
    out = render_frames(args.dir, None if frames is None else list(range(frames[0], frames[1] + 1, args.every)),
                        out=args.out, view=args.view)
    _say(f"wrote {out}")
    return EXIT_OK


def _cmd_schema(args) -> int:
    from .core.schema_doc import scene_format_markdown

    text = scene_format_markdown()
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m sph_addon", description="sph_addon core command line")
    ap.add_argument("--version", action="version", version=f"sph_addon {__version__}")
    ap.add_argument("-v", "--verbose", action="store_true", help="log details")
    sub = ap.add_subparsers(dest="command", required=True)
    b = sub.add_parser("bake", help="simulate a scene into a cache directory")
    b.add_argument("scene", help="scene.json")
    b.add_argument("--out", required=True, help="cache directory")
    b.add_argument("--frames", help="A-B: frame range (overrides the scene's)")
    b.add_argument("--resume", action="store_true", help="continue from the last checkpoint")
    b.add_argument("--force", action="store_true", help="replace an existing bake in --out")
    b.add_argument("--quiet", action="store_true", help="no progress output")
    b.set_defaults(func=_cmd_bake)
    m = sub.add_parser("mesh", help="mesh the surface of baked frames")
    m.add_argument("dir", help="cache directory")
    m.add_argument("--frames", help="A-B")
    m.add_argument("--jobs", type=int, default=1, help="processes")
    m.add_argument("--force", action="store_true", help="re-mesh frames already meshed with the same settings")
    m.add_argument("--quiet", action="store_true", help="no progress output")
    m.set_defaults(func=_cmd_mesh)
    i = sub.add_parser("info", help="describe a cache directory")
    i.add_argument("dir")
    i.add_argument("--json", action="store_true", help="print the manifest")
    i.set_defaults(func=_cmd_info)
    v = sub.add_parser("validate", help="check a scene file")
    v.add_argument("scene")
    v.set_defaults(func=_cmd_validate)
    p = sub.add_parser("preview", help="render baked frames of particles into a PNG (no Blender)")
    p.add_argument("dir", help="cache directory")
    p.add_argument("--out", help="PNG path (default DIR/preview.png)")
    p.add_argument("--frames", help="A-B (default: six frames spread over the bake)")
    p.add_argument("--every", type=int, default=10, help="with --frames: every Nth frame")
    p.add_argument("--view", default="front", help="front, side or top")
    p.set_defaults(func=_cmd_preview)
    s = sub.add_parser("schema", help="write the scene format reference (docs/scene_format.md)")
    s.add_argument("--out")
    s.set_defaults(func=_cmd_schema)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(message)s")
    try:
        return args.func(args)
    except (InputError, SimulationError) as exc:
        code, line = exit_status(exc)
        _say(line, error=True)
        return code
    except KeyboardInterrupt:
        _say("interrupted; the cache is consistent, continue with --resume", error=True)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # Output piped into `head` and cut short: not an error of ours. Point stdout at devnull so
        # the interpreter's final flush does not raise again.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
