"""The installed form and the layering: one import name, imports only downwards.

Layers, lowest first: games < solvers < agents < experiments < the CLI
(kibitz/ and kibitz.commands). A module may import its own layer and the
layers below it, nothing above; no module imports itself round a circle;
and nothing above games/ reaches into a game's private names (other than
OpenSpiel's Python-game protocol, which pyspiel itself calls).
"""

from __future__ import annotations

import ast
import pathlib
import shutil
import subprocess
import sys
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
#: folder -> (package name, layer rank)
LAYERS = {"games": ("kibitz.games", 0), "solvers": ("kibitz.solvers", 1), "agents": ("kibitz.agents", 2),
          "experiments": ("kibitz.experiments", 3), "kibitz": ("kibitz", 4)}
#: OpenSpiel's Python-game protocol: pyspiel calls these, and searches may too
PROTOCOL = {"_apply_action", "_legal_actions", "_action_to_string"}


def _modules():
    """(module name, path, rank) of every module of the five layers."""
    out = []
    for folder, (package, rank) in LAYERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            out.append((".".join([package, *parts]), path, rank))
    return out


MODULES = _modules()
NAMES = {name for name, _, _ in MODULES}


def _rank(module: str) -> int | None:
    """The layer of a kibitz module name (None: not kibitz's)."""
    best = None
    for package, rank in LAYERS.values():
        if module == package or module.startswith(package + "."):
            if best is None or len(package) > len(best[0]):
                best = (package, rank)
    return None if best is None else best[1]


def _imports(name: str, path: pathlib.Path):
    """Every kibitz module a module imports (deferred imports included)."""
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")
                base = ".".join(up[:len(up) - node.level + 1] + ([base] if base else []))
            for a in node.names:
                sub = f"{base}.{a.name}"
                found.append((sub if sub in NAMES else base, node.lineno))
    return [(m, line) for m, line in found if _rank(m) is not None]


def test_the_wheel_adds_exactly_one_import_name(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for item in ("pyproject.toml", "README.md", *LAYERS):
        source = ROOT / item
        if source.is_dir():
            shutil.copytree(source, src / item, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy(source, src / item)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(tmp_path / "dist"), str(src)], check=True, capture_output=True, text=True)
    # every folder that ships files is a listed package: no "Package would be ignored" warning
    assert "would be ignored" not in built.stdout + built.stderr
    (wheel,) = (tmp_path / "dist").glob("kibitz-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith((".dist-info", ".data"))}
        (top_level,) = [n for n in names if n.endswith(".dist-info/top_level.txt")] or [None]
        declared = z.read(top_level).decode().split() if top_level else ["kibitz"]
    assert top == {"kibitz"}
    assert declared == ["kibitz"]
    for package in ("games", "solvers", "agents", "agents/heuristics", "experiments", "commands"):
        assert f"kibitz/{package}/__init__.py" in names
    for page in ("index.html", "table.js", "table.css"):  # the web table's page, package data
        assert f"kibitz/agents/serving/web/{page}" in names
    for game in ("underdog", "pub", "over_under", "doubt_and_bet"):  # the networks `trained` plays
        assert f"kibitz/agents/trained/{game}.json.gz" in names


def test_installed_packages_are_the_folders_of_the_repository():
    import kibitz.agents
    import kibitz.experiments
    import kibitz.games
    import kibitz.solvers
    for folder, (package, _) in LAYERS.items():
        module = sys.modules[package]
        assert pathlib.Path(module.__file__).resolve() == ROOT / folder / "__init__.py"


@pytest.mark.parametrize("name,path,rank", MODULES, ids=[m[0] for m in MODULES])
def test_imports_only_from_its_own_layer_or_below(name, path, rank):
    upward = [f"line {line}: {m}" for m, line in _imports(name, path) if _rank(m) > rank]
    assert not upward, f"{name} imports from a layer above its own: " + "; ".join(upward)


def test_no_import_circles():
    graph = {name: {m for m, _ in _imports(name, path) if m in NAMES and m != name}
             for name, path, _ in MODULES}
    # a package's __init__ importing its own modules, and they the package
    # for a shared name, is how Python packages are built: ignore edges from
    # a module to a package that contains it
    for name, deps in graph.items():
        graph[name] = {d for d in deps if not name.startswith(d + ".")}
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == "open":
                cycle = stack[stack.index(dep):] + [dep]
                pytest.fail("import circle: " + " -> ".join(cycle))
            if dep not in state:
                visit(dep)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node)


