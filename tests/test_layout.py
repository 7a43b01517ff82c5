"""The package's layers, and that imports point only downward.

    top         __init__.py, overrides.py, generate.py   what fairseq and users call
    cli         the command-line tools' side
    draft       fairseq-fast-draft, and the draft_kd criterion it trains with
    generators  what build_generator returns
    speculative the draft model's pieces
    decoding    the lean decoder, its cache, fairseq's EnsembleModel on it, the model gate
    kernels     the C kernels and their Python side
    base        errors.py, options.py, checkpoints.py, paths.py

A module may import from its own layer and the layers below it, never from a layer above
(function-level and relative imports included).
"""
import ast
import os

import fairseq_fast

PACKAGE = os.path.dirname(fairseq_fast.__file__)
LAYERS = ["base", "kernels", "decoding", "speculative", "generators", "cli", "draft", "top"]
BASE = {"errors", "options", "checkpoints", "paths", "runtime"}
TOP = {"__init__", "overrides", "generate"}


def layer(module: str) -> str:
    """'fairseq_fast.decoding.lean_decoder' -> 'decoding'"""
    parts = module.split(".")[1:]
    if not parts:
        return "top"
    if parts[0] in LAYERS:
        return parts[0]
    if parts[0] in BASE:
        return "base"
    if parts[0] in TOP:
        return "top"
    raise AssertionError(f"{module} is in no layer")


def modules():
    for folder, _, files in os.walk(PACKAGE):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, os.path.dirname(PACKAGE))[:-3].replace(os.sep, ".")
                yield rel[:-len(".__init__")] if rel.endswith(".__init__") else rel, path


def absolute(node: ast.ImportFrom, package: str) -> str:
    """The module a `from ... import` names; `package` is the importing module's package (for
    relative imports: `from .x import y` in fairseq_fast.decoding.ensemble names
    fairseq_fast.decoding.x)."""
    if node.level == 0:
        return node.module or ""
    base = package.split(".")
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imported(tree: ast.AST, package: str = "fairseq_fast"):
    """fairseq_fast modules a module imports (`from fairseq_fast.x import y` names x, or x.y when
    y is a module; relative imports resolved against `package`, the importing module's)"""
    for node in ast.walk(tree):
        module = absolute(node, package) if isinstance(node, ast.ImportFrom) else None
        if module and (module == "fairseq_fast" or module.startswith("fairseq_fast.")):
            for alias in node.names:
                full = f"{module}.{alias.name}"
                is_module = os.path.exists(os.path.join(
                    os.path.dirname(PACKAGE), *full.split("."))) or os.path.exists(
                    os.path.join(os.path.dirname(PACKAGE), *full.split(".")) + ".py")
                yield full if is_module else module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("fairseq_fast"):
                    yield alias.name


def test_every_module_is_in_a_layer():
    for name, _ in modules():
        layer(name)


def test_imports_point_only_downward():
    upward = []
    for name, path in modules():
        with open(path) as f:
            tree = ast.parse(f.read())
        own = LAYERS.index(layer(name))
        package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
        for target in imported(tree, package):
            if LAYERS.index(layer(target)) > own:
                upward.append(f"{name} ({layer(name)}) imports {target} ({layer(target)})")
    assert not upward, "\n".join(upward)


def test_the_check_sees_an_upward_import():
    tree = ast.parse("def f():\n    from fairseq_fast.generators import fast\n")
    targets = list(imported(tree))
    assert targets == ["fairseq_fast.generators.fast"]
    assert LAYERS.index(layer(targets[0])) > LAYERS.index(layer("fairseq_fast.kernels.x"))


def test_the_check_sees_an_upward_relative_import():
    tree = ast.parse("from ..generators import fast\nfrom ..generators.fast import X\n"
                     "from . import lean_decoder\n")
    targets = list(imported(tree, "fairseq_fast.decoding"))
    assert targets == ["fairseq_fast.generators.fast", "fairseq_fast.generators.fast",
                       "fairseq_fast.decoding.lean_decoder"]
    assert LAYERS.index(layer(targets[0])) > LAYERS.index(layer("fairseq_fast.decoding.x"))


# -- the kernel boundary --------------------------------------------------------------------------
def uses_ctypes(tree: ast.AST) -> bool:
    return any(isinstance(node, (ast.Import, ast.ImportFrom)) and (
        any(alias.name.split(".")[0] == "ctypes" for alias in node.names)
        if isinstance(node, ast.Import) else (node.module or "").split(".")[0] == "ctypes")
        for node in ast.walk(tree))


def test_ctypes_is_used_only_inside_kernels():
    """The C kernels are called through kernels/calls.py and kernels/fused.py only."""
    outside = []
    for name, path in modules():
        with open(path) as f:
            if layer(name) != "kernels" and uses_ctypes(ast.parse(f.read())):
                outside.append(name)
    assert outside == []


def test_the_check_sees_ctypes():
    assert uses_ctypes(ast.parse("def f():\n    import ctypes\n"))
    assert uses_ctypes(ast.parse("from ctypes import byref\n"))
    assert not uses_ctypes(ast.parse("import torch\nfrom fairseq_fast.kernels import calls\n"))
