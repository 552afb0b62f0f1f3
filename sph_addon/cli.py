"""Command line of the bpy-free core (DESIGN.md section 4).

Exit codes: 0 done; 2 bad input (one sentence naming the field or file, no
traceback, nothing written); 3 the simulation failed (which frame, why);
130 interrupted (the cache stays consistent and resumable).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
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


def _notice(text: str) -> None:
    """A line of what the bake is doing between frames (compiling the solver), on stderr."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


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
    from .core.bake import parse_frames
    from .core.durations import format_long_duration
    from .core.scene.preflight import PARTICLE_STEPS_PER_SECOND, check_bake

    scene, est = check_bake(args.scene, parse_frames(args.frames))
    grids = f" ({est.grid_bytes / 2**20:,.0f} MiB of it for {len(est.grids)} distance grids)" if est.grids else ""
    _say(f"{args.scene}: valid; about {est.particles:,} particles, frames {scene.frame_start}-{scene.frame_end} "
         f"at {scene.fps:g} fps, up to {est.substeps} substeps per frame"
         f"{f' of {est.heat_cycles:,} heat cycles each' if est.heat_cycles > 1 else ''}, estimated memory "
         f"{est.memory_bytes / 2**20:,.1f} MiB{grids}, at most {est.work:.2g} particle-steps "
         f"(up to {format_long_duration(est.seconds)} at {PARTICLE_STEPS_PER_SECOND:.2g} per second)")
    return EXIT_OK


