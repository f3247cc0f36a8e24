"""Imports point one way: app_pages -> ui -> core, core/figures -> core; plotly only in
core/figures; no module imports itself in a circle. Read from every module's source, local
(function-level) imports included."""
from __future__ import annotations

import ast

from helpers import ROOT

PRODUCT = ["app.py", "ui", "app_pages", "core"]


def module_name(path) -> str:
    relative = path.relative_to(ROOT).with_suffix("")
    parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
    return ".".join(parts)


def product_modules() -> dict[str, set[str]]:
    """module -> every module it imports (absolute names, as written)."""
    files = [ROOT / "app.py"] + [p for folder in PRODUCT[1:] for p in sorted((ROOT / folder).rglob("*.py"))]
    graph = {}
    for path in files:
        imported = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported.add(node.module)
                imported.update(f"{node.module}.{alias.name}" for alias in node.names)
        graph[module_name(path)] = imported
    return graph


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


def test_no_module_imports_itself_in_a_circle():
    graph = product_modules()
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
    assert cycles == [], sorted({" -> ".join(c) for c in cycles})[:5]


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
