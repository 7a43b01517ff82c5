"""fairseq-generate and fairseq-interactive with --postprocess-workers N > 0.

overrides.py routes the two tools' main functions here when N > 0 (N = 0 runs fairseq's own,
serial loop). Set-up is fairseq's: the same task, checkpoint loading, batch iterator,
`task.build_generator` (so --generator speculative/bild and the fast defaults apply) and scorer,
in the same order, with the same log lines. What differs is the loop: it only generates and hands
each batch to the pipeline (pipeline.py), which formats it in worker processes (postprocess.py)
and writes it in order. Output is byte for byte fairseq's, except the lines that carry timings.
"""
import ast
import logging
import os
import sys
import time
from itertools import chain

import numpy as np
import torch
from fairseq import checkpoint_utils, scoring, tasks, utils
from fairseq.logging import progress_bar
from fairseq.logging.meters import StopwatchMeter, TimeMeter

from fairseq_fast.errors import UserError
from fairseq_fast.cli.pipeline import Pipeline
from fairseq_fast.cli.streaming import (Chunks, Request, generated_batches, inflight_rows,
                                        input_is_file, sample_request)
from fairseq_fast.cli.postprocess import (GenerateLines, InteractiveLines, add_to_scorer, originals,
                                      pack_generated, pack_interactive)


class RunStopped(UserError):
    """The pipeline stopped the run (a fault, Ctrl-C); `exit_code` is the process status.
    Raised after everything generated was written: the process exits without finalising, past
    fairseq's still-running data-loader thread (errors.py)."""

    exit_now = True

    def __init__(self, message, exit_code):
        super().__init__(message)
        self.exit_code = exit_code


def _seed_and_device(cfg):
    if cfg.common.seed is not None and not cfg.generation.no_seed_provided:
        np.random.seed(cfg.common.seed)
        utils.set_torch_seed(cfg.common.seed)
    return torch.cuda.is_available() and not cfg.common.cpu


def _load(cfg, task, logger):
    overrides = ast.literal_eval(cfg.common_eval.model_overrides)
    logger.info("loading model(s) from {}".format(cfg.common_eval.path))
    models, saved_cfg = checkpoint_utils.load_model_ensemble(
        utils.split_paths(cfg.common_eval.path), arg_overrides=overrides, task=task,
        suffix=cfg.checkpoint.checkpoint_suffix,
        strict=(cfg.checkpoint.checkpoint_shard_count == 1),
        num_shards=cfg.checkpoint.checkpoint_shard_count)
    return models, saved_cfg, overrides


def _prepare(cfg, models, use_cuda):
    for model in models:
        if model is None:
            continue
        if cfg.common.fp16:
            model.half()
        if use_cuda and not cfg.distributed_training.pipeline_model_parallel:
            model.cuda()
        model.prepare_for_inference_(cfg)


