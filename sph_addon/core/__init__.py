"""The bpy-free engine: particle world, material models, colliders, cache, surface.

Nothing below this package may import ``bpy``, ``bmesh`` or ``mathutils``
(``tests/core/test_core_is_bpy_free.py`` enforces it). Modules that compile numba
kernels are imported lazily by the code that runs them, so that importing the
scene, parameter and cache modules stays cheap (Blender's ``register()`` must
not pay the ~0.75 s numba import).
"""
