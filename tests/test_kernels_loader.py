"""kernels/loader.py: signatures read from kernels.h, the ABI check, the build cache (lock,
unique temporary files, key), the instruction-set levels in one library and the switches."""
import ctypes
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from fairseq_fast.kernels import loader, small_gemm

CC = os.environ.get("CC", "cc")
needs_library = pytest.mark.skipif(loader.library() is None, reason="no C kernels here")
needs_avx512 = pytest.mark.skipif(loader.cpu_level() != "avx512",
                                  reason="every level is run on an AVX-512 CPU")


def run(code: str, **env) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                          env={**os.environ, **env}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_header_parser_reads_declarators_arrays_and_prototypes():
    functions, structs = loader.parse_header("""
        #include <stdint.h>
        /* a comment (with a fake(int x); prototype) */
        typedef struct { const float *w, *b; int64_t n; } pair;
        typedef struct { pair p[2]; int32_t flag; float eps; } outer;
        int64_t f(const pair *p, int64_t n,
                  double x, int threads);
        void g(void);
    """)
    assert set(functions) == {"f", "g"}
    assert functions["f"] == (ctypes.c_int64, [ctypes.c_void_p, ctypes.c_int64, ctypes.c_double,
                                               ctypes.c_int])
    assert functions["g"] == (None, [])
    assert [name for name, _ in structs["pair"]._fields_] == ["w", "b", "n"]
    assert ctypes.sizeof(structs["outer"]) == 2 * 24 + 4 + 4


def test_constants_come_from_the_header_and_the_python_side_uses_them():
    assert loader.parse_constants("""
        #define FF_ABI_VERSION 7
        #define FF_MODE_A 2   /* a comment */
          #define FF_LIMIT -1
        #define OTHER 3
        #define FF_NOT_A_NUMBER (1 << 2)
    """) == {"ABI_VERSION": 7, "MODE_A": 2, "LIMIT": -1}
    from fairseq_fast.decoding import fused_layer
    from fairseq_fast.generators import beam_search

    header = loader.CONSTANTS
    assert (fused_layer.SPARSE_NEVER, fused_layer.SPARSE_CHEAPER, fused_layer.SPARSE_ALWAYS) == (
        header["SPARSE_NEVER"], header["SPARSE_CHEAPER"], header["SPARSE_ALWAYS"])
    assert (beam_search.NO_RULE, beam_search.ONLY_EOS, beam_search.NO_EOS,
            beam_search.MAX_CANDIDATES) == (header["NO_RULE"], header["ONLY_EOS"],
                                            header["NO_EOS"], header["MAX_CANDIDATES"])
    assert len({header["NO_RULE"], header["ONLY_EOS"], header["NO_EOS"]}) == 3


@needs_library
def test_every_declared_function_is_in_the_library_once_or_at_every_level():
    lib = loader.library()
    assert loader.built_levels(lib) == loader.buildable_levels()
    for name in loader.FUNCTIONS:
        if hasattr(lib, name):  # a file compiled once
            assert not any(hasattr(lib, f"{name}_{level}") for level in loader.LEVELS), name
        else:
            assert all(hasattr(lib, f"{name}_{level}") for level in loader.LEVELS), name
    for name in ("sg_linear_f32", "fa_attend_f32", "dl_layer_f32", "bs_candidates_f32"):
        assert not hasattr(lib, name)
    for name, cls in loader.STRUCTS.items():  # what load() checks, for every struct
        assert lib.ff_struct_size(name.encode()) == ctypes.sizeof(cls)


def _tiny_library(tmp_path, body: str):
    source, library = tmp_path / "tiny.c", tmp_path / "tiny.so"
    source.write_text("#include <stdint.h>\n" + body)
    subprocess.run([CC, "-shared", "-fPIC", str(source), "-o", str(library)], check=True)
    return library


def test_a_library_from_another_header_is_refused(tmp_path):
    other = _tiny_library(tmp_path, "int ff_abi_version(void) { return 9999; }\n")
    with pytest.raises(RuntimeError, match="kernel ABI 9999"):
        loader.load(other)
    (tmp_path / "b").mkdir()
    shrunk = _tiny_library(tmp_path / "b", f"""
        int ff_abi_version(void) {{ return {loader.ABI_VERSION}; }}
        int64_t ff_struct_size(const char *name) {{ return 8; }}\n""")
    with pytest.raises(RuntimeError, match="bytes in C"):
        loader.load(shrunk)


def test_concurrent_first_builds_make_one_file(tmp_path):
    """Two processes building the same library into an empty cache at once: both load it, one
    process compiles, one file is built, no temporary file is left."""
    code = ("from fairseq_fast.kernels import loader\n"
            "assert loader.load(loader.build(levels=['generic'])) is not None\n")
    log, wrapper, cache = tmp_path / "compiles", tmp_path / "cc", tmp_path / "cache"
    wrapper.write_text(f'#!/bin/sh\n[ "$1" = --version ] || echo $PPID >> {log}\n'
                       f'exec {CC} "$@"\n')
    wrapper.chmod(0o755)
    env = {**os.environ, "FAIRSEQ_FAST_CACHE": str(cache), "CC": str(wrapper)}
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stderr=subprocess.PIPE)
             for _ in range(2)]
    for p in procs:
        assert p.wait() == 0, p.stderr.read().decode()[-2000:]
    compiled_by = log.read_text().split()
    # abi.c + every kernel file at one level, linked: all by the process that came first
    compiles = len(loader.SHARED_SOURCES) + len(loader.LEVEL_SOURCES) + 1
    assert len(compiled_by) == compiles and len(set(compiled_by)) == 1
    built = [f.name for f in cache.iterdir() if f.name != ".build.lock"]
    assert len(built) == 1 and built[0].startswith("kernels-") and built[0].endswith(".so")


