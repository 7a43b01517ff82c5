"""The C kernels' library: building, loading, declaring. The plugin calls the kernels through
typed functions (calls.py, fused.py, and the linear and attention modules here); only this
package touches ctypes.

    fn = loader.function("fa_attend_f32")     # a ctypes function, or None (not built, off)
    fn = loader.typed("bs_candidates", x)     # the _f32 / _f64 variant for x, or None
    Layer = loader.struct("dl_layer")         # a ctypes.Structure built from kernels.h

One library, compiled on first use with the system C compiler ($CC, default cc) into
$FAIRSEQ_FAST_CACHE (default ~/.cache/fairseq_fast). Every kernel file is compiled once per
instruction-set level, its exported names suffixed with the level (abi.c once):

    avx512    -march=x86-64-v4 (AVX-512)                     x86-64 only
    avx2      -march=x86-64-v3 (AVX2, FMA, F16C)             x86-64 only
    generic   plain C vectors (csrc/vec_generic.h), any CPU the compiler targets

So one cached file serves every CPU. Which level runs is chosen when the library is loaded, as
torch chooses its own kernels (torch.backends.cpu.get_cpu_capability(): ATEN_CPU_CAPABILITY=avx2
selects the AVX2 level, =default the generic one); a level the compiler could not build gives way
to the next one down. The AVX levels give the same bits; the generic one rounds products before
adding them (no FMA there), so its last bits are its own (vec_generic.h).

A cached file is named by a hash of the sources, the headers, the compiler's version, the flags
and the ABI version, never by the machine, so a cache in a shared home folder is safe. A build
holds a file lock (two processes or threads build once) and writes a unique temporary file that
is renamed into place.

Signatures are written once, in csrc/kernels.h: the C files include it, so the compiler checks
every definition against it, and this module reads it to declare each function's argument types
to ctypes and to build the structs. The library exports ff_abi_version() and its structs'
sizes; one whose version is not kernels.h's, or whose struct sizes are not those of the structs
read from kernels.h, is refused (one warning, torch's ops instead).

FAIRSEQ_FAST_KERNELS=0 switches every kernel off (callers use torch's ops). Where the library
cannot be built (no compiler) one warning says why and callers use torch's ops.
"""
import ctypes
import fcntl
import hashlib
import logging
import os
import platform
import re
import subprocess
import tempfile
import threading
from pathlib import Path
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, List, Optional, Sequence, Tuple

import torch  # first: the kernels' OpenMP then binds to the libgomp torch has loaded
from torch import Tensor

logger = logging.getLogger("fairseq_fast")

CSRC = Path(__file__).with_name("csrc")
HEADER = CSRC / "kernels.h"
OFF_ENV = "FAIRSEQ_FAST_KERNELS"
LEVEL_SOURCES = ("small_gemm.c", "attention.c", "decoder_layer.c", "greedy_draft.c",
                 "beam_step.c", "ngram_block.c", "ngram_lookup.c",
                 "spec_step.c")  # once per level
SHARED_SOURCES = ("abi.c",)  # once, for any CPU
X86 = platform.machine().lower() in ("x86_64", "amd64")
BASELINE = ["-march=x86-64"] if X86 else []  # whatever the compiler's own default
# best first; each level's flags (generic: no FMA contraction, so a*b+c rounds the same everywhere)
LEVELS = {"avx512": ["-march=x86-64-v4"], "avx2": ["-march=x86-64-v3"],
          "generic": BASELINE + ["-DFF_GENERIC", "-ffp-contract=off", "-Wno-psabi"]}
COMMON_FLAGS = ["-O3", "-fopenmp", "-fPIC"]

_lock = threading.Lock()
_loaded: list = []  # [the library or None], once loaded
_functions: dict = {}  # name -> ctypes function or None, looked up once
_UNKNOWN = object()


# -- kernels.h -------------------------------------------------------------------------------
_SCALARS = {"int": ctypes.c_int, "int32_t": ctypes.c_int32, "int64_t": ctypes.c_int64,
            "float": ctypes.c_float, "double": ctypes.c_double}


def _ctype(decl: str, structs: dict):
    """'const float *' -> c_void_p, 'int64_t' -> c_int64, 'dl_norm' -> the struct, 'void' ->
    None."""
    if "*" in decl:
        return ctypes.c_void_p
    words = [w for w in decl.split() if w not in ("const", "struct")]
    if words == ["void"]:
        return None
    (name,) = words
    if name in _SCALARS:
        return _SCALARS[name]
    return structs[name]


DECLARATOR = r"(.*?\w)([\s\*]*?)\s*(\w+)\s*(?:\[(\d+)\])?"  # type, stars, name, [count]


