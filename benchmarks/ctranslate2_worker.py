"""CTranslate2 on fairseq checkpoints (by default the demo target model,
user_dir_examples/bible_es_en/target.pt), in a process of its own.

Converts the fairseq checkpoint with CTranslate2's own FairseqConverter to float32
(work/ct2/target_fp32), translates the first N sentences of the test set on the CPU and compares
with stock `fairseq-generate` on the same sentences: speed (sentences/s) and the fraction of
hypotheses whose tokens are identical to fairseq's.

    python -m benchmarks.ctranslate2_worker --sentences 200 --beam 5 --batch-size 32

The benchmarks run it this way, in a process of its own (a CTranslate2 runtime in the process
that times torch's engines slows them, and theirs slow it):

    --sources-json S --out-json O   translate the piece lists of S, write {hyps, seconds} to O
    --job JOB.json                  a converted model at a compute type, {hyps, seconds,
                                    peak_rss_mib} to the job's out path
    --convert MODEL OUT             convert MODEL to OUT (float32; --quantization int8, and
                                    --data/--langs/--fixed-dictionary for other checkpoints)

(scripts/ctranslate2_baseline.py runs the same.)

Needs `pip install ctranslate2==4.8.5`. The translate_batch settings mirror fairseq-generate's
defaults (--lenpen 1 --max-len-a 0 --max-len-b 200 --min-len 1 --no-repeat-ngram-size 0):

* Input is sentencepiece pieces (sp.encode(line, out_type=str)), without "</s>": the converted
  model appends </s> to the source itself (config.json add_source_eos) and starts decoding from
  </s> (decoder_start_token), as fairseq does.
* length_penalty=1: CTranslate2 divides a finished hypothesis' log-probability by its length with
  </s> counted, as fairseq divides by step + 1. Scores are natural log; fairseq prints base 2.
* max_decoding_length=201 counts </s>: fairseq allows 200 tokens and then forces </s>. The two
  differ only for a hypothesis that reaches the limit (CTranslate2 then stops without forcing </s>).
* fairseq sets <pad> to -inf after log_softmax; CTranslate2 (which renames <pad> to <blank>) does
  not, so the normalisation is the same and <pad> is simply never the best token.

Order: all N sentences go to one translate_batch call in file order; with more sentences than
--batch-size CTranslate2 sorts them by source length and cuts batches of --batch-size, much like
fairseq (which sorts by target, then source length).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

from benchmarks import ROOT
from benchmarks.probes import peak_rss_mib

EXAMPLE = os.path.join(ROOT, "user_dir_examples", "bible_es_en")
MODEL = os.path.join(EXAMPLE, "target.pt")
WORK = os.path.join(ROOT, "work", "ct2")
BIN = os.path.dirname(sys.executable)


def _demo():
    """scripts/demo.py, which encodes and binarises the first n test pairs."""
    scripts = os.path.join(ROOT, "scripts")
    if scripts not in sys.path:
        sys.path.insert(0, scripts)
    import demo

    return demo

def convert(model_path, data_dir, out_dir, force=False, source_lang="es", target_lang="en",
            fixed_dictionary=None, quantization="float32"):
    """Convert a fairseq transformer (or language model) to a CTranslate2 model in out_dir, its
    weights stored as `quantization`.

    Skipped when out_dir/model.bin is newer than model_path, unless force. fp16 checkpoints are
    fine: the converter copies the weights into a float32 fairseq model before exporting them, and
    quantization="float32" makes float32 explicit. fixed_dictionary: the multilingual task's
    (M2M-100, NLLB).
    """
    done = os.path.join(out_dir, "model.bin")
    if not force and os.path.exists(done) and os.path.getmtime(done) > os.path.getmtime(model_path):
        return out_dir
    # The converter calls torch.load(weights_only=True): fairseq's checkpoint types
    # (argparse.Namespace, OmegaConf) are allowed while it converts.
    from ctranslate2.converters import FairseqConverter

    from fairseq_fast.checkpoints import fairseq_types_allowed

    legacy = _legacy_args_copy(model_path, out_dir.rstrip("/") + ".fairseq.pt")
    try:
        converter = FairseqConverter(legacy or model_path, data_dir, source_lang=source_lang,
                                     target_lang=target_lang, fixed_dictionary=fixed_dictionary)
        with fairseq_types_allowed():
            return converter.convert(out_dir, quantization=quantization, force=True)
    finally:
        if legacy:
            os.remove(legacy)


def _legacy_args_copy(model_path, path):
    """CTranslate2's converter takes a checkpoint's options from its `args` or, without them,
    from `cfg.model`, and sets the data folder there. A model configured by a dataclass (the
    language model) keeps no task options in `cfg.model` and refuses new keys, so the converter
    gets a copy at `path` whose `args` hold the task's and the model's options, as older fairseq
    checkpoints do. Returns that path, or None where the checkpoint serves as it is."""
    import torch
    from omegaconf import OmegaConf

    state = torch.load(model_path, map_location="cpu", mmap=True, weights_only=False)
    model_cfg = (state.get("cfg") or {}).get("model")
    if state.get("args") is not None or not OmegaConf.is_config(model_cfg):
        return None
    task = OmegaConf.to_container(state["cfg"]["task"], resolve=True)
    model = OmegaConf.to_container(model_cfg, resolve=True)
    state["args"] = argparse.Namespace(**{**task, **model, "task": task["_name"],
                                          "arch": model["_name"]})
    torch.save(state, path)
    return path


def thread_counts(text):
    """--ct2-threads "1,2" -> [1, 2]. The benchmarks run CTranslate2 at every count given and
    report it at its fastest: its best intra_threads depends on the machine, the model's size
    and the compute type (with few cores one thread can be several times faster than one per
    core, or slower)."""
    try:
        counts = sorted({int(t) for t in str(text).split(",") if t.strip()})
    except ValueError:
        counts = []
    if not counts or counts[0] < 1:
        raise argparse.ArgumentTypeError(f"expected thread counts like 1,2, not {text!r}")
    return counts


def fastest(rates):
    """{threads: sentences/s (a median over runs)} -> the thread count with the highest."""
    return max(rates, key=rates.get)


def fold_thread_counts(figures, name, counts):
    """Fold figures[f"{name}@{count}"], one per thread count, each with its median "sent_per_s",
    into figures[name]: the fastest count's figures, with that count and every count's
    sentences/s."""
    per_count = {t: figures.pop(f"{name}@{t}") for t in counts}
    rates = {t: f["sent_per_s"] for t, f in per_count.items()}
    best = fastest(rates)
    figures[name] = {**per_count[best], "threads": best, "sent_per_s_by_threads": rates}


def threads_label(counts):
    """[1, 2] -> "best of 1/2 threads"; [2] or 2 (a report from before the lists) ->
    "2 threads"."""
    counts = counts if isinstance(counts, list) else [counts]
    if len(counts) == 1:
        return f"{counts[0]} thread{'' if counts[0] == 1 else 's'}"
    return "best of " + "/".join(map(str, counts)) + " threads"


def load_translator(model_dir, threads=2):
    import ctranslate2

    return ctranslate2.Translator(model_dir, device="cpu", compute_type="float32",
                                  inter_threads=1, intra_threads=threads)


# translate_batch's settings, as fairseq-generate's defaults (see the module docstring)
TRANSLATE_DEFAULTS = dict(length_penalty=1.0, max_decoding_length=201, min_decoding_length=1,
                          no_repeat_ngram_size=0, max_input_length=0)


def translate_tokens(translator, sources, beam_size, max_batch_size, **options):
    """Translate lists of source pieces; return (target piece lists, scores (natural log)).
    options: translate_batch's, over TRANSLATE_DEFAULTS."""
    results = translator.translate_batch(
        sources, beam_size=beam_size, max_batch_size=max_batch_size, return_scores=True,
        **{**TRANSLATE_DEFAULTS, **options})
    return [r.hypotheses[0] for r in results], [r.scores[0] for r in results]