def test_cache_key_names_the_flags_and_the_levels(tmp_path, monkeypatch):
    monkeypatch.setenv("FAIRSEQ_FAST_CACHE", str(tmp_path))
    a = loader.build(levels=())
    b = loader.build(loader.COMMON_FLAGS + ["-DFF_UNUSED_FLAG"], levels=())
    c = loader.build(levels=["generic"])
    assert len({a, b, c}) == 3 and all(f.exists() for f in (a, b, c))
    assert loader.build(levels=()) == a  # cached
    assert not hasattr(loader.load(a), "sg_block_generic")  # abi.c alone
    assert loader.load(c).sg_block_generic() > 0


def _linear_at(level, x, w, b, half=False):
    """small_gemm's linear through `level`'s kernel (rows at once), the weight stored as float16
    (`half`, at every level) or float32."""
    packed = small_gemm.pack(w, level).data
    packed = packed.half() if half else packed.float()
    y = x.new_empty(x.shape[0], w.shape[0])
    loader.variant("sg_linear_f16" if half else "sg_linear_f32", level)(
        x.data_ptr(), x.shape[0], x.shape[1], packed.data_ptr(), b.data_ptr(), y.data_ptr(),
        w.shape[0], None, 0, 2)
    return y


@needs_library
@needs_avx512
@pytest.mark.parametrize("half", [False, True])
def test_every_level_in_one_library_avx_levels_give_the_same_bits(half):
    """One library holds all three levels: AVX-512 and AVX2 give the same bits (one float32
    accumulator per output in k order, fused multiply-adds, either width); the generic level
    agrees up to rounding (it rounds each product)."""
    torch.manual_seed(0)
    x, w, b = torch.randn(13, 200), torch.randn(130, 200), torch.randn(130)
    if half:
        w = w.half().float()
    got = {level: _linear_at(level, x, w, b, half) for level in loader.LEVELS}
    assert torch.equal(got["avx512"], got["avx2"])
    want = torch.nn.functional.linear(x.double(), w.double(), b.double()).float()
    for level, y in got.items():
        torch.testing.assert_close(y, want, rtol=1e-5, atol=1e-5, msg=level)
    assert not torch.equal(got["generic"], got["avx2"])  # products rounded: its own last bits


def test_level_follows_torchs_cpu_capability_and_every_kernel_test_passes_at_generic():
    """ATEN_CPU_CAPABILITY picks the level as it picks torch's kernels; at the generic level
    (any CPU) the kernel tests pass: matmul, attention and fused layers against torch and
    fairseq, results independent of rows, threads and storage, float32 generation against
    stock."""
    code = ("from fairseq_fast.kernels import loader; "
            "print(','.join(loader.runnable_levels(loader.library())), loader.level())")
    if loader.cpu_level() == "avx512":
        assert run(code, ATEN_CPU_CAPABILITY="avx2").stdout.split()[-2:] == ["avx2,generic",
                                                                              "avx2"]
    assert run(code, ATEN_CPU_CAPABILITY="default").stdout.split()[-2:] == ["generic", "generic"]
    here = Path(__file__).parent
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         *(str(here / f) for f in ("test_packed_linear.py", "test_cpu_attention.py",
                                   "test_fused_layer.py"))],
        env={**os.environ, "ATEN_CPU_CAPABILITY": "default"}, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:]
    assert " passed" in done.stdout and "skipped" not in done.stdout


@needs_avx512
def test_a_level_the_compiler_cannot_build_gives_way_to_the_next(tmp_path):
    """A compiler without -march=x86-64-v4: one warning, the library without that level, and an
    AVX-512 CPU runs the AVX2 level."""
    wrapper = tmp_path / "cc"
    wrapper.write_text('#!/bin/sh\ncase "$*" in *x86-64-v4*) echo "error: bad -march" >&2; '
                       f'exit 1;; esac\nexec {CC} "$@"\n')
    wrapper.chmod(0o755)
    done = run("""
        import logging
        logging.basicConfig(level=logging.INFO)
        from fairseq_fast.kernels import loader, small_gemm
        assert loader.built_levels(loader.library()) == ["avx2", "generic"]
        assert loader.level() == "avx2" and small_gemm.available()
    """, CC=str(wrapper), FAIRSEQ_FAST_CACHE=str(tmp_path / "cache"))
    assert done.stderr.count("kernels for avx512 not built") == 1


def test_one_switch_turns_every_kernel_off_and_another_only_the_matmul():
    done = run("""
        import logging, torch
        logging.basicConfig(level=logging.INFO)
        from fairseq_fast.kernels import loader, small_gemm
        assert not small_gemm.available()
        assert all(loader.function(name) is None for name in loader.FUNCTIONS)
    """, FAIRSEQ_FAST_KERNELS="0")
    assert "C kernels off (FAIRSEQ_FAST_KERNELS=0)" in done.stderr
    if loader.library() is not None:
        run("""
            import torch
            from fairseq_fast.kernels import cpu_attention, small_gemm
            assert not small_gemm.available()
            assert cpu_attention.usable(torch.zeros(1, 1, 1, 16))
        """, FAIRSEQ_FAST_SMALL_GEMM="0")
