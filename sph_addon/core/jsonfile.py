"""Reading a JSON file the user gave us, with errors that name the file (``InputError``).

Writing goes through ``atomic.write_json``; this is the reading side for files
that must be parsed before they are validated (the bake reads the scene file
here, so that a ``--frames`` override is applied before the one validation).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import InputError


def read_json(path: str | Path, what: str) -> Any:
    """The parsed content of ``path``; ``what`` names the file in messages (e.g. "scene file").

    Raises
    ------
    InputError : the file is missing, unreadable or not valid JSON (with line and column).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(str(path), f"{what} not found") from None
    except OSError as exc:
        raise InputError(str(path), f"cannot read the {what} ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise InputError(str(path), f"the {what} is not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(str(path), f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