class _StopOnSignals:
    """SIGINT and SIGTERM during a bake: the first stops it after the frame in progress; the second
    stops it at once (every write is atomic, the last checkpoint stays the resume point); any later
    one is ignored, so that no signal can cut the unwinding short and end the process another way
    than exit 130 with a resumable cache."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self):
        self.count = 0
        self._old: dict = {}

    def __enter__(self) -> _StopOnSignals:
        self._old = {s: signal.signal(s, self._on_signal) for s in self.SIGNALS}
        return self

    def __exit__(self, *exc) -> None:
        # Once interrupted, the process is on its way to exit 130: a signal still arriving (a scheduler
        # repeating SIGTERM) must not turn that into a kill, even while the interpreter shuts down (it
        # resets Python-level handlers to the default then), so the kernel ignores them from here. Every
        # signal caught so far has been handled by now: the unwinding ran Python code since.
        for s, handler in self._old.items():
            signal.signal(s, signal.SIG_IGN if self.requested else handler)

    @property
    def requested(self) -> bool:
        return self.count > 0

    def _on_signal(self, signum, frame) -> None:
        # Later signals are ignored here, not by switching to SIG_IGN: a signal the C level has
        # already caught but Python has not yet handled (the main thread was inside a kernel) would
        # then raise "OSError: Signal 15 ignored due to race condition" in place of the exit 130
        # (seen with SIGTERM, SIGINT, SIGTERM 20 ms apart on a loaded machine).
        self.count += 1
        if self.count == 2:
            # Stopping at once cuts short whatever Python code runs, a library's finalizer too (numba's
            # LLVM handles, half closed, then fail again when collected at exit with "Exception ignored
            # in ... Traceback"). The checkpoint, not that memory, is what the bake leaves: from here
            # such errors in finalizers are dropped, so the one sentence on stderr stays the only one.
            sys.unraisablehook = _drop_unraisable
            raise KeyboardInterrupt


def _drop_unraisable(unraisable) -> None:
    """``sys.unraisablehook`` of a bake stopped at once (see ``_StopOnSignals._on_signal``)."""


def _interrupted(out: str) -> str:
    """What an interrupted bake left, in one sentence: where --resume continues, or that nothing was baked."""
    from .core.cache.cache_dir import CacheDir

    try:
        m = CacheDir(out).read_manifest()
    except InputError:
        m = None
    if not m or m.get("checkpoint") is None:
        return "interrupted before the first frame was written; run the same command again to start it"
    return (f"interrupted after frame {max(m['frames_done'])}; the cache is consistent, continue from frame "
            f"{m['checkpoint']} with --resume")


def _write_errors_not_signals() -> None:
    """A file-size limit fails the write (EFBIG: exit 3 with a sentence) instead of killing us (SIGXFSZ)."""
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def _cmd_bake(args) -> int:
    from .core.bake import bake, parse_frames

    frames = parse_frames(args.frames)
    t0 = time.perf_counter()
    _write_errors_not_signals()
    with _StopOnSignals() as stop:
        try:
            manifest = bake(args.scene, args.out, frames=frames, resume=args.resume, force=args.force,
                            progress=None if args.quiet else _ProgressPrinter(),
                            should_stop=lambda: stop.requested, notice=None if args.quiet else _notice)
        except KeyboardInterrupt:
            _say(_interrupted(args.out), error=True)
            return EXIT_INTERRUPTED
        if not manifest.get("complete"):
            _say(_interrupted(args.out), error=True)
            return EXIT_INTERRUPTED
    last = manifest["stats"][str(manifest["frame_end"])]
    _say(f"baked {len(manifest['frames_done'])} frames into {args.out} in {time.perf_counter() - t0:.1f} s; "
         f"{last['particles']:,} particles at the last frame")
    return EXIT_OK


def _cmd_mesh(args) -> int:
    from .core.bake import parse_frames
    from .core.surface.stage import mesh_cache

    frames = parse_frames(args.frames)
    _write_errors_not_signals()
    progress = None if args.quiet else _MeshProgress()
    report = mesh_cache(args.dir, frames=None if frames is None else range(frames[0], frames[1] + 1),
                        jobs=args.jobs, force=args.force, progress=progress)
    failed = report.get("failed") or {}
    for frame, why in sorted(failed.items()):
        _say(f"frame {frame}: {why}", error=True)
    _say(f"meshed {len(report.get('meshed', []))} frames, skipped {len(report.get('skipped', []))}, "
          f"failed {len(failed)}")
    return EXIT_INPUT if failed else EXIT_OK


def _pct(v) -> str:
    """A fraction as a percentage with 2 decimals ("-" for none)."""
    return "-" if v is None else f"{100 * v:.2f}"


def _joules(v: float) -> str:
    """An energy, J: 4 significant digits, whole joules from 1000 J (no exponent below 1e9)."""
    return f"{v:.4g}" if abs(v) < 1000 or abs(v) >= 1e9 else f"{v:.0f}"


# The table of ``info``: (header, the stats keys it shows, cell). A column appears when a listed frame has
# its first key; keys no column shows (springs, time levels, ...) follow as key=value.
_INFO_TABLE = (
    ("frame", ("frame",), lambda s: f"{s['frame']}"),
    ("particles", ("particles",), lambda s: f"{s['particles']}"),
    ("substeps", ("substeps",), lambda s: f"{s['substeps']}"),
    ("max_speed", ("max_speed",), lambda s: f"{s['max_speed']:.3f}"),
    ("bounds_min", ("bounds_min",), lambda s: " ".join(f"{v:6.2f}" for v in s["bounds_min"])),
    ("bounds_max", ("bounds_max",), lambda s: " ".join(f"{v:6.2f}" for v in s["bounds_max"])),
    ("density_err_%(mean/max)", ("density_error_mean", "density_error_max"),
     lambda s: f"{_pct(s.get('density_error_mean'))}/{_pct(s.get('density_error_max'))}"),
    ("passes(mean/max)", ("density_iterations", "density_iterations_max"),
     lambda s: f"{s.get('density_iterations', 0):.1f}/{s.get('density_iterations_max', 0)}"),
    ("capped", ("density_capped",), lambda s: f"{s.get('density_capped', 0)}"),
    ("grid_solve(mean/max)", ("projection_iterations", "projection_iterations_max"),
     lambda s: f"{s.get('projection_iterations', 0):.0f}/{s.get('projection_iterations_max', 0)}"),
    ("kinetic_J", ("kinetic_energy_j",), lambda s: _joules(s.get("kinetic_energy_j", 0.0))),
    ("front_m", ("front_m",), lambda s: "-" if s.get("front_m") is None else f"{s['front_m']:.3f}"),
)
_INFO_ROWS = 20  # rows ``info`` lists by default: every Nth frame so that about this many remain, plus the last


def _info_rows(done: list[int], every: int) -> tuple[list[int], int]:
    """The frames to list (every ``every``-th, or automatic for 0, always the last) and the step used."""
    step = every if every > 0 else max(1, -(-len(done) // _INFO_ROWS))
    rows = done[::step]
    if done and rows[-1] != done[-1]:
        rows.append(done[-1])
    return rows, step


def _info_table(stats: list[dict]) -> list[str]:
    """The header and one line per frame's stats: known columns, then the other keys as key=value."""
    if not stats:
        return []
    cols = [c for c in _INFO_TABLE if any(c[1][0] in s for s in stats)]
    shown = {k for c in cols for k in c[1]} | {"removed", "sdf_build_s"}  # removed: totals in the header
    cells = [[cell(s) for _, _, cell in cols] for s in stats]
    widths = [max([len(h)] + [len(r[k]) for r in cells]) for k, (h, _, _) in enumerate(cols)]
    lines = ["  ".join(h.rjust(w) for (h, _, _), w in zip(cols, widths))]
    for s, row in zip(stats, cells):
        extra = " ".join(f"{k}={v}" for k, v in s.items() if k not in shown)
        lines.append("  ".join(c.rjust(w) for c, w in zip(row, widths)) + "  " + extra)
    return [line.rstrip() for line in lines]


