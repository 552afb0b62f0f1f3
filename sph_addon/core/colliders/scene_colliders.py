"""A scene's collider built for the bake: its shape, its motion (static, keyframed or a body the fluid
moves) and its contact settings."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from . import COLLIDERS, Collider, Shape
from .motion import motion_from_scene
from .shapes.reach import scene_build_context


def scene_collider(scene, k: int, kind: str, p: dict, sdf_cache, timed_build: Callable[..., Shape]) -> Collider:
    """The collider ``colliders[k]`` of ``scene`` (a ``scene.Scene``), of type ``kind`` and resolved fields
    ``p``; its shape built through ``timed_build(build, p, ctx)`` (which times it) from ``sdf_cache``."""
    ctype = COLLIDERS[kind]
    motion = motion_from_scene(p, scene.frame_start)
    ctx = scene_build_context(scene, f"colliders[{k}]", p, sdf_cache)
    shape = timed_build(ctype.build, p, ctx)
    if p["dynamic"]:
        from .rigid_body import body_motion

        motion = body_motion(shape, p, scene.frame_start, scene.physics_fps, script=motion)
    rebuild = None
    if ctype.deforming(p):
        def rebuild(frame: int, build=ctype.build, p=p, ctx=ctx) -> Shape:
            return build(p, dataclasses.replace(ctx, frame=frame))
    return Collider(
        name=p["name"] or f"{kind} {k}", shape=shape, motion=motion,
        friction=p["friction"], stickiness=p["stickiness"],
        stick_distance=p["stick_distance"] if p["stick_distance"] > 0 else 0.5 * scene.particle_spacing,
        continuous=p["continuous"], rebuild=rebuild)
