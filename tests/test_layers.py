"""The import-layer contract: every `loom.*` import of every module under loom/ (at the top of the
module or inside a function) points down the agreed layer order, or sideways within one layer:

    ir < rewrite < dialects < {backend, transforms, sharding, runtime, sim} < ops < frontend < lax < numpy
       < {scipy, nn, random, tree_util, knn, tools} < loom (the package facade)

`runtime` (devices, placement, loom.Array, compile / execute, meshes, processes) sits with the
backends it wraps. Packages that do not exist are
simply absent. A known violation is listed in ALLOWED with the reason; every other violation
fails the test, named file:line."""

from __future__ import annotations

import ast
import pathlib

from support.paths import LOOM

LAYERS: dict[str, int] = {
    "ir": 0, "rewrite": 1, "dialects": 2,
    "backend": 3, "transforms": 3, "sharding": 3, "runtime": 3, "sim": 3,
    "ops": 4, "frontend": 5,
    "lax": 6, "numpy": 7, "scipy": 8, "nn": 8, "random": 8, "tree_util": 8, "knn": 8, "tools": 8,
    "distributed": 8, "host": 8,
}
FACADE = 9  # loom/__init__.py: `import loom`, `from loom import jit`

# (importing file, imported module): why it is allowed for now. Each is an import up the layers,
# to be removed when its package is restructured.
ALLOWED: dict[tuple[str, str], str] = {
    ("loom/runtime/devices.py", "loom.frontend.pytree"): "device_put maps over a pytree; the pytree "
                                                         "utilities belong below the runtime",
    # the parser builds the implicit `builtin.module` and registers the builtin dialects on first use
    ("loom/ir/parser.py", "loom.dialects"): "parse() registers the builtin dialects",
    ("loom/ir/parser.py", "loom.dialects.builtin"): "the top-level builtin.module the parser builds",
    # the command-line programs and demos use the public API through the package facade
    ("loom/tools/demo_control_flow.py", "loom"): "a demo written against the public API",
    ("loom/tools/demo_training.py", "loom"): "a demo written against the public API",
    ("loom/tools/loom_main.py", "loom"): "the `loom` command reports loom.__version__ and runs the demos",
}


def _layer(module: str) -> int:
    parts = module.split(".")
    if parts[0] != "loom":
        raise ValueError(module)
    if len(parts) == 1:
        return FACADE
    return LAYERS[parts[1]]


def _target(node: ast.Import | ast.ImportFrom, alias: ast.alias) -> str | None:
    """The loom module an import reads (a submodule when `from loom import name` names one)."""
    if isinstance(node, ast.Import):
        return alias.name if alias.name.split(".")[0] == "loom" else None
    if node.level or not node.module or node.module.split(".")[0] != "loom":
        return None
    if node.module == "loom":
        sub = LOOM / alias.name
        return f"loom.{alias.name}" if sub.is_dir() or sub.with_suffix(".py").exists() else "loom"
    return node.module


def _source_module(path: pathlib.Path) -> str:
    rel = path.relative_to(LOOM.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _violations() -> list[str]:
    out = []
    for path in sorted(LOOM.rglob("*.py")):
        source = _source_module(path)
        rel = path.relative_to(LOOM.parent).as_posix()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for alias in node.names:
                target = _target(node, alias)
                if target is None or target == source or target.startswith(source + "."):
                    continue
                if _layer(target) > _layer(source) and (rel, target) not in ALLOWED:
                    out.append(f"{rel}:{node.lineno}: {source} imports {target}")
    return out


def test_imports_point_down_the_layers() -> None:
    violations = _violations()
    assert not violations, "imports up the layers:\n" + "\n".join(violations)


def test_allowlist_is_current() -> None:
    """Each allowed violation still exists (an entry whose import is gone is removed)."""
    found = set()
    for path in sorted(LOOM.rglob("*.py")):
        rel = path.relative_to(LOOM.parent).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found |= {(rel, t) for a in node.names if (t := _target(node, a)) is not None}
    assert sorted(set(ALLOWED) - found) == []


def test_checker_finds_an_upward_import(tmp_path: pathlib.Path) -> None:
    """The rule itself: lax importing numpy is up; numpy importing lax, or lax itself, is not."""
    assert _layer("loom.numpy") > _layer("loom.lax") > _layer("loom.frontend.tracing") > _layer("loom.ir.core")
    assert _layer("loom") > _layer("loom.tools.loom_main")
    tree = ast.parse("from loom import lax, jit\nimport loom.numpy as lnp\n")
    targets = [_target(n, a) for n in tree.body for a in n.names]
    assert targets == ["loom.lax", "loom", "loom.numpy"]
