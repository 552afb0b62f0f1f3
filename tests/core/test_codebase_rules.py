"""Rules the codebase keeps (DESIGN.md section 2, STYLE.md conventions 4 and 8)."""

import re
import subprocess
import sys

from conftest import REPO

CORE = REPO / "sph_addon" / "core"
PACKAGE_FILES = sorted((REPO / "sph_addon").rglob("*.py"))


def _core_modules() -> list[str]:
    mods = []
    for p in sorted(CORE.rglob("*.py")):
        rel = p.relative_to(REPO).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods.append(".".join(parts))
    return mods


def test_core_never_imports_bpy():
    """Import every core module in a fresh interpreter: bpy, bmesh and mathutils stay unloaded."""
    code = ("import importlib, sys\n"
            f"for m in {_core_modules()!r}:\n"
            "    importlib.import_module(m)\n"
            "bad = [m for m in ('bpy', 'bmesh', 'mathutils') if m in sys.modules]\n"
            "print(len(sys.modules)); assert not bad, bad\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_light_modules_do_not_import_numba():
    """Scene, parameters, registries, cache and surface settings load without numba (Blender's register())."""
    code = ("import sys\n"
            "import sph_addon.core.scene.scene_file, sph_addon.core.cache.cache_dir, sph_addon.core.models\n"
            "import sph_addon.core.colliders\n"
            "import sph_addon.core.surface.settings, sph_addon.core.scene.schema_doc\n"
            "assert 'numba' not in sys.modules, 'numba imported eagerly'\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_package_imports_itself_relatively():
    """Blender loads the package as bl_ext.<repo>.sph_addon.sph_addon: absolute self-imports would break."""
    offenders = []
    for p in PACKAGE_FILES:
        for n, line in enumerate(p.read_text().splitlines(), 1):
            if re.match(r"\s*(from|import) sph_addon\b", line):
                offenders.append(f"{p.relative_to(REPO)}:{n}")
    assert not offenders, offenders


def test_numba_options_come_from_config():
    """No hard-coded fastmath/parallel/cache/nogil in decorators (STYLE.md convention 4)."""
    offenders = []
    for p in PACKAGE_FILES:
        if p.name == "config.py":
            continue
        for n, line in enumerate(p.read_text().splitlines(), 1):
            if re.search(r"@(numba\.)?(njit|jit)\(.*(fastmath|parallel|cache|nogil)\s*=", line) or \
                    re.match(r"\s*@(numba\.)?(njit|jit)\s*$", line):
                offenders.append(f"{p.relative_to(REPO)}:{n}: {line.strip()}")
    assert not offenders, offenders


def test_no_pickle_loading():
    offenders = []
    for p in PACKAGE_FILES:
        text = p.read_text()
        if re.search(r"allow_pickle\s*=\s*True|pickle\.loads?\(", text):
            offenders.append(str(p.relative_to(REPO)))
    assert not offenders, offenders


def _cached_njit_reads_of_imported_values() -> list[str]:
    """file:function:name for every cached njit function that reads a value imported from sph_addon.

    A numba disk cache freezes the values of the globals a function reads and is invalidated
    only when that function's own file changes, so a constant imported from another module
    would keep its old value in the cache after an edit there. Names bound by relative
    ``from .x import NAME`` are checked, and ``module.NAME`` reads through an imported sph_addon
    module (``config.REAL``). Modules and callables (other njit functions, classes) are allowed;
    ints, floats, tuples, arrays... are not. Names the function binds itself are local.
    """
    import ast
    import importlib
    import importlib.util
    import inspect

    from sph_addon.core.numerics import config

    def cached_options(dec) -> bool:
        # @njit(**config.X) or @numba.njit(**config.X) where config.X asks for cache=True.
        if not isinstance(dec, ast.Call):
            return False
        name = dec.func.attr if isinstance(dec.func, ast.Attribute) else getattr(dec.func, "id", "")
        if name not in ("njit", "jit"):
            return False
        for kw in dec.keywords:
            if kw.arg is None and isinstance(kw.value, ast.Attribute) and \
                    isinstance(kw.value.value, ast.Name) and kw.value.value.id == "config":
                if getattr(config, kw.value.attr, {}).get("cache"):
                    return True
        return False

    offenders = []
    for path in sorted(CORE.rglob("*.py")):
        rel = path.relative_to(REPO)
        package = ".".join(rel.with_suffix("").parts[:-1])  # __init__.py is its own package too
        tree = ast.parse(path.read_text())
        values = set()
        modules = {}  # name bound to an imported sph_addon module -> the module (``config.X`` reads)
        for node in tree.body:
            if not (isinstance(node, ast.ImportFrom) and node.level > 0):
                continue
            base = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
            for alias in node.names:
                try:  # a submodule (`from .. import config`) or a name defined in the module
                    obj = importlib.import_module(f"{base}.{alias.name}")
                except ModuleNotFoundError:
                    obj = getattr(importlib.import_module(base), alias.name)
                if inspect.ismodule(obj):
                    modules[alias.asname or alias.name] = obj
                elif not callable(obj):
                    values.add(alias.asname or alias.name)
        for fn in ast.walk(tree):
            if not (isinstance(fn, ast.FunctionDef) and any(cached_options(d) for d in fn.decorator_list)):
                continue
            local = {a.arg for a in fn.args.args + fn.args.kwonlyargs + fn.args.posonlyargs}
            local |= {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            read = set()
            for n in (n for stmt in fn.body for n in ast.walk(stmt)):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in values:
                    read.add(n.id)
                elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in modules:
                    obj = getattr(modules[n.value.id], n.attr, None)
                    if not (inspect.ismodule(obj) or callable(obj)):
                        read.add(f"{n.value.id}.{n.attr}")
            offenders += [f"{rel}:{fn.name}:{name}" for name in sorted(read - local)]
    return offenders


def test_cached_kernels_read_no_values_imported_from_other_modules():
    """Cached njit kernels (config.NJIT, config.NJIT_PARALLEL) take such constants as arguments or
    define them in their own file: their disk cache would keep a stale copy (STYLE.md convention 4)."""
    offenders = _cached_njit_reads_of_imported_values()
    assert not offenders, "cached njit functions read imported values (file:function:name): " + ", ".join(offenders)


# Exceptions to the size rules below, each with its reason: "path" or "path:function" -> why.
SIZE_EXCEPTIONS: dict[str, str] = {}
BLENDER = REPO / "sph_addon" / "blender"


def test_no_matrix_product_in_a_substep():
    """numpy hands a matrix product of arrays to the BLAS library, whose worker threads then spin on the
    cores numba's threads need (a substep of the bench's dam break ran 17 % slower, the relaxation
    passes 27 %: BENCHMARKS.md). The modules a substep runs use numba kernels or einsum instead."""
    import ast

    substep = [CORE / name for name in ("sources/outflows.py", "world/simulation.py", "world/neighbors.py",
                                        "world/state.py", "numerics/lattice.py", "world/integrators.py",
                                        "colliders/contact/overlaps.py", "colliders/contact/response.py")]
    for folder in ("models", "terms", "boundary"):
        substep += sorted((CORE / folder).glob("*.py"))
    found = []
    for path in substep:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult) or (
                    isinstance(node, ast.Attribute) and node.attr in ("dot", "matmul", "tensordot")):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not found, found


def test_modules_and_functions_stay_small():
    """Core and Blender-layer modules under ~500 lines, functions under ~80 lines of code (docstrings
    excluded: the kernels' numpydoc blocks are long on purpose); any exception is listed above with its
    reason."""
    import ast

    offenders = []
    for p in sorted(CORE.rglob("*.py")) + sorted(BLENDER.rglob("*.py")):
        rel = str(p.relative_to(REPO))
        src = p.read_text(encoding="utf-8")
        if len(src.splitlines()) > 500 and rel not in SIZE_EXCEPTIONS:
            offenders.append(f"{rel}: {len(src.splitlines())} lines")
        for node in ast.walk(ast.parse(src)):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            body = node.body
            has_doc = isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and len(body) > 1
            start = body[1].lineno if has_doc else body[0].lineno
            length = node.end_lineno - start + 1
            if length > 80 and f"{rel}:{node.name}" not in SIZE_EXCEPTIONS:
                offenders.append(f"{rel}:{node.name}: {length} lines")
    assert not offenders, offenders


def _package_imports() -> dict[str, set[str]]:
    """Every sph_addon module -> the sph_addon modules it imports anywhere in its body (functions
    included; ``if TYPE_CHECKING:`` blocks excepted, they never run)."""
    import ast
    import importlib.util

    files = {}
    for p in PACKAGE_FILES:
        parts = list(p.relative_to(REPO).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        files[".".join(parts)] = (p, is_package)
    graph = {}
    for name, (path, is_package) in files.items():
        package = name if is_package else name.rsplit(".", 1)[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
        found = set()
        for node in ast.walk(tree):
            if id(node) in skipped or not isinstance(node, ast.ImportFrom | ast.Import):
                continue
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name in files}
                continue
            base = importlib.util.resolve_name("." * node.level + (node.module or ""), package) \
                if node.level else node.module
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in files else base)
        graph[name] = (found & files.keys()) - {name}
    return graph


def test_no_import_cycle():
    """No module imports, even lazily inside a function, a module that imports it back by any path: the
    floor plan's rooms stand on one another in one direction (a helper both need goes below both)."""
    graph = _package_imports()
    cycles, done = [], set()

    def visit(name, path):
        if name in path:
            cycles.append(" -> ".join(path[path.index(name):] + [name]))
            return
        if name in done:
            return
        for other in sorted(graph[name]):
            visit(other, path + [name])
        done.add(name)

    for name in sorted(graph):
        visit(name, [])
    assert not cycles, cycles


def test_the_core_stands_in_rooms():
    """At most a dozen modules directly in ``sph_addon/core``; every package's docstring says in its first
    line what it owns (the floor plan of DESIGN.md section 3)."""
    loose = sorted(p.name for p in CORE.glob("*.py"))
    assert len(loose) <= 12, loose
    import ast

    for init in sorted(CORE.rglob("__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc and doc.splitlines()[0].strip(), f"{init.relative_to(REPO)} says nothing of what it owns"


def test_no_project_history_in_code_tests_or_docs():
    """Code, tests, docs and the README say what things do, not which ticket or development round they
    came from: no ticket numbers, no rounds of tuning (CHANGELOG.md and BENCHMARKS.md keep the history)."""
    # Built from pieces so that this file's own text does not match.
    history = re.compile(r"\b[Ii]ssue" r"s? #?\d+|\btuning" r" rounds?\b")
    files = [REPO / "README.md", *(REPO / "docs").rglob("*.md"), *(REPO / "sph_addon").rglob("*"),
             *(REPO / "scripts").rglob("*"),
             *(p for p in (REPO / "tests").rglob("*.py") if "data" not in p.relative_to(REPO / "tests").parts[:1])]
    hits = []
    for path in sorted(set(files)):
        if not path.is_file() or "__pycache__" in path.parts or path.name in ("CHANGELOG.md", "BENCHMARKS.md"):
            continue
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            continue  # binary (images, wheels)
        if "\0" in text:
            continue
        hits += [f"{path.relative_to(REPO)}:{n}: {line.strip()}"
                 for n, line in enumerate(text.splitlines(), 1) if history.search(line)]
    assert not hits, "project history in code, tests or docs (it belongs in CHANGELOG.md):\n" + "\n".join(hits)
