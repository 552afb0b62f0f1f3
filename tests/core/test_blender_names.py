"""Names Blender would refuse are refused when a model is registered (core/scene/blender_names.py).

The extension turns every registered model into Blender properties when it registers; a name Blender
refuses there (or accepts and then shadows a group's own member with) must fail at
``solvers.register`` instead, with the model, the parameter and the rule in the message. What
Blender itself does with such names is checked in tests/blender/test_blender_names.py.
"""

import types

import pytest

from sph_addon.core import models as solvers
from sph_addon.core.models.base import MaterialModel
from sph_addon.core.scene import blender_names
from sph_addon.core.scene.params import Parameter


def _model(name="names_test", parameters=(), presets=None):
    """A stand-in declaring only what the check reads (never built or baked): a MaterialModel
    subclass would refuse a keyword or a name starting with a digit itself (its Params dataclass)."""
    return types.SimpleNamespace(name=name, description="a test model", parameters=tuple(parameters),
                                 presets={"default": {}} if presets is None else presets)


def _float(name):
    return Parameter(name, 1.0, "m", 0.0, 10.0, description="a length")


def _register(model):
    try:
        solvers.register(model)
    finally:
        solvers.unregister(model.name)


def test_the_built_in_models_pass():
    for name, model in solvers.SOLVERS.items():
        assert blender_names.model_problems(model, solvers.SOLVERS) == [], name


def test_a_model_with_blender_safe_names_registers():
    """At the limits: a 47-byte model name (a 63-byte class name), a 63-byte parameter, a choice."""
    model = type("EdgeNames", (MaterialModel,), {
        "name": "m" * blender_names.MAX_MODEL_NAME_BYTES, "description": "a test model",
        "parameters": (_float("p" * 63), _float("names"), _float("density"),
                       Parameter("mode", "b", choices=("a", "b"))),
        "presets": {"thick": {}, "thin_2": {}}})
    try:
        assert solvers.register(model) is model
        assert solvers.SOLVERS[model.name] is model
    finally:
        solvers.unregister(model.name)


@pytest.mark.parametrize("parameter, rule", [
    ("_hidden", "starting with a letter"),
    ("2nd", "starting with a letter"),
    ("two words", "ASCII letters, digits and underscores"),
    ("dichte_ü", "ASCII letters, digits and underscores"),
    ("lambda", "Python keyword"),
    ("p" * 64, "at most 63"),
    ("get", "member of Blender's PropertyGroup"),
    ("keys", "member of Blender's PropertyGroup"),
    ("name", "member of Blender's PropertyGroup"),
    ("rna_type", "member of Blender's PropertyGroup"),
    ("bl_rna", "member of Blender's PropertyGroup"),
    ("preset", "already used by the extension"),
])
def test_a_bad_parameter_name_is_refused_naming_model_parameter_and_rule(parameter, rule):
    model = _model(parameters=[_float("fine"), _float(parameter)])
    with pytest.raises(ValueError) as caught:
        _register(model)
    message = str(caught.value)
    assert "'names_test'" in message and repr(parameter) in message and rule in message, message
    assert "names_test" not in solvers.SOLVERS, "a refused model is not registered"


@pytest.mark.parametrize("name, rule", [
    ("model", "already used by the extension"),
    ("initial_velocity", "already used by the extension"),
    ("stiffness", "already used by the extension"),  # a parameter files of layout 1 stored there
    ("rna_type", "member of Blender's PropertyGroup"),
    ("Two-Words", "ASCII letters, digits and underscores"),
    ("m" * (blender_names.MAX_MODEL_NAME_BYTES + 1), "class names hold at most 63 bytes"),
])
def test_a_bad_model_name_is_refused(name, rule):
    with pytest.raises(ValueError, match=rule) as caught:
        _register(_model(name))
    assert repr(name) in str(caught.value)
    assert name not in solvers.SOLVERS


@pytest.mark.parametrize("presets, rule", [
    ({"": {}}, "preset '': its name must be ASCII"),
    ({"extra thick": {}}, "preset 'extra thick'"),
    ({"p3985819": {}, "p4420602": {}}, "presets 'p3985819' and 'p4420602' get the same stored number"),
])
def test_a_bad_preset_name_is_refused(presets, rule):
    with pytest.raises(ValueError, match=rule):
        _register(_model(presets=presets))


@pytest.mark.parametrize("parameter, rule", [
    (Parameter("mode", "a", choices=("a", "b-c")), "parameter 'mode': choice 'b-c'"),
    (Parameter("mode", "p3985819", choices=("p3985819", "p4420602")), "choices 'p3985819' and 'p4420602'"),
    (Parameter("mode", "c", choices=("a", "b")), "its default 'c' is not one of its choices"),
    (Parameter("count", 2**31, "", 0, None), "does not fit Blender's 32-bit integer"),
])
def test_choices_and_defaults_blender_refuses(parameter, rule):
    with pytest.raises(ValueError, match=rule) as caught:
        _register(_model(parameters=[parameter]))
    assert "'names_test'" in str(caught.value)


def test_two_models_whose_names_share_a_stored_number_are_refused():
    solvers.register(_model("p3985819"))
    try:
        with pytest.raises(ValueError, match="the model 'p3985819' get the same stored number"):
            _register(_model("p4420602"))
    finally:
        solvers.unregister("p3985819")


def test_every_problem_is_listed_in_one_message():
    with pytest.raises(ValueError) as caught:
        _register(_model(parameters=[_float("get"), _float("_x")], presets={"a b": {}}))
    message = str(caught.value)
    assert all(part in message for part in ("'get'", "'_x'", "'a b'")), message


def test_stable_numbers_fit_a_signed_int_and_are_never_positions():
    for identifier in ("water", "viscoelastic", "a", "p" * 63):
        assert 2**30 <= blender_names.stable_number(identifier) < 2**31
    assert blender_names.stable_number("water") == blender_names.stable_number("water")
