"""sph_addon: particle liquids, viscoelastic goo and soft solids for Blender.

The engine lives in :mod:`sph_addon.core` and never imports ``bpy``; the Blender
layer (``sph_addon.blender``) only translates Blender data to scene files and
cache files back to Blender objects.
"""

__version__ = "0.1.0"