class GenerationSetUp:
    """What fairseq_cli.generate builds before its loop, for our loops (this module's and
    generate.py's): the task and its dictionaries, the models and LM (loaded and prepared), the
    dataset, the generator `task.build_generator` gives, the alignment dictionary."""

    def __init__(self, cfg, logger, use_cuda: bool):
        self.task = task = tasks.setup_task(cfg.task)
        try:
            self.src_dict = getattr(task, "source_dictionary", None)
        except NotImplementedError:
            self.src_dict = None
        self.tgt_dict = task.target_dictionary
        self.models, saved_cfg, overrides = _load(cfg, task, logger)
        task.load_dataset(cfg.dataset.gen_subset, task_cfg=saved_cfg.task)
        self.dataset = task.dataset(cfg.dataset.gen_subset)
        lms = [None]
        if cfg.generation.lm_path is not None:
            overrides["data"] = cfg.task.data
            lms, _ = checkpoint_utils.load_model_ensemble([cfg.generation.lm_path],
                                                          arg_overrides=overrides, task=None)
        _prepare(cfg, chain(self.models, lms), use_cuda)
        self.align_dict = utils.load_align_dict(cfg.generation.replace_unk)
        self.generator = task.build_generator(
            self.models, cfg.generation,
            extra_gen_cls_kwargs={"lm_model": lms[0], "lm_weight": cfg.generation.lm_weight})

    def batch_iterator(self, cfg, num_shards: int, shard_id: int):
        return self.task.get_batch_iterator(
            dataset=self.dataset, max_tokens=cfg.dataset.max_tokens,
            max_sentences=cfg.dataset.batch_size,
            max_positions=utils.resolve_max_positions(
                self.task.max_positions(), *[m.max_positions() for m in self.models]),
            ignore_invalid_inputs=cfg.dataset.skip_invalid_size_inputs_valid_test,
            required_batch_size_multiple=cfg.dataset.required_batch_size_multiple,
            seed=cfg.common.seed, num_shards=num_shards, shard_id=shard_id,
            num_workers=cfg.dataset.num_workers, data_buffer_size=cfg.dataset.data_buffer_size)

    def lines(self, cfg, string_scorer: bool) -> GenerateLines:
        """fairseq-generate's text for a generated batch (postprocess.py)."""
        from fairseq_cli.generate import get_symbols_to_strip_from_output

        return GenerateLines(cfg, self.src_dict, self.tgt_dict,
                             self.task.build_tokenizer(cfg.tokenizer), self.task.build_bpe(cfg.bpe),
                             self.align_dict, get_symbols_to_strip_from_output(self.generator),
                             string_scorer=string_scorer)


def _run(pipeline, loop):
    """Run the generation loop; end it cleanly on a fault or Ctrl-C, writing what was done."""
    interrupted = False
    try:
        loop()
    except KeyboardInterrupt:
        interrupted = True
    try:
        pipeline.close()
    except KeyboardInterrupt:  # a second Ctrl-C: stop now
        pipeline.kill()
        os._exit(130)
    if pipeline.problem is not None:
        message, status = pipeline.problem
        raise RunStopped(f"{message}; wrote {pipeline.written()} generated before it; "
                         "stopping", status)
    if interrupted:
        raise RunStopped(f"interrupted: wrote {pipeline.written()} generated before Ctrl-C",
                         130)


