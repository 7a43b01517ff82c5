"""Every change the plugin makes to fairseq, in one place.

Loading the plugin (--user-dir, `import fairseq_fast`, or the hub's user_dir=) applies the
overrides below once. Each replaces an attribute that fairseq looks up at call time (a module
function called through its module, or a class method), so the order in which modules were
imported does not matter. Each keeps the original as `__wrapped__` and can be switched off before
the plugin loads with FAIRSEQ_FAST_OFF=name[,name...] (or FAIRSEQ_FAST_OFF=all).

    name               replaces                                   effect
    generation_flags   fairseq.options.add_generation_args        adds --generator, --draft-path,
                                                                  --draft-len, --adaptive-draft-len,
                                                                  --no-fast-{cache,ngram,prefill,
                                                                  linear,beam}
    remember_flags     fairseq.options.parse_args_and_arch        checks those flags (one-line
                       and, in fairseq_cli.generate /             errors); refuses --fp16 on a
                       interactive when they parse their          CPU, a --max-len-b below
                       command line, the                          --min-len and a missing --path
                       convert_namespace_to_omegaconf they        (cli/checks.py); the flags'
                       call                                       values go into cfg.generation,
                                                                  which build_generator receives
                                                                  (options.carry_into)
    build_generator    FairseqTask.build_generator                --generator speculative builds
                                                                  SpeculativeSequenceGenerator,
                                                                  --generator bild
                                                                  BiLDSequenceGenerator (the
                                                                  default generator, logged,
                                                                  for a model model_gate.py
                                                                  refuses); every generator's
                                                                  search options checked first
                                                                  (cli/checks.check_search: a
                                                                  UserError, not fairseq's
                                                                  assertions)
    fast_defaults      (inside build_generator) fairseq's         --generator default builds
                       SequenceGenerator[WithAlignment]           FastSequenceGenerator[...]:
                                                                  fast cache (--no-fast-cache),
                                                                  prefill (--no-fast-prefill),
                                                                  n-gram blocker (--no-fast-ngram),
                                                                  own beam loop (--no-fast-beam),
                                                                  diverse beam search by place
                                                                  (--no-fast-diverse);
                                                                  fairseq's own decoding path,
                                                                  logged, for a model
                                                                  model_gate.py refuses
    pipeline           fairseq_cli.generate._main,                with --postprocess-workers N > 0
                       fairseq_cli.interactive.main               (or --inflight-batching):
                                                                  async_cli.py's loop (generation
                                                                  only; text made in N processes,
                                                                  written in order); N = 0 (the
                                                                  default) calls the original,
                                                                  a failed output (closed pipe,
                                                                  full disk) ending it with one
                                                                  line (output.py). Applied when
                                                                  the tool parses its command
                                                                  line (its module is loaded by
                                                                  then)
    interactive_input  fairseq_cli.interactive.buffered_read,    a line that is not UTF-8, or too
                       fairseq_cli.interactive.make_batches       long for the model or
                                                                  --max-tokens, gets one line on
                                                                  stderr and no translation; the
                                                                  other lines are answered; read
                                                                  from stdin, the answers are
                                                                  flushed before the next line
                                                                  is awaited, and Ctrl-C ends
                                                                  that wait whichever thread it
                                                                  reaches (interactive_input.py).
                                                                  Applied with `pipeline`
    keep_last_batch    fairseq.data.data_utils.batch_by_size,     keeps the last batch, which
                       FairseqTask.filter_indices_by_size         fairseq drops when its size is
                                                                  not a multiple of
                                                                  --required-batch-size-multiple
                                                                  (losing the longest sentences);
                                                                  a sentence over --max-tokens, or
                                                                  longer than the model takes, is
                                                                  a one-line error (batching.py).
                                                                  Applied when fairseq-generate or
                                                                  fairseq-interactive parses its
                                                                  command line (not in training)
    safe_checkpoints   fairseq.checkpoint_utils.                  weights_only loading with an
                       load_checkpoint_to_cpu,                    allowlist that holds only while
                       load_model_ensemble_and_task               the plugin loads a checkpoint,
                                                                  also under
                                                                  TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD
                                                                  (warned once); a truncated,
                                                                  corrupted, non-finite or
                                                                  malformed file, and weights that
                                                                  do not fit the model its config
                                                                  builds, are one-line errors
                                                                  (checkpoints.py)
    skip_init          fairseq.checkpoint_utils.                  a strict load skips the random
                       load_model_ensemble_and_task,              fills of the model it is about
                       fairseq.models.build_model                 to overwrite (init_skip.py).
                                                                  Only in a command-line tool
                                                                  whose command line draws no
                                                                  random numbers after loading
                                                                  (no sampling, no
                                                                  --retain-dropout)
    user_errors        sys.excepthook                             UserError (and a missing file's
                                                                  FileNotFoundError, a missing
                                                                  package's ImportError) -> one
                                                                  line, exit 2.
                                                                  Applied when a command-line tool
                                                                  parses its command line
                                                                  (parse_args_and_arch) and by
                                                                  python -m fairseq_fast.generate:
                                                                  a program that imports the
                                                                  plugin (the hub) gets plain
                                                                  exceptions

Nothing else process-wide changes when the plugin is imported: no exception hook, no signal
handler, no torch setting (threads, weights-only allowlist, default dtype).

What is replaced in fairseq_cli.generate or fairseq_cli.interactive is replaced in `__main__` too
when the tool runs as `python -m fairseq_cli.generate` (or .interactive): that module object is
the one whose globals the running tool reads.
"""
import atexit
import logging
import os
import sys
from argparse import Namespace

