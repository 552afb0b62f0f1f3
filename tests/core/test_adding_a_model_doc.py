"""docs/adding_a_model.md stays true: its paths exist, its table of terms is the code's, the files it
says a newcomer touches are the example's, and every registered model follows its checklist."""

import ast
import re

from adding_a_model_page import FILES
from conftest import REPO

from sph_addon.core.models import SOLVERS
from sph_addon.core.models.base import MaterialModel
from sph_addon.core.numerics.kernels import KERNELS
from sph_addon.core.scene.schema_doc import scene_format_markdown, with_terms_table
from sph_addon.core.world.integrators import INTEGRATORS

DOC = REPO / "docs" / "adding_a_model.md"


def test_every_path_the_checklist_names_exists():
    # The example's files are written by tests/adding_a_model_page.py, not kept in the package.
    text = DOC.read_text(encoding="utf-8").split("## Example")[0]
    paths = set(re.findall(r"`((?:sph_addon|tests|docs|scripts)/[^`<>*\s]+)`", text))
    assert len(paths) > 8, "the checklist must point at real files"
    missing = sorted(p for p in paths if not (REPO / p).exists())
    assert not missing, missing
    for scheme in INTEGRATORS:
        assert f"`{scheme}`" in text, f"the checklist does not mention the {scheme!r} scheme"


def test_the_table_of_terms_is_the_code_s():
    """The page's table of terms is generated from the terms' modules, like docs/scene_format.md."""
    text = DOC.read_text(encoding="utf-8")
    assert text == with_terms_table(text), "run: python -m sph_addon schema --terms docs/adding_a_model.md"


def test_the_files_a_newcomer_touches_are_the_example_s():
    """The page's list of the files a new model touches names each file of its example (by the list's
    pattern), the registry and the docs; no file in sph_addon/blender/ or sph_addon/core/scene/."""
    section = DOC.read_text(encoding="utf-8").split("## The files you touch")[1].split("\n## ")[0]
    listed = re.findall(r"^\| `([^`]+)` \|", section, re.M)
    patterns = [re.escape(p).replace(re.escape("<method>_<author><year>"), r"[a-z_]+_[a-z]+\d{4}").replace(
        re.escape("<family>_<author><year>"), r"[a-z_]+_[a-z]+\d{4}").replace(re.escape("<name>"), r"\w+")
        for p in listed]
    for path in FILES:
        assert sum(bool(re.fullmatch(p, path)) for p in patterns) == 1, f"{path} is not one of the page's files"
    assert {"sph_addon/core/models/__init__.py", "docs/scene_format.md", "docs/materials.md",
            "docs/adding_a_model.md"} <= set(listed)
    assert not [p for p in listed if p.startswith(("sph_addon/blender/", "sph_addon/core/scene/"))]


def test_the_registry_line_in_the_checklist_is_the_code_s():
    code = (REPO / "sph_addon/core/models/__init__.py").read_text(encoding="utf-8")
    assert "ViscoelasticModel.name: ViscoelasticModel," in code
    assert "ViscoelasticModel.name: ViscoelasticModel," in DOC.read_text(encoding="utf-8")


def test_every_registered_model_follows_the_checklist():
    doc = (REPO / "docs" / "scene_format.md").read_text(encoding="utf-8")
    for name, model in SOLVERS.items():
        assert issubclass(model, MaterialModel) and model.name == name
        module = REPO / (model.__module__.replace(".", "/") + ".py")
        assert re.fullmatch(r"[a-z_]+_[a-z]+\d{4}\.py", module.name), module.name
        docstring = ast.get_docstring(ast.parse(module.read_text(encoding="utf-8")))
        assert docstring and re.search(r"\d{4}", docstring.splitlines()[0]), "module docstring cites the paper"
        assert model.citation and model.description and model.presets, name
        assert model.integrator in INTEGRATORS, name
        assert list((REPO / "tests" / "core").glob(f"test_{name}*.py")), f"no tests/core/test_{name}*.py"
        assert f"### model `{name}`" in doc
        for p in model.parameters:
            assert p.description, f"{name}.{p.name} has no description"


def test_scene_format_doc_is_regenerated():
    text = (REPO / "docs" / "scene_format.md").read_text(encoding="utf-8")
    assert text == scene_format_markdown(), "run: python -m sph_addon schema --out docs/scene_format.md"


def test_kernel_registry_entries_cite_a_source():
    assert {"clavet_density", "clavet_near", "cubic_spline", "poly6", "spiky", "desbrun_anticluster"} <= set(KERNELS)
