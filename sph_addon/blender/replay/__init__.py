"""Replay of a baked cache in Blender: particle and surface objects, deformed Solids, their node groups."""
