"""Blender extension entry point.

The repository root is the extension (BLENDER_NOTES.md section 2): Blender
imports this file as ``bl_ext.<repo>.sph_addon``. The Blender layer is imported
only on ``register()`` so that plain-Python users of ``sph_addon.core`` (tests,
farms without Blender) never load it.
"""


def register():
    from .sph_addon import blender

    blender.register()


def unregister():
    from .sph_addon import blender

    blender.unregister()
