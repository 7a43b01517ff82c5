"""Bad input and faults in the real command-line tools: every sentence generated or refused with
one line, never a traceback, and counts that are the truth.

Each case runs fairseq-generate / fairseq-interactive under a timeout and checks the exit status,
that stderr holds the one-line message (and no "Traceback"), and that the other sentences or
lines are answered.
"""
import os
import random
import re
import resource
import signal
import struct
import subprocess
import zipfile

import pytest
import torch

from fairseq_fast.errors import UserError
from processes import watchdog
from test_cli import BIN, SPEC, USER_DIR, assert_one_line_error, hypotheses, run

TIMEOUT = 120
SPM = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                   "user_dir_examples", "bible_es_en", "spm.model")


def data(pair):
    return os.path.join(pair, "data-bin")


def target(pair):
    return os.path.join(pair, "target.pt")


def gen(pair, *extra, subset="test", path=None):
    return [data(pair), "--path", path or target(pair), "--gen-subset", subset, "--beam", "1",
            *extra]


def env_without_torch_switch(extra=None):
    env = dict(os.environ)
    env.pop("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", None)
    env.update(extra or {})
    return env


def complete_sentences(stdout):
    """The ids of the complete S/T/H/D/P blocks."""
    return [int(i) for i in re.findall(r"^S-(\d+)\t.*\nT-\1\t.*\nH-\1\t.*\nD-\1\t.*\nP-\1\t.*\n",
                                       stdout, flags=re.M)]


# -- batching ----------------------------------------------------------------------------------
def test_default_batch_size_multiple_loses_no_sentence(tiny_pair):
    """40 sentences in batches of 6 with fairseq's default --required-batch-size-multiple 8: the
    last batch (4 sentences, the longest) is not a multiple of 8, and stock drops it."""
    result = run("fairseq-generate", gen(tiny_pair, "--batch-size", "6"))
    assert result.returncode == 0, result.stderr[-2000:]
    assert sorted(int(k[2:]) for k in hypotheses(result.stdout)) == list(range(40))
    assert "Translated 40 sentences" in result.stderr


@pytest.mark.parametrize("max_sentences,max_tokens", [(1, None), (12, None), (None, 40),
                                                      (5, 30), (None, None)])
def test_batches_cover_every_index(max_sentences, max_tokens):
    """In process, the same override on fairseq's batching: fairseq's batches, in order, and the
    one it dropped."""
    import numpy as np
    from fairseq.data import data_utils

    from fairseq_fast.cli.batching import keep_last_batch

    original = getattr(data_utils.batch_by_size, "__wrapped__", data_utils.batch_by_size)
    sizes = np.array([2 + (i * 7) % 11 for i in range(101)], dtype=np.int64)
    indices = np.argsort(sizes, kind="stable").astype(np.int64)
    batches = keep_last_batch(original)(
        indices, lambda i: sizes[i], num_tokens_vec=sizes[indices], max_tokens=max_tokens,
        max_sentences=max_sentences, required_batch_size_multiple=8)
    assert np.array_equal(np.concatenate(batches), indices)
    stock = original(
        indices, lambda i: sizes[i], num_tokens_vec=sizes[indices], max_tokens=max_tokens,
        max_sentences=max_sentences, required_batch_size_multiple=8)
    assert all(np.array_equal(a, b) for a, b in zip(batches, stock))


def test_sentence_over_max_tokens_is_one_line(tiny_pair):
    result = run("fairseq-generate", gen(tiny_pair, "--max-tokens", "5"))
    assert_one_line_error(result, "tokens, more than --max-tokens 5")


# -- fairseq-interactive: bad lines --------------------------------------------------------------
def bad_input(pair, tmp_path):
    """12 test sources with line 4 not UTF-8 and line 9 of 5,000 words (past 64 positions)."""
    with open(os.path.join(pair, "raw", "test.src"), "rb") as f:
        lines = f.read().splitlines(keepends=True)[:12]
    lines[3] = b"s1 \xff\xfe s2\n"
    lines[8] = b" ".join([b"s3"] * 5000) + b"\n"
    path = tmp_path / "input.txt"
    path.write_bytes(b"".join(lines))
    return path


