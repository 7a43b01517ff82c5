"""scripts/benchmark_profile.py: how perf samples are filed, summed and split."""
import os
import sys
import threading
import time

import pytest

SCRIPTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts")
sys.path.insert(0, SCRIPTS)
import benchmark_profile as bp  # noqa: E402

KERNELS = "/root/.cache/fairseq_fast/kernels-cafe.so"


@pytest.mark.parametrize("symbol, library, expected", [
    ("sg_linear_f32_units_avx512", KERNELS, "matmul"),
    ("sg_linear_f16_units_avx2", KERNELS, "matmul"),
    ("sg_sparse_linear_f32_units_avx512", KERNELS, "matmul"),
    ("sg_nonzero_units", KERNELS, "matmul"),
    ("fa_attend_units_avx512", KERNELS, "attention"),
    ("scores_4", KERNELS, "attention"),
    ("weighted_sum_4", KERNELS, "attention"),
    ("dl_norm_units_avx512", KERNELS, "kernels"),
    ("gd_greedy_f32_avx512._omp_fn.0", KERNELS, "kernels"),
    ("[unknown]", "/usr/lib/x86_64-linux-gnu/libgomp.so.1", "omp wait"),
    ("GOMP_barrier", "/venv/lib/python3.11/site-packages/torch/lib/libgomp-cafe.so.1",
     "omp wait"),
    ("mkl_blas_avx512_sgemm_kernel_0", "/venv/torch/lib/libtorch_cpu.so", "matmul"),
    ("dnnl::impl::cpu::x64::brgemm_kernel_execute", "/venv/torch/lib/libtorch_cpu.so",
     "matmul"),
    ("[unknown]", "perf-28641.map", "matmul"),  # oneDNN's generated GEMM code
    ("[unknown]", "//anon", "matmul"),
    ("at::native::softmax_lastdim_kernel", "/venv/torch/lib/libtorch_cpu.so", "torch"),
    ("torch::autograd::THPVariable_data_ptr", "/venv/torch/lib/libtorch_python.so", "torch"),
    ("_int_malloc", "/usr/lib/x86_64-linux-gnu/libc.so.6", "torch"),
    ("_PyEval_EvalFrameDefault", "/root/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0",
     "python"),
    ("do_syscall_64", "[kernel.kallsyms]", "os"),
    ("__vdso_clock_gettime", "[vdso]", "os"),
])
def test_a_sample_is_filed_by_its_function_and_library(symbol, library, expected):
    assert bp.category(symbol, library) == expected


SCRIPT = """\
   101     2000000      1010 sg_linear_f32_units_avx512 (/c/kernels-ab.so)
   101     1000000      1020 _PyEval_EvalFrameDefault (/py/libpython3.11.so.1.0)
   102     2000000      1030 sg_linear_f32_units_avx512 (/c/kernels-ab.so)
   102      500000      1040 [unknown] (/usr/lib/x86_64-linux-gnu/libgomp.so.1)
   101      500000  81000000 do_syscall_64 ([kernel.kallsyms])
not a sample line
"""


def test_periods_are_summed_per_thread_and_category():
    threads = bp.parse(SCRIPT)
    assert set(threads) == {101, 102}
    assert threads[101]["matmul"] == pytest.approx(0.002)
    assert threads[101]["python"] == pytest.approx(0.001)
    assert threads[101]["os"] == pytest.approx(0.0005)
    assert threads[102]["matmul"] == pytest.approx(0.002)
    assert threads[102]["omp wait"] == pytest.approx(0.0005)
    assert sum(threads[102].values()) == pytest.approx(0.0025)


def test_split_is_of_threads_times_wall_and_idle_is_what_no_thread_ran():
    threads = bp.parse(SCRIPT)
    shares, main, others = bp.split(threads, main_tid=101, wall=0.004, capacity=2)
    # 6 ms on CPU of 2 x 4 ms: 2 ms idle
    assert shares["matmul"] == pytest.approx(0.5)
    assert shares["python"] == pytest.approx(0.125)
    assert shares["idle"] == pytest.approx(0.25)
    assert sum(shares.values()) == pytest.approx(1.0)
    assert main["matmul"] == pytest.approx(0.5) and main["python"] == pytest.approx(0.25)
    assert others["omp wait"] == pytest.approx(0.125) and others["python"] == 0.0


