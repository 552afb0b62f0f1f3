"""Property-based fuzzing of what users and farms hand the command line.

Mutations of the sample scenes (``scripts/scenes/*.json``, a scene with mesh files, and a scene
holding every field the format declares, inflow keyframes, outflows and deforming meshes
included): a field replaced by a hostile value, deleted or added, the file's bytes cut or
corrupted. Every one must end in exit 0, or exit 2 with one line on stderr and nothing written,
and no warning printed before it; an exception escaping ``main`` fails the test with its
traceback. Damaged caches go to every command that reads one and to the reader Blender's replay
uses. The seed is fixed (``derandomize``) and the examples bounded, so the suite runs the same
cases every time.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import tempfile
import warnings
from pathlib import Path

import pytest
from conftest import REPO, SCENES, run_main, scene_dict
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

MESHES = REPO / "tests" / "data" / "meshes"
MESH_FILES = ("plane_quad.ply", "box_dup_flipped.ply", "two_boxes.obj")

def _fields(params, **given) -> dict:
    """Every declared field at its default (vectors as lists), then ``given``."""
    out = {p.name: list(p.default) if isinstance(p.default, tuple) else p.default for p in params}
    out.update(given)
    return out


def _every_field_scene() -> dict:
    """A valid scene holding every field the format declares (taken from the declarations, so a new
    field is fuzzed as soon as it is declared): every model, source, collider and outflow type,
    inflow and collider keyframes, a deforming mesh's frame_paths, domain, surface, diagnostics, whitewater."""
    from sph_addon.core.colliders import COLLIDERS, COMMON_PARAMETERS
    from sph_addon.core.models import SOLVERS
    from sph_addon.core.scene.scene_file import DOMAIN_PARAMETERS, FORMAT, SIMULATION_PARAMETERS, TOP_PARAMETERS
    from sph_addon.core.sources.emission import INFLOW_KEY_PARAMETERS, SOURCES
    from sph_addon.core.sources.outflows import OUTFLOW_KINDS, PLACEMENT_PARAMETERS
    from sph_addon.core.surface.settings import SURFACE_PARAMETERS
    from sph_addon.core.whitewater.settings import WHITEWATER_PARAMETERS
    from sph_addon.core.world.diagnostics import FRONT_PARAMETERS

    materials = [{"name": name, "model": name, "preset": next(iter(spec.presets), ""),
                  "params": _fields(spec.parameters)} for name, spec in SOLVERS.items()]
    mat = materials[0]["name"]
    keys = [{"frame": 1, "position": [1.4, 1.4, -0.5], "rotation": [0, 0, 0]},
            {"frame": 3, "position": [1.4, 1.2, -0.5], "rotation": [0, 0, 1.0]}]

    def placed(kind, placement=COMMON_PARAMETERS, **given):
        return _fields(placement + COLLIDERS[kind].parameters, type=kind, **given)

    sources = [_fields(SOURCES["box"], type="box", material=mat, min=[0, 0, 0], max=[0.4, 0.4, 0.4]),
               _fields(SOURCES["sphere"], type="sphere", material=mat, center=[0.6, 0.6, 0.3], radius=0.2),
               _fields(SOURCES["mesh"], type="mesh", material=mat, path="box_dup_flipped.ply"),
               _fields(SOURCES["inflow"], type="inflow", material=mat, center=[0.0, 0.5, 0.9], frame_end=3,
                       keyframes=[_fields(INFLOW_KEY_PARAMETERS, frame=1, center=[0.0, 0.5, 0.9]),
                                  _fields(INFLOW_KEY_PARAMETERS, frame=3, center=[0.2, 0.5, 0.9])])]
    colliders = [placed("plane", position=[0, 0, -1.2]),
                 placed("box_container", size=[4, 4, 4], position=[0.5, 0.5, 0.8]),
                 placed("box", size=[0.2, 0.2, 0.2], position=[1.4, 1.4, -0.5], keyframes=keys),
                 placed("sphere", radius=0.1, position=[-1.4, 1.4, -0.5]),
                 placed("mesh", path="plane_quad.ply", mode="shell", position=[0, 0, -0.9]),
                 placed("mesh", path="plane_quad.ply", mode="shell", position=[0, 0, -0.7], deforming=True,
                        frame_paths=[{"frame": 1, "path": "plane_quad.ply"}, {"frame": 2, "path": "plane_quad.ply"}])]
    outflows = [placed("box", PLACEMENT_PARAMETERS, size=[0.2, 0.2, 0.2], position=[-1.4, -1.4, -0.5],
                       keyframes=[{**k, "position": [-1.4, -1.4 + 0.1 * j, -0.5]} for j, k in enumerate(keys)]),
                placed("sphere", PLACEMENT_PARAMETERS, radius=0.1, position=[1.4, -1.4, -0.5]),
                placed("mesh", PLACEMENT_PARAMETERS, path="two_boxes.obj", position=[-1.1, -1.1, -1.1])]
    assert {o["type"] for o in outflows} == set(OUTFLOW_KINDS)
    return {"format": FORMAT, **_fields(TOP_PARAMETERS, name="every field", particle_spacing=0.2, frame_end=3),
            "simulation": _fields(SIMULATION_PARAMETERS), "materials": materials, "sources": sources,
            "colliders": colliders, "outflows": outflows, "domain": _fields(DOMAIN_PARAMETERS, min=[-2, -2, -2],
                                                                                max=[2, 2, 2]),
            "surface": _fields(SURFACE_PARAMETERS), "diagnostics": {"front": _fields(FRONT_PARAMETERS)},
            "whitewater": _fields(WHITEWATER_PARAMETERS)}


