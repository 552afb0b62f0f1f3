"""docs/adding_a_model.md's example, taken from the page as a newcomer would copy it.

Shared by tests/core/test_adding_a_model.py (the core, ``sph_addon.core``) and
tests/blender/test_adding_a_model.py (the enabled extension's copy of the core): the page's files go to
a temporary folder joined to the search path of the package each belongs in, its import line is run
in the models' package and its registry line (the dict entry it shows) is applied through
``models.register``, with the checks a built-in model has. Nothing in the checkout is edited.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

PAGE = Path(__file__).resolve().parents[1] / "docs" / "adding_a_model.md"
# The example's files, as the page names them (a label line "`path`:" above each code block).
FILES = ("sph_addon/core/terms/linear_drag_stokes1851.py", "sph_addon/core/terms/linear_drag_stokes1851_kernels.py",
         "sph_addon/core/models/drag_stokes1851.py")


def code_after(text: str, label: str) -> str:
    """The first ```python block after the first line that starts with ``label``."""
    at = re.compile(rf"^{re.escape(label)}", re.M).search(text)
    assert at, f"the page has no line starting with {label!r}"
    match = re.compile(r"```python\n(.*?)```", re.S).search(text, at.end())
    assert match, f"no code block after {label!r}"
    return match.group(1)


def example() -> tuple[dict[str, str], str, str]:
    """(path -> code of each of the example's files, its import line, its registry line), from the page."""
    text = PAGE.read_text(encoding="utf-8").split("## Example", 1)[1]
    files = {path: code_after(text, f"`{path}`:") for path in FILES}
    return files, code_after(text, "The import").strip(), code_after(text, "The registry line")


@contextmanager
def page_model(core: ModuleType, folder: Path) -> Iterator[type]:
    """The page's example added to ``core`` (the package ``sph_addon.core``, or the extension's copy of
    it): its files written under ``folder`` and joined to the ``terms`` and ``models`` packages' search
    paths, its model registered; all undone on exit. Yields the model class."""
    files, import_line, registry_line = example()
    packages = {name: importlib.import_module(f"{core.__name__}.{name}") for name in ("terms", "models")}
    added_paths, registered, modules = [], [], []
    try:
        for path, code in files.items():
            package = path.split("/")[-2]
            where = folder / package
            where.mkdir(parents=True, exist_ok=True)
            (where / path.rsplit("/", 1)[1]).write_text(code, encoding="utf-8")
            modules.append(f"{packages[package].__name__}.{Path(path).stem}")
            if str(where) not in packages[package].__path__:
                packages[package].__path__.append(str(where))
                added_paths.append((packages[package], str(where)))
        # The import line, as it would run in models/__init__.py.
        match = re.fullmatch(r"from \.(\w+) import (\w+)", import_line)
        assert match, f"the page's import line is not 'from .module import Class': {import_line!r}"
        module = importlib.import_module(f".{match.group(1)}", packages["models"].__name__)
        names = {match.group(2): getattr(module, match.group(2))}
        entries = eval("{" + registry_line + "}", names)  # the page's dict entry
        for model in entries.values():
            registered.append(packages["models"].register(model).name)
        yield next(iter(entries.values()))
    finally:
        for name in registered:
            packages["models"].unregister(name)
        for package, path in added_paths:
            package.__path__.remove(path)
        for name in modules:
            sys.modules.pop(name, None)