def generate(cfg, output_file, workers: int):
    """fairseq_cli.generate._main with the loop's post-processing in `workers` processes."""
    logging.basicConfig(format="%(asctime)s | %(levelname)s | %(name)s | %(message)s",
                        datefmt="%Y-%m-%d %H:%M:%S",
                        level=os.environ.get("LOGLEVEL", "INFO").upper(), stream=output_file)
    logger = logging.getLogger("fairseq_cli.generate")
    utils.import_user_module(cfg.common)
    if cfg.dataset.max_tokens is None and cfg.dataset.batch_size is None:
        cfg.dataset.max_tokens = 12000
    logger.info(cfg)
    use_cuda = _seed_and_device(cfg)

    setup = GenerationSetUp(cfg, logger, use_cuda)
    task, models, generator = setup.task, setup.models, setup.generator
    tgt_dict, align_dict = setup.tgt_dict, setup.align_dict
    itr = setup.batch_iterator(cfg, num_shards=cfg.distributed_training.distributed_world_size,
                               shard_id=cfg.distributed_training.distributed_rank
                               ).next_epoch_itr(shuffle=False)
    progress = progress_bar.progress_bar(
        itr, log_format=cfg.common.log_format, log_interval=cfg.common.log_interval,
        default_log_format=("tqdm" if not cfg.common.no_progress_bar else "simple"))
    gen_timer = StopwatchMeter()
    scorer = scoring.build_scorer(cfg.scoring, tgt_dict)
    lines = setup.lines(cfg, string_scorer=hasattr(scorer, "add_string"))
    inflight = bool(getattr(cfg.generation, "inflight_batching", False))
    rows = inflight_rows(cfg, task, generator) if inflight else 0
    pipeline = Pipeline(workers, lines, output_file, lambda s: add_to_scorer(scorer, s))
    if workers:
        logger.info(f"fairseq_fast: post-processing in {workers} worker processes")
    if inflight:
        logger.info(f"fairseq_fast: in-flight batching, up to {rows} sentences at a time")
    state = {"sentences": 0, "has_target": True}

    def loop():
        wps_meter = TimeMeter()
        samples = (utils.move_to_cuda(s) if use_cuda else s for s in progress)
        seq = 0
        for sample, hypos, seconds in generated_batches(
                generator, task, models, samples,
                lambda sample: sample_request(sample, cfg.generation.prefix_size), rows):
            if hypos is None:
                continue
            num_generated_tokens = sum(len(h[0]["tokens"]) for h in hypos)
            gen_timer.sum += seconds  # StopwatchMeter's start/stop, the time measured apart
            gen_timer.n += num_generated_tokens
            ids = sample["id"].tolist()
            raw = (originals(task, cfg.dataset.gen_subset, ids)
                   if align_dict is not None else None)
            pipeline.put(pack_generated(seq, sample, hypos, cfg.generation.nbest, raw))
            seq += 1
            state["has_target"] = sample["target"] is not None
            wps_meter.update(num_generated_tokens)
            progress.log({"wps": round(wps_meter.avg)})
            state["sentences"] += (sample["nsentences"] if "nsentences" in sample
                                   else sample["id"].numel())
            if pipeline.problem is not None:
                return

    _run(pipeline, loop)
    num_sentences = state["sentences"]
    logger.info("NOTE: hypothesis and token scores are output in base 2")
    logger.info("Translated {:,} sentences ({:,} tokens) in {:.1f}s ({:.2f} sentences/s, "
                "{:.2f} tokens/s)".format(num_sentences, gen_timer.n, gen_timer.sum,
                                          num_sentences / gen_timer.sum, 1.0 / gen_timer.avg))
    if state["has_target"]:
        if cfg.bpe and not cfg.generation.sacrebleu:
            if cfg.common_eval.post_process:
                logger.warning(
                    "BLEU score is being computed by splitting detokenized string on spaces, "
                    "this is probably not what you want. Use --sacrebleu for standard 13a BLEU "
                    "tokenization")
            else:
                logger.warning(
                    "If you are using BPE on the target side, the BLEU score is computed on "
                    "BPE tokens, not on proper words.  Use --sacrebleu for standard 13a BLEU "
                    "tokenization")
        print("Generate {} with beam={}: {}".format(cfg.dataset.gen_subset, cfg.generation.beam,
                                                   scorer.result_string()), file=output_file)
    return scorer