def fairseq_reference(n, beam, batch_size):
    """Stock fairseq-generate on the first n test sentences, cached in work/ct2/*.json.

    Returns {"hyps": {id: [pieces]}, "scores": {id: base-2 score}, "sentences_per_s": float}.
    """
    cache = os.path.join(WORK, f"fairseq_n{n}_beam{beam}_bs{batch_size}.json")
    if os.path.exists(cache):
        with open(cache) as f:
            return json.load(f)
    env = dict(os.environ, TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD="1")  # stock fairseq on torch >= 2.6
    cmd = [os.path.join(BIN, "fairseq-generate"), _demo().binarise(n), "--path", MODEL,
           "--gen-subset", "test", "--beam", str(beam), "--batch-size", str(batch_size),
           "--source-lang", "es", "--target-lang", "en",
           # fairseq drops the last batch when its size is not a multiple of this (default 8),
           # e.g. the longest sentence at --batch-size 1
           "--required-batch-size-multiple", "1"]
    result = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"fairseq-generate failed:\n{result.stderr[-3000:]}")
    hyps = _demo().read_hypotheses(result.stdout)
    ref = {"hyps": {str(i): text.split() for i, (_, text) in hyps.items()},
           "scores": {str(i): score for i, (score, _) in hyps.items()}}
    timing = re.search(r"Translated .* \(([\d.]+) sentences/s", result.stdout + result.stderr)
    ref["sentences_per_s"] = float(timing.group(1))
    with open(cache, "w") as f:
        json.dump(ref, f)
    return ref


def timed_translation(sources, beam, batch_size, threads):
    """Convert (cached), load, warm up, then time translate_batch on `sources` alone:
    (hypotheses, scores, seconds)."""
    model_dir = convert(MODEL, EXAMPLE, os.path.join(WORK, "target_fp32"))
    translator = load_translator(model_dir, threads)
    translate_tokens(translator, sources[:1], beam, 1)  # warm-up
    start = time.perf_counter()
    hyps, scores = translate_tokens(translator, sources, beam, batch_size)
    return hyps, scores, time.perf_counter() - start


