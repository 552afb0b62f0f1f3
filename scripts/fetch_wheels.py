#!/usr/bin/env python3
"""Download the numba and llvmlite wheels that the extension bundles into ``wheels/``.

Blender ships numpy but not numba, so the extension carries numba and llvmlite as
wheels listed in ``blender_manifest.toml`` (BLENDER_NOTES.md section 2). Blender
installs only the wheels matching its platform and Python, so we bundle:

* Python 3.11 (cp311): Blender 4.2 LTS to 5.0; Python 3.13 (cp313): Blender 5.1+.
* linux-x64, windows-x64 and macos-arm64. The macOS wheels are tagged
  ``macosx_12_0_arm64`` (asking pip for ``macosx_11_0`` alone finds only older numba).
  Intel Macs (macos-x64) are dropped: numba's last Intel macOS build is 0.62.1, and
  pinning that everywhere, or splitting versions per platform, is not worth it.

All wheels of numba 0.68.1 / llvmlite 0.50.0 for these 2 Pythons x 3 platforms
exist on PyPI (checked against https://pypi.org/simple/ when this was written).
numpy is never downloaded (``--no-deps``): the wheels must not shadow Blender's numpy.

A version bump is one edit: change ``PINNED`` below, run this script, and paste the
``wheels = [...]`` block it prints into ``blender_manifest.toml``.

Usage::

    python scripts/fetch_wheels.py                         # everything the manifest needs
    python scripts/fetch_wheels.py --platform linux-x64 --python 3.11
    python scripts/fetch_wheels.py --check                 # download nothing; exit 1 if wheels are missing

Exit status: 0 when ``wheels/`` holds every wheel the manifest lists (for the requested
platforms and Pythons) and the manifest matches ``PINNED``; 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "blender_manifest.toml"
WHEEL_DIR = ROOT / "wheels"
PYPI = "https://pypi.org/simple/"

# The one place to change versions. Never add numpy here: Blender ships its own.
PINNED = {"numba": "0.68.1", "llvmlite": "0.50.0"}

PYTHONS = ("3.11", "3.13")


@dataclass(frozen=True)
class Platform:
    """A Blender platform: the pip ``--platform`` tags to ask for and how to recognise its wheels."""

    pip_tags: tuple[str, ...]
    wheel_tag: re.Pattern[str]


# Keys are Blender's platform names (manifest ``platforms``). pip needs the legacy
# manylinux2014 alias as well so that older glibc-tagged wheels also qualify.
PLATFORMS = {
    "linux-x64": Platform(("manylinux_2_28_x86_64", "manylinux2014_x86_64"), re.compile(r"manylinux\w*_x86_64")),
    "windows-x64": Platform(("win_amd64",), re.compile(r"win_amd64")),
    "macos-arm64": Platform(("macosx_12_0_arm64",), re.compile(r"macosx_\d+_\d+_(arm64|universal2)")),
}


@dataclass(frozen=True)
class Wheel:
    """The parts of a wheel filename (PEP 427) this script cares about."""

    filename: str
    name: str
    version: str
    python: str  # "3.11", from the cpXY tag
    platform: str | None  # Blender platform name, None if none of PLATFORMS matches

    @property
    def manifest_path(self) -> str:
        return f"./wheels/{self.filename}"


def parse_wheel(filename: str) -> Wheel | None:
    """Parse ``name-version[-build]-python-abi-platform.whl``; None if it is not such a name."""
    if not filename.endswith(".whl"):
        return None
    parts = filename[: -len(".whl")].split("-")
    if len(parts) not in (5, 6):
        return None
    name, version, python_tag, platform_tag = parts[0], parts[1], parts[-3], parts[-1]
    match = re.fullmatch(r"cp(\d)(\d+)", python_tag)
    python = f"{match[1]}.{match[2]}" if match else python_tag
    # A filename may carry several dotted platform tags (e.g. manylinux_2_27 and _2_28).
    platform = next((key for key, plat in PLATFORMS.items()
                     if any(plat.wheel_tag.fullmatch(tag) for tag in platform_tag.split("."))), None)
    return Wheel(filename, name.lower().replace("_", "-"), version, python, platform)


def local_wheels(wheel_dir: Path, name: str, python: str, platform: str) -> list[Wheel]:
    """The pinned wheels of ``name`` in ``wheel_dir`` for one Python and platform."""
    found = []
    for path in sorted(wheel_dir.glob("*.whl")):
        wheel = parse_wheel(path.name)
        if wheel and (wheel.name, wheel.version, wheel.python, wheel.platform) == (
                name, PINNED[name], python, platform):
            found.append(wheel)
    return found


# pip settings worth keeping from the user's config files when we ignore those files.
_NETWORK_KEYS = ("cert", "client-cert", "proxy", "trusted-host", "timeout", "retries")


def pip_env(index_url: str) -> dict[str, str]:
    """Environment for pip that uses ``index_url`` only.

    pip config files may add find-links or extra indexes (local mirrors), and pip
    ignores empty environment overrides, so the config files are skipped
    (``PIP_CONFIG_FILE=os.devnull``) and only their network settings (certificates,
    proxy) are carried over as environment variables.
    """
    listing = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True).stdout
    env = {k: v for k, v in os.environ.items()
           if k not in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL", "PIP_NO_INDEX")}
    for line in listing.splitlines():
        match = re.fullmatch(r"(global|download)\.([\w-]+)='(.*)'", line.strip())
        if match and match[2] in _NETWORK_KEYS:
            env.setdefault("PIP_" + match[2].upper().replace("-", "_"), match[3])
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_INDEX_URL=index_url, PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


def pip_download(names: list[str], python: str, platform: str, wheel_dir: Path, env: dict[str, str]) -> None:
    """Run ``pip download`` for one Python/platform pair; exit with a message on failure."""
    abi = "cp" + python.replace(".", "")
    cmd = [sys.executable, "-m", "pip", "download", *(f"{name}=={PINNED[name]}" for name in names),
           "--no-deps", "--only-binary=:all:", "--python-version", python, "--implementation", "cp",
           "--abi", abi, *(f"--platform={tag}" for tag in PLATFORMS[platform].pip_tags),
           "--index-url", env["PIP_INDEX_URL"], "-d", str(wheel_dir)]
    print(f"downloading {', '.join(names)} for {abi} {platform}", flush=True)
    result = subprocess.run(cmd, env=env)
    if result.returncode != 0:
        sys.exit(f"error: pip download failed ({result.returncode}) for {names} {abi} {platform}; "
                 f"command: {' '.join(cmd)}")


def fetch(platforms: list[str], pythons: list[str], wheel_dir: Path, index_url: str) -> list[Wheel]:
    """Download what is missing and return the wheel of every (package, Python, platform)."""
    wheel_dir.mkdir(exist_ok=True)
    env = None
    fetched = []
    for python in pythons:
        for platform in platforms:
            missing = [name for name in PINNED if not local_wheels(wheel_dir, name, python, platform)]
            if missing:
                env = env or pip_env(index_url)
                pip_download(missing, python, platform, wheel_dir, env)
            for name in PINNED:
                found = local_wheels(wheel_dir, name, python, platform)
                if len(found) != 1:
                    sys.exit(f"error: expected one {name} {PINNED[name]} wheel for Python {python} {platform} "
                             f"in {wheel_dir}, found {[w.filename for w in found]}: delete the extra ones")
                fetched.append(found[0])
    return fetched


def read_manifest_wheels(manifest: Path) -> list[str]:
    """The ``wheels`` entries of the manifest, as written (``./wheels/<file>.whl``)."""
    try:
        with manifest.open("rb") as fh:
            data = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as ex:
        sys.exit(f"error: cannot read {manifest}: {ex}")
    return list(data.get("wheels", []))


def in_scope(wheel: Wheel, platforms: list[str], pythons: list[str]) -> bool:
    return wheel.platform in platforms and wheel.python in pythons


def manifest_problems(entries: list[str], platforms: list[str], pythons: list[str], wheel_dir: Path) -> list[str]:
    """What is wrong with the manifest's wheels for the requested scope, without downloading anything."""
    problems = []
    parsed = []
    for entry in entries:
        wheel = parse_wheel(entry.rsplit("/", 1)[-1])
        if wheel is None or wheel.name not in PINNED:
            problems.append(f"{entry}: not a wheel of {', '.join(PINNED)} (the only packages we bundle)")
            continue
        parsed.append((entry, wheel))
        if not in_scope(wheel, platforms, pythons):
            continue
        if wheel.version != PINNED[wheel.name]:
            problems.append(f"{entry}: version {wheel.version}, but PINNED in fetch_wheels.py says "
                            f"{PINNED[wheel.name]}")
        elif not (wheel_dir / wheel.filename).is_file():
            problems.append(f"{entry}: missing from {wheel_dir}")
    for python in pythons:
        for platform in platforms:
            for name in PINNED:
                if not any((w.name, w.python, w.platform) == (name, python, platform) for _, w in parsed):
                    problems.append(f"no {name} wheel for Python {python} {platform} in the manifest")
    return problems