def interactive(cfg, workers: int):
    """fairseq_cli.interactive.main with each input buffer's output formatted in `workers`
    processes, so that the next buffer is read and translated meanwhile."""
    from fairseq_cli.interactive import buffered_read, make_batches
    from fairseq.token_generation_constraints import unpack_constraints
    from fairseq_cli.generate import get_symbols_to_strip_from_output

    logger = logging.getLogger("fairseq_cli.interactive")
    start_time = time.time()
    total_translate_time = 0
    utils.import_user_module(cfg.common)
    if cfg.interactive.buffer_size < 1:
        cfg.interactive.buffer_size = 1
    if cfg.dataset.max_tokens is None and cfg.dataset.batch_size is None:
        cfg.dataset.batch_size = 1
    assert not cfg.generation.sampling or cfg.generation.nbest == cfg.generation.beam, \
        "--sampling requires --nbest to be equal to --beam"
    assert not cfg.dataset.batch_size or cfg.dataset.batch_size <= cfg.interactive.buffer_size, \
        "--batch-size cannot be larger than --buffer-size"
    logger.info(cfg)
    use_cuda = _seed_and_device(cfg)
    task = tasks.setup_task(cfg.task)
    models, _, _ = _load(cfg, task, logger)
    src_dict, tgt_dict = task.source_dictionary, task.target_dictionary
    _prepare(cfg, models, use_cuda)
    generator = task.build_generator(models, cfg.generation)
    tokenizer, bpe = task.build_tokenizer(cfg.tokenizer), task.build_bpe(cfg.bpe)

    def encode_fn(x):
        if tokenizer is not None:
            x = tokenizer.encode(x)
        if bpe is not None:
            x = bpe.encode(x)
        return x

    align_dict = utils.load_align_dict(cfg.generation.replace_unk)
    max_positions = utils.resolve_max_positions(task.max_positions(),
                                                *[m.max_positions() for m in models])
    if cfg.generation.constraints:
        logger.warning("NOTE: Constrained decoding currently assumes a shared subword vocabulary.")
    if cfg.interactive.buffer_size > 1:
        logger.info("Sentence buffer size: %s", cfg.interactive.buffer_size)
    lines = InteractiveLines(cfg, src_dict, tgt_dict, tokenizer, bpe, align_dict,
                             get_symbols_to_strip_from_output(generator))
    inflight = bool(getattr(cfg.generation, "inflight_batching", False))
    rows = inflight_rows(cfg, task, generator) if inflight else 0
    pipeline = Pipeline(workers, lines, sys.stdout, lambda scored: None)
    if workers:
        logger.info(f"fairseq_fast: post-processing in {workers} worker processes")
    from_file = input_is_file(cfg.interactive.input)
    if inflight:
        across = ("across --buffer-size chunks" if from_file
                  else "within each --buffer-size chunk (the input is not a file)")
        logger.info(f"fairseq_fast: in-flight batching, up to {rows} sentences at a time "
                    f"{across}")
    logger.info("NOTE: hypothesis and token scores are output in base 2")
    logger.info("Type the input sentence and press return:")

    def samples(inputs):
        """(batch, sample, constraints) of each batch of a chunk of input lines"""
        for batch in make_batches(inputs, cfg, task, max_positions, encode_fn):
            src_tokens, src_lengths = batch.src_tokens, batch.src_lengths
            constraints = batch.constraints
            if use_cuda:
                src_tokens, src_lengths = src_tokens.cuda(), src_lengths.cuda()
                constraints = constraints.cuda() if constraints is not None else None
            yield batch, {"net_input": {"src_tokens": src_tokens,
                                        "src_lengths": src_lengths}}, constraints

    def answers(results, first_id, entry, translations, translate_time):
        """A batch's hypotheses as the chunk's printer takes them."""
        nonlocal total_translate_time
        batch, sample, constraints = entry
        src_tokens = sample["net_input"]["src_tokens"]
        total_translate_time += translate_time
        bsz = src_tokens.size(0)
        list_constraints = ([unpack_constraints(c) for c in constraints]
                            if cfg.generation.constraints else [[] for _ in range(bsz)])
        for i, (id, hypos) in enumerate(zip(batch.ids.tolist(), translations)):
            results.append((first_id + id, utils.strip_pad(src_tokens[i], tgt_dict.pad()),
                            hypos, {"constraints": list_constraints[i],
                                    "time": translate_time / len(translations)}))

    def request(entry):
        return Request(entry[1], None, entry[2])

    def loop():
        buffers = buffered_read(cfg.interactive.input, cfg.interactive.buffer_size)
        if inflight:  # one stream across chunks
            chunks = Chunks(buffers, samples, from_file)
            results = []
            for item, translations, translate_time in generated_batches(
                    generator, task, models, chunks,
                    lambda item: None if item.entry is None else request(item.entry), rows,
                    ready=chunks.ready):
                if item.entry is not None:
                    answers(results, item.first_id, item.entry, translations, translate_time)
                if item.last:
                    pipeline.put(pack_interactive(item.seq, results, cfg.generation.nbest))
                    results = []
                    if pipeline.problem is not None:
                        return
            return
        start_id = 0
        for seq, inputs in enumerate(buffers):
            results = []
            for entry, translations, translate_time in generated_batches(
                    generator, task, models, samples(inputs), request):
                answers(results, start_id, entry, translations, translate_time)
            pipeline.put(pack_interactive(seq, results, cfg.generation.nbest))
            start_id += len(inputs)
            if pipeline.problem is not None:
                return

    _run(pipeline, loop)
    logger.info("Total time: {:.3f} seconds; translation time: {:.3f}".format(
        time.time() - start_time, total_translate_time))
