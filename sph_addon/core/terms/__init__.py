"""The terms the material models are made of: one method from one paper per file, its numba kernels
beside it (``<method>_<author><year>.py`` and ``..._kernels.py``), on the contract of ``base.py``.

Every other file here is a helper of one term, ``<term>_<what>.py`` (and its ``_kernels``), whose
docstring's first line names the term it serves and the paper it implements
(``pressure_projection_zhu2005_ghost_fluid``, ``relaxation_clavet2005_chebyshev``).

A model (``core.models``) lists the terms it is made of; a second model reuses a term by listing it.
"""

from __future__ import annotations

import importlib
import pkgutil

from .base import Term


def all_terms() -> list[type[Term]]:
    """Every term class in this package, by file name (imports the term modules, not their kernels)."""
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name == "base" or info.name.endswith("_kernels"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        found += [obj for obj in vars(module).values()
                  if isinstance(obj, type) and issubclass(obj, Term) and obj.__module__ == module.__name__
                  and obj.name]
    return found
