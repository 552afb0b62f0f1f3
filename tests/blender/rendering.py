"""Small Cycles renders read back as numpy, and where a set of points lands in the image."""

from pathlib import Path

import bpy
import numpy as np


def tiny_cycles(scene, resolution: tuple[int, int], samples: int = 4) -> None:
    """CPU Cycles, few samples, no denoising: a render in about a second that still shows shapes."""
    scene.render.engine = 'CYCLES'
    scene.cycles.device = 'CPU'
    scene.cycles.samples = samples
    scene.cycles.use_denoising = False
    scene.render.resolution_x, scene.render.resolution_y = resolution
    scene.render.resolution_percentage = 100
    scene.render.threads_mode = 'FIXED'
    scene.render.threads = 2
    scene.render.image_settings.file_format = 'PNG'


def render(scene, path: Path) -> np.ndarray:
    scene.render.filepath = str(path)
    bpy.ops.render.render(write_still=True)
    return load_png(path)


def load_png(path: Path) -> np.ndarray:
    """RGB float image, rows from bottom to top (Blender's pixel order)."""
    img = bpy.data.images.load(str(path), check_existing=False)
    try:
        w, h = img.size
        px = np.empty(w * h * 4, np.float32)
        img.pixels.foreach_get(px)
    finally:
        bpy.data.images.remove(img)
    return px.reshape(h, w, 4)[..., :3]


def projected_window(scene, lo, hi, margin: int = 0) -> tuple[slice, slice]:
    """Pixel rows/columns covered by the box [lo, hi] seen from the scene camera (+ margin pixels)."""
    from bpy_extras.object_utils import world_to_camera_view
    from mathutils import Vector

    corners = [Vector((a, b, c)) for a in (lo[0], hi[0]) for b in (lo[1], hi[1]) for c in (lo[2], hi[2])]
    uv = np.array([tuple(world_to_camera_view(scene, scene.camera, c))[:2] for c in corners])
    w, h = scene.render.resolution_x, scene.render.resolution_y
    u0, u1 = np.clip([uv[:, 0].min() * w - margin, uv[:, 0].max() * w + margin], 0, w).astype(int)
    v0, v1 = np.clip([uv[:, 1].min() * h - margin, uv[:, 1].max() * h + margin], 0, h).astype(int)
    # Image rows run bottom to top, like the camera's v.
    return slice(v0, v1), slice(u0, u1)