BASES = {p.stem: json.loads(p.read_text()) for p in sorted(SCENES.glob("*.json"))}
BASES["every_field"] = _every_field_scene()
BASES["meshes"] = scene_dict(
    sources=[{"type": "mesh", "material": "water", "path": "box_dup_flipped.ply"}],
    colliders=[{"type": "mesh", "path": "plane_quad.ply", "mode": "shell", "position": [0, 0, -0.6]},
               {"type": "mesh", "path": "two_boxes.obj", "flip_normals": True, "cell_size": 0.05}])

# SPH_FUZZ_SCALE=20 runs twenty times the examples with a random seed: a bug hunt, not the suite.
SCALE = int(os.environ.get("SPH_FUZZ_SCALE", "1"))
FUZZ = settings(derandomize=SCALE == 1, database=None, deadline=None, print_blob=True, max_examples=500 * SCALE,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Values that broke earlier versions or sit on the edge of a check.
_EDGE_VALUES = [0, -1, 1, 2**63, -2**63, 10**30, 1e308, -1e308, 1e300, 5e-324, 1e-12, 0.001, 1e12, 1.0000001e12,
                "", "box", "mesh", "../../etc/passwd", "m_{frame:>99999999999d}.ply", "m_{frame:04d}.ply",
                "{frame", "a" * 5000, ["box"], [], {}, [0, 0], [1e308, 1e308, 1e308], [None, None, None],
                {"type": "box"}, True, False, None]

_hostile = st.one_of(
    st.sampled_from(_EDGE_VALUES).map(copy.deepcopy),  # later mutations must not edit the shared samples
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 5)), max_size=4),
    st.dictionaries(st.text(max_size=6), st.integers(-3, 3), max_size=2),
)


def _slots(node, out=None):
    """Every (container, key) of a JSON tree: the places a mutation can hit."""
    out = [] if out is None else out
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in items:
        out.append((node, key))
        _slots(child, out)
    return out


_numbers = st.one_of(
    st.sampled_from([0, -1, 1, 2, 0.5, 1e-3, 1e-6, 1e6, 1e12, 1e13, 1e308, -1e308, 10**30]),
    st.floats(min_value=-100, max_value=100),
    st.integers(min_value=-1000, max_value=1000),
)


