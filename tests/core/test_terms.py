"""The terms the models are made of: each names its paper, none reaches into a model, none is switched
by a module global, and a model's terms read only parameters the model declares."""

from __future__ import annotations

import ast
import re
import sys

import pytest
from conftest import REPO

from sph_addon.core.models import SOLVERS
from sph_addon.core.terms import all_terms
from sph_addon.core.terms.base import POSITION, VELOCITY

CORE = REPO / "sph_addon" / "core"
TERMS = all_terms()


def _source(module: str) -> str:
    return (REPO / (module.replace(".", "/") + ".py")).read_text(encoding="utf-8")


def test_every_term_and_the_paper_its_file_cites():
    """The list printed here is the product's: term, stage, the paper (first line of its module)."""
    assert {t.name for t in TERMS} >= {"xsph_monaghan1989", "surface_tension_brackbill1992", "viscosity_weiler2018",
                                       "viscosity_clavet2005", "yield_papanastasiou1987", "springs_clavet2005",
                                       "pressure_projection_zhu2005", "relaxation_clavet2005",
                                       "density_pressure_desbrun1996", "artificial_viscosity_monaghan1992",
                                       "viscosity_morris1997"}
    for term in TERMS:
        file = term.__module__.rsplit(".", 1)[1]
        assert term.name == file, f"{term.__name__} is in {file}.py but named {term.name!r}"
        year = re.fullmatch(r"[a-z_]+_[a-z]+(\d{4})", file)
        assert year, f"{file}.py: not <method>_<author><year>"
        first = ast.get_docstring(ast.parse(_source(term.__module__))).splitlines()[0]
        assert year.group(1) in first, f"{file}.py's first docstring line does not cite the {year.group(1)} paper"
        assert year.group(1) in term.citation, term.name
        assert term.stage in (VELOCITY, POSITION), term.name
        print(f"{term.name:32s} {term.stage:9s} {term.citation}", file=sys.stderr)


def test_every_file_in_terms_is_a_term_its_kernels_or_a_helper_of_one_term():
    """A file in ``terms/`` is a term (``<method>_<author><year>.py``), the kernels of one
    (``<term>_kernels.py``), or a helper of one term (``<term>_<what>.py``, its ``_kernels`` beside it)
    whose first docstring line names the term it serves and the year of the paper it implements: no
    file is named like a term without being one."""
    names = {t.name for t in TERMS}
    folder = CORE / "terms"
    for path in sorted(folder.glob("*.py")):
        stem = path.stem
        if stem in ("__init__", "base") or stem in names:
            continue
        module = stem.removesuffix("_kernels")
        assert (folder / f"{module}.py").exists(), f"{path.name}: the kernels of no module"
        if module in names:
            continue
        owners = [n for n in names if module.startswith(n + "_")]
        assert len(owners) == 1, f"{path.name}: not a term, its kernels, nor a helper <term>_<what>.py of one term"
        first = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))).splitlines()[0]
        assert f"``{owners[0]}``" in first, f"{path.name}'s first docstring line does not name its term {owners[0]}"
        assert re.search(r"\b(19|20)\d{2}\b", first), f"{path.name}'s first docstring line cites no paper's year"


def test_the_sph_pair_forces_are_terms_that_share_one_loop():
    """Monaghan's artificial viscosity and Morris' viscosity are terms of their own, summed in the pair loop of
    ``density_pressure_desbrun1996`` (one running sum, so the bakes keep their bytes): the loop takes their
    coefficients per material, 0 where no term gives one, and neither can be listed without the loop."""
    from sph_addon.core.models.base import ModelSetup
    from sph_addon.core.terms.artificial_viscosity_monaghan1992 import ArtificialViscosityMonaghan1992
    from sph_addon.core.terms.density_pressure_desbrun1996 import DensityPressureDesbrun1996
    from sph_addon.core.terms.viscosity_morris1997 import ViscosityMorris1997

    cls = SOLVERS["sph"]
    setup = ModelSetup(0.02, 0.04, 2, {1: cls.Params(artificial_viscosity=0.7, kinematic_viscosity=2e-3)})
    loop = cls(setup).term("density_pressure_desbrun1996")
    assert loop.alpha.tolist() == [0.0, 0.7] and loop.nu.tolist() == [0.0, 2e-3]
    alone = DensityPressureDesbrun1996(setup)
    alone.link([alone])
    assert not alone.alpha.any() and not alone.nu.any()
    for term in (ArtificialViscosityMonaghan1992, ViscosityMorris1997):
        with pytest.raises(TypeError, match="density_pressure_desbrun1996"):
            term(setup).link([term(setup)])