def run_job(job_path):
    """Load a converted model with the job's compute_type, warm up, time its decoding of the
    job's sources alone; write {hyps, seconds, peak_rss_mib} to the job's out path. A job is
    {model_dir, compute_type, sources, beam, batch_size, threads, out} and, where needed:
    "options" (translate_batch's or generate_batch's keywords), "target_prefix" (pieces every
    translation starts with; the hypotheses keep them), "generator" (a language model: the
    sources are prompts, the hypotheses their continuations) and "warm_up" (default true)."""
    import ctranslate2

    with open(job_path) as f:
        job = json.load(f)
    kind = ctranslate2.Generator if job.get("generator") else ctranslate2.Translator
    model = kind(job["model_dir"], device="cpu", compute_type=job["compute_type"],
                 inter_threads=1, intra_threads=job["threads"])
    if job.get("warm_up", True):
        _decode(model, job, job["sources"][:1], 1)
    start = time.perf_counter()
    hyps = _decode(model, job, job["sources"], job["batch_size"])
    seconds = time.perf_counter() - start
    with open(job["out"], "w") as f:
        json.dump({"hyps": hyps, "seconds": seconds, "peak_rss_mib": peak_rss_mib()}, f)


def _decode(model, job, sources, batch_size):
    options = dict(job.get("options", {}))
    if job.get("generator"):
        results = model.generate_batch(sources, max_batch_size=batch_size,
                                       beam_size=job["beam"], include_prompt_in_result=False,
                                       **options)
        return [r.sequences[0] for r in results]
    if job.get("target_prefix"):
        options["target_prefix"] = [job["target_prefix"]] * len(sources)
    return translate_tokens(model, sources, job["beam"], batch_size, **options)[0]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=200, help="first N test sentences")
    ap.add_argument("--beam", type=int, default=1, choices=(1, 5))
    ap.add_argument("--batch-size", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2, help="CTranslate2 intra_threads")
    ap.add_argument("--no-fairseq", action="store_true", help="skip the fairseq comparison")
    ap.add_argument("--sources-json", help="translate these source piece lists (a JSON list) "
                    "instead of the test set, write {hyps, seconds} to --out-json and stop")
    ap.add_argument("--out-json")
    ap.add_argument("--job", help="run this job file (see run_job) and stop")
    ap.add_argument("--convert", nargs=2, metavar=("MODEL", "OUT"),
                    help="convert a fairseq checkpoint to a CTranslate2 model and stop")
    ap.add_argument("--data", default=EXAMPLE,
                    help="with --convert: the checkpoint's data folder (its dictionaries)")
    ap.add_argument("--langs", nargs=2, default=("es", "en"), metavar=("SRC", "TGT"),
                    help="with --convert: the source and target languages")
    ap.add_argument("--fixed-dictionary",
                    help="with --convert: the multilingual task's dictionary")
    ap.add_argument("--quantization", default="float32", choices=("float32", "int8"),
                    help="with --convert: how the weights are stored")
    args = ap.parse_args(argv)
    if args.job:
        return run_job(args.job)
    if args.convert:
        convert(args.convert[0], args.data, args.convert[1], source_lang=args.langs[0],
                target_lang=args.langs[1], fixed_dictionary=args.fixed_dictionary,
                quantization=args.quantization)
        return
    if args.sources_json:
        with open(args.sources_json) as f:
            sources = json.load(f)
        hyps, _, seconds = timed_translation(sources, args.beam, args.batch_size, args.threads)
        with open(args.out_json, "w") as f:
            json.dump({"hyps": hyps, "seconds": seconds}, f)
        return
    sources = _demo().encode_test("es", args.sentences)
    hyps, scores, seconds = timed_translation(sources, args.beam, args.batch_size, args.threads)
    print(f"ctranslate2 fp32 beam {args.beam} batch {args.batch_size} threads {args.threads}: "
          f"{len(hyps)} sentences in {seconds:.2f}s ({len(hyps) / seconds:.2f} sentences/s)")
    if args.no_fairseq:
        return
    ref = fairseq_reference(args.sentences, args.beam, args.batch_size)
    same = [i for i, h in enumerate(hyps) if ref["hyps"][str(i)] == h]
    # CTranslate2 scores are natural log; fairseq prints base 2.
    diff = max((abs(scores[i] / 0.6931471805599453 - ref["scores"][str(i)]) for i in same),
               default=0.0)
    print(f"fairseq-generate beam {args.beam} batch {args.batch_size}: "
          f"{ref['sentences_per_s']:.2f} sentences/s")
    print(f"identical to fairseq: {len(same)}/{len(hyps)} = {len(same) / len(hyps):.3f} "
          f"(largest score difference on identical ones {diff:.1e}, base 2)")
    differing = [i for i in range(len(hyps)) if i not in set(same)]
    if differing:
        print("differing ids:", differing[:20])


if __name__ == "__main__":
    main()