from fairseq_fast import checkpoints, errors, init_skip, options
from fairseq_fast.cli import checks as cli_checks
from fairseq_fast.errors import UserError

logger = logging.getLogger("fairseq_fast")
OFF_ENV = "FAIRSEQ_FAST_OFF"
applied = {}
# Tasks with a build_generator of their own that --generator speculative and bild still serve:
# translation_multi_simple_epoch (M2M-100, NLLB) only names its target language token, to be
# left out of the output, and then builds fairseq's generator through ours.
DRAFT_TASKS = ("translation_multi_simple_epoch",)


def _off(name: str) -> bool:
    off = {x.strip() for x in os.environ.get(OFF_ENV, "").split(",")}
    return name.split(":")[0] in off or "all" in off


def _replace(owner, attr: str, make_new, name: str) -> None:
    if name in applied or _off(name):
        return
    original = getattr(owner, attr)
    new = make_new(original)
    new.__wrapped__ = original
    setattr(owner, attr, new)
    applied[name] = (owner, attr, original)


# -- command line ---------------------------------------------------------------------------
def _add_generation_args(original):
    def add_generation_args(parser):
        group = original(parser)
        from fairseq.dataclass.utils import gen_parser_from_dataclass

        ours = parser.add_argument_group("fairseq_fast")
        gen_parser_from_dataclass(ours, options.FastGenerationConfig())
        return group

    return add_generation_args


def _parse_args_and_arch(original):
    def parse_args_and_arch(parser, input_args=None, *args, **kwargs):
        command_line_errors()
        parsed = original(parser, input_args, *args, **kwargs)
        if hasattr(parsed, "generator"):
            cfg = options.resolve(parsed)
            # no input_args (sys.argv): a tool's own command line, not a program's list
            cli_checks.check(parsed, tool=input_args is None)
            init_skip.allow(parsed)
            _replace_cli_mains()
            _keep_last_batch()
            for flag, given in (("--postprocess-workers", cfg.postprocess_workers),
                                ("--inflight-batching", cfg.inflight_batching)):
                if given and _off("pipeline"):
                    raise UserError(f"{flag} needs the 'pipeline' override, which {OFF_ENV} "
                                    f"switches off")
            if cfg.generator != "default" or cfg.inflight_batching:
                options.check_generation_args(parsed, cfg)
                from fairseq.tasks import TASK_REGISTRY, FairseqTask

                task_cls = TASK_REGISTRY.get(getattr(parsed, "task", None))
                if task_cls is not None and task_cls.build_generator is not \
                        FairseqTask.build_generator and parsed.task not in DRAFT_TASKS:
                    what = (f"--generator {cfg.generator}" if cfg.generator != "default"
                            else "--inflight-batching")
                    raise UserError(f"{what} is not supported for task {parsed.task} (it "
                                    f"builds its own generator)")
        return parsed

    return parse_args_and_arch