@st.composite
def mutated_scene_bytes(draw) -> bytes:
    # The scene with every field twice as often: most of the fields are only there.
    data = copy.deepcopy(BASES[draw(st.sampled_from(sorted(BASES) + ["every_field"]))])
    for _ in range(draw(st.integers(1, 2))):
        slots = _slots(data)
        if not slots:
            break
        numeric = [(c, k) for c, k in slots if isinstance(c[k], (int, float)) and not isinstance(c[k], bool)]
        action = draw(st.sampled_from(("number", "number", "number", "replace", "replace", "delete", "add")))
        if action == "number" and numeric:
            container, key = draw(st.sampled_from(numeric))
            container[key] = draw(_numbers)
            continue
        container, key = draw(st.sampled_from(slots))
        if action in ("replace", "number"):
            container[key] = draw(_hostile)
        elif action == "delete":
            del container[key]
        else:
            target = container[key] if isinstance(container[key], (dict, list)) else container
            if isinstance(target, dict):
                target[draw(st.sampled_from(("extra", "type", "path", "params", "model", "velocity")))] = \
                    draw(_hostile)
            else:
                target.append(draw(_hostile))
    text = json.dumps(data).encode()  # NaN and Infinity as Python writes them
    damage = draw(st.sampled_from(("none", "none", "none", "cut", "byte", "nest")))
    if damage == "cut":
        text = text[:draw(st.integers(0, len(text)))]
    elif damage == "byte":
        at = draw(st.integers(0, len(text)))
        text = text[:at] + bytes([draw(st.integers(0, 255))]) + text[at:]
    elif damage == "nest":
        depth = draw(st.sampled_from((63, 65, 2000)))
        text = b"[" * depth + text + b"]" * depth
    return text


def _scene_dir(content: bytes) -> Path:
    root = Path(tempfile.mkdtemp(prefix="sph_fuzz_"))
    for name in MESH_FILES:
        shutil.copyfile(MESHES / name, root / name)
    (root / "scene.json").write_bytes(content)
    return root


def _listing(root: Path) -> list[str]:
    """Every path below ``root`` but the cache lock's own files, which come and go with every command."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if not p.name.startswith(".sph_lock"))


def _run(*args) -> tuple[int, str, str]:
    """``run_main``, failing on any warning: the one error line must be all the user sees."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = run_main(*args)
    assert not caught, [f"{w.filename}:{w.lineno}: {w.message}" for w in caught]
    return out


def _assert_clean_outcome(code: int, err: str) -> None:
    assert code in (0, 2), f"exit {code}: {err}"
    if code == 2:
        assert len(err.strip().splitlines()) == 1 and err.startswith("error: "), err
    assert "Traceback" not in err


@FUZZ
@given(mutated_scene_bytes())
def test_validate_survives_any_scene(content):
    root = _scene_dir(content)
    try:
        before = _listing(root)
        code, _, err = _run("validate", root / "scene.json")
        event(f"validate exit {code}")
        _assert_clean_outcome(code, err)
        assert _listing(root) == before, "validate must not write anything"
    finally:
        shutil.rmtree(root)


@settings(FUZZ, max_examples=60 * SCALE)
@given(mutated_scene_bytes())
def test_bake_of_first_frame_agrees_with_validate(content):
    """The bake builds everything validate estimated (fills, distance fields) for its first frame only:
    it must refuse exactly what validate refuses, before writing, and write a cache otherwise."""
    root = _scene_dir(content)
    try:
        frames = _first_frame(content)
        if frames is None:
            return
        validated, _, _ = _run("validate", root / "scene.json", "--frames", frames)
        before = _listing(root)
        code, _, err = _run("bake", root / "scene.json", "--out", root / "cache", "--frames", frames, "--quiet")
        event(f"bake exit {code}")
        _assert_clean_outcome(code, err)
        if code == 2:
            assert _listing(root) == before, "a refused bake must not write anything"
        else:
            assert (root / "cache" / "manifest.json").exists()
        assert code == validated, f"validate exit {validated}, bake exit {code}: {err}"
    finally:
        shutil.rmtree(root)


def _first_frame(content: bytes) -> str | None:
    """``A-A`` for the scene's frame_start when it has a usable one (the bake then simulates nothing)."""
    try:
        start = json.loads(content).get("frame_start", 1)
    except (ValueError, AttributeError, RecursionError):
        return "1-1"
    if isinstance(start, int) and not isinstance(start, bool) and abs(start) < 10**6:
        return f"{start}-{start}"
    return None