def _info_summary(stats: list[dict]) -> str:
    """One line over every frame done: the worst density errors and passes, the peak energy, the front."""
    def peak(key):
        have = [s for s in stats if s.get(key) is not None]
        return max(have, key=lambda s: s[key]) if have else None

    parts = []
    mean, top, passes = peak("density_error_mean"), peak("density_error_max"), peak("density_iterations_max")
    if mean and top:
        parts.append(f"density error up to {_pct(mean['density_error_mean'])} % mean (frame {mean['frame']}), "
                     f"{_pct(top['density_error_max'])} % max (frame {top['frame']})")
    if passes:
        capped = sum(s.get("density_capped", 0) for s in stats)
        parts.append(f"up to {passes['density_iterations_max']} relaxation passes per substep "
                     f"(frame {passes['frame']}), {capped} substeps capped")
    if (ke := peak("kinetic_energy_j")) is not None:
        parts.append(f"kinetic energy peak {_joules(ke['kinetic_energy_j'])} J (frame {ke['frame']})")
    if any("front_m" in s for s in stats):
        far, last = peak("front_m"), stats[-1]
        text = "-" if last.get("front_m") is None else f"{last['front_m']:.3f} m"
        if far is not None and far["front_m"] != last.get("front_m"):
            text += f", furthest {far['front_m']:.3f} m (frame {far['frame']})"
        parts.append(f"front {text} at frame {last['frame']}")
    return f"over {len(stats)} frames: " + "; ".join(parts) if parts else ""


def _front_description(root: Path) -> str:
    """How the baked scene measures its front (from DIR/scene.json), or "" when it asks for none."""
    from .core.world.diagnostics import parse_diagnostics

    try:
        raw = json.loads((root / "scene.json").read_text(encoding="utf-8"))
        front = parse_diagnostics(raw.get("diagnostics")).get("front")
    except (OSError, ValueError, AttributeError, InputError):
        return ""
    if front is None:
        return ""
    sign = "+" if front["direction"] > 0 else "-"
    return f"front_m: leading edge of the connected liquid along {sign}{front['axis']} from " \
           f"{front['axis']} = {front['origin']:g} m"


def _vec(values) -> str:
    return "(" + ", ".join(f"{v:.4g}" for v in values) + ")"


