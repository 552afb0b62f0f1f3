#!/usr/bin/env python3
"""Validate the extension and build one zip per platform, without a Blender binary.

Blender's own packager, ``blender_ext.py``, ships inside the PyPI ``bpy`` module
(BLENDER_NOTES.md section 3) and runs on plain Python 3.11+, so the zips are built
exactly the way ``blender --command extension build --split-platforms`` would.

The build runs in a staging copy (``build/stage`` by default) holding only what the
zip needs: the root ``__init__.py``, the manifest, ``sph_addon/`` without caches,
and the wheels of the requested platforms. blender_ext insists that every listed
wheel exists, so building a subset (``--platform linux-x64``) means rewriting the
staged manifest's ``platforms`` and ``wheels`` to that subset; the checkout's
manifest is never touched. Staging also keeps stray files in the checkout
(scratch files, stale wheels) out of the zip.

Usage::

    python scripts/fetch_wheels.py                      # once: the wheels the manifest lists
    python scripts/build_extension.py                   # dist/sph_addon-<version>-<platform>.zip, all platforms
    python scripts/build_extension.py --platform linux-x64 --output-dir /tmp/zips
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import fetch_wheels  # the sibling script: one definition of wheel names and platforms

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = "blender_manifest.toml"
PACKAGE = "sph_addon"
BLENDER_EXT_PATTERNS = (  # inside a venv with the PyPI bpy module (POSIX and Windows layouts)
    ".venv-bpy-*/lib/python3*/site-packages/bpy/*/scripts/addons_core/bl_pkg/cli/blender_ext.py",
    ".venv-bpy-*/Lib/site-packages/bpy/*/scripts/addons_core/bl_pkg/cli/blender_ext.py",
)
# Optional root files that may ship (a licence text); everything else at the root stays out.
ROOT_EXTRAS = ("LICENSE", "LICENSE.txt", "COPYING")
STAGE_MARKER = ".sph_addon_stage"


class BuildError(Exception):
    """A problem the user must fix; the message says what to do."""


def _version_key(blender_ext: Path) -> tuple[int, ...]:
    # .../bpy/<major.minor>/scripts/addons_core/bl_pkg/cli/blender_ext.py
    version = blender_ext.parents[4].name
    return tuple(int(p) for p in version.split(".") if p.isdigit())


def find_blender_ext(explicit: Path | None) -> Path:
    """``--blender-ext`` if given, else the newest one found in a ``.venv-bpy-*`` venv."""
    if explicit is not None:
        if not explicit.is_file():
            raise BuildError(f"--blender-ext {explicit}: no such file")
        return explicit
    found = [path for pattern in BLENDER_EXT_PATTERNS for path in ROOT.glob(pattern)]
    if not found:
        raise BuildError("no blender_ext.py found in .venv-bpy-*/ (create one with scripts/setup_env.sh "
                         ".venv-bpy-4.5 requirements-blender-4.5.txt) or pass --blender-ext PATH")
    return max(found, key=_version_key)


def tags_file(blender_ext: Path) -> Path | None:
    """Blender's list of valid tags, which ``blender --command extension`` enforces; None if absent."""
    path = blender_ext.parents[3] / "modules" / "_bpy_internal" / "extensions" / "tags.py"
    return path if path.is_file() else None


def read_manifest(path: Path) -> dict:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as ex:
        raise BuildError(f"cannot read {path}: {ex}") from ex


def select_wheels(manifest: dict, platforms: list[str]) -> list[str]:
    """The manifest's wheel entries needed by ``platforms`` (pure-Python wheels go everywhere)."""
    unknown = [p for p in platforms if p not in fetch_wheels.PLATFORMS]
    if unknown:
        raise BuildError(f"platform(s) {unknown} have no entry in scripts/fetch_wheels.py PLATFORMS")
    selected = []
    for entry in manifest.get("wheels", []):
        wheel = fetch_wheels.parse_wheel(entry.rsplit("/", 1)[-1])
        if entry.endswith("-any.whl") or (wheel and wheel.platform in platforms):
            selected.append(entry)
    return selected


def check_wheels(manifest: dict, platforms: list[str]) -> None:
    """Refuse to build a zip lacking a wheel (or with a wheel that disagrees with fetch_wheels.PINNED)."""
    problems = fetch_wheels.manifest_problems(manifest.get("wheels", []), platforms, list(fetch_wheels.PYTHONS),
                                              ROOT / "wheels")
    if problems:
        flags = " ".join(f"--platform {p}" for p in platforms)
        raise BuildError("wheels for " + ", ".join(platforms) + " are not ready:\n"
                         + "\n".join(f"  - {p}" for p in problems)
                         + f"\nrun: python scripts/fetch_wheels.py {flags}")


def _replace_list(text: str, key: str, values: list[str]) -> str:
    """Replace the top-level ``key = [...]`` array; the manifest has no other TOML writer to rely on."""
    body = "".join(f'\n  "{v}",' for v in values)
    new, count = re.subn(rf"^{key}\s*=\s*\[[^\]]*\]", lambda _: f"{key} = [{body}\n]", text, flags=re.M)
    if count != 1:
        raise BuildError(f"{MANIFEST}: expected one top-level '{key} = [...]' array, found {count}")
    return new


def write_stage_manifest(source: Path, target: Path, platforms: list[str], wheels: list[str]) -> None:
    text = _replace_list(source.read_text(encoding="utf-8"), "platforms", platforms)
    text = _replace_list(text, "wheels", wheels)
    target.write_text(text, encoding="utf-8")
    written = read_manifest(target)  # the regex edit must round-trip exactly
    if written.get("platforms") != platforms or written.get("wheels", []) != wheels:
        raise BuildError(f"rewriting {target} went wrong: platforms/wheels do not read back as written")