# -- generator choice ------------------------------------------------------------------------
def _build_generator(original):
    def build_generator(self, models, args, seq_gen_cls=None, extra_gen_cls_kwargs=None,
                        prefix_allowed_tokens_fn=None):
        cli_checks.check_search(args)
        cfg = options.resolve(args)
        if cfg.postprocess_workers and not options.from_command_line(args):
            raise UserError("postprocess_workers is a fairseq-generate / fairseq-interactive "
                            "option (--postprocess-workers), not a generation setting")
        if cfg.inflight_batching and not options.from_command_line(args):
            raise UserError("inflight_batching is a fairseq-generate / fairseq-interactive "
                            "option (--inflight-batching), not a generation setting; in Python, "
                            "call the generator's generate_stream()")
        if (cfg.generator != "default" or cfg.inflight_batching) and seq_gen_cls is None:
            options.check_generation_args(args, cfg, extra_gen_cls_kwargs,
                                          prefix_allowed_tokens_fn)
            generator = build_draft_generator(self, models, args, cfg, extra_gen_cls_kwargs)
            if generator is not None:
                return generator
        if seq_gen_cls is None and not _off("fast_defaults"):
            seq_gen_cls, extra_gen_cls_kwargs = fast_default_generator(
                args, cfg, extra_gen_cls_kwargs)
        return original(self, models, args, seq_gen_cls=seq_gen_cls,
                        extra_gen_cls_kwargs=extra_gen_cls_kwargs,
                        prefix_allowed_tokens_fn=prefix_allowed_tokens_fn)

    return build_generator


def fast_default_generator(args, cfg, extra_gen_cls_kwargs):
    """The class fairseq would pick (SequenceGenerator, or ...WithAlignment for
    --print-alignment), in its fast form, with the --no-fast-* choices."""
    from fairseq_fast.generators.fast import (FastDefaults, FastSequenceGenerator,
                                             FastSequenceGeneratorWithAlignment)

    diverse = (getattr(args, "diverse_beam_groups", -1) or -1) > 0 and not cfg.no_fast_diverse
    fast = FastDefaults(cache=not cfg.no_fast_cache, prefill=not cfg.no_fast_prefill,
                        ngram=not cfg.no_fast_ngram, kernels=not cfg.no_fast_linear,
                        beam_loop=not cfg.no_fast_beam, diverse=diverse)
    if not fast.any():
        return None, extra_gen_cls_kwargs
    extra = dict(extra_gen_cls_kwargs or {}, fast=fast)
    if getattr(args, "print_alignment", False):
        extra["print_alignment"] = args.print_alignment
        return FastSequenceGeneratorWithAlignment, extra
    return FastSequenceGenerator, extra


