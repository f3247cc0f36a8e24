"""Imports point one way: app_pages -> ui -> core, core/figures -> core; plotly only in
core/figures; no module imports itself in a circle (product and bench/). Read from every module's
source, local (function-level) imports included, in every package (rglob). No product folder holds
more than MAX_MODULES modules at its top level; importing core leaves torch unloaded."""
from __future__ import annotations

import ast
import subprocess
import sys

from helpers import ROOT

PRODUCT = ["app.py", "ui", "app_pages", "core"]
MAX_MODULES = 15       # modules at a folder's top level (its __init__.py not counted)


def module_name(path) -> str:
    relative = path.relative_to(ROOT).with_suffix("")
    parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
    return ".".join(parts)


def imports_of(path) -> set[str]:
    """Every module a file imports (absolute names, as written; `__import__("x")` included)."""
    imported = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            imported.add(node.module)
            imported.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__"
              and node.args and isinstance(node.args[0], ast.Constant)):
            imported.add(node.args[0].value)
    return imported


def product_modules() -> dict[str, set[str]]:
    """module -> every module it imports (absolute names, as written)."""
    files = [ROOT / "app.py"] + [p for folder in PRODUCT[1:] for p in sorted((ROOT / folder).rglob("*.py"))]
    return {module_name(path): imports_of(path) for path in files}


def bench_modules() -> dict[str, set[str]]:
    """bench/'s scripts import each other by their bare names (bench/ is on the path)."""
    return {path.stem: imports_of(path) for path in sorted((ROOT / "bench").glob("*.py"))}


def layer(module: str) -> str:
    if module == "app":
        return "app"
    return module.split(".")[0]


def test_every_import_points_the_right_way():
    wrong = []
    for module, imported in product_modules().items():
        for name in imported:
            top = name.split(".")[0]
            if layer(module) == "core" and top in ("streamlit", "ui", "app_pages", "app"):
                wrong.append((module, name))
            if layer(module) == "ui" and top in ("app_pages", "app"):
                wrong.append((module, name))
            if top == "plotly" and not module.startswith("core.figures"):
                wrong.append((module, name))
    assert wrong == []


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    known = set(graph)
    edges = {module: {name for name in imported if name in known and name != module}
             for module, imported in graph.items()}
    cycles = []

    def visit(module, trail):
        for target in edges[module]:
            if target in trail:
                cycles.append(trail[trail.index(target):] + [target])
            elif len(trail) < 12:
                visit(target, trail + [target])

    for start in edges:
        visit(start, [start])
    return cycles


def test_no_module_imports_itself_in_a_circle():
    cycles = circles(product_modules())
    assert cycles == [], sorted({" -> ".join(c) for c in cycles})[:5]


def test_no_bench_script_imports_itself_in_a_circle():
    graph = bench_modules()
    assert {"run", "hidden", "why"} <= set(graph)
    cycles = circles(graph)
    assert cycles == [], sorted({" -> ".join(c) for c in cycles})[:5]


def folder_sizes() -> dict[str, int]:
    """product folder -> how many modules sit at its top level (its __init__.py not counted)."""
    folders = [ROOT / folder for folder in PRODUCT[1:]]
    folders += [d for folder in PRODUCT[1:] for d in (ROOT / folder).rglob("*") if d.is_dir()
                and d.name != "__pycache__"]
    return {str(d.relative_to(ROOT)): len([p for p in d.glob("*.py") if p.name != "__init__.py"])
            for d in folders if any(d.glob("*.py"))}


def test_no_product_folder_holds_more_than_fifteen_modules():
    sizes = folder_sizes()
    assert {"core", "core/figures", "core/figures/models", "ui", "app_pages", "core/models", "ui/why"} <= set(sizes)
    assert {folder: n for folder, n in sizes.items() if n > MAX_MODULES} == {}      # no folder excepted


def test_importing_core_leaves_torch_unloaded():
    """Start-up stays light: torch (and transformers) load inside the functions that need them."""
    code = ("import sys, core, core.limits, core.tables, core.settings\n"
            "print(sorted(m for m in ('torch', 'transformers', 'streamlit') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_check_sees_a_wrong_import(tmp_path, monkeypatch):
    """The checks above can fail: a core module that imports streamlit is caught."""
    fake_root = tmp_path
    (fake_root / "core").mkdir()
    (fake_root / "ui").mkdir()
    (fake_root / "app_pages").mkdir()
    (fake_root / "app.py").write_text("import ui.a\n")
    (fake_root / "core" / "bad.py").write_text("def f():\n    import streamlit\n")
    (fake_root / "ui" / "a.py").write_text("import ui.b\n")
    (fake_root / "ui" / "b.py").write_text("from ui import a\n")
    monkeypatch.setattr(__import__(__name__), "ROOT", fake_root)
    graph = product_modules()
    assert "streamlit" in graph["core.bad"]
    try:
        test_every_import_points_the_right_way()
    except AssertionError:
        pass
    else:
        raise AssertionError("a core module importing streamlit was not caught")
    try:
        test_no_module_imports_itself_in_a_circle()
    except AssertionError:
        return
    raise AssertionError("ui.a -> ui.b -> ui.a was not caught")


def test_the_checks_see_into_packages(tmp_path, monkeypatch):
    """A module deep in a package is read too: an upward import, a circle and a crowded folder are caught."""
    (tmp_path / "core" / "maps").mkdir(parents=True)
    (tmp_path / "ui" / "why").mkdir(parents=True)
    (tmp_path / "app_pages").mkdir()
    (tmp_path / "app.py").write_text("")
    (tmp_path / "core" / "maps" / "bad.py").write_text("from ui.why import page\n")
    (tmp_path / "ui" / "why" / "page.py").write_text("from ui.why import layers\n")
    (tmp_path / "ui" / "why" / "layers.py").write_text("import ui.why.page\n")
    for i in range(MAX_MODULES + 1):
        (tmp_path / "ui" / "why" / f"m{i}.py").write_text("")
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    graph = product_modules()
    assert "ui.why.page" in graph["core.maps.bad"]
    assert circles(graph) != []
    assert folder_sizes()["ui/why"] == MAX_MODULES + 3
    try:
        test_every_import_points_the_right_way()
    except AssertionError:
        return
    raise AssertionError("core.maps.bad importing ui.why.page was not caught")
