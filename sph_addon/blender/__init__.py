"""The Blender layer: translates Blender data to the core's scene file and the
core's cache back to Blender objects (DESIGN.md section 2). No physics here.

Modules register in order; each has ``register()`` / ``unregister()``.
"""

import importlib

_MODULE_NAMES = ("runtime", "properties", "migrate", "replay.objects", "replay.solid", "jobs", "operators", "ui",
                 "cli_command")


def _modules():
    return [importlib.import_module(f".{name}", __package__) for name in _MODULE_NAMES]


def register():
    for mod in _modules():
        mod.register()


def unregister():
    for mod in reversed(_modules()):
        mod.unregister()