def test_print_tables_says_why_when_perf_was_missing(capsys):
    bp.print_tables({"perf": "perf not found (Debian: apt install linux-perf)"})
    assert capsys.readouterr().out.strip() == (
        "no profile: perf not found (Debian: apt install linux-perf)")


@pytest.mark.skipif(bp.perf_problem() is not None, reason="perf cannot profile here")
def test_a_recording_samples_only_while_enabled(tmp_path):
    """A Python loop on the main thread while enabled, longer ones before and after: the samples
    hold the middle one (at most its length; less if the machine is busy) and neither other."""
    def spin(seconds):
        end = time.perf_counter() + seconds
        n = 0
        while time.perf_counter() < end:
            n += 1
        return n

    recording = bp.PerfRecording(str(tmp_path), 999)
    spin(0.8)  # not recorded: perf starts disabled
    with recording.enabled():
        spin(0.4)
    spin(1.0)  # not recorded
    threads = recording.threads()
    mine = threads.get(threading.get_native_id(), {})
    on_cpu = sum(mine.values())
    assert 0.1 < on_cpu < 0.7, threads
    assert mine["python"] + mine["os"] + mine["torch"] > 0.8 * on_cpu, mine


def test_a_perf_that_exits_is_one_clear_error(tmp_path, monkeypatch):
    """perf refusing to attach (it exits with a message) gives PerfError with perf's first line,
    which the script prints alone, instead of waiting forever for an ack."""
    popen = bp.subprocess.Popen

    def refusing(args, **kwargs):
        return popen(["sh", "-c", "echo 'Error: no access to process' >&2; echo more >&2; exit 1"],
                     **kwargs)
    monkeypatch.setattr(bp.subprocess, "Popen", refusing)
    recording = bp.PerfRecording(str(tmp_path), 999)
    with pytest.raises(bp.PerfError, match=r"^perf record exited: Error: no access to process$"):
        with recording.enabled():
            pass


def _engine(ms, matmul):
    split = dict.fromkeys(bp.CATEGORIES, 0.0)
    split.update(matmul=matmul, idle=1.0 - matmul)
    threads = dict.fromkeys(bp.CATEGORIES[:-1], 0.0)
    return {"ms_per_token": ms, "ms_per_token_under_perf": ms * 1.01, "split": split,
            "main_thread": dict(threads, matmul=matmul), "other_threads": threads}


def test_print_tables_gives_each_batch_size_a_table_and_its_threads_rows(capsys):
    report = {"factor": 4, "embed_dim": 1024, "parameters": 156.3e6, "repeats": 3, "threads": 2,
              "frequency": 999, "perf": None,
              "runs": [{"batch_size": 1, "sentences": 20,
                        "engines": {"fairseq_fast default": _engine(8.1, 0.858)}},
                       {"batch_size": 8, "sentences": 24,
                        "engines": {"fairseq_fast default": _engine(2.6, 0.75)}}]}
    bp.print_tables(report)
    out = capsys.readouterr().out.splitlines()
    first, second = out.index("batch 1, 20 sentences"), out.index("batch 8, 24 sentences")
    assert first < second
    assert any(line.startswith("| fairseq_fast default | 8.10 | 8.18 | 85.8% |")
               for line in out[first:second])
    assert any(line.startswith("| fairseq_fast default | 2.60 | 2.63 | 75.0% |")
               for line in out[second:])
    assert any(line.startswith("| 8 | fairseq_fast default | main thread | 75.0% |")
               for line in out)


def test_print_tables_reads_a_report_of_batch_1_alone(capsys):
    """A JSON written before batch sizes were runs of their own (one run at batch 1, its engines
    at the top) still renders, as batch 1."""
    report = {"factor": 4, "embed_dim": 1024, "parameters": 156.3e6, "repeats": 3, "threads": 2,
              "frequency": 999, "perf": None, "sentences": 20,
              "engines": {"stock fairseq": _engine(33.7, 0.427)}}
    bp.print_tables(report)
    lines = capsys.readouterr().out.splitlines()
    assert "batch 1, 20 sentences" in lines
    assert any(line.startswith("| stock fairseq | 33.70 |") for line in lines)
