"""A quick look at a bake without Blender: particles of a few frames splatted into one PNG.

Orthographic views (front: X right, Z up; or top: X right, Y up) of several
frames side by side, particles coloured by speed and shaded by depth, written
with numpy and zlib only (no plotting dependency), so it runs on a farm node or
in CI. This is a diagnostic, not the product's render path (that is Blender).
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np

from ..errors import InputError
from .atomic import atomic_open
from .cache_dir import CacheDir, refuse_links
from .deformed_meshes import DEFORMED_KEY, read_frames

_MESH_COLOUR = np.array([245, 150, 60], np.uint8)  # orange: a deformed mesh's vertices
_VIEWS = {"front": (0, 2, 1), "side": (1, 2, 0), "top": (0, 1, 2)}  # (horizontal, vertical, depth) axes


def write_png(path: str | Path, rgb: np.ndarray) -> None:
    """Write an (H, W, 3) uint8 image as an 8-bit RGB PNG (atomically)."""
    h, w, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))
    with atomic_open(path, "wb") as fh:
        fh.write(png)


def _colour(speed: np.ndarray, vmax: float) -> np.ndarray:
    """Blue (slow) to white (fast), like foam on water."""
    t = np.clip(speed / max(vmax, 1e-9), 0, 1)[:, None]
    slow = np.array([30, 90, 200], float)
    fast = np.array([235, 245, 255], float)
    return slow * (1 - t) + fast * t


def _splat(image: np.ndarray, u: np.ndarray, w: np.ndarray, col, k: int, panel: int) -> None:
    """Paint dots at pixel positions (u, w) of panel ``k`` in order (later ones over earlier ones)."""
    radius = max(1, int(round(panel / 200)))
    for dy in range(-radius, radius + 1):
        for dx in range(-radius, radius + 1):
            if dx * dx + dy * dy > radius * radius:
                continue
            ui = np.clip(np.round(u).astype(int) + dx, 0, panel - 1) + k * panel
            wi = np.clip(np.round(w).astype(int) + dy, 0, panel - 1)
            image[wi, ui] = col


def render_frames(cache_dir: str | Path, frames: list[int] | None = None, out: str | Path | None = None,
                  view: str = "front", panel: int = 320, count: int = 6) -> Path:
    """Render ``count`` frames (or the given ones) of a bake into one PNG; return its path."""
    cache = CacheDir(cache_dir)
    out = Path(out) if out is not None else cache.root / "preview.png"
    refuse_links(cache.root, out)
    manifest = cache.read_manifest()
    done = manifest["frames_done"]
    if not done:
        raise InputError(str(cache_dir), "the bake has no frames yet")
    if frames is None:
        idx = np.linspace(0, len(done) - 1, min(count, len(done))).round().astype(int)
        frames = [done[i] for i in idx]
    if view not in _VIEWS:
        raise InputError("--view", f"unknown view {view!r}; choose one of {', '.join(_VIEWS)}")
    ax_h, ax_v, ax_d = _VIEWS[view]
    data = [cache.read_particles(f) for f in frames]
    checked = read_frames(cache, frames, manifest.get(DEFORMED_KEY))  # every deformed mesh of these frames
    vertices = {source: n for source, (_, n) in checked.items()}
    meshes = [[cache.read_deformed(source, f, n) for source, n in vertices.items()
               if cache.deformed_path(source, f).exists()] for f in frames]
    pts = [np.column_stack([d["x"], d["y"], d["z"]]).astype(float) for d in data]
    allp = np.concatenate([p for p in pts if len(p)] or [np.zeros((1, 3))])
    lo, hi = allp.min(axis=0), allp.max(axis=0)
    span = max(hi[ax_h] - lo[ax_h], hi[ax_v] - lo[ax_v], 1e-6) * 1.05
    centre = 0.5 * (lo + hi)
    speeds = [np.sqrt(d["vx"].astype(float) ** 2 + d["vy"] ** 2 + d["vz"] ** 2) for d in data]
    vmax = max((float(np.percentile(s, 99)) for s in speeds if len(s)), default=1.0)
    image = np.full((panel, panel * len(frames), 3), 18, np.uint8)
    for k, (p, s) in enumerate(zip(pts, speeds)):
        if not len(p):
            continue
        u = ((p[:, ax_h] - centre[ax_h]) / span + 0.5) * (panel - 1)
        w = (0.5 - (p[:, ax_v] - centre[ax_v]) / span) * (panel - 1)
        depth = p[:, ax_d]
        # Painter's order: far particles first, near ones overwrite them; nearer is brighter.
        order = np.argsort(-depth if view != "top" else depth)
        shade = 0.55 + 0.45 * (1 - (depth - depth.min()) / max(np.ptp(depth), 1e-9))
        if view == "top":
            shade = 1.5 - shade
        col = np.clip(_colour(s, vmax) * shade[:, None], 0, 255).astype(np.uint8)
        _splat(image, u[order], w[order], col[order], k, panel)
        for x in meshes[k]:  # a deformed Solid's vertices over its particles, in one colour
            _splat(image, ((x[:, ax_h] - centre[ax_h]) / span + 0.5) * (panel - 1),
                   (0.5 - (x[:, ax_v] - centre[ax_v]) / span) * (panel - 1), _MESH_COLOUR, k, panel)
        image[:, k * panel] = 60  # panel separator
    write_png(out, image)
    return out
