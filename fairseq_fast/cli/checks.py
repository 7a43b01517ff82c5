"""fairseq options that fairseq-generate / fairseq-interactive accept and then fail on, or run
badly, checked with one line when the command line is parsed (overrides.parse_args_and_arch).

- `--fp16` on a CPU: fairseq runs it, but CPUs have no half-precision arithmetic, so every op is
  emulated (several times slower than float32), and the plugin's fast paths, made for float32 on
  CPU and for GPUs, do not reproduce stock fairseq's emulated half-precision rounding: the
  hypotheses differ from stock's. Refused: float32 (no --fp16) is faster and identical to stock.
- `--max-len-a 0 --max-len-b B` with B < --min-len: no output length satisfies both, and fairseq
  asserts ("min_len cannot be larger than max_len") in the middle of generation.
- a `--path` checkpoint that does not exist, or is a folder: fairseq raises with a traceback
  after loading the data. `--draft-path` gets the same check (checkpoints.checkpoint_file).
- fairseq-interactive's `--input` that does not exist, is a folder or cannot be read, or `-`
  with stdin closed: fairseq raises with a traceback once the model is loaded.
- fairseq's assertions before generation: no `--path` (on a tool's own command line: a program
  may parse generation options without one); `--sampling` with `--nbest` other than `--beam`;
  fairseq-generate's `--replace-unk` on a binarised data set; fairseq-interactive's
  `--batch-size` above `--buffer-size` (a batch is made of one chunk).
- `--replace-unk` naming no file: fairseq opens it once the model is loaded (a bare
  `--replace-unk` names the file "@@ ", its argparse constant).
- fairseq-generate's `--print-step` outside iterative refinement (`--task translation_lev`):
  only that task's generator counts refinement steps; with any other, fairseq-generate fails
  with a KeyError on the first sentence.
- what fairseq's generator asserts on or raises when it is built or meets the first batch:
  `--beam` or `--nbest` below 1, `--temperature` 0 or below, `--sampling-topk` /
  `--sampling-topp` without `--sampling`, two search strategies at once (`--sampling`,
  `--diverse-beam-groups`, `--match-source-len`, `--diversity-rate`), a `--beam` that
  `--diverse-beam-groups` does not divide; fairseq-generate's `--constraints` on a translation
  or language-modeling data set, which holds none (fairseq-interactive reads them from its
  input lines).
- `--tokenizer moses` without `--source-lang` and `--target-lang`: fairseq fails while it
  composes its configuration (a hydra traceback), the tokenizer's languages being those.
- what fairseq reads only once the data or the model is loaded: an `--lm-path`,
  `--sentencepiece-model` or `--bpe-codes` that does not exist, a `--model-overrides` that is
  not a Python expression.
"""
import os
import sys

import torch

from fairseq_fast.checkpoints import checkpoint_file
from fairseq_fast.errors import UserError, existing_file