def _private_uses(path: pathlib.Path, rank: int):
    """Private names (``_x``, not dunder) reached on objects other than self,
    cls, a module of the same layer or a module outside kibitz;
    ``getattr``/``hasattr`` with such a name; imports of private names or
    modules of the games."""
    tree = ast.parse(path.read_text(), str(path))
    own_modules = set()  # names bound to modules whose privates this one may use
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                full = f"{node.module}.{a.name}"
                layer = _rank(full if full in NAMES else node.module)
                if layer is None or layer == rank:
                    own_modules.add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if _rank(a.name) in (None, rank):
                    own_modules.add((a.asname or a.name).split(".")[0])
    found = []

    def private(attr):
        return attr.startswith("_") and not attr.startswith("__") and attr not in PROTOCOL

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and private(node.attr):
            base = node.value
            if isinstance(base, ast.Name) and base.id in ("self", "cls"):
                continue
            if isinstance(base, ast.Call) and isinstance(base.func, ast.Name) and base.func.id == "super":
                continue
            if isinstance(base, ast.Name) and base.id in own_modules:
                continue  # a module's private helper, checked by the import rule below
            found.append(f"line {node.lineno}: .{node.attr}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "hasattr", "setattr") and len(node.args) >= 2
              and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
              and private(node.args[1].value)):
            found.append(f"line {node.lineno}: {node.func.id}(..., {node.args[1].value!r})")
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kibitz.games."):
            if node.module.split(".")[2].startswith("_"):
                found.append(f"line {node.lineno}: from {node.module}")
            for a in node.names:
                if private(a.name):
                    found.append(f"line {node.lineno}: {a.name} from {node.module}")
    return found


ABOVE_GAMES = [(name, path, rank) for name, path, rank in MODULES if rank > 0]


@pytest.mark.parametrize("name,path,rank", ABOVE_GAMES, ids=[m[0] for m in ABOVE_GAMES])
def test_no_private_game_names_above_the_games(name, path, rank):
    found = _private_uses(path, rank)
    assert not found, f"{name} reaches private names: " + "; ".join(found)




def test_no_function_outside_tests_is_longer_than_100_lines():
    """Issue 46: a function a reader can hold at once; its lines from ``def``
    to its last statement, decorators not counted."""
    long = []
    for folder in ("kibitz", "experiments", "agents", "solvers", "games", "benchmarks"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines = node.end_lineno - node.lineno + 1
                    if lines > 100:
                        long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {lines} lines")
    assert long == []


def _public_api() -> set[str]:
    """The modules `make docs` documents (the Makefile's API_MODULES) and the
    package itself: what a user of the library imports."""
    import re
    line = re.search(r"^API_MODULES = (.+)$", (ROOT / "Makefile").read_text(), re.M)
    return {"kibitz", *line.group(1).split()}


CLI = [(name, path) for name, path, _ in MODULES if name == "kibitz.cli" or name.startswith("kibitz.commands")]


@pytest.mark.parametrize("name,path", CLI, ids=[m[0] for m in CLI])
def test_the_cli_calls_only_the_public_api(name, path):
    """The CLI parses, calls the API, prints: its modules import kibitz only
    through the public API (and each other), never solvers, agents, games
    or experiments directly."""
    allowed = _public_api()
    below = [f"line {line}: {m}" for m, line in _imports(name, path)
             if m not in allowed and m != "kibitz.cli" and not m.startswith("kibitz.commands")]
    assert not below, f"{name} imports past the public API: " + "; ".join(below)