def interactive_args(pair):
    return [data(pair), "--path", target(pair), "--beam", "1", "--source-lang", "src",
            "--target-lang", "tgt", "--buffer-size", "4", "--batch-size", "4"]


@pytest.mark.parametrize("workers,via", [(0, "file"), (2, "stdin")])
def test_interactive_answers_every_other_line(tiny_pair, tmp_path, workers, via):
    path = bad_input(tiny_pair, tmp_path)
    args = interactive_args(tiny_pair) + ["--postprocess-workers", str(workers)]
    if via == "file":
        result = run("fairseq-interactive", args + ["--input", str(path)])
    else:  # stdin decoded strictly, as in a UTF-8 locale
        result = subprocess.run([os.path.join(BIN, "fairseq-interactive"), "--user-dir",
                                 USER_DIR] + args, input=path.read_bytes(), capture_output=True,
                                env=env_without_torch_switch({"PYTHONIOENCODING": "utf-8:strict"}),
                                timeout=TIMEOUT)
        result = subprocess.CompletedProcess(result.args, result.returncode,
                                             result.stdout.decode(), result.stderr.decode())
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    ids = sorted(int(k[2:]) for k in hypotheses(result.stdout))
    assert ids == [i for i in range(12) if i not in (3, 8)]
    ours = [line for line in result.stderr.splitlines() if line.startswith("fairseq_fast:")]
    assert ours == [
        "fairseq_fast: input line 4 (id 3) skipped: not valid UTF-8 (byte 0xff at character 4)",
        "fairseq_fast: input line 9 (id 8) skipped: 5001 tokens, more than the model's 64 "
        "positions"]


@pytest.mark.parametrize("given", ["missing", "folder", "closed stdin"])
def test_interactive_input_that_cannot_be_read_is_one_line(tiny_pair, tmp_path, given):
    args = interactive_args(tiny_pair)
    if given == "closed stdin":  # a real process, its fd 0 closed before it starts
        needle = "--input -: stdin is closed"
        result = subprocess.run([os.path.join(BIN, "fairseq-interactive"), "--user-dir",
                                 USER_DIR, *args], preexec_fn=lambda: os.close(0),
                                capture_output=True, text=True, env=env_without_torch_switch(),
                                timeout=TIMEOUT)
    else:
        path = tmp_path / "missing.txt" if given == "missing" else tmp_path
        needle = f"--input {path}: " + ("no such file" if given == "missing"
                                        else "is a folder, not a text file")
        result = run("fairseq-interactive", args + ["--input", str(path)])
    assert_one_line_error(result, needle)


# -- checkpoints ---------------------------------------------------------------------------------
def overwrite_tensor_bytes(src, dst, value=b"\xff"):
    """A copy of checkpoint `src` with 4 KiB of one tensor's bytes overwritten (0xff...: NaN in
    float32), the zip archive itself intact."""
    raw = bytearray(open(src, "rb").read())
    with zipfile.ZipFile(src) as z:
        info = max((i for i in z.infolist() if "/data/" in i.filename), key=lambda i: i.file_size)
    name_len, extra_len = struct.unpack("<HH", raw[info.header_offset + 26:
                                                  info.header_offset + 30])
    start = info.header_offset + 30 + name_len + extra_len
    n = min(4096, info.file_size)
    raw[start:start + n] = value * n
    open(dst, "wb").write(bytes(raw))


