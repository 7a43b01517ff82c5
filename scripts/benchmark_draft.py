#!/usr/bin/env python3
"""Drafts made by fairseq-fast-draft against the demo's hand-made ones: acceptance rate, and
speculative decoding over the default generator at batch 1 and 8.

    python scripts/benchmark_draft.py [--made work/draft/draft.pt] [--hours 1] [--factors 1,4]
                                      [--sentences 40] [--batch-sentences 64] [--repeats 3]
                                      [--slices 4] [--part translation|lm]
                                      [--lm-train-hours 0.75] [--lm-folder work/draft_lm]
                                      [--json work/benchmark_draft.json]

The draft under test is what `fairseq-fast-draft --target target.pt --data work/data/bin --out
MADE --hours H` makes of the demo target and its training data-bin (scripts/prepare_data.py,
made when missing: from ../shared/data's TSV where there is one, else from Debian's packages),
as if the demo's drafts did not exist. It is made when --made is missing (an hour and some
minutes on 2 cores); the tool's own report (its stages, alpha on the valid split) goes into the
JSON. Beside it, the hand-made drafts: draft.pt (the demo draft, trained from scratch, then
distilled) and draft_big.pt (the target's encoder and first 3 decoder layers, distilled for
hours).

For each target (the demo target widened x1 and x4: scripts/widen_model.py, the same function
at 16 times the weights) and batch size (1 and 8), on --sentences (--batch-sentences) sentences
drawn from the demo test set: the plugin's default generator, greedy, and speculative decoding
with each draft, at --draft-len 4 and with --adaptive-draft-len, every engine as
task.build_generator builds it from the plugin's flags. On a widened target, one more draft:
the made draft widened as the target was, which is what fairseq-fast-draft makes of the widened
target itself (its first decoder layers at the target's width, its encoder shared), where the
made draft at x1 width is a small draft of the kind one trains apart. They take turns slice by slice
(benchmarks.engines.measure; the order rotates between repeats; medians). Per speculative engine:
the speed over the default generator, alpha, tokens per target call and the share of sentences
identical to the default's (float32).

With --part lm, the same for a language model at x1 instead: a Transformer LM of 6 layers x
512 trained on the corpus's English side for --lm-train-hours (made when missing, in
--lm-folder), its draft made by fairseq-fast-draft with --hours, prompts from the English test
set (a line's first tokens, at most 32 and half the line), 64 new tokens each. Each part is a
run of its own: report.py's draft and draftlm steps.
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, ROOT)
from benchmarks.harness import write_report  # noqa: E402
from benchmarks.models import DATA, WORK, training_data, widened_target  # noqa: E402

BIN = os.path.dirname(sys.executable)


# -- models ---------------------------------------------------------------------------------
def make_draft(target, data, out, hours):
    """fairseq-fast-draft's draft of `target` (made when missing); (its report, wall seconds of
    the run that made it or None)."""
    report = os.path.splitext(out)[0] + ".json"
    seconds = None
    if not os.path.exists(out):
        os.makedirs(os.path.dirname(out), exist_ok=True)
        start = time.time()
        subprocess.run([os.path.join(BIN, "fairseq-fast-draft"), "--target", target,
                        "--data", data, "--out", out, "--hours", str(hours)], check=True)
        seconds = time.time() - start
    with open(report) as f:
        return json.load(f), seconds


def language_model(hours, folder):
    """A Transformer LM on the corpus's English side, in `folder` (made when missing):
    (checkpoint, data-bin, wall seconds of its training or None)."""
    import demo
    from fairseq_fast.draft.export import slim

    data, path = os.path.join(folder, "data-bin"), os.path.join(folder, "target.pt")
    if os.path.exists(path):
        return path, data, None
    training_data()
    tok = os.path.join(DATA, "tok")
    if not os.path.exists(os.path.join(data, "train.bin")):
        subprocess.run([os.path.join(BIN, "fairseq-preprocess"), "--only-source",
                        "--srcdict", os.path.join(demo.EXAMPLE, "dict.en.txt"),
                        "--trainpref", os.path.join(tok, "train.en"),
                        "--validpref", os.path.join(tok, "valid.en"),
                        "--testpref", os.path.join(tok, "test.en"), "--destdir", data,
                        "--workers", "2"], check=True, stdout=subprocess.DEVNULL)
    save = os.path.join(folder, "ckpt")
    start = time.time()
    subprocess.run(
        [os.path.join(BIN, "fairseq-train"), data, "--task", "language_modeling",
         "--arch", "transformer_lm", "--decoder-layers", "6", "--decoder-embed-dim", "512",
         "--decoder-ffn-embed-dim", "2048", "--decoder-attention-heads", "8",
         "--decoder-normalize-before", "--share-decoder-input-output-embed",
         "--tokens-per-sample", "128", "--sample-break-mode", "eos", "--dropout", "0.1",
         "--optimizer", "adam", "--adam-betas", "(0.9,0.98)", "--clip-norm", "0.0",
         "--lr", "1e-3", "--lr-scheduler", "inverse_sqrt", "--warmup-updates", "300",
         "--warmup-init-lr", "1e-7", "--max-tokens", "4096", "--stop-time-hours", str(hours),
         "--save-dir", save, "--no-epoch-checkpoints", "--num-workers", "0", "--seed", "1",
         "--log-format", "simple", "--log-interval", "50"],
        check=True, env=dict(os.environ, TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD="1"))
    slim(os.path.join(save, "checkpoint_best.pt"), path, data=data)
    return path, data, time.time() - start


def widened_draft(made, factor):
    """The made draft widened `factor` times (widen_model.py, made when missing or older): what
    fairseq-fast-draft makes of the widened target itself. Layer dropping and the frozen encoder
    commute with widening, so this draft computes what the made one computes, at the widened
    target's width: its decoder layers cost what the target's do, and its encoder is the
    widened target's (shared)."""
    import widen_model

    path = os.path.splitext(made)[0] + f"_x{factor}.pt"
    if not os.path.exists(path) or os.path.getmtime(path) < os.path.getmtime(made):
        widen_model.widen_checkpoint(made, path, factor)
    return path


