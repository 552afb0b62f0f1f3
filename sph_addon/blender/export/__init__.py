"""Blender scene -> the core's scene file and meshes: objects, values, meshes, motion, errors."""