def build_draft_generator(task, models, args, cfg, extra_gen_cls_kwargs=None):
    """SpeculativeSequenceGenerator or BiLDSequenceGenerator, with the draft loaded (once), or
    for the default generator with --inflight-batching the speculative loop drafting nothing
    (greedy search); None (logged once) where model_gate.py refuses the target or the draft: the
    caller then builds the default generator, which gives stock's output for the target."""
    from fairseq_fast.generators.bild import BiLDSequenceGenerator
    from fairseq_fast.speculative.draft_loading import load_draft, shares_encoder
    from fairseq_fast.speculative.draft_vocab import shortlist
    from fairseq_fast.decoding.model_gate import decoder_refusal, log_once
    from fairseq_fast.generators.speculative import SpeculativeSequenceGenerator

    models = list(models)
    g = lambda name, default: getattr(args, name, default)  # noqa: E731
    # the default generator here: greedy search with --inflight-batching, no drafts
    method = "none" if cfg.generator == "default" else cfg.draft_method
    draft = load_draft(task, cfg.draft_path, models[0]) if method == "model" else None
    for role, model in (("target", models[0]), ("draft", draft)):
        if model is None:
            continue
        reason = decoder_refusal(getattr(model, "decoder", None))
        if reason is not None:
            log_once(reason, f"fairseq_fast: --generator {cfg.generator} is not available for "
                             f"this {role} model ({reason}); generating with the default "
                             f"generator instead")
            return None
    common = dict(
        beam_size=g("beam", 5), max_len_a=g("max_len_a", 0), max_len_b=g("max_len_b", 200),
        min_len=g("min_len", 1), normalize_scores=not g("unnormalized", False),
        len_penalty=g("lenpen", 1), unk_penalty=g("unkpen", 0),
        temperature=g("temperature", 1.0), sampling=g("sampling", False),
        no_repeat_ngram_size=g("no_repeat_ngram_size", 0),
        kernels=not cfg.no_fast_linear,
        shared_encoder=None if draft is None else shares_encoder(models[0], draft),
        draft_method=method, draft_layers=int(cfg.draft_layers),
        symbols_to_strip_from_output=(extra_gen_cls_kwargs or {}).get(
            "symbols_to_strip_from_output"))
    if cfg.generator == "bild":
        generator = BiLDSequenceGenerator(
            models, task.target_dictionary, small_model=draft,
            fallback_threshold=float(cfg.bild_fallback_threshold),
            rollback_threshold=float(cfg.bild_rollback_threshold),
            max_small_steps=int(cfg.bild_max_small_steps), **common)
    elif cfg.generator == "default":
        return SpeculativeSequenceGenerator(models, task.target_dictionary,
                                            name="greedy decoding", **common)
    else:
        generator = SpeculativeSequenceGenerator(
            models, task.target_dictionary, draft_model=draft, draft_len=int(cfg.draft_len),
            adaptive_draft_len=bool(cfg.adaptive_draft_len),
            draft_vocab=shortlist(task.target_dictionary, int(cfg.draft_vocab),
                                  cfg.draft_vocab_counts),
            sampling_topk=g("sampling_topk", -1), sampling_topp=g("sampling_topp", -1.0),
            ngram_min=int(cfg.ngram_min), ngram_max=int(cfg.ngram_max), **common)
    if options.from_command_line(args):  # print the summary beside fairseq's at exit
        atexit.register(_summary_after_success, generator)
    return generator


def _summary_after_success(generator) -> None:
    """The generator's summary line, at exit of a run that ended normally: after an uncaught
    exception (Python sets sys.last_value before the exception hook runs) its counts would
    describe a run that did not finish."""
    if getattr(sys, "last_value", None) is None:
        logger.info(generator.stats.summary())


# -- post-processing pipeline ----------------------------------------------------------------
def _generate_main(original):
    def _main(cfg, output_file):
        workers = options.postprocess_workers(cfg)
        if workers == 0 and not getattr(cfg.generation, "inflight_batching", False):
            from fairseq_fast.cli.output import guarded

            guarded_file = guarded(output_file)
            try:
                result = original(cfg, guarded_file)
            except KeyboardInterrupt:
                guarded_file.flush_lines()  # the whole lines fairseq's loop printed stay
                raise _interrupted() from None
            guarded_file.flush()
            return result
        from fairseq_fast.cli import async_cli

        return async_cli.generate(cfg, output_file, workers)

    return _main


def _interactive_main(original):
    def main(cfg):
        if isinstance(cfg, Namespace):
            from fairseq.dataclass.utils import convert_namespace_to_omegaconf

            cfg = _convert(convert_namespace_to_omegaconf)(cfg)
        workers = options.postprocess_workers(cfg)
        if workers == 0 and not getattr(cfg.generation, "inflight_batching", False):
            from fairseq_fast.cli.output import guarded_stdout

            with guarded_stdout():
                try:
                    return original(cfg)
                except KeyboardInterrupt:
                    # the whole lines fairseq's loop printed stay
                    getattr(sys.stdout, "flush_lines", sys.stdout.flush)()
                    raise _interrupted() from None
        from fairseq_fast.cli import async_cli

        return async_cli.interactive(cfg, workers)

    return main


