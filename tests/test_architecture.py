"""The shape of the house: imports flow one way, and modules keep their privates.

The import graph is read from ccsim's source with :mod:`ast`, not from what
happens to be in ``sys.modules``:

* every ``import`` and ``from ... import`` anywhere in a module counts, those
  inside functions too: an import deferred into a function is still a
  dependency, only a late one, and a circle hidden that way is still a circle;
* relative imports are resolved to the module they name; ``from a import b``
  is an edge to ``a.b`` when that is a module, and to ``a`` otherwise;
* importing ``a.b.c`` runs the ``__init__`` of the package ``a.b`` first, so
  the edge goes to ``a.b`` as well, unless ``a.b`` contains the importing
  module (its package is being imported already; that edge is Python's, not
  the module's choice);
* imports inside an ``if TYPE_CHECKING:`` block are left out: they never run,
  and exist only so that annotations can name a type;
* a package whose ``__init__`` imports its modules by name at run time
  (``importlib.import_module`` over ``pkgutil.iter_modules(__path__)``, as
  :mod:`ccsim.algorithms` and :mod:`ccsim.recovery` do, so that a new
  algorithm is one new file) imports every module in it.

A leading underscore on a name marks it as its module's own; on a module, as
its package's own. No module imports another module's private names, and a
private module is imported only from inside its own package.
"""

from __future__ import annotations

import ast
import functools
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Import:
    """One import statement's edge: ``source`` imports ``target``, at ``line``;
    ``names`` are the names it takes from ``target`` (empty for a module)."""

    source: str
    target: str
    line: int
    names: tuple[str, ...] = ()