# -- engines --------------------------------------------------------------------------------
def measure_target(path, data, split, drafts, args, batch_size, label):
    """Rows of one target at one batch size: each draft at --draft-len 4 and adaptive."""
    import torch
    from fairseq import checkpoint_utils

    from benchmarks.engines import measure, target_engine
    from benchmarks.models import target_inputs
    from fairseq_fast.draft import target as tgt
    from fairseq_fast.speculative.draft_loading import load_draft, shares_encoder

    info = tgt.inspect(path, checkpoint_utils.load_checkpoint_to_cpu(path))
    if info.kind == tgt.TRANSLATION:
        info.source_lang, info.target_lang = "es", "en"
    model, task = tgt.load(path, data, info)
    n = args.sentences if batch_size == 1 else args.batch_sentences
    batches = target_inputs(task, info, data, split, n, batch_size)
    generators = {"default": task.build_generator([model], tgt.generation_args(info))}
    draft_of = {}
    for name, draft in drafts.items():
        for adaptive in (False, True):
            engine_name = f"{name}{', adaptive' if adaptive else ''}"
            draft_of[engine_name] = draft
            generators[engine_name] = task.build_generator(
                [model], tgt.generation_args(info, generator="speculative", draft_path=draft,
                                             draft_len=4, adaptive_draft_len=adaptive))
    engines = [target_engine(e, g, model, task, info, batches) for e, g in generators.items()]
    print(f"[draft] {label}, batch {batch_size}: {sum(len(b) for b in batches)} sentences, "
          f"{len(engines)} engines", flush=True)
    figures, _ = measure(engines, args.repeats, sum(len(b) for b in batches), args.slices,
                         reference="default")
    default = figures["default"]["sent_per_s"]
    rows = []
    for e, g in generators.items():
        if e == "default":
            continue
        draft = draft_of[e]
        stats = g.stats
        rows.append({"target": label, "batch_size": batch_size, "engine": e,
                     "speed_over_default": round(figures[e]["sent_per_s"] / default, 3),
                     "alpha": round(stats.alpha, 4),
                     "tokens_per_target_call": round(stats.tokens_per_target_call, 3),
                     "identical": round(figures[e]["identical"], 4),
                     "ms_per_token": round(figures[e]["ms_per_token"], 3),
                     "default_ms_per_token": round(figures["default"]["ms_per_token"], 3),
                     "encoder_shared": shares_encoder(model, load_draft(task, draft, model))})
    del model, generators, engines
    torch.cuda.empty_cache() if torch.cuda.is_available() else None
    return rows


# -- report -------------------------------------------------------------------------------------
def summary_rows(report, section):
    """(draft, alpha at x1 bs1, {(target, batch): speed}) per draft, adaptive or fixed length as
    the faster at each setting."""
    rows = report[section]["rows"]
    drafts = []
    for row in rows:
        name = row["engine"].replace(", adaptive", "")
        if name not in drafts:
            drafts.append(name)
    out = []
    for name in drafts:
        mine = [r for r in rows if r["engine"].replace(", adaptive", "") == name]
        fixed = [r for r in mine if not r["engine"].endswith("adaptive")]
        alpha = fixed[0]["alpha"] if fixed else None
        speeds = {}
        for r in mine:
            key = (r["target"], r["batch_size"])
            speeds[key] = max(speeds.get(key, 0), r["speed_over_default"])
        out.append((name, alpha, speeds))
    return out


