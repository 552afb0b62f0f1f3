"""Install a built extension zip in a fresh Blender (bpy) process and report what happened.

Run by ``test_packaging.py`` as ``python packaging_child.py ZIP`` with
``BLENDER_USER_RESOURCES`` pointing at an empty directory: Blender reads it once,
when ``bpy`` is imported, so it must be set by the parent before this process starts.
A separate process is needed because the pytest process already has the checkout
enabled as a development extension (conftest.py).

The checks are generic on purpose: the Blender layer is still growing, so instead of
a list of class names this records what the add-on registered and whether disabling
removes all of it. The result is one JSON line after ``MARKER`` on stdout; the
parent asserts on it. Nothing here raises: every failure lands in ``errors``.
"""

import json
import os
import sys
import traceback

MARKER = "SPH_PACKAGING_RESULT "
ADDON = "bl_ext.user_default.sph_addon"
CYCLES = 2


def _raise(ex):
    """``handle_error`` for addon_utils: its default only prints, which would hide failures."""
    raise ex


def _origin(fn) -> str:
    """Module that defined a handler (plain function, bound method or functools.partial)."""
    fn = getattr(fn, "func", fn)
    fn = getattr(fn, "__func__", fn)
    return getattr(fn, "__module__", None) or ""


def snapshot(bpy) -> dict:
    """What the add-on can leave behind that Python can enumerate (timers and CLI commands cannot be)."""
    handlers = sorted(
        f"{name}:{getattr(fn, '__qualname__', repr(fn))}"
        for name in dir(bpy.app.handlers) if not name.startswith("_")
        if isinstance(entries := getattr(bpy.app.handlers, name), list)
        for fn in entries if _origin(fn).startswith(ADDON)
    )
    id_types = [t for t in (getattr(bpy.types, n) for n in dir(bpy.types))
                if isinstance(t, type) and issubclass(t, bpy.types.ID)]
    return {
        "types": sorted(dir(bpy.types)),
        "ops": sorted(dir(bpy.ops.sph)),
        "handlers": handlers,
        # Properties hung on ID types (bpy.types.Object.sph = PointerProperty(...)).
        "id_props": sorted(f"{t.__name__}.{p}" for t in id_types for p in t.bl_rna.properties.keys()),
    }


def added(now: dict, base: dict) -> dict:
    """What ``now`` has beyond the baseline.

    Handlers are all the add-on's by construction and are kept as a list, so that
    a handler appended again on every re-enable shows up as a duplicate.
    """
    diff = {key: sorted(set(now[key]) - set(base[key])) for key in now}
    diff["handlers"] = now["handlers"]
    return diff


def enabled(addon_utils) -> bool:
    is_enabled, is_loaded = addon_utils.check(ADDON)
    return bool(is_enabled and is_loaded)


def addon_classes(bpy) -> list[str]:
    """Names of the Blender classes created by the add-on's modules that are registered right now.

    Walks every ``bpy_struct`` subclass, so classes built at register time (``type(...)``)
    count too. Registration puts ``bl_rna`` in a class's own dict; unregistration removes it.
    """
    registered, seen, todo = set(), set(), [bpy.types.bpy_struct]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub in seen:
                continue
            seen.add(sub)
            todo.append(sub)
            module = getattr(sub, "__module__", "") or ""
            if (module == ADDON or module.startswith(ADDON + ".")) and "bl_rna" in sub.__dict__:
                registered.add(sub.__name__)
    return sorted(registered)


def step(name: str, bpy, addon_utils, base: dict) -> dict:
    return {"step": name, "enabled": enabled(addon_utils), "added": added(snapshot(bpy), base),
            "classes": addon_classes(bpy)}


def install(bpy, addon_utils, zip_path: str, result: dict) -> None:
    ret = bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default", enable_on_install=True)
    result["install"] = sorted(ret)
    result["enabled_after_install"] = enabled(addon_utils)


def check_numba(bpy, result: dict) -> None:
    """A bake's numba must be a private copy of the zip's wheels (these venvs have no numba of their own)."""
    import importlib

    runtime = importlib.import_module(f"{ADDON}.sph_addon.blender.runtime")
    result["numba_version"] = runtime.prepare_numba()
    import numba

    result["numba_file"] = os.path.realpath(numba.__file__)
    result["runtime_dir"] = os.path.realpath(runtime.user_dir("runtime"))
    result["local_site"] = local = os.path.realpath(bpy.utils.user_resource('EXTENSIONS', path=".local"))
    # Only the wheels for this Python may be installed (the zip carries cp311 and cp313).
    result["installed"] = installed_wheels(local)


def installed_wheels(local: str) -> list[str]:
    """``*.dist-info`` directories under the extensions' ``.local`` prefix."""
    return sorted(f"{os.path.relpath(root, local)}/{d}" for root, dirs, _ in os.walk(local) for d in dirs
                  if d.endswith(".dist-info"))


def cycle(addon_utils, bpy, base: dict, result: dict) -> None:
    """Disable and re-enable ``CYCLES`` times, then disable; record what is registered at each step."""
    steps = result["steps"]
    for i in range(CYCLES):
        addon_utils.disable(ADDON, default_set=True, handle_error=_raise)
        steps.append(step(f"disable {i + 1}", bpy, addon_utils, base))
        addon_utils.enable(ADDON, default_set=True, handle_error=_raise)
        steps.append(step(f"enable {i + 2}", bpy, addon_utils, base))
    addon_utils.disable(ADDON, default_set=True, handle_error=_raise)
    steps.append(step("final disable", bpy, addon_utils, base))
    # Informational: whether Blender uninstalls wheels no enabled extension needs.
    result["installed_after_disable"] = installed_wheels(result["local_site"])


def run(zip_path: str) -> dict:
    result = {"errors": [], "steps": []}
    user_dir = os.environ.get("BLENDER_USER_RESOURCES", "")
    result["user_dir"] = os.path.realpath(user_dir) if user_dir else ""
    if not (user_dir and os.path.isdir(user_dir)) or os.listdir(user_dir):
        result["errors"].append(f"BLENDER_USER_RESOURCES must name an empty directory, got {user_dir!r}")
        return result
    try:
        import bpy

        result["blender"] = bpy.app.version_string
        import addon_utils  # importable only once bpy has set up sys.path

        base = snapshot(bpy)
        install(bpy, addon_utils, zip_path, result)
        result["steps"].append(step("enable 1 (install)", bpy, addon_utils, base))
        check_numba(bpy, result)
        cycle(addon_utils, bpy, base, result)
    except BaseException:  # noqa: B036 (SystemExit from Blender must be reported too)
        result["errors"].append(traceback.format_exc())
    return result


def main() -> int:
    if len(sys.argv) != 2:
        print(f"usage: {sys.argv[0]} EXTENSION_ZIP", file=sys.stderr)
        return 2
    result = run(os.path.abspath(sys.argv[1]))
    print(MARKER + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
