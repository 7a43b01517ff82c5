"""The one boundary between the plugin and its C kernels: building, loading, declaring.

    fn = loader.function("fa_attend_f32")     # a ctypes function, or None (not built, off)
    fn = loader.typed("bs_candidates", x)     # the _f32 / _f64 variant for x, or None
    Layer = loader.struct("dl_layer")         # a ctypes.Structure built from kernels.h

Two libraries, each compiled on first use with the system C compiler ($CC, default cc) into
$FAIRSEQ_FAST_CACHE (default ~/.cache/fairseq_fast):

    simd      every csrc/*.c file, for the best instruction-set level the CPU has:
              x86-64-v4 (AVX-512) or x86-64-v3 (AVX2, FMA, F16C); chosen when the library is
              loaded, as torch chooses its own kernels (torch.backends.cpu.get_cpu_capability,
              so ATEN_CPU_CAPABILITY=avx2 selects the AVX2 build here too)
    portable  the kernels that need no SIMD (beam_step.c, ngram_block.c) for any CPU the
              compiler targets: they run where the SIMD library cannot be built

A function is taken from the SIMD library where it has it, else from the portable one.

A cached file is named by a hash of the sources, kernels.h, the compiler's version, the flags and
the ABI version, never by the machine: a build serves every CPU of its level, so a cache in a
shared home folder is safe. A build holds a file lock (two processes or threads build once) and
writes a unique temporary file that is renamed into place.

Signatures are written once, in csrc/kernels.h: the C files include it, so the compiler checks
every definition against it, and this module reads it to declare each function's argument types
to ctypes and to build the structs. Each library exports ff_abi_version() and its structs'
sizes; one whose version is not kernels.h's, or whose struct sizes are not those of the structs
read from kernels.h, is refused (one warning, torch's ops instead).

FAIRSEQ_FAST_KERNELS=0 switches every kernel off (callers use torch's ops). Where a library
cannot be built (no compiler, no AVX2) one warning says why and callers use torch's ops.
"""
import ctypes
import fcntl
import hashlib
import logging
import os
import re
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import torch  # first: the kernels' OpenMP then binds to the libgomp torch has loaded
from torch import Tensor

logger = logging.getLogger("fairseq_fast")

CSRC = Path(__file__).with_name("csrc")
HEADER = CSRC / "kernels.h"
OFF_ENV = "FAIRSEQ_FAST_KERNELS"
LIBRARIES = {
    "simd": ("small_gemm.c", "attention.c", "decoder_layer.c", "beam_step.c", "ngram_block.c",
             "abi.c"),
    "portable": ("beam_step.c", "ngram_block.c", "abi.c"),
}

_lock = threading.Lock()
_loaded: Dict[str, Optional[ctypes.CDLL]] = {}
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


def abi_version(text: str) -> int:
    return int(re.search(r"#define\s+FF_ABI_VERSION\s+(\d+)", text).group(1))


_header = HEADER.read_text()
FUNCTIONS, STRUCTS = parse_header(_header)
ABI_VERSION = abi_version(_header)


# -- building ----------------------------------------------------------------------------------
def cache_dir() -> Path:
    return Path(os.environ.get("FAIRSEQ_FAST_CACHE")
                or Path.home() / ".cache" / "fairseq_fast")


def flags(library: str) -> Optional[List[str]]:
    """The compiler flags of `library` for the CPU torch reports; None where it cannot run."""
    common = ["-O3", "-fopenmp", "-shared", "-fPIC"]
    if library == "portable":
        return common
    capability = torch.backends.cpu.get_cpu_capability()  # what torch's own kernels use here
    if capability.startswith("AVX512"):
        return common + ["-march=x86-64-v4"]
    if capability == "AVX2":
        return common + ["-march=x86-64-v3"]
    return None  # not x86, or an x86 CPU without AVX2


def build(library: str, compiler_flags: List[str]) -> Path:
    """The cached library file, compiled first if it is not in the cache."""
    cc = os.environ.get("CC", "cc")
    version = subprocess.run([cc, "--version"], capture_output=True, text=True,
                             check=True).stdout
    sources = [CSRC / name for name in LIBRARIES[library]]
    key = hashlib.sha1()
    for part in ([f.read_bytes() for f in sources] + [HEADER.read_bytes(), version.encode(),
                                                       " ".join(compiler_flags).encode(),
                                                       str(ABI_VERSION).encode()]):
        key.update(hashlib.sha1(part).digest())
    folder = cache_dir()
    target = folder / f"{library}-{key.hexdigest()[:16]}.so"
    if target.exists():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if target.exists():  # built by another process while this one waited
            return target
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{library}-", suffix=".so")
        os.close(fd)
        try:
            done = subprocess.run([cc, *compiler_flags, f"-I{CSRC}", *map(str, sources), "-o",
                                   tmp], capture_output=True, text=True)
            if done.returncode != 0:
                first = next((line for line in done.stderr.splitlines() if "error" in line),
                             (done.stderr.strip().splitlines() or ["?"])[0])
                raise RuntimeError(f"{cc} failed: {first.strip()}")
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
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
        fn = getattr(lib, name, None)
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


def library(name: str) -> Optional[ctypes.CDLL]:
    """The library `name` ("simd" or "portable"), built and loaded once per process; None where
    it is off or cannot be built here (said once)."""
    with _lock:
        if name in _loaded:
            return _loaded[name]
        lib = None
        compiler_flags = flags(name)
        if not enabled():
            if name == "simd":
                logger.info(f"fairseq_fast: C kernels off ({OFF_ENV}=0)")
        elif compiler_flags is None:
            logger.warning("fairseq_fast: SIMD kernels unavailable (they need AVX2; torch "
                           "reports CPU capability %s); the decoder's matmuls, attention and "
                           "layers use torch's ops (slower)",
                           torch.backends.cpu.get_cpu_capability())
        else:
            try:
                lib = load(build(name, compiler_flags))
            except (OSError, RuntimeError, subprocess.SubprocessError) as e:
                what = ("C kernels" if name == "simd"
                        else "portable C kernels (beam candidates, n-gram blocking)")
                logger.warning("fairseq_fast: %s unavailable (%s); torch's ops run instead "
                               "(slower)", what, e)
        _loaded[name] = lib
        return lib


def function(name: str):
    """The kernel `name` (SIMD library first, then the portable one), or None."""
    fn = _functions.get(name, _UNKNOWN)
    if fn is _UNKNOWN:
        fn = None
        for lib_name in LIBRARIES:
            lib = library(lib_name)
            if lib is not None and hasattr(lib, name):
                fn = getattr(lib, name)
                break
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
