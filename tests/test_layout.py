"""The package's layers, and that imports point only downward.

    top         __init__.py, overrides.py, generate.py   what fairseq and users call
    cli         the command-line tools' side
    draft       fairseq-fast-draft, and the draft_kd criterion it trains with
    generators  what build_generator returns
    speculative the draft model's pieces
    decoding    the lean decoder, its cache, fairseq's EnsembleModel on it, the model gate
    kernels     the C kernels and their Python side
    base        errors.py, options.py, checkpoints.py, init_skip.py, paths.py, runtime.py

A module may import from its own layer and the layers below it, never from a layer above
(function-level and relative imports included).
"""
import ast
import os

import fairseq_fast

PACKAGE = os.path.dirname(fairseq_fast.__file__)
LAYERS = ["base", "kernels", "decoding", "speculative", "generators", "cli", "draft", "top"]
BASE = {"errors", "options", "checkpoints", "init_skip", "paths", "runtime"}
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


# -- duck-typed reach-ups --------------------------------------------------------------------------
NAMEDTUPLE_API = {"_replace", "_asdict", "_fields", "_make", "_field_defaults"}


def private_names(tree: ast.AST):
    """(defined, used): the private names (`_x`) a module defines (methods, `self._x = ...`,
    module globals) and those it reads or writes on other objects (`obj._x`, getattr / hasattr /
    setattr with a literal name), `self` and `cls` excepted."""
    defined, used = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name.startswith("_") \
                and not node.name.startswith("__"):
            defined.add(node.name)
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") \
                and not node.attr.startswith("__"):
            own = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
            if own and isinstance(node.ctx, ast.Store):
                defined.add(node.attr)
            elif not own:
                used.add(node.attr)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("getattr", "hasattr", "setattr") and len(node.args) >= 2 \
                and isinstance(node.args[1], ast.Constant) \
                and isinstance(node.args[1].value, str) and node.args[1].value.startswith("_") \
                and not node.args[1].value.startswith("__"):
            used.add(node.args[1].value)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id.startswith("_"):
                    defined.add(target.id)
    return defined, used


def reach_ups(trees):
    """Private names a module uses that only modules of higher layers define: a lower layer
    reaching into an object of a higher one by duck typing, which imports do not show. trees:
    module -> private_names() of its source."""
    found = []
    for name, (_, used) in trees.items():
        own = LAYERS.index(layer(name))
        for attr in sorted(used - NAMEDTUPLE_API):
            definers = [m for m, (defined, _) in trees.items() if attr in defined]
            if definers and all(LAYERS.index(layer(m)) > own for m in definers):
                found.append(f"{name} ({layer(name)}) uses {attr}, defined only in "
                             f"{', '.join(sorted(definers))}")
    return found


def package_private_names():
    trees = {}
    for name, path in modules():
        with open(path) as f:
            trees[name] = private_names(ast.parse(f.read()))
    return trees


def test_no_module_reaches_up_by_duck_typing():
    assert reach_ups(package_private_names()) == []


def test_the_check_sees_a_duck_typed_reach_up():
    defined, used = private_names(ast.parse(
        "class A:\n    def __init__(self):\n        self._steps = 1\n"
        "def f(gen):\n    gen._cache = 2\n    return getattr(gen, '_plan', None), gen._steps\n"))
    assert defined == {"_steps"} and used == {"_cache", "_plan", "_steps"}
    trees = {"fairseq_fast.decoding.ensemble": private_names(ast.parse(
                 "def f(gen):\n    return gen._greedy_steps\n")),
             "fairseq_fast.generators.fast": private_names(ast.parse(
                 "class G:\n    def g(self):\n        self._greedy_steps = None\n"))}
    assert reach_ups(trees) == ["fairseq_fast.decoding.ensemble (decoding) uses _greedy_steps, "
                                "defined only in fairseq_fast.generators.fast"]