def print_tables(report):
    made = report.get("made", {})
    stages = made.get("stages", {})
    lines = []
    if stages:
        data, train = stages.get("data", {}), stages.get("train", {})
        took = made.get("wall_seconds") or report.get("made_seconds")
        lines.append(
            f"The draft under test: `fairseq-fast-draft --hours {report['hours']:g}` on the "
            f"demo target and its training data-bin"
            + (f", {took / 60:.0f} minutes of wall time" if took else "")
            + f": the target's first {made.get('decoder_layers')} decoder layers, encoder "
            f"{'frozen and shared' if made.get('encoder_frozen') else 'trained'}; distillation "
            f"data {data.get('train_sentences', 0):,} sentences in "
            f"{data.get('seconds', 0) / 60:.1f} minutes, {train.get('updates', 0):,} training "
            f"updates, teacher-forced agreement on the valid split "
            f"{train.get('agreement', 0):.1f}%.")
    for section, title in (("translation", "Speculative decoding over the default generator "
                            "(the faster of --draft-len 4 and --adaptive-draft-len), and alpha "
                            "(--draft-len 4, x1, batch 1)"),
                           ("lm", "The same on a language model (x1)")):
        if section not in report:
            continue
        rows = summary_rows(report, section)
        keys = sorted({k for _, _, speeds in rows for k in speeds},
                      key=lambda k: (int(k[0][1:]), k[1]))
        lines.append("")
        lines.append(f"{title}:")
        lines.append("")
        lines.append("| draft | alpha | " + " | ".join(f"{t} bs{b}" for t, b in keys) + " |")
        lines.append("|---|---|" + "---|" * len(keys))
        for name, alpha, speeds in rows:
            lines.append(f"| {name} | {alpha:.3f} | "
                         + " | ".join(f"{speeds[k]:.2f}x" if k in speeds else "-" for k in keys)
                         + " |")
    for section in ("translation", "lm"):
        if section not in report:
            continue
        lines.append("")
        lines.append(f"Every run ({section}):")
        lines.append("")
        lines.append("| target | batch | engine | x default | alpha | tokens/call | identical | "
                     "ms/token | default ms/token | encoder shared |")
        lines.append("|---|---|---|---|---|---|---|---|---|---|")
        for r in report[section]["rows"]:
            lines.append(f"| {r['target']} | {r['batch_size']} | {r['engine']} | "
                         f"{r['speed_over_default']:.2f}x | {r['alpha']:.3f} | "
                         f"{r['tokens_per_target_call']:.2f} | {100 * r['identical']:.1f}% | "
                         f"{r['ms_per_token']:.2f} | {r['default_ms_per_token']:.2f} | "
                         f"{'yes' if r['encoder_shared'] else 'no'} |")
    print("\n".join(lines))


def main():
    import torch

    import demo

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--made", default=os.path.join(WORK, "draft", "draft.pt"),
                    help="the draft fairseq-fast-draft made (made when missing)")
    ap.add_argument("--hours", type=float, default=1.0, help="fairseq-fast-draft's --hours")
    ap.add_argument("--factors", default="1,4")
    ap.add_argument("--sentences", type=int, default=40, help="batch-1 sentences")
    ap.add_argument("--batch-sentences", type=int, default=64, help="batch-8 sentences")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--slices", type=int, default=4)
    ap.add_argument("--part", choices=("translation", "lm"), default="translation",
                    help="the demo translation target (x1 and --factors), or a language model "
                         "trained on the corpus's English side")
    ap.add_argument("--lm-train-hours", type=float, default=0.75)
    ap.add_argument("--lm-folder", default=os.path.join(WORK, "draft_lm"),
                    help="where the language model, its data-bin and its draft are kept")
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--json", default=os.path.join(WORK, "benchmark_draft.json"))
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    report = {"hours": args.hours, "threads": args.threads}
    if args.part == "translation":
        target = os.path.join(demo.EXAMPLE, "target.pt")
        made, seconds = make_draft(target, training_data(), args.made, args.hours)
        report.update(made=made, made_seconds=seconds)
        drafts = {"fairseq-fast-draft": args.made,
                  "demo draft (hand-made)": os.path.join(demo.EXAMPLE, "draft.pt"),
                  "big draft (hand-made)": os.path.join(demo.EXAMPLE, "draft_big.pt")}
        test = demo.binarise()
        rows = []
        for factor in (int(f) for f in args.factors.split(",")):
            path = widened_target(factor, target)
            these = dict(drafts)
            if factor > 1:
                these[f"fairseq-fast-draft widened x{factor}"] = widened_draft(args.made, factor)
            for batch_size in (1, 8):
                rows += measure_target(path, test, "test", these, args, batch_size,
                                       f"x{factor}")
        report["translation"] = {"rows": rows}
    else:
        lm, lm_data, lm_seconds = language_model(args.lm_train_hours, args.lm_folder)
        lm_draft = os.path.join(args.lm_folder, "draft.pt")
        lm_made, lm_made_seconds = make_draft(lm, lm_data, lm_draft, args.hours)
        lm_rows = []
        for batch_size in (1, 8):
            lm_rows += measure_target(lm, lm_data, "test", {"fairseq-fast-draft": lm_draft},
                                      args, batch_size, "x1")
        report["lm"] = {"rows": lm_rows, "made": lm_made, "made_seconds": lm_made_seconds,
                        "train_seconds": lm_seconds}
    write_report(args.json, report)
    print_tables(report)


if __name__ == "__main__":
    main()
