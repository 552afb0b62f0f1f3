"""Declared parameters: one description from which the scene-file validation,
the documentation (``docs/scene_format.md``) and the Blender UI are generated.

A material model, a collider, a source or the surface stage declares its
settings as a tuple of :class:`Parameter`; :func:`resolve` turns a user's JSON
object into a plain dict of checked values, raising :class:`InputError` with the
JSON path of the first bad field.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from ..numerics import config


@dataclass(frozen=True)
class Parameter:
    """One user-facing setting.

    Attributes
    ----------
    name : key in the scene file (snake_case).
    default : value when the key is absent; its Python type sets the kind
        (float, int, bool, str, or a tuple of 3 floats for a vector).
    unit : SI unit as text ("m", "s", "1/s", "m/s^2", "" for none).
    minimum, maximum : inclusive bounds (numbers only); None for unbounded.
    description : one sentence for tooltips and docs; cite the paper's symbol.
    label : UI label (artist vocabulary); defaults to the name in title case.
    choices : allowed strings for a str parameter.
    """

    name: str
    default: Any
    unit: str = ""
    minimum: float | None = None
    maximum: float | None = None
    description: str = ""
    label: str = ""
    choices: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        d = self.default
        if isinstance(d, bool):
            return "bool"
        if isinstance(d, int):
            return "int"
        if isinstance(d, float):
            return "float"
        if isinstance(d, str):
            return "choice" if self.choices else "str"
        if isinstance(d, tuple) and len(d) == 3:
            return "vector"
        raise TypeError(f"parameter {self.name}: unsupported default {d!r}")

    @property
    def ui_label(self) -> str:
        return self.label or self.name.replace("_", " ").title()

    def check(self, value: Any, where: str) -> Any:
        """Return ``value`` converted to this parameter's kind, or raise InputError at ``where``."""
        kind = self.kind
        if kind == "bool":
            if not isinstance(value, bool):
                raise InputError(where, f"expected true or false, got {_show(value)}")
            return value
        if kind == "str" or kind == "choice":
            if not isinstance(value, str):
                raise InputError(where, f"expected a string, got {_show(value)}")
            if self.choices and value not in self.choices:
                raise InputError(where, f"unknown value {_show(value)}; choose one of {', '.join(self.choices)}")
            return value
        if kind == "vector":
            if not isinstance(value, (list, tuple)) or len(value) != 3:
                raise InputError(where, f"expected a list of 3 numbers, got {_show(value)}")
            return tuple(self._number(v, f"{where}[{k}]", float) for k, v in enumerate(value))
        return self._number(value, where, int if kind == "int" else float)

    def _number(self, value: Any, where: str, typ: type) -> float | int:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputError(where, f"expected a number, got {_show(value)}")
        if typ is int and not float(value).is_integer():
            raise InputError(where, f"expected a whole number, got {_show(value)}")
        if not math.isfinite(value):
            got = "a number too large for a 64-bit float" if math.isinf(value) else _show(value)
            raise InputError(where, f"must be a finite number, got {got}")
        if abs(value) > config.MAX_MAGNITUDE and (self.maximum is None or self.minimum is None):
            # Unbounded fields still get a bound: products of such values (volumes, particle counts,
            # lattice indices) must stay finite floats and fit the integers they are turned into.
            raise InputError(where, f"must be between -{config.MAX_MAGNITUDE:g} and {config.MAX_MAGNITUDE:g}"
                                    f"{_unit(self.unit)}, got {_show(value)}")
        if self.minimum is not None and value < self.minimum:
            raise InputError(where, f"must be at least {self.minimum:g}{_unit(self.unit)}, got {_show(value)}")
        if self.maximum is not None and value > self.maximum:
            raise InputError(where, f"must be at most {self.maximum:g}{_unit(self.unit)}, got {_show(value)}")
        return typ(value)


def check_name(value: Any, names, where: str, what: str) -> str:
    """``value`` if it is one of ``names`` (a registry's keys), else InputError at ``where``.

    The type is checked first: a list or an object where a name is expected must get the
    same sentence as a misspelt name, not a TypeError from the registry lookup.
    """
    if not isinstance(value, str) or value not in names:
        raise InputError(where, f"unknown {what} {_show(value)}; available: {', '.join(names)}")
    return value


def _unit(unit: str) -> str:
    return f" {unit}" if unit else ""


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 40 else text[:37] + "..."


def resolve(params: Iterable[Parameter], data: Mapping[str, Any] | None, where: str,
            base: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Check ``data`` against ``params``; absent keys take ``base`` then the default.

    Unknown keys are an error (a typo must not silently fall back to a default).
    """
    params = tuple(params)
    data = {} if data is None else data
    if not isinstance(data, Mapping):
        raise InputError(where, f"expected an object, got {_show(data)}")
    known = {p.name: p for p in params}
    for key in data:
        if key not in known:
            raise InputError(f"{where}.{key}", f"unknown field; known fields: {', '.join(sorted(known))}")
    out: dict[str, Any] = {}
    for p in params:
        if p.name in data:
            out[p.name] = p.check(data[p.name], f"{where}.{p.name}")
        elif base is not None and p.name in base:
            out[p.name] = base[p.name]
        else:
            out[p.name] = p.default
    return out


_PY_TYPES = {"bool": bool, "int": int, "float": float, "str": str, "choice": str, "vector": tuple}


def make_params_class(class_name: str, params: Iterable[Parameter], doc: str = "") -> type:
    """A frozen dataclass with one field per declared parameter (same name, default, kind).

    The declarations stay the one place for name, unit, range, default and
    description: the class is generated from them, its docstring lists the
    units, and :func:`typed` fills it from a resolved dict. Models receive
    their materials' values as instances of it, never as string-keyed dicts.
    """
    params = tuple(params)
    fields = [(p.name, _PY_TYPES[p.kind], dataclasses.field(default=p.default)) for p in params]
    lines = [doc or f"Parameters of {class_name}.", "", "Attributes", "----------"]
    lines += [f"{p.name} : {p.kind}{f' [{p.unit}]' if p.unit else ''}: {p.description}" for p in params]
    cls = dataclasses.make_dataclass(class_name, fields, frozen=True)
    cls.__doc__ = "\n".join(lines)
    cls.declared = params
    return cls


def typed(cls: type, values: Mapping[str, Any]):
    """An instance of a :func:`make_params_class` class from a resolved dict (unknown keys are a bug)."""
    return cls(**{p.name: values[p.name] for p in cls.declared})
