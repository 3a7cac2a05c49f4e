"""The package's import graph, deferred imports inside functions included: no circle, so that each module can be
read after the ones it imports, and each stage's subpackage imports only the stages below it (issue 43). Read from
the source with `ast`, nothing imported."""
import ast
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "src" / "fieldnote"


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imported(name: str) -> set[str]:
    """The package's modules one module imports anywhere in it (a name imported from a package is its module
    where it is one)."""
    path, found = MODULES[name], set()
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = ".".join(here[:len(here) - node.level + 1] + [node.module or ""]) if node.level else node.module
            base = (base or "").rstrip(".")
            found |= {f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return {m for m in found if m in MODULES and m != name}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one module (Tarjan's algorithm)."""
    index, low, stack, found, count = {}, {}, [], [], [0]

    def visit(v):
        index[v] = low[v] = count[0]
        count[0] += 1
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while not part or part[-1] != v:
                part.append(stack.pop())
            if len(part) > 1:
                found.append(sorted(part))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_module_of_the_package_imports_itself_back():
    graph = {name: imported(name) for name in MODULES}
    assert sum(map(len, graph.values())) > 100  # the graph was read
    assert circles(graph) == []


# Each stage and the stages it may import. The modules at the top (cli, script, deps, holdings) are the workflow's
# side of the package and may import any stage; the package's root holds only its version.
BELOW = {"core": set(), "registry": {"core"}, "evidence": {"core", "registry"},
         "measure": {"core", "registry", "evidence"}, "publish": {"core", "registry", "evidence"}}


def stage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in BELOW) else None


def upward(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """The imports from a stage into one it may not import: itself and the stages below it only."""
    found = []
    for name, targets in graph.items():
        here = stage(name)
        if here is None:
            continue
        found += [(name, t) for t in sorted(targets)
                  if t != "fieldnote" and stage(t) != here and stage(t) not in BELOW[here]]
    return found


def test_every_module_lives_in_a_stage_but_the_workflow_s_entries():
    top = sorted(m for m in MODULES if m.count(".") == 1 and stage(m) is None)
    assert top == ["fieldnote.cli", "fieldnote.deps", "fieldnote.holdings", "fieldnote.script"]


def test_each_stage_imports_only_the_stages_below_it():
    graph = {name: imported(name) for name in MODULES}
    assert upward(graph) == []


def test_an_import_running_back_up_would_be_found():
    graph = {"fieldnote.registry.config": {"fieldnote.measure.capture"}, "fieldnote.publish.note": {
        "fieldnote.evidence.floors", "fieldnote.core.io"}, "fieldnote.cli": {"fieldnote.publish.note"}}
    assert upward(graph) == [("fieldnote.registry.config", "fieldnote.measure.capture")]


def test_a_circle_would_be_found():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_a_kernel_file_depends_on_the_files_of_its_folder_it_imports(tmp_path):
    """No op named in the workflow: the triangle's Triton kernel is the matmul's because its file imports it."""
    from fieldnote.measure.kernels import sources

    assert sources("triton", "triangle") == ["kernels/triton/triangle.py", "kernels/triton/matmul.py"]
    assert sources("triton", "gelu") == ["kernels/triton/gelu.py"]
    folder = tmp_path / "kernels" / "triton"
    folder.mkdir(parents=True)
    (folder / "silu.py").write_text("from .gelu import launch\nfrom .silu import x\n")
    (folder / "gelu.py").write_text("from .silu import y\n")
    assert sources("triton", "silu", tmp_path) == ["kernels/triton/silu.py", "kernels/triton/gelu.py"]