def parse_header(text: str) -> Tuple[Dict[str, tuple], dict]:
    """kernels.h -> ({function: (restype, [argtypes])}, {struct name: ctypes.Structure})."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    structs: dict = {}
    for body, name in re.findall(r"typedef\s+struct\s*\{(.*?)\}\s*(\w+)\s*;", text, flags=re.S):
        fields = []
        for field in filter(None, (f.strip() for f in body.split(";"))):
            first, *more = (part.strip() for part in field.split(","))  # int64_t in, out
            base, stars, fname, count = re.fullmatch(DECLARATOR, first, flags=re.S).groups()
            for stars, fname, count in [(stars, fname, count)] + [
                    re.fullmatch(DECLARATOR, "x " + d).groups()[1:] for d in more]:
                ctype = _ctype(base + stars, structs)
                fields.append((fname, ctype * int(count) if count else ctype))
        structs[name] = type(name, (ctypes.Structure,), {"_fields_": fields})
    text = re.sub(r"typedef\s+struct\s*\{.*?\}\s*\w+\s*;", " ", text, flags=re.S)
    functions = {}
    for ret, name, args in re.findall(r"([\w\s\*]+?)\b(\w+)\s*\(([^)]*)\)\s*;", text):
        argtypes = []
        for arg in (a.strip() for a in args.split(",")):
            if arg == "void" or not arg:
                continue
            argtypes.append(_ctype(re.sub(r"\w+$", "", arg), structs))
        functions[name] = (_ctype(ret, structs), argtypes)
    return functions, structs


def parse_constants(text: str) -> Dict[str, int]:
    """kernels.h's `#define FF_<NAME> <integer>` lines -> {NAME: integer}."""
    return {name: int(value) for name, value in
            re.findall(r"^\s*#define\s+FF_(\w+)\s+(-?\d+)\b", text, flags=re.M)}


_header = HEADER.read_text()
FUNCTIONS, STRUCTS = parse_header(_header)
CONSTANTS = parse_constants(_header)  # shared with the C code: beam modes, sparse modes, limits
ABI_VERSION = CONSTANTS["ABI_VERSION"]


# -- building ----------------------------------------------------------------------------------
def cache_dir() -> Path:
    return Path(os.environ.get("FAIRSEQ_FAST_CACHE")
                or Path.home() / ".cache" / "fairseq_fast")


def buildable_levels() -> List[str]:
    """The levels the compiler is asked for: all three on x86-64, else generic."""
    return list(LEVELS) if X86 else ["generic"]


def cpu_level() -> str:
    """The best level this CPU runs, from the capability torch's own kernels use here."""
    capability = torch.backends.cpu.get_cpu_capability()
    if X86 and capability.startswith("AVX512"):
        return "avx512"
    if X86 and capability == "AVX2":
        return "avx2"
    return "generic"


def _renames(level: str) -> List[str]:
    """-D flags giving every name kernels.h declares the suffix _<level> in one level's objects
    (calls between the files then stay within the level)."""
    return [f"-D{name}={name}_{level}" for name in FUNCTIONS]


def _compile(cc: str, args: List[str]) -> Optional[str]:
    """None, or the compiler's first error line."""
    done = subprocess.run([cc, *args], capture_output=True, text=True)
    if done.returncode == 0:
        return None
    lines = done.stderr.strip().splitlines() or ["?"]
    return next((line for line in lines if "error" in line), lines[0]).strip()


def build(compiler_flags: Sequence[str] = tuple(COMMON_FLAGS),
          levels: Optional[Sequence[str]] = None) -> Path:
    """The cached library file, compiled first if it is not in the cache. `levels` (default:
    buildable_levels()) are the levels to compile the kernel files for; a level the compiler
    cannot build is left out with a warning (an old compiler without -march=x86-64-v4)."""
    levels = buildable_levels() if levels is None else list(levels)
    cc = os.environ.get("CC", "cc")
    version = subprocess.run([cc, "--version"], capture_output=True, text=True,
                             check=True).stdout
    key = hashlib.sha1()
    sources = sorted(CSRC.glob("*.[ch]"))
    for part in ([f.read_bytes() for f in sources] + [
            version.encode(), " ".join(compiler_flags).encode(), str(ABI_VERSION).encode()] +
            [f"{level}: {' '.join(LEVELS[level])}".encode() for level in levels]):
        key.update(hashlib.sha1(part).digest())
    folder = cache_dir()
    target = folder / f"kernels-{key.hexdigest()[:16]}.so"
    if target.exists():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if target.exists():  # built by another process while this one waited
            return target
        with tempfile.TemporaryDirectory(dir=folder, prefix=".build-") as tmp:
            jobs = {}  # object file -> (level or None, compiler arguments)
            base = [*compiler_flags, f"-I{CSRC}", "-c"]
            for name in SHARED_SOURCES:
                jobs[f"{tmp}/{name}.o"] = (None, [*base, *BASELINE, str(CSRC / name)])
            for level in levels:
                for name in LEVEL_SOURCES:
                    jobs[f"{tmp}/{level}-{name}.o"] = (level, [*base, *LEVELS[level],
                                                               *_renames(level), str(CSRC / name)])
            with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
                errors = dict(zip(jobs, pool.map(
                    lambda obj: _compile(cc, [*jobs[obj][1], "-o", obj]), jobs)))
            failed = {jobs[o][0]: e for o, e in errors.items() if e is not None}
            if None in failed:
                raise RuntimeError(f"{cc} failed: {failed[None]}")
            for level, error in failed.items():
                logger.warning("fairseq_fast: kernels for %s not built (%s failed: %s)", level,
                               cc, error)
            objects = [o for o, (level, _) in jobs.items() if level not in failed]
            linked = f"{tmp}/kernels.so"
            error = _compile(cc, [*compiler_flags, "-shared", *objects, "-o", linked])
            if error is not None:
                raise RuntimeError(f"{cc} failed: {error}")
            os.replace(linked, target)
    return target