def _interrupted():
    """Ctrl-C in fairseq's own serial loop (no workers): one line and status 130, as the
    workers' loop ends (async_cli)."""
    from fairseq_fast.cli.async_cli import RunStopped

    return RunStopped("interrupted (Ctrl-C)", 130)


def _convert(original):
    """convert_namespace_to_omegaconf as the generation tools call it: our flags go along in
    cfg.generation (options.carry_into), so build_generator reads them from the config it gets."""
    def convert_namespace_to_omegaconf(args):
        cfg = original(args)
        return options.carry_into(cfg, args) if hasattr(args, "generator") else cfg

    return convert_namespace_to_omegaconf


def _replace_cli_mains():
    """The two tools' main functions, where their modules are loaded. fairseq_cli.interactive
    configures logging when imported, so it is never imported here: its cli_main has imported
    it before it parses the command line (and calls this)."""
    for tag, generate in _cli_modules("fairseq_cli.generate"):
        _replace(generate, "convert_namespace_to_omegaconf", _convert,
                 "remember_flags:generate" + tag)
        _replace(generate, "_main", _generate_main, "pipeline" + tag)
    for tag, interactive in _cli_modules("fairseq_cli.interactive"):
        from fairseq_fast.cli import interactive_input

        _replace(interactive, "convert_namespace_to_omegaconf", _convert,
                 "remember_flags:interactive" + tag)
        _replace(interactive, "main", _interactive_main, "pipeline:interactive" + tag)
        _replace(interactive, "buffered_read", interactive_input.read_lines,
                 "interactive_input" + tag)
        _replace(interactive, "make_batches", interactive_input.checked_batches,
                 "interactive_input:batches" + tag)


def _cli_modules(name: str):
    """The loaded module `name`, and __main__ when `python -m name` runs it: that module object
    is not sys.modules[name] (which is absent, or a second copy), and it is the one whose
    globals the running tool reads, so it needs the same overrides."""
    found = []
    module = sys.modules.get(name)
    if module is not None:
        found.append(("", module))
    main = sys.modules.get("__main__")
    if main is not None and main is not module and \
            getattr(getattr(main, "__spec__", None), "name", None) == name:
        found.append((":__main__", main))
    return found


def _keep_last_batch():
    """fairseq-generate's and fairseq-interactive's batches, when they parse their command line:
    training (fairseq-train loads plugins too) keeps fairseq's batching."""
    from fairseq.data import data_utils
    from fairseq.tasks import FairseqTask

    from fairseq_fast.cli import batching

    _replace(data_utils, "batch_by_size", batching.keep_last_batch, "keep_last_batch")
    _replace(FairseqTask, "filter_indices_by_size", batching.too_long_is_one_line,
             "keep_last_batch:sizes")


# -- apply --------------------------------------------------------------------------------------
def apply() -> None:
    from fairseq import checkpoint_utils
    from fairseq import models as fairseq_models
    from fairseq import options as fairseq_options
    from fairseq.tasks import FairseqTask

    _replace(fairseq_options, "add_generation_args", _add_generation_args, "generation_flags")
    _replace(fairseq_options, "parse_args_and_arch", _parse_args_and_arch, "remember_flags")
    _replace(FairseqTask, "build_generator", _build_generator, "build_generator")
    _replace_cli_mains()
    _replace(checkpoint_utils, "load_checkpoint_to_cpu", checkpoints.guarded_load,
             "safe_checkpoints")
    _replace(checkpoint_utils, "load_model_ensemble_and_task", checkpoints.guarded_ensemble,
             "safe_checkpoints:ensemble")
    _replace(checkpoint_utils, "load_model_ensemble_and_task", init_skip.skipping_ensemble,
             "skip_init")
    _replace(fairseq_models, "build_model", init_skip.skipping_build, "skip_init:build")


def command_line_errors() -> None:
    """The `user_errors` override, which only a command-line tool applies (when it parses its
    command line): a program that imports the plugin keeps its own exception hook."""
    if not _off("user_errors") and "user_errors" not in applied:
        errors.install_excepthook()
        applied["user_errors"] = (sys, "excepthook", None)