def check(args, tool: bool = True) -> None:
    """tool: the options are a tool's own command line (sys.argv), not a list a program parsed:
    only a tool needs --path."""
    g = lambda name, default=None: getattr(args, name, default)  # noqa: E731
    if tool and not g("path"):
        raise UserError("--path: give the model to generate with (--path MODEL.pt)")
    if g("fp16", False) and (g("cpu", False) or not torch.cuda.is_available()):
        raise UserError("--fp16 on a CPU: half precision is emulated there (several times slower "
                        "than float32) and its hypotheses differ from stock fairseq's; run "
                        "without --fp16 (float32), or on a GPU")
    max_len_a, max_len_b, min_len = g("max_len_a", 0), g("max_len_b", 200), g("min_len", 1)
    if not g("match_source_len", False) and not max_len_a and max_len_b < min_len:
        raise UserError(f"--max-len-b {max_len_b} (with --max-len-a 0) leaves no room for "
                        f"--min-len {min_len}: every output has between --min-len and "
                        f"--max-len-b tokens; raise --max-len-b or lower --min-len")
    if g("sampling", False) and g("nbest", 1) != g("beam", 5):
        raise UserError(f"--sampling needs --nbest equal to --beam (got --nbest "
                        f"{g('nbest', 1)}, --beam {g('beam', 5)}): fairseq keeps every one of "
                        f"a sentence's --beam samples")
    replace_unk = g("replace_unk")
    if replace_unk and not os.path.isfile(replace_unk):  # fairseq opens it; a bare flag: "@@ "
        raise UserError(f"--replace-unk {replace_unk!r}: no such alignment dictionary file (a "
                        f"bare --replace-unk names the file '@@ '); --replace-unk '' copies "
                        f"each unknown word's source word instead")
    if g("input") is None and replace_unk is not None and g("dataset_impl") != "raw":
        raise UserError("--replace-unk reads the source text: it needs a raw text data set "
                        "(--dataset-impl raw)")
    buffer_size, batch_size = g("buffer_size"), g("batch_size")
    if buffer_size is not None and batch_size and batch_size > max(buffer_size, 1):
        raise UserError(f"--batch-size {batch_size} is more than --buffer-size {buffer_size}: "
                        f"fairseq-interactive makes each batch from one chunk of --buffer-size "
                        f"lines; raise --buffer-size to at least {batch_size}")
    check_search(args)
    if g("constraints") and g("input") is None and g("task") in (
            "translation", "translation_multi_simple_epoch", "language_modeling"):
        raise UserError(f"--constraints: fairseq-generate's {g('task')} data sets hold none; "
                        f"give them to fairseq-interactive, tab-separated after each source "
                        f"line")
    if g("print_step", False) and g("input") is None and not _refines(g("task")):
        raise UserError(f"--print-step prints the refinement steps of iterative decoding "
                        f"(--task translation_lev); task {g('task')}'s generator makes none")
    _check_paths(g("path"), g("checkpoint_suffix", "") or "",
                 g("checkpoint_shard_count", 1) or 1)
    if g("lm_path"):
        checkpoint_file("--lm-path", g("lm_path"))
    if g("tokenizer") == "moses" and not (g("source_lang") and g("target_lang")):
        raise UserError("--tokenizer moses takes its languages from --source-lang and "
                        "--target-lang: give both (-s SRC -t TGT)")
    overrides = g("model_overrides")
    if isinstance(overrides, str):
        try:
            compile(overrides, "--model-overrides", "eval")  # fairseq evals it after loading
        except SyntaxError:
            raise UserError(f"--model-overrides {overrides!r} is not a Python expression; give "
                            f"a dict, e.g. \"{{'beam': 5}}\"") from None
    for flag, name, kind in (("--sentencepiece-model", "sentencepiece_model",
                              "a sentencepiece model"),
                             ("--bpe-codes", "bpe_codes", "a BPE codes file")):
        value = g(name)
        if value and value != "???" and "://" not in value:  # (???: not given)
            existing_file(flag, value, kind)
    _check_input(g("input"))


def check_search(args) -> None:
    """The search options fairseq's generator checks only once it is built or meets its first
    batch (a traceback, or an obscure error for --beam 0). Also run for every generator the
    plugin builds, so the hub's keyword arguments get these errors as UserErrors."""
    g = lambda name, default=None: getattr(args, name, default)  # noqa: E731
    beam, nbest, temperature = g("beam", 5), g("nbest", 1), g("temperature", 1.0)
    if beam is not None and beam < 1:
        raise UserError(f"--beam must be at least 1 (got {beam})")
    if nbest is not None and nbest < 1:
        raise UserError(f"--nbest must be at least 1 (got {nbest})")
    if temperature is not None and temperature <= 0:
        raise UserError(f"--temperature must be greater than 0 (got {temperature})")
    sampling, groups = g("sampling", False), g("diverse_beam_groups", -1) or -1
    chosen = [flag for flag, given in (
        ("--sampling", sampling), ("--diverse-beam-groups", groups > 0),
        ("--match-source-len", g("match_source_len", False)),
        ("--diversity-rate", (g("diversity_rate", -1) or -1) > 0)) if given]
    if len(chosen) > 1:
        raise UserError(f"{' and '.join(chosen)} each choose a search strategy: give one")
    for flag, value in (("--sampling-topk", g("sampling_topk", -1)),
                        ("--sampling-topp", g("sampling_topp", -1.0))):
        if value is not None and value >= 0 and not sampling:
            raise UserError(f"{flag} {value} is an option of sampling: add --sampling")
    if groups > 0 and beam and beam % groups:
        raise UserError(f"--beam {beam} is not a multiple of --diverse-beam-groups {groups}: "
                        f"each group searches an equal share of the beams")


def _refines(task) -> bool:
    """Whether `task` (a registered name) is iterative refinement: its generator counts steps."""
    from fairseq.tasks import TASK_REGISTRY
    from fairseq.tasks.translation_lev import TranslationLevenshteinTask

    cls = TASK_REGISTRY.get(task)
    return cls is None or issubclass(cls, TranslationLevenshteinTask)


def _check_paths(paths, suffix, shards):
    if not paths or suffix or shards != 1:  # fairseq derives the file names
        return
    for path in paths.split(os.pathsep):
        if "://" in path:  # fairseq's PathManager reads remote files
            continue
        checkpoint_file("--path", path)


def _check_input(path):
    """fairseq-interactive's --input (None: another tool)."""
    if path is None:
        return
    if path == "-":
        if sys.stdin is None:
            raise UserError("--input -: stdin is closed; give the lines on stdin, or in a file "
                            "with --input FILE")
        return
    existing_file("--input", path, "a text file")
    if not os.access(path, os.R_OK):
        raise UserError(f"--input {path}: not readable")