def modules(package: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file under ``package``."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _import_statements(node: ast.AST, type_checking: bool):
    """The import statements under ``node``, at any depth, but (unless
    ``type_checking``) those in the body of an ``if TYPE_CHECKING:`` (its
    ``else`` runs, and counts)."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node
        return
    if isinstance(node, ast.If) and _type_checking(node.test) and not type_checking:
        children: list[ast.AST] = list(node.orelse)
    else:
        children = list(ast.iter_child_nodes(node))
    for child in children:
        yield from _import_statements(child, type_checking)


def _imports_its_modules(init: Path) -> bool:
    """Whether a package's ``__init__`` imports its own modules at run time:
    it calls ``import_module`` and ``iter_modules``."""
    called = {node.func.attr if isinstance(node.func, ast.Attribute) else
              getattr(node.func, "id", None)
              for node in ast.walk(ast.parse(init.read_text())) if isinstance(node, ast.Call)}
    return {"import_module", "iter_modules"} <= called


def imports(package: Path, type_checking: bool = False) -> list[Import]:
    """Every import edge between the modules of ``package`` (see the module
    docstring for what counts); with ``type_checking``, those under ``if
    TYPE_CHECKING:`` too."""
    mods = modules(package)
    top = package.name

    def holder(name: str) -> str | None:
        """The module a dotted name lives in: itself, or its nearest parent."""
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    edges: list[Import] = []
    for mod, path in mods.items():
        here = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        found: list[Import] = []
        for node in _import_statements(ast.parse(path.read_text(), str(path)), type_checking):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if _inside(alias.name, top) and (target := holder(alias.name)):
                        found.append(Import(mod, target, node.lineno))
                continue
            if node.level:
                parts = here.split(".")
                name = ".".join(parts[:len(parts) - node.level + 1]
                                + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            if not _inside(name, top):
                continue
            owner = holder(name)
            taken = []
            for alias in node.names:
                sub = f"{name}.{alias.name}"
                if sub in mods:
                    found.append(Import(mod, sub, node.lineno))
                else:
                    taken.append(alias.name)
            if owner and (taken or not _inside(mod, owner)):
                found.append(Import(mod, owner, node.lineno, tuple(taken)))
        if path.name == "__init__.py" and _imports_its_modules(path):
            found += [Import(mod, sub, 0) for sub in mods if sub.rpartition(".")[0] == mod]
        for edge in found:  # the packages whose __init__ runs on the way
            parts = edge.target.split(".")
            for i in range(1, len(parts)):
                package_name = ".".join(parts[:i])
                if not _inside(mod, package_name):
                    edges.append(Import(mod, package_name, edge.line))
            if edge.target != mod:
                edges.append(edge)
    return edges


def cycles(edges: list[Import]) -> list[list[Import]]:
    """Circles of imports, each a list of edges that leads back to where it
    started: the strongly connected parts of the graph (Tarjan's algorithm),
    and in each, shortest circles until every edge inside it is on one."""
    out: dict[str, list[Import]] = {}
    for e in sorted(edges, key=lambda e: (e.source, e.target, e.line)):
        out.setdefault(e.source, []).append(e)
    nodes = sorted({e.source for e in edges} | {e.target for e in edges})
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    parts: list[set[str]] = []

    def strong(v: str) -> None:  # recursion depth: the graph's longest chain, ~20
        index[v] = low[v] = len(index)
        stack.append(v)
        for e in out.get(v, []):
            w = e.target
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = set()
            while (w := stack.pop()) != v:
                part.add(w)
            parts.append(part | {v})

    for v in nodes:
        if v not in index:
            strong(v)

    def back(start: str, end: str, part: set[str]) -> list[Import]:
        """The shortest chain of edges from ``start`` to ``end`` inside ``part``."""
        paths: dict[str, list[Import]] = {start: []}
        queue = [start]
        while queue:
            v = queue.pop(0)
            if v == end:
                return paths[v]
            for e in out.get(v, []):
                if e.target in part and e.target not in paths:
                    paths[e.target] = paths[v] + [e]
                    queue.append(e.target)
        raise AssertionError("a strongly connected part is connected")

    found = []
    for part in sorted(parts, key=min):
        covered: set[tuple[str, str]] = set()
        for v in sorted(part):
            for e in out.get(v, []):
                if e.target in part and (v, e.target) not in covered:
                    circle = [e] + back(e.target, v, part)
                    covered.update((c.source, c.target) for c in circle)
                    found.append(circle)
    return found


def describe(circle: list[Import]) -> str:
    return " -> ".join(f"{e.source} (line {e.line})" for e in circle) + f" -> {circle[0].source}"


@functools.cache
def ccsim_imports() -> tuple[Import, ...]:
    """ccsim's own import edges, read once per test session."""
    return tuple(imports(ROOT / "ccsim"))


@pytest.mark.slow
def test_ccsims_imports_have_no_circles():
    circles = cycles(list(ccsim_imports()))
    if circles:
        pytest.fail("import circles in ccsim:\n" + "\n".join(map(describe, circles)), False)


def reachable(edges: list[Import], start: str) -> set[str]:
    """The modules that importing ``start`` may import, itself included."""
    out: dict[str, set[str]] = {}
    for e in edges:
        out.setdefault(e.source, set()).add(e.target)
    seen, stack = set(), [start]
    while stack:
        if (v := stack.pop()) not in seen:
            seen.add(v)
            stack.extend(out.get(v, ()))
    return seen


LAYERS = (
    ("ccsim.cli", "ccsim.__main__"),                          # faces
    ("ccsim.experiments",),                                   # seed recipes
    ("ccsim.sweeps", "ccsim.run"),                            # many scenarios / one
    ("ccsim.packet", "ccsim.fluid"),                          # the engines
    ("ccsim.results", "ccsim.metrics", "ccsim.plot", "ccsim.pcap"),  # what came out
    ("ccsim.scenario",),                                      # what to simulate
    ("ccsim.algorithms", "ccsim.recovery", "ccsim.queues", "ccsim.testing"),  # no engine
    ("ccsim.errors", "ccsim.units", "ccsim._registry", "ccsim._progress", "ccsim._version",
     "ccsim._splitmix"),  # for all (units: a queue's size reads as a scenario's does)
)
"""ccsim's layers, top down, as in the design's picture: a module imports
only from its own layer and those below. The testing kit drives window laws
without an engine; the bottom holds what every layer shares."""


def test_imports_flow_one_way_from_the_top_down():
    """No module imports from a layer above its own, not even for an
    annotation (``TYPE_CHECKING`` imports count here: a type named from above
    is how the queue disciplines once reached up into the packet engine).
    Every module has a layer, so that a new one is placed on purpose."""
    def layer(module: str) -> int | None:
        if module == "ccsim":
            return 0  # the public face, which imports every layer
        for i, names in enumerate(LAYERS):
            if any(_inside(module, name) for name in names):
                return i
        return None

    unplaced = sorted(m for m in modules(ROOT / "ccsim") if layer(m) is None)
    assert unplaced == [], "modules in no layer of LAYERS"
    upward = [f"{e.source} (line {e.line}) imports {e.target}, a layer above"
              for e in imports(ROOT / "ccsim", type_checking=True)
              if layer(e.target) < layer(e.source)]
    assert upward == []


def test_the_packet_engine_imports_none_of_what_its_fingerprint_leaves_out():
    """A stored packet result is reused while ccsim's source but for
    ``NOT_USED["packet"]`` (the fluid engine) is unchanged: that holds only
    while the packet engine imports none of it."""
    from ccsim.sweeps.fingerprint import NOT_USED

    reach = reachable(list(ccsim_imports()), "ccsim.packet")
    assert {"ccsim.packet.tcp", "ccsim.algorithms.cubic", "ccsim.recovery.sack",
            "ccsim.queues.codel", "ccsim.scenario.core"} <= reach
    left_out = "ccsim." + NOT_USED["packet"].strip("/").replace("/", ".")
    assert sorted(m for m in reach if _inside(m, left_out)) == []


KNOWN_PRIVATE_IMPORTS: set[tuple[str, str]] = set()
"""(module, name) pairs still allowed; empty is the goal."""


def private_imports(edges: list[Import]) -> list[str]:
    """Each import of another module's ``_name``, or of a ``_module`` from
    outside its own package, as ``"importer (line n): what"``."""
    bad = []
    for e in edges:
        for name in e.names:
            if name.startswith("_") and not name.startswith("__") \
                    and (e.source, name) not in KNOWN_PRIVATE_IMPORTS:
                bad.append(f"{e.source} (line {e.line}): {name} from {e.target}")
        parts = e.target.split(".")
        for i, part in enumerate(parts):
            if part.startswith("_") and not part.startswith("__") \
                    and not _inside(e.source, ".".join(parts[:i])):
                bad.append(f"{e.source} (line {e.line}): the private module {e.target}")
    return sorted(set(bad))


def test_no_module_imports_another_modules_private_names():
    bad = private_imports(list(ccsim_imports()))
    if bad:
        pytest.fail("private names imported across modules:\n" + "\n".join(bad), False)


# The reader itself, on a made-up package whose circles are known.

def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path / "pkg"


def test_a_circle_through_an_import_inside_a_function_is_found(tmp_path):
    pkg = _package(tmp_path, {
        "__init__.py": "",
        "a.py": "from .b import thing\n",
        "b.py": "def thing():\n    from . import a\n    return a\n",
    })
    (circle,) = cycles(imports(pkg))
    assert describe(circle) == "pkg.a (line 1) -> pkg.b (line 2) -> pkg.a"


def test_type_checking_imports_do_not_count_but_their_else_does(tmp_path):
    pkg = _package(tmp_path, {
        "__init__.py": "",
        "a.py": "from .b import B\n",
        "b.py": """\
            from typing import TYPE_CHECKING
            import typing
            if TYPE_CHECKING:
                from .a import A
            if typing.TYPE_CHECKING:
                from . import a
            B = 1
            """,
    })
    assert cycles(imports(pkg)) == []
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\n"
                              "if TYPE_CHECKING:\n    pass\nelse:\n    from .a import A\n")
    assert len(cycles(imports(pkg))) == 1


def test_a_package_init_on_the_way_counts_and_relative_levels_resolve(tmp_path):
    pkg = _package(tmp_path, {
        "__init__.py": "",
        "results.py": "def to_pcap():\n    from .engine.pcap import write\n",
        "engine/__init__.py": "from .core import Engine\n",
        "engine/core.py": "from ..results import Result\n",
        "engine/pcap.py": "import struct\n",
    })
    (circle,) = cycles(imports(pkg))
    assert [e.source for e in circle] == ["pkg.engine", "pkg.engine.core", "pkg.results"]
    (pkg / "results.py").write_text("def to_pcap():\n    import pkg.pcap\n")
    (pkg / "pcap.py").write_text("")
    assert cycles(imports(pkg)) == []


def test_private_names_and_modules_are_found(tmp_path):
    pkg = _package(tmp_path, {
        "__init__.py": "from .sub import _helpers\n",
        "a.py": "from .b import (public,\n    _private)\nfrom .b import __doc__\n",
        "b.py": "public = _private = 1\n",
        "sub/__init__.py": "from ._helpers import tidy\n",
        "sub/_helpers.py": "def tidy():\n    from ..b import _private as p\n",
    })
    assert private_imports(imports(pkg)) == [
        "pkg (line 1): the private module pkg.sub._helpers",
        "pkg.a (line 1): _private from pkg.b",
        "pkg.sub._helpers (line 2): _private from pkg.b",
    ]


def test_a_package_that_imports_its_modules_by_name_imports_each(tmp_path):
    pkg = _package(tmp_path, {
        "__init__.py": "import importlib, pkgutil\n"
                       "VERSION = 1\n"
                       "for m in pkgutil.iter_modules(__path__):\n"
                       "    importlib.import_module(f'{__name__}.{m.name}')\n",
        "law.py": "from pkg import VERSION\n",
        "helper.py": "",
    })
    (circle,) = cycles(imports(pkg))
    assert describe(circle) == "pkg (line 0) -> pkg.law (line 1) -> pkg"
    assert reachable(imports(pkg), "pkg") == {"pkg", "pkg.law", "pkg.helper"}


@pytest.mark.parametrize("source", ["import pkg.b as b\n", "from pkg import b\n",
                                    "from . import b\n", "from .b import x\n"])
def test_every_spelling_of_an_import_is_an_edge(tmp_path, source):
    pkg = _package(tmp_path, {"__init__.py": "", "a.py": source,
                              "b.py": "import pkg.a\nx = 1\n"})
    (circle,) = cycles(imports(pkg))
    assert {e.source for e in circle} == {"pkg.a", "pkg.b"}