def _imports(path) -> list[str]:
    """Absolute module names imported by the file at ``path`` (relative imports resolved)."""
    package = ".".join(path.relative_to(REPO).with_suffix("").parts[:-1])
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[:len(base) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module
            out += [name] + [f"{name}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names]
    return out


@pytest.mark.parametrize("folder", ["terms", "boundary"])
def test_no_term_or_boundary_module_imports_a_model(folder):
    """Terms and the boundary are shared by every model: they import no model module (``solvers``)."""
    for path in sorted((CORE / folder).glob("*.py")):
        bad = [m for m in _imports(path) if m.startswith("sph_addon.core.models")]
        assert not bad, f"{path.name} imports {bad}"


def test_no_model_imports_another_model_s_internals():
    """A model's modules import the terms, the contract and their own parameters and presets, never the
    module of another model."""
    own = {name: model.__module__ for name, model in SOLVERS.items()}
    shared = {"sph_addon.core.models", "sph_addon.core.models.base", "sph_addon.core.models.presets"}
    for name, module in own.items():
        path = REPO / (module.replace(".", "/") + ".py")
        mine = {module, module + "_parameters", module + "_kernels"}
        for imported in _imports(path):
            if imported.startswith("sph_addon.core.models.") and imported.count(".") == 3:
                assert imported in shared | mine, f"model {name} imports {imported}"


@pytest.mark.parametrize("folder", ["terms", "boundary", "models"])
def test_no_module_global_switches_a_term(folder):
    """Which terms act on which materials is data (a parameter's value): no module of the terms, the
    boundary or the models binds a name to True or False at module level (the old ``ENABLED``)."""
    for path in sorted((CORE / folder).glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Constant) \
                    and isinstance(node.value.value, bool):
                target = node.targets[0] if isinstance(node, ast.Assign) else node.target
                pytest.fail(f"{path.name}: module global {ast.unparse(target)} = {node.value.value}")


def test_a_model_declares_every_parameter_its_terms_read():
    for name, model in SOLVERS.items():
        declared = {p.name for p in model.parameters}
        for term in model.terms:
            assert set(term.parameters) <= declared, (name, term.name)
        assert model.density in declared, name


def test_which_materials_a_term_acts_on_is_a_parameter_with_none():
    """The pressure projection, formerly chosen by a viscosity threshold, is a material's choice; the
    presets set it as the threshold chose (the thin liquids project, the others do not)."""
    model = SOLVERS["viscoelastic"]
    choice = next(p for p in model.parameters if p.name == "pressure_projection")
    assert "none" in choice.choices and choice.default == "grid"
    for preset, values in model.presets.items():
        thin = (values.get("kinematic_viscosity", 0.0) <= 1.5e-3 and not values.get("yield_stress")
                and values.get("springs", "none") == "none")
        assert values.get("pressure_projection", choice.default) == ("grid" if thin else "none"), preset


def test_the_kernel_cache_folder_changes_with_any_kernel_source(tmp_path):
    """Numba checks only a kernel's own file; the cache folder is keyed by every kernel module's source,
    so an edit to a helper that other kernels inline (pair_kernels) gives them a new folder."""
    import shutil

    from sph_addon.core.numerics import kernel_cache

    for name in ("pair_kernels.py", "lattice.py"):
        shutil.copy(CORE / "numerics" / name, tmp_path / name)
    before = kernel_cache.sources_digest(tmp_path)
    (tmp_path / "lattice.py").write_text((CORE / "numerics" / "lattice.py").read_text() + "\n# not a kernel module\n")
    assert kernel_cache.sources_digest(tmp_path) == before
    (tmp_path / "pair_kernels.py").write_text((CORE / "numerics" / "pair_kernels.py").read_text() + "\n# edited\n")
    assert kernel_cache.sources_digest(tmp_path) != before
    assert kernel_cache.cache_dir().endswith(f"kernels-{kernel_cache.sources_digest()}")


def test_each_term_keeps_its_own_state_and_an_older_flat_record_still_loads():
    """Checkpoints keep each term's state under its name; one written before the terms kept one flat
    record for the model, from which each term reads its keys (a bake made by 0.1.0 before the terms
    resumes with the same substep plan)."""
    from sph_addon.core.models.base import ModelSetup

    cls = SOLVERS["viscoelastic"]
    model = cls(ModelSetup(0.05, 0.125, 1, {0: cls.Params()}))
    model.load_state_dict({"last_iterations": 7, "last_dt": 0.01, "projection_dt": 0.02})
    state = model.state_dict()
    assert state == {"pressure_projection_zhu2005": {"projection_dt": 0.02},
                     "relaxation_clavet2005": {"last_iterations": 7, "last_dt": 0.01}}
    again = cls(ModelSetup(0.05, 0.125, 1, {0: cls.Params()}))
    again.load_state_dict(state)
    assert again.state_dict() == state