def test_the_fuzzers_reach_both_outcomes():
    """The strategies are not vacuous: fixed samples include scenes that pass and scenes that are refused."""
    codes = []
    for content in (json.dumps(BASES["jelly_drop"]).encode(), b"{", json.dumps(BASES["meshes"]).encode(),
                    json.dumps(BASES["every_field"]).encode()):
        root = _scene_dir(content)
        try:
            codes.append(run_main("validate", root / "scene.json")[0])
        finally:
            shutil.rmtree(root)
    assert codes == [0, 2, 0, 0]
    assert os.path.isdir(SCENES)


# -- cache files ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def baked_cache(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz_cache")
    (root / "scene.json").write_text(json.dumps(scene_dict(frame_end=2)))
    code, _, err = run_main("bake", root / "scene.json", "--out", root / "cache", "--quiet")
    assert code == 0, err
    code, _, err = run_main("mesh", root / "cache", "--frames", "2-2", "--quiet")
    assert code == 0, err
    return root


_CACHE_FILES = ("manifest.json", "scene.json", "particles/particles_0002.ply", "state/checkpoint_0002.npz",
                "surface/surface_0002.ply")


def _replay(cache: Path) -> tuple[int, str, str]:
    """What Blender's replay reads of a cache, through the core (``blender/replay/frames.py``): the frames' PLY
    files and the stored scene. Its only refusals are ``PlyError`` and ``InputError`` (exit 2 here)."""
    from sph_addon.core.cache.jsonfile import read_json
    from sph_addon.core.cache.plyio import PlyError, read_ply
    from sph_addon.core.errors import InputError

    try:
        for path in (cache / "particles" / "particles_0002.ply", cache / "surface" / "surface_0002.ply"):
            data = read_ply(path)
            faces = data.faces
            assert not faces.size or 0 <= faces.min() <= faces.max() < len(data.vertices)
        read_json(cache / "scene.json", "stored scene")
    except (PlyError, InputError) as exc:
        return 2, "", f"error: {str(exc).splitlines()[0]}\n"
    return 0, "", ""


@st.composite
def damaged_file(draw, original: bytes) -> bytes:
    kind = draw(st.sampled_from(("cut", "flip", "insert", "json")))
    if kind == "json":
        try:
            data = json.loads(original)
        except ValueError:
            kind = "cut"
        else:
            slots = _slots(data)
            container, key = draw(st.sampled_from(slots))
            container[key] = draw(_hostile)
            return json.dumps(data).encode()
    at = draw(st.integers(0, max(0, len(original) - 1)))
    if kind == "cut":
        return original[:at]
    byte = bytes([draw(st.integers(0, 255))])
    if kind == "flip":
        return original[:at] + byte + original[at + 1:]
    return original[:at] + byte + original[at:]


@settings(FUZZ, max_examples=150 * SCALE)
@given(data=st.data())
def test_commands_survive_any_damaged_cache(baked_cache, data):
    name = data.draw(st.sampled_from(_CACHE_FILES))
    root = Path(tempfile.mkdtemp(prefix="sph_fuzz_cache_"))
    try:
        shutil.copy(baked_cache / "scene.json", root / "scene.json")
        shutil.copytree(baked_cache / "cache", root / "cache")
        target = root / "cache" / name
        target.write_bytes(data.draw(damaged_file(target.read_bytes())))
        command = data.draw(st.sampled_from(("info", "preview", "resume", "mesh", "replay")))
        args = {"info": ("info", root / "cache"),
                "preview": ("preview", root / "cache", "--frames", "2-2", "--out", root / "p.png"),
                "resume": ("bake", root / "scene.json", "--out", root / "cache", "--resume", "--quiet"),
                "mesh": ("mesh", root / "cache", "--frames", "2-2", "--quiet"),
                "replay": ()}[command]
        before = _listing(root)
        code, _, err = _replay(root / "cache") if command == "replay" else _run(*args)
        event(f"{command} exit {code}")
        if command == "mesh" and code == 2:
            assert "Traceback" not in err  # per-frame failures are one line each, then the summary
            return
        _assert_clean_outcome(code, err)
        if code == 2:
            assert _listing(root) == before, "a refused command must not write anything"
    finally:
        shutil.rmtree(root)
