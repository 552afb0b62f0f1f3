"""The scene: its file, declared parameters, validation before a bake, generated docs, Blender names."""