def _cmd_info(args) -> int:
    from .cli_whitewater import info_lines
    from .core.cache.cache_dir import CacheDir
    from .core.cache.deformed_meshes import DEFORMED_KEY, read_frames

    cache = CacheDir(args.dir)
    m = cache.read_manifest()
    if args.json:
        _say(json.dumps(m, indent=2))
        return EXIT_OK
    done = m["frames_done"]
    _say(f"{args.dir}: scene {m['scene']!r}, engine {m['engine_version']}, frames {m['frame_start']}-"
         f"{m['frame_end']}, {len(done)} done{' (complete)' if m.get('complete') else ''}, "
         f"checkpoint at {m.get('checkpoint')}, removed {m.get('removed') or 0}")
    stats = [m["stats"][str(f)] for f in done if str(f) in m["stats"]]
    rows, step = _info_rows(done, args.every)
    for line in _info_table([m["stats"][str(f)] for f in rows if str(f) in m["stats"]]):
        _say(line)
    if step > 1:
        _say(f"(one frame in {step} and the last; --every 1 lists all, --json gives everything)")
    for line in (_info_summary(stats), _front_description(cache.root)):
        if line:
            _say(line)
    if done and cache.bodies_path(done[-1]).exists():
        for b in cache.read_bodies(done[-1]):
            _say(f"body {b['name']!r} at frame {done[-1]}: location {_vec(b['location'])} m, rotation (w x y z) "
                 f"{_vec(b['rotation_quaternion'])}, speed {math.hypot(*b['velocity']):.4g} m/s, "
                 f"spin {math.hypot(*b['angular_velocity']):.4g} rad/s")
    for source, (frames, vertices) in read_frames(cache, done, m.get(DEFORMED_KEY)).items():
        _say(f"deformed mesh of sources[{source}]: {frames} of {len(done)} frames, {vertices} vertices each")
    for line in info_lines(cache.root, rows):
        _say(line)
    for model, constants in (m.get("derived") or {}).items():
        if isinstance(constants, dict):
            _say(f"derived ({model}, first frame's substep): "
                 + ", ".join(f"{k}={v:.4g}" if isinstance(v, (int, float)) else f"{k}={v}"
                             for k, v in constants.items()))
    return EXIT_OK


def _cmd_preview(args) -> int:
    from .core.bake import parse_frames
    from .core.cache.preview import render_frames

    frames = parse_frames(args.frames)
    out = render_frames(args.dir, None if frames is None else list(range(frames[0], frames[1] + 1, args.every)),
                        out=args.out, view=args.view)
    _say(f"wrote {out}")
    return EXIT_OK


def _cmd_schema(args) -> int:
    from .core.scene.schema_doc import scene_format_markdown, with_terms_table

    if args.terms:
        page = Path(args.terms)
        page.write_text(with_terms_table(page.read_text(encoding="utf-8")), encoding="utf-8")
        _say(f"wrote the table of terms in {page}")
        if not args.out:
            return EXIT_OK
    text = scene_format_markdown()
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return EXIT_OK


class _Parser(argparse.ArgumentParser):
    """argparse with one sentence for a bad command line (exit 2 as any bad input), not the usage block."""

    def error(self, message: str):
        self.exit(EXIT_INPUT, f"error: {message}; see {self.prog} --help\n")


# Options whose value may start with "-" (a frame range of negative frames, "-5--3"): argparse
# takes such a value for an option unless it is attached with "=".
_DASHED_VALUES = ("--frames",)


def _attach_dashed_values(argv: list[str]) -> list[str]:
    out, k = [], 0
    while k < len(argv):
        if argv[k] in _DASHED_VALUES and k + 1 < len(argv) and argv[k + 1].startswith("-") \
                and argv[k + 1][1:2].isdigit():
            out.append(f"{argv[k]}={argv[k + 1]}")
            k += 2
            continue
        out.append(argv[k])
        k += 1
    return out


def build_parser() -> argparse.ArgumentParser:
    from .cli_whitewater import add_parser as add_whitewater_parser

    ap = _Parser(prog="python -m sph_addon", description="sph_addon core command line")
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
    add_whitewater_parser(sub)
    i = sub.add_parser("info", help="describe a cache directory")
    i.add_argument("dir")
    i.add_argument("--json", action="store_true", help="print the manifest")
    i.add_argument("--every", type=int, default=0,
                   help=f"list every Nth frame (and the last); default: about {_INFO_ROWS} rows")
    i.set_defaults(func=_cmd_info)
    v = sub.add_parser("validate", help="check a scene file: every check bake makes before it starts")
    v.add_argument("scene")
    v.add_argument("--frames", help="A-B: check the frame range bake --frames would bake (overrides the scene's)")
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
    s.add_argument("--terms", metavar="PAGE",
                   help="rewrite the table of terms in PAGE (docs/adding_a_model.md) from the terms' modules")
    s.set_defaults(func=_cmd_schema)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(_attach_dashed_values(sys.argv[1:] if argv is None else list(argv)))
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