@pytest.mark.parametrize("case,needle", [
    ("truncated", "cannot read checkpoint"),
    ("random bytes", "cannot read checkpoint"),
    ("bytes overwritten", "non-finite values (NaN or infinity)"),
    ("missing", "no such file"),
])
def test_bad_target_checkpoint_is_one_line(tiny_pair, tmp_path, case, needle):
    path = tmp_path / "target.pt"
    good = open(target(tiny_pair), "rb").read()
    if case == "truncated":
        path.write_bytes(good[: len(good) // 3])
    elif case == "random bytes":
        path.write_bytes(random.Random(0).randbytes(4096))
    elif case == "bytes overwritten":
        overwrite_tensor_bytes(target(tiny_pair), path)
    result = run("fairseq-generate", gen(tiny_pair, path=str(path)))
    assert_one_line_error(result, needle)
    assert result.returncode == 2


def test_uninitialised_placeholder_buffers_are_not_corruption():
    """fairseq saves AdaptiveInput's and AdaptiveSoftmax's `_float_tensor` (torch.FloatTensor(1),
    read only for its dtype) uninitialised: NaN there is a sound checkpoint; NaN in a weight is
    not."""
    from fairseq_fast.checkpoints import check_finite

    nan = torch.tensor([float("nan")])
    check_finite("lm.pt", {"model": {"decoder.embed_tokens._float_tensor": nan,
                                     "decoder.adaptive_softmax._float_tensor": nan,
                                     "decoder.layers.0.fc1.weight": torch.ones(2)}})
    with pytest.raises(UserError, match="decoder.layers.0.fc1.weight holds 1 non-finite"):
        check_finite("lm.pt", {"model": {"decoder.layers.0.fc1.weight": nan}})


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_a_non_finite_value_is_found_wherever_it_lies(dtype, bad):
    """all_finite reads a tensor chunk by chunk: a value in the last, partial chunk counts."""
    from fairseq_fast.checkpoints import FINITE_CHUNK, all_finite

    value = torch.randn(2 * FINITE_CHUNK + 5).to(dtype)
    assert all_finite(value) and all_finite(value[:0]) and all_finite(value[0])
    for where in (0, FINITE_CHUNK + 1, 2 * FINITE_CHUNK + 4):
        broken = value.clone()
        broken[where] = bad
        assert not all_finite(broken.view(-1, 1)), where


class NotAllowed:
    """A type outside every allowlist (test_cli.py has the same for the opt-in test)."""


def test_torch_switch_is_warned_about_and_does_not_bypass_the_guard(tiny_pair, tmp_path):
    state = torch.load(target(tiny_pair), weights_only=False)
    state["extra_state"] = {"surprise": NotAllowed()}
    bad = tmp_path / "target.pt"
    torch.save(state, bad)
    result = run("fairseq-generate", gen(tiny_pair, path=str(bad)),
                 env={"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1",
                      "PYTHONPATH": os.path.dirname(__file__)})
    assert_one_line_error(result, "test_cli_faults.NotAllowed",
                          "FAIRSEQ_FAST_TRUST_CHECKPOINTS=1")
    warnings = [line for line in result.stderr.splitlines()
                if line.startswith("fairseq_fast: warning:")]
    assert len(warnings) == 1 and "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD is set" in warnings[0]


# -- options accepted without a word -------------------------------------------------------------
@pytest.mark.parametrize("extra,needles", [
    (["--max-len-b", "0"], ["--max-len-b 0 (with --max-len-a 0) leaves no room for --min-len 1"]),
    (["--max-len-a", "0.1", "--max-len-b", "0", "--batch-size", "8"],
     ["--min-len 1 is more than the 0 tokens"]),
    (["--draft-path", "DRAFT"], ["--draft-path is for --generator speculative or bild"]),
    (["--fp16", "--cpu"], ["--fp16 on a CPU"]),
    (["--sampling", "--beam", "2"],
     ["--sampling needs --nbest equal to --beam (got --nbest 1, --beam 2)"]),
    (["--replace-unk"], ["--replace-unk '@@ ': no such alignment dictionary file"]),
    (["--replace-unk", ""], ["--replace-unk reads the source text", "--dataset-impl raw"]),
    (["--print-step"], ["--print-step prints the refinement steps", "task translation's"]),
    (["--beam", "4", "--diverse-beam-groups", "3"],
     ["--beam 4 is not a multiple of --diverse-beam-groups 3"]),
    (["--lm-path", "/nonexistent/lm.pt"], ["--lm-path /nonexistent/lm.pt: no such file"]),
    (["--max-source-positions", "5", "--batch-size", "8"],
     ["is invalid", "--skip-invalid-size-inputs-valid-test"]),
    (["--generator", "speculative", "--draft-path", "DRAFT", "--draft-len", "1000"],
     ["--draft-len must be at most 32 (got 1000)"]),
])
def test_bad_option_is_one_line(tiny_pair, extra, needles):
    extra = [os.path.join(tiny_pair, "draft.pt") if x == "DRAFT" else x for x in extra]
    assert_one_line_error(run("fairseq-generate", gen(tiny_pair, *extra)), *needles)


@pytest.mark.parametrize("bad,good,needle", [
    (["--beam", "0"], ["--beam", "1"], "--beam must be at least 1 (got 0)"),
    (["--nbest", "0"], ["--nbest", "1"], "--nbest must be at least 1 (got 0)"),
    (["--temperature", "0"], ["--temperature", "0.5"], "--temperature must be greater than 0"),
    (["--sampling-topk", "5"], ["--sampling-topk", "5", "--sampling"],
     "--sampling-topk 5 is an option of sampling"),
    (["--sampling-topp", "0.9"], ["--sampling-topp", "0.9", "--sampling"],
     "--sampling-topp 0.9 is an option of sampling"),
    (["--beam", "4", "--sampling", "--nbest", "4", "--diverse-beam-groups", "2"],
     ["--beam", "4", "--diverse-beam-groups", "2"],
     "--sampling and --diverse-beam-groups each choose a search strategy"),
    (["--beam", "4", "--match-source-len", "--diversity-rate", "0.5"],
     ["--beam", "4", "--diversity-rate", "0.5"],
     "--match-source-len and --diversity-rate each choose a search strategy"),
    (["--beam", "6", "--diverse-beam-groups", "4"], ["--beam", "8", "--diverse-beam-groups", "4"],
     "--beam 6 is not a multiple of --diverse-beam-groups 4"),
    (["--constraints"], [], "--constraints: fairseq-generate's translation data sets hold none"),
    (["--tokenizer", "moses"], ["--tokenizer", "moses", "-s", "src", "-t", "tgt"],
     "--tokenizer moses takes its languages from --source-lang and --target-lang"),
    (["--model-overrides", "not a dict"], ["--model-overrides", "{'beam': 5}"],
     "--model-overrides 'not a dict' is not a Python expression"),
    (["--bpe", "sentencepiece", "--sentencepiece-model", "/nonexistent/spm.model"],
     ["--bpe", "sentencepiece", "--sentencepiece-model", SPM],
     "--sentencepiece-model /nonexistent/spm.model: no such file"),
])
def test_what_fairseqs_generator_would_fail_on_is_refused_when_parsed(tiny_pair, bad, good,
                                                                        needle):
    """In process, fairseq-generate's options: each `bad` makes fairseq's generator raise once
    it is built or meets the first batch; the `good` one next to it parses."""
    from fairseq import options

    with pytest.raises(UserError, match=re.escape(needle)):
        options.parse_args_and_arch(options.get_generation_parser(), gen(tiny_pair, *bad))
    options.parse_args_and_arch(options.get_generation_parser(), gen(tiny_pair, *good))


@pytest.mark.parametrize("extra,needle", [
    (["--gen-subset", "nonexistent"], "Dataset not found: nonexistent"),
    (["--source-lang", "xx", "--target-lang", "yy"], "dict.xx.txt"),
])
def test_a_missing_data_file_is_one_line(tiny_pair, extra, needle):
    """fairseq raises FileNotFoundError for a split or a dictionary it does not find."""
    assert_one_line_error(run("fairseq-generate", gen(tiny_pair, *extra)), needle)


@pytest.mark.parametrize("exc,one_line", [
    (UserError("bad flag"), True),
    (FileNotFoundError("Dataset not found: nonexistent"), True),
    (ImportError("Please install Moses tokenizer with: pip install sacremoses"), True),
    (ImportError("cannot import name 'x' from 'y'"), False),  # a bug: its traceback
    (KeyError("steps"), False),
])
def test_the_tools_hook_prints_user_errors_on_one_line(capsys, exc, one_line):
    from fairseq_fast import errors

    seen = []
    hook = errors._hook(lambda *args: seen.append(args))
    if one_line:
        with pytest.raises(SystemExit) as ended:
            hook(type(exc), exc, None)
        assert ended.value.code == errors.EXIT_CODE and not seen
        assert capsys.readouterr().err == f"fairseq_fast: error: {exc}\n"
    else:
        hook(type(exc), exc, None)
        assert len(seen) == 1 and seen[0][1] is exc  # the previous hook: a traceback


def test_no_path_is_one_line(tiny_pair):
    """On a tool's command line; a program may parse generation options without --path
    (test_multilingual's script does)."""
    result = run("fairseq-generate", [data(tiny_pair), "--gen-subset", "test", "--beam", "1"])
    assert_one_line_error(result, "--path: give the model to generate with")


def test_interactive_batch_larger_than_its_chunk_is_one_line(tiny_pair):
    result = run("fairseq-interactive", interactive_args(tiny_pair) + ["--batch-size", "8"])
    assert_one_line_error(result, "--batch-size 8 is more than --buffer-size 4")


def test_no_summary_after_a_failed_run(tiny_pair):
    """The speculative generator refuses these lengths when it meets the first batch; its summary
    ('speculative decoding: 0 sentences, ...') must not follow the error."""
    result = run("fairseq-generate", gen(tiny_pair, "--max-len-a", "0.1", "--max-len-b", "0",
                                         "--batch-size", "8", *SPEC(tiny_pair)))
    assert_one_line_error(result, "--min-len 1 is more than the 0 tokens")
    assert "speculative decoding:" not in result.stderr


# -- the output fails ----------------------------------------------------------------------------
def test_broken_pipe_without_workers(tiny_pair, tmp_path):
    stderr = open(tmp_path / "stderr.txt", "w+")
    proc = subprocess.Popen([os.path.join(BIN, "fairseq-generate"), "--user-dir", USER_DIR,
                             *gen(tiny_pair, "--batch-size", "1", subset="train")],
                            stdout=subprocess.PIPE, stderr=stderr, text=True,
                            env=env_without_torch_switch(), start_new_session=True)
    try:
        with watchdog(proc):
            assert proc.stdout.readline().startswith("S-")
        proc.stdout.close()  # like `| head -1`
        proc.wait(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    stderr.seek(0)
    result = subprocess.CompletedProcess(proc.args, proc.returncode, "", stderr.read())
    assert_one_line_error(result, "the output was closed (broken pipe)")
    assert result.returncode == 1


def test_full_device_without_workers(tiny_pair):
    with open("/dev/full", "w") as full:
        result = subprocess.run([os.path.join(BIN, "fairseq-generate"), "--user-dir", USER_DIR,
                                 *gen(tiny_pair, "--batch-size", "8")], stdout=full,
                                stderr=subprocess.PIPE, text=True, env=env_without_torch_switch(),
                                timeout=TIMEOUT)
    assert_one_line_error(result, "writing the output failed: No space left on device")
    assert result.returncode == 1


def _file_size_limit(limit):
    def preexec():  # the output file may not grow past `limit` bytes: writes fail with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return preexec


FULL_AT = 4000  # bytes


@pytest.fixture(scope="module")
def whole_output(tiny_pair):
    """The whole output of the run the next test cuts short (and the C kernels built, before a
    file size limit applies)."""
    whole = run("fairseq-generate", gen(tiny_pair, "--batch-size", "8"))
    assert whole.returncode == 0, whole.stderr[-2000:]
    assert len(whole.stdout) > 2 * FULL_AT
    return whole.stdout


@pytest.mark.parametrize("workers", [0, 2])
def test_output_full_midway_counts_what_is_on_disk(tiny_pair, whole_output, tmp_path, workers):
    """The output file stops growing at 4,000 bytes (a full disk, as RLIMIT_FSIZE makes it): the
    run ends with one line, and with workers the count it gives is the number of complete
    sentences in the file."""
    args = gen(tiny_pair, "--batch-size", "8", "--postprocess-workers", str(workers))
    out = tmp_path / "out.txt"
    with open(out, "w") as f:
        result = subprocess.run([os.path.join(BIN, "fairseq-generate"), "--user-dir", USER_DIR,
                                 *args], stdout=f, stderr=subprocess.PIPE, text=True,
                                env=env_without_torch_switch(), timeout=TIMEOUT,
                                preexec_fn=_file_size_limit(FULL_AT))
    assert_one_line_error(result, "File too large")
    assert result.returncode == 1
    written = out.read_text()
    assert 0 < len(written) <= FULL_AT and whole_output.startswith(written)
    complete = len(complete_sentences(written))
    assert 0 < complete < 40
    if workers:
        said = re.search(r"wrote only (\d+) of the (\d+) sentences generated", result.stderr)
        assert int(said.group(1)) == complete, result.stderr


# -- files that are not what their flag expects: counts files, drafts, checkpoint shapes --------
# Each is one line on the command line, and the same message as a UserError through the hub.
def _rename_layer(state, old=".layers.0.", new=".layers.7."):
    return dict(state, model={k.replace(old, new): v for k, v in state["model"].items()})


# file name -> how it is made from the tiny pair's target checkpoint
TARGET_SHAPES = {
    "model_renamed.pt": lambda s: {("weights" if k == "model" else k): v for k, v in s.items()},
    "a_list.pt": lambda s: list(s["model"].values()),
    "no_config.pt": lambda s: {k: v for k, v in s.items() if k not in ("cfg", "args")},
    "no_training_record.pt": lambda s: {"model": s["model"], "cfg": s["cfg"]},
    "keys_renamed.pt": _rename_layer,
}
COUNTS_PREFIX_LINES = 3


@pytest.fixture(scope="module")
def malformed(tiny_pair, tmp_path_factory):
    """The wrong files: TARGET_SHAPES, a draft whose parameter names are not its architecture's,
    and a counts file whose line 4 is Latin-1."""
    root = tmp_path_factory.mktemp("malformed")
    state = torch.load(target(tiny_pair), weights_only=False)
    for name, change in TARGET_SHAPES.items():
        torch.save(change(dict(state)), root / name)
    draft = torch.load(os.path.join(tiny_pair, "draft.pt"), weights_only=False)
    torch.save(_rename_layer(draft), root / "draft_keys_renamed.pt")
    with open(os.path.join(data(tiny_pair), "dict.tgt.txt"), "rb") as f:
        lines = f.read().splitlines(keepends=True)[:COUNTS_PREFIX_LINES]
    (root / "counts.latin1.txt").write_bytes(b"".join(lines) + "café 7\n".encode("latin-1"))
    return root


def counts_error(malformed):
    counts = malformed / "counts.latin1.txt"
    offset = counts.read_bytes().index(b"\xe9")
    return (f"--draft-vocab-counts {counts}: not UTF-8 (byte 0xe9 at offset {offset}, line "
            f"{COUNTS_PREFIX_LINES + 1})")


KEYS_NEEDLES = ["does not fit the TransformerModel its configuration builds",
                "missing encoder.layers.0.", "unexpected encoder.layers.7."]


def test_counts_file_not_utf8_is_one_line(tiny_pair, malformed):
    counts = str(malformed / "counts.latin1.txt")
    result = run("fairseq-generate", gen(tiny_pair, *SPEC(tiny_pair, "--draft-vocab", "8",
                                                          "--draft-vocab-counts", counts)))
    assert_one_line_error(result, counts_error(malformed))
    assert result.returncode == 2


@pytest.mark.parametrize("name,called,needles", [
    ("draft_keys_renamed.pt", "draft", KEYS_NEEDLES),
    ("a_list.pt", "draft checkpoint", ["is not a fairseq checkpoint: it holds a list, not a dict"]),
])
def test_draft_that_does_not_fit_its_architecture_is_one_line(tiny_pair, malformed, name,
                                                               called, needles):
    draft = str(malformed / name)
    result = run("fairseq-generate", gen(tiny_pair, "--generator", "speculative",
                                         "--draft-path", draft))
    assert_one_line_error(result, f"{called} {draft} ", *needles)
    assert result.returncode == 2


TARGET_NEEDLES = {
    "model_renamed.pt": ["is not a fairseq checkpoint: it has no 'model' (the weights); its keys "
                         "are args, cfg,", "weights"],
    "a_list.pt": ["is not a fairseq checkpoint: it holds a list, not a dict"],
    "no_config.pt": ["is not a fairseq checkpoint: it has neither 'cfg' nor 'args'"],
    "no_training_record.pt": ["is not a fairseq checkpoint: it has no 'optimizer_history'"],
    "keys_renamed.pt": KEYS_NEEDLES,
}


@pytest.mark.parametrize("name", list(TARGET_SHAPES))
def test_malformed_target_checkpoint_is_one_line(tiny_pair, malformed, name):
    path = str(malformed / name)
    result = run("fairseq-generate", gen(tiny_pair, path=path))
    assert_one_line_error(result, f"checkpoint {path} ", *TARGET_NEEDLES[name])
    assert result.returncode == 2


@pytest.mark.parametrize("flag", ["--path", "--draft-path"])
def test_checkpoint_flag_given_a_folder_is_one_line(tiny_pair, tmp_path, flag):
    if flag == "--path":
        args = gen(tiny_pair, path=str(tmp_path))
    else:
        args = gen(tiny_pair, "--generator", "speculative", "--draft-path", str(tmp_path))
    result = run("fairseq-generate", args)
    assert_one_line_error(result, f"{flag} {tmp_path}: is a folder, not a checkpoint file")
    assert result.returncode == 2


@pytest.fixture(scope="module")
def hub(tiny_pair):
    return load_hub(tiny_pair, target(tiny_pair))


def load_hub(pair, path):
    import fairseq_fast
    from fairseq.models.transformer import TransformerModel

    return TransformerModel.from_pretrained(
        os.path.dirname(path), checkpoint_file=os.path.basename(path),
        data_name_or_path=os.path.abspath(data(pair)), user_dir=fairseq_fast.user_dir(),
        source_lang="src", target_lang="tgt")


@pytest.mark.parametrize("case", ["counts", "draft keys", "draft folder", *TARGET_SHAPES])
def test_hub_gets_the_same_errors(tiny_pair, malformed, hub, tmp_path, case):
    """The hub raises UserError (a ValueError) with the command line's message."""
    speculative = dict(beam=1, generator="speculative",
                       draft_path=os.path.join(tiny_pair, "draft.pt"))
    if case == "counts":
        counts = str(malformed / "counts.latin1.txt")
        call = lambda: hub.translate(["s1 s2"], **speculative, draft_vocab=8,  # noqa: E731
                                     draft_vocab_counts=counts)
        needles = [counts_error(malformed)]
    elif case == "draft keys":
        draft = str(malformed / "draft_keys_renamed.pt")
        call = lambda: hub.translate(["s1 s2"], **dict(speculative,  # noqa: E731
                                                       draft_path=draft))
        needles = [f"draft {draft} ", *KEYS_NEEDLES]
    elif case == "draft folder":
        call = lambda: hub.translate(["s1 s2"], **dict(speculative,  # noqa: E731
                                                       draft_path=str(tmp_path)))
        needles = [f"--draft-path {tmp_path}: is a folder, not a checkpoint file"]
    else:
        path = str(malformed / case)
        call = lambda: load_hub(tiny_pair, path)  # noqa: E731
        needles = [f"checkpoint {path} ", *TARGET_NEEDLES[case]]
    with pytest.raises(UserError) as raised:
        call()
    assert isinstance(raised.value, ValueError)
    assert "\n" not in str(raised.value)
    for needle in needles:
        assert needle in str(raised.value)
    assert str(raised.value).startswith(needles[0])