def _link_or_copy(src: Path, dst: Path) -> None:
    # Hard links make staging ~250 MB of wheels free; copy across file systems.
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def check_dirs(stage_dir: Path, output_dir: Path) -> None:
    """The stage is deleted and refilled: make sure that can never hit the checkout or the zips."""
    if ROOT.is_relative_to(stage_dir):
        raise BuildError(f"--stage-dir {stage_dir} contains the checkout: pick a scratch directory")
    if output_dir.is_relative_to(stage_dir):
        raise BuildError(f"--output-dir {output_dir} is inside --stage-dir {stage_dir}: the zips would be deleted")
    if stage_dir.exists() and any(stage_dir.iterdir()) and not (stage_dir / STAGE_MARKER).exists():
        raise BuildError(f"--stage-dir {stage_dir} is not empty and was not made by this script: "
                         "refusing to delete it, pick another directory")


def stage(stage_dir: Path, platforms: list[str], wheels: list[str]) -> None:
    """Fill ``stage_dir`` with exactly what the zips may contain."""
    if stage_dir.exists():
        shutil.rmtree(stage_dir)
    stage_dir.mkdir(parents=True)
    (stage_dir / STAGE_MARKER).touch()  # a dot-file: the manifest's ".*" pattern keeps it out of the zip
    shutil.copy2(ROOT / "__init__.py", stage_dir / "__init__.py")
    for name in ROOT_EXTRAS:
        if (ROOT / name).is_file():
            shutil.copy2(ROOT / name, stage_dir / name)
    shutil.copytree(ROOT / PACKAGE, stage_dir / PACKAGE,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*"))
    (stage_dir / "wheels").mkdir()
    for entry in wheels:
        _link_or_copy(ROOT / entry, stage_dir / entry)
    write_stage_manifest(ROOT / MANIFEST, stage_dir / MANIFEST, platforms, wheels)


def run_blender_ext(blender_ext: Path, args: list[str]) -> None:
    tags = tags_file(blender_ext)
    cmd = [sys.executable, str(blender_ext), *args, f"--valid-tags={tags or ''}"]
    result = subprocess.run(cmd)
    if result.returncode != 0:
        raise BuildError(f"blender_ext.py {args[0]} failed (exit {result.returncode}); command: {' '.join(cmd)}")


def zip_problems(path: Path, wheels: list[str]) -> list[str]:
    """Entries that must not be in a platform zip, and wheels it lacks."""
    names = set(zipfile.ZipFile(path).namelist())
    allowed_roots = {"__init__.py", MANIFEST, *ROOT_EXTRAS}
    problems = [f"unexpected entry {name}" for name in sorted(names)
                if not (name in allowed_roots or (name.startswith(f"{PACKAGE}/") and "__pycache__" not in name
                                                  and not name.endswith(".pyc")) or name in wheels)]
    problems += [f"missing {w}" for w in sorted(set(wheels) - names)]
    return problems


def build(platforms: list[str], output_dir: Path, stage_dir: Path, blender_ext: Path) -> list[Path]:
    check_dirs(stage_dir, output_dir)
    manifest = read_manifest(ROOT / MANIFEST)
    check_wheels(manifest, platforms)
    wheels = select_wheels(manifest, platforms)
    stage(stage_dir, platforms, wheels)
    print(f"staged {stage_dir} for {', '.join(platforms)}; packager {blender_ext}", flush=True)
    run_blender_ext(blender_ext, ["validate", str(stage_dir)])
    output_dir.mkdir(parents=True, exist_ok=True)
    run_blender_ext(blender_ext, ["build", "--source-dir", str(stage_dir), "--output-dir", str(output_dir),
                                  "--split-platforms"])
    zips = []
    for platform in platforms:
        path = output_dir / f"{manifest['id']}-{manifest['version']}-{platform.replace('-', '_')}.zip"
        if not path.is_file():
            raise BuildError(f"blender_ext.py reported success but {path} does not exist")
        problems = zip_problems(path, [w.removeprefix("./") for w in select_wheels(manifest, [platform])])
        if problems:
            raise BuildError(f"{path} has the wrong contents:\n" + "\n".join(f"  - {p}" for p in problems))
        zips.append(path)
    return zips


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    platforms = read_manifest(ROOT / MANIFEST).get("platforms", [])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--platform", action="append", choices=platforms,
                        help="platform to build (repeatable; default: every platform in the manifest)")
    parser.add_argument("--output-dir", type=Path, default=ROOT / "dist", help="where the zips go (default: dist/)")
    parser.add_argument("--stage-dir", type=Path, default=ROOT / "build" / "stage",
                        help="scratch copy of the extension, deleted and refilled (default: build/stage/)")
    parser.add_argument("--blender-ext", type=Path,
                        help="Blender's blender_ext.py (default: the newest one in .venv-bpy-*/)")
    args = parser.parse_args(argv)
    # Keep the manifest's order, whatever order the options came in.
    args.platform = [p for p in platforms if p in (args.platform or platforms)]
    return args


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(argv)
        zips = build(args.platform, args.output_dir.resolve(), args.stage_dir.resolve(),
                     find_blender_ext(args.blender_ext))
    except BuildError as ex:
        print(f"error: {ex}", file=sys.stderr)
        return 1
    for path in zips:
        print(f"{path}  {path.stat().st_size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
