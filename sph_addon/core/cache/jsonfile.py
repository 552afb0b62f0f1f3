"""Reading a JSON file the user gave us, with errors that name the file (``InputError``).

Writing goes through ``atomic.write_json``; this is the reading side for files
that must be parsed before they are validated (the bake reads the scene file
here, so that a ``--frames`` override is applied before the one validation).

Every file read here is untrusted (scenes, stored scenes, manifests), so the
decoding is bounded: a size limit, a nesting limit (the C decoder recurses and
``copy.deepcopy`` of the result would too), and integers longer than
:data:`MAX_INT_DIGITS` decoded as floats so that the field's own check names it
("must be at most ...", "must be a finite number") instead of Python's digit
limit raising far from any field. ``NaN`` and ``Infinity`` (not JSON, but
Python writes them) are decoded for the same reason: the field refuses them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import InputError

# A scene lists a few dozen objects; a deforming collider's frame_paths is the largest part
# (one short entry per frame). 64 MiB leaves three orders of magnitude of room.
MAX_JSON_BYTES = 64 * 2**20
# Scenes nest 5 levels (materials[k].params.x); manifests 4. 64 leaves room and keeps every
# recursive walk of the result (deepcopy, json.dump) far from Python's recursion limit.
MAX_JSON_DEPTH = 64
# Beyond 2**63 no field of ours can hold the value: read it as a float for the field's check.
MAX_INT_DIGITS = 19


_TOO_DEEP = object()


def _parse_int(text: str) -> int | float:
    digits = len(text.lstrip("-"))
    return int(text) if digits <= MAX_INT_DIGITS else float(text)


def _depth(value: Any) -> int:
    """Nesting depth of decoded JSON, iteratively (stops counting past MAX_JSON_DEPTH)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (dict, list)):
            deepest = max(deepest, d)
            if deepest > MAX_JSON_DEPTH:
                return deepest
            stack.extend((c, d + 1) for c in (v.values() if isinstance(v, dict) else v))
    return deepest


def parse_json_text(text: str, where: str, what: str) -> Any:
    """Decode JSON ``text`` within the limits above; InputError at ``where`` otherwise."""
    if len(text) > MAX_JSON_BYTES:
        raise InputError(where, f"the {what} is larger than {MAX_JSON_BYTES // 2**20} MiB; "
                                "is it the right file?")
    try:
        data = json.loads(text, parse_int=_parse_int)
    except json.JSONDecodeError as exc:
        raise InputError(where, f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    except RecursionError:
        data = _TOO_DEEP
    if data is _TOO_DEEP or _depth(data) > MAX_JSON_DEPTH:
        raise InputError(where, f"the {what} nests lists or objects more than {MAX_JSON_DEPTH} levels deep; "
                                "is it the right file?")
    return data


def read_json(path: str | Path, what: str) -> Any:
    """The parsed content of ``path``; ``what`` names the file in messages (e.g. "scene file").

    Raises
    ------
    InputError : the file is missing, unreadable, not UTF-8, not valid JSON (with line and
        column), or beyond the limits of the module docstring.
    """
    path = Path(path)
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            raise InputError(str(path), f"the {what} is larger than {MAX_JSON_BYTES // 2**20} MiB; "
                                        "is it the right file?")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(str(path), f"{what} not found") from None
    except OSError as exc:
        raise InputError(str(path), f"cannot read the {what} ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise InputError(str(path), f"the {what} is not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    return parse_json_text(text, str(path), what)


def read_cache_scene(cache_dir: Path) -> tuple[Path, dict]:
    """The scene file a cache was baked from (``DIR/scene.json``) and its JSON object; InputError naming the
    folder or the file when either is unusable."""
    if not cache_dir.is_dir():
        raise InputError(str(cache_dir), "not a directory")
    scene_file = cache_dir / "scene.json"
    if not scene_file.exists():
        raise InputError(str(scene_file), "missing (the cache's scene file)")
    scene = read_json(scene_file, "cache's scene file")
    if not isinstance(scene, dict):
        raise InputError(str(scene_file), "expected a JSON object")
    return scene_file, scene