def _sort_key(entry: str) -> tuple:
    """Group manifest entries by platform (PLATFORMS order), then Python, then name."""
    wheel = parse_wheel(entry.rsplit("/", 1)[-1])
    if wheel is None or wheel.platform is None:
        return (len(PLATFORMS), "", entry)
    return (list(PLATFORMS).index(wheel.platform), wheel.python, entry)


def wheels_block(entries: list[str], fetched: list[Wheel], platforms: list[str], pythons: list[str]) -> str:
    """The manifest ``wheels`` block: entries outside the requested scope kept, the rest as fetched."""
    kept = {e for e in entries if not ((w := parse_wheel(e.rsplit("/", 1)[-1])) and in_scope(w, platforms, pythons))}
    lines = [f'  "{entry}",' for entry in sorted(kept | {w.manifest_path for w in fetched}, key=_sort_key)]
    return "wheels = [\n" + "\n".join(lines) + "\n]"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--platform", action="append", choices=list(PLATFORMS),
                        help="Blender platform to fetch (repeatable; default: all)")
    parser.add_argument("--python", action="append", choices=list(PYTHONS),
                        help="Python version to fetch (repeatable; default: all)")
    parser.add_argument("--check", action="store_true",
                        help="download nothing; exit 1 listing the manifest's wheels missing from wheels/")
    parser.add_argument("--wheel-dir", type=Path, default=WHEEL_DIR, help=f"default: {WHEEL_DIR}")
    parser.add_argument("--index-url", default=PYPI, help=f"package index (default: {PYPI})")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    platforms = args.platform or list(PLATFORMS)
    pythons = args.python or list(PYTHONS)
    entries = read_manifest_wheels(MANIFEST)

    fetched = None if args.check else fetch(platforms, pythons, args.wheel_dir, args.index_url)
    # fetch() leaves exactly one wheel per (package, Python, platform), so no problems here
    # also means the manifest lists exactly the fetched files.
    problems = manifest_problems(entries, platforms, pythons, args.wheel_dir)

    if problems:
        print(f"\n{MANIFEST.name} does not match the wheels for {', '.join(platforms)} / Python {', '.join(pythons)}:",
              file=sys.stderr)
        for problem in problems:
            print(f"  - {problem}", file=sys.stderr)
        if fetched is not None:
            print(f"\nReplace the wheels list in {MANIFEST} with:\n", file=sys.stderr)
            print(wheels_block(entries, fetched, platforms, pythons))
        else:
            print("\nRun scripts/fetch_wheels.py without --check: it downloads missing wheels and prints the "
                  "wheels block for the manifest.", file=sys.stderr)
        return 1
    count = len(fetched) if fetched is not None else len(platforms) * len(pythons) * len(PINNED)
    print(f"ok: {count} wheels in {args.wheel_dir} match {MANIFEST.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