def load(path: Path) -> ctypes.CDLL:
    """The library at `path`, its functions declared from kernels.h; refused when it was built
    from another kernels.h."""
    lib = ctypes.CDLL(str(path))
    lib.ff_abi_version.restype = ctypes.c_int
    lib.ff_abi_version.argtypes = []
    found = lib.ff_abi_version()
    if found != ABI_VERSION:
        raise RuntimeError(f"{path.name} has kernel ABI {found}, kernels.h {ABI_VERSION}")
    for name, (restype, argtypes) in FUNCTIONS.items():
        for symbol in [name] + [f"{name}_{level}" for level in LEVELS]:
            fn = getattr(lib, symbol, None)
            if fn is not None:
                fn.restype, fn.argtypes = restype, argtypes
    for name, cls in STRUCTS.items():
        size = lib.ff_struct_size(name.encode())
        if size != ctypes.sizeof(cls):
            raise RuntimeError(f"{path.name}: struct {name} is {size} bytes in C, "
                               f"{ctypes.sizeof(cls)} as read from kernels.h")
    return lib


def enabled() -> bool:
    return os.environ.get(OFF_ENV, "1") != "0"


def library() -> Optional[ctypes.CDLL]:
    """The kernel library, built and loaded once per process; None where it is off or cannot
    be built here (said once)."""
    with _lock:
        if _loaded:
            return _loaded[0]
        lib = None
        if not enabled():
            logger.info(f"fairseq_fast: C kernels off ({OFF_ENV}=0)")
        else:
            try:
                lib = load(build())
            except (OSError, RuntimeError, subprocess.SubprocessError) as e:
                logger.warning("fairseq_fast: C kernels unavailable (%s); torch's ops run "
                               "instead (slower)", e)
        _loaded.append(lib)
        return lib


def built_levels(lib: ctypes.CDLL) -> List[str]:
    return [level for level in LEVELS if hasattr(lib, f"sg_block_{level}")]


def runnable_levels(lib: ctypes.CDLL) -> List[str]:
    """The built levels this CPU can run, best first: the CPU's own and those below it (a level
    above it would stop the process with an illegal instruction)."""
    levels = list(LEVELS)
    return [lv for lv in levels[levels.index(cpu_level()):] if lv in built_levels(lib)]


def level() -> Optional[str]:
    """The level whose kernels run here: the CPU's, or the best built one below it; None
    without the library."""
    lib = library()
    if lib is None:
        return None
    return next(iter(runnable_levels(lib)), None)


def variant(name: str, at_level: Optional[str]):
    """Kernel `name` as compiled for `at_level` (None: a file compiled once), or None."""
    lib = library()
    if lib is None:
        return None
    return getattr(lib, name if at_level is None else f"{name}_{at_level}", None)


def function(name: str):
    """The kernel `name` at this CPU's level (or the one compiled for every level), or None."""
    fn = _functions.get(name, _UNKNOWN)
    if fn is _UNKNOWN:
        at = level()
        fn = variant(name, at) if at is not None else None
        if fn is None:
            fn = variant(name, None)
        _functions[name] = fn
    return fn


def typed(name: str, x: Tensor):
    """The kernel `name`_f32 or `name`_f64 matching x's dtype, or None where it does not run on
    x (another dtype, not on CPU, x recording gradients, kernels not built or off)."""
    suffix = {torch.float32: "_f32", torch.float64: "_f64"}.get(x.dtype)
    if suffix is None or x.device.type != "cpu" or (torch.is_grad_enabled() and x.requires_grad):
        return None
    return function(name + suffix)


def struct(name: str):
    """The ctypes.Structure that kernels.h declares as `name`."""
    return STRUCTS[name]
