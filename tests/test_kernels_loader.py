"""kernels/loader.py: signatures read from kernels.h, the ABI check, the build cache (lock,
unique temporary files, key), the instruction-set levels and the switches."""
import ctypes
import os
import subprocess
import sys
import textwrap

import pytest
import torch

from fairseq_fast.kernels import loader

CC = os.environ.get("CC", "cc")
needs_simd = pytest.mark.skipif(loader.library("simd") is None, reason="no SIMD kernels here")
needs_avx512 = pytest.mark.skipif(
    not torch.backends.cpu.get_cpu_capability().startswith("AVX512"),
    reason="the AVX2 build is compared with the AVX-512 one")


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


@needs_simd
def test_every_declared_function_is_in_a_library_and_structs_match_c():
    simd = loader.library("simd")
    for name in loader.FUNCTIONS:
        assert hasattr(simd, name), name
    for name, cls in loader.STRUCTS.items():  # what load() checks, for every struct
        assert simd.ff_struct_size(name.encode()) == ctypes.sizeof(cls)


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
    file is built, no temporary file is left."""
    code = ("from fairseq_fast.kernels import loader\n"
            "assert loader.library('portable') is not None\n")
    log, wrapper, cache = tmp_path / "compiles", tmp_path / "cc", tmp_path / "cache"
    wrapper.write_text(f'#!/bin/sh\n[ "$1" = --version ] || echo compile >> {log}\n'
                       f'exec {CC} "$@"\n')
    wrapper.chmod(0o755)
    env = {**os.environ, "FAIRSEQ_FAST_CACHE": str(cache), "CC": str(wrapper)}
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stderr=subprocess.PIPE)
             for _ in range(2)]
    for p in procs:
        assert p.wait() == 0, p.stderr.read().decode()[-2000:]
    assert log.read_text().split() == ["compile"]  # the second waited for the first's file
    built = [f.name for f in cache.iterdir() if f.name != ".build.lock"]
    assert len(built) == 1 and built[0].startswith("portable-") and built[0].endswith(".so")


def test_cache_key_names_the_flags(tmp_path, monkeypatch):
    monkeypatch.setenv("FAIRSEQ_FAST_CACHE", str(tmp_path))
    flags = loader.flags("portable")
    a = loader.build("portable", flags)
    b = loader.build("portable", flags + ["-DFF_UNUSED_FLAG"])
    assert a != b and a.exists() and b.exists()
    assert loader.build("portable", flags) == a  # cached


@needs_simd
@needs_avx512
def test_avx2_build_gives_the_avx512_builds_bits(tmp_path):
    """ATEN_CPU_CAPABILITY=avx2 (as torch's own kernels) selects the x86-64-v3 build: the same
    results bit for bit (one float32 accumulator per output in k order, either width)."""
    code = """
        import sys, torch
        from fairseq_fast.kernels import loader, small_gemm
        torch.manual_seed(0)
        x, w, b = torch.randn(7, 200), torch.randn(130, 200), torch.randn(130)
        print(" ".join(loader.flags("simd")))
        torch.save(small_gemm.linear(x, small_gemm.pack(w), b), sys.argv[1])
    """
    outputs = []
    for level in ("avx2", "avx512"):
        path = tmp_path / f"{level}.pt"
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(code), str(path)],
                              env={**os.environ, "ATEN_CPU_CAPABILITY": level},
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]
        assert ("-march=x86-64-v3" if level == "avx2" else "-march=x86-64-v4") in done.stdout
        outputs.append(torch.load(path))
    assert torch.equal(outputs[0], outputs[1])


def test_without_avx2_the_portable_kernels_still_run():
    done = run("""
        import logging, torch
        logging.basicConfig(level=logging.INFO)
        from fairseq_fast.kernels import cpu_attention, loader, small_gemm
        from fairseq_fast.generators.beam_search import NO_RULE, candidates, candidates_torch
        assert loader.library("simd") is None and not small_gemm.available()
        assert not cpu_attention.usable(torch.zeros(1, 1, 1, 16))
        assert loader.typed("bs_candidates", torch.zeros(2, 8)) is not None
        lprobs = torch.randn(4, 30).log_softmax(-1)
        got = candidates(lprobs.clone(), None, 2, 2, 1, 3, 0.0, 2, NO_RULE)
        want = candidates_torch(lprobs.clone(), None, 2, 2, 4, 1, 3, 0.0, 2, NO_RULE)
        assert all(torch.equal(g, w) for g, w in zip(got, want))
    """, ATEN_CPU_CAPABILITY="default")
    assert done.stderr.count("SIMD kernels unavailable") == 1


def test_one_switch_turns_every_kernel_off_and_another_only_the_matmul():
    done = run("""
        import logging, torch
        logging.basicConfig(level=logging.INFO)
        from fairseq_fast.kernels import loader, small_gemm
        assert not small_gemm.available()
        assert all(loader.function(name) is None for name in loader.FUNCTIONS)
    """, FAIRSEQ_FAST_KERNELS="0")
    assert "C kernels off (FAIRSEQ_FAST_KERNELS=0)" in done.stderr
    if loader.library("simd") is not None:
        run("""
            import torch
            from fairseq_fast.kernels import cpu_attention, small_gemm
            assert not small_gemm.available()
            assert cpu_attention.usable(torch.zeros(1, 1, 1, 16))
        """, FAIRSEQ_FAST_SMALL_GEMM="0")
