"""The ``whitewater`` command of the core command line, and the whitewater lines of ``info``.

``python -m sph_addon whitewater DIR [--frames A-B] [--force] [--quiet]``: exit 0 done; 2 bad input (the
message names the field or file, nothing written); 3 the storage refused a write; 130 interrupted (every
frame written so far is complete, and a new run continues from the last one).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from .core.durations import eta_seconds, format_duration
from .core.errors import EXIT_INTERRUPTED, EXIT_OK, StorageError, is_storage_fault


class _Progress:
    def __init__(self, stream=sys.stderr):
        self.stream = stream
        self.t0 = time.perf_counter()

    def __call__(self, done: int, total: int, frame: int, particles: int) -> None:
        eta = eta_seconds(time.perf_counter() - self.t0, done, total - done)
        end = "\n" if not self.stream.isatty() or done == total else ""
        lead = "\r" if self.stream.isatty() else ""
        count = "" if particles < 0 else f", {particles:,} particles"
        self.stream.write(f"{lead}whitewater frame {frame} ({done}/{total}){count}, ETA {format_duration(eta)}   "
                          f"{end}")
        self.stream.flush()


def cmd_whitewater(args) -> int:
    from .core.bake import parse_frames
    from .core.whitewater.stage import whitewater_cache

    frames = parse_frames(args.frames)
    try:
        report = whitewater_cache(args.dir, frames=None if frames is None else range(frames[0], frames[1] + 1),
                                  force=args.force, progress=None if args.quiet else _Progress())
    except KeyboardInterrupt:
        sys.stderr.write("interrupted; the frames written are complete: run whitewater again to continue\n")
        return EXIT_INTERRUPTED
    except OSError as exc:
        if not is_storage_fault(exc):
            raise
        raise StorageError(None, f"whitewater stopped: cannot write {exc.filename} ({exc.strerror}); free space, "
                                 "then run whitewater again (the frames written are kept)") from None
    last = max(report["counts"]) if report["counts"] else None
    tail = ""
    if last is not None:
        spray, foam, bubbles = report["counts"][last]
        tail = f"; frame {last}: {spray:,} spray, {foam:,} foam, {bubbles:,} bubbles"
    sys.stdout.write(f"whitewater: wrote {len(report['written'])} frames, skipped {len(report['skipped'])} in "
                     f"{report['wall_s']:.1f} s{tail}\n")
    return EXIT_OK


def add_parser(sub) -> None:
    w = sub.add_parser("whitewater", help="add spray, foam and bubbles to baked frames (Ihmsen et al. 2012)")
    w.add_argument("dir", help="cache directory")
    w.add_argument("--frames", help="A-B; continues from frame A-1's whitewater (earlier frames are written "
                                    "first when theirs are missing or out of date)")
    w.add_argument("--force", action="store_true", help="rewrite frames already written with the same settings")
    w.add_argument("--quiet", action="store_true", help="no progress output")
    w.set_defaults(func=cmd_whitewater)


def info_lines(root: Path, frames: list[int]) -> list[str]:
    """Whitewater counts per type of the listed frames that have a whitewater file, and a summary line."""
    from .core.whitewater.state import read_counts, whitewater_path

    if not (Path(root) / "whitewater").is_dir():
        return []
    rows = [(f, c) for f in frames if (c := read_counts(whitewater_path(root, f))) is not None]
    if not rows:
        return ["whitewater: folder present, no readable whitewater file among the listed frames"]
    out = ["whitewater  frame     spray      foam   bubbles"]
    out += [f"            {f:5d}  {s:8d}  {fo:8d}  {b:8d}" for f, (s, fo, b) in rows]
    peak = max(rows, key=lambda r: sum(r[1]))
    out.append(f"whitewater: {len(rows)} of the listed frames written; most particles at frame {peak[0]} "
               f"({sum(peak[1]):,})")
    return out
