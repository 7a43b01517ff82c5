#!/usr/bin/env python3
"""Speculative decoding with no trained draft (--draft-method ngram, layers) against a model
draft and the default generator: on a copy-heavy pair, on the demo MT pair at x1 and x4, and
with sources of several hundred tokens.

    python scripts/benchmark_draft_free.py [--sentences 30] [--batch-sentences 64]
        [--long-sentences 12] [--repeats 3] [--slices 2] [--factors 1,4] [--copy-factors 1,4]
        [--copy work/copy] [--copy-hours 0.7] [--copy-draft-hours 0.25] [--sweep-sentences 16]
        [--json work/benchmark_draft_free.json]

Settings (greedy, beam 1):
  copy     scripts/copy_pair.py's English->English denoising target (made when missing: about
           --copy-hours of training, then fairseq-fast-draft --copy-draft-hours for its model
           draft), its test verses; batch 1 (--sentences) and 8 (--batch-sentences)
  copy xF  the same target widened F times (--copy-factors; scripts/widen_model.py: the same
           outputs, so the same alpha, at a real model's size), batch 1 and 8; no model draft
  long     the same target on paragraphs of 8 test verses (several hundred tokens each, the
           output as long), batch 1 and 8 (--long-sentences)
  mt xF    the demo Spanish->English target widened F times (scripts/widen_model.py), its test
           set, batch 1 and 8; model draft: draft.pt at x1, draft_big.pt beyond
Engines per setting: the default generator, and speculative decoding with each proposer, at
--draft-len 4 and with --adaptive-draft-len (which may choose plain steps: length 0), every one
built by task.build_generator from the plugin's flags. They take turns slice by slice
(benchmarks.engines.measure; the order rotates between repeats; medians). Per engine: the speed
over the default generator, alpha, tokens per target call, the share of the output written by
plain steps, and the share of sentences identical to the default's (float32).

Then, for --draft-method layers:
  sweep    every K (--draft-layers 1 .. depth - 1) at --draft-len 4 on the copy target and the
           demo target at its widest factor, batch 1 (--sweep-sentences): alpha and speed;
           the default K is chosen from these
  reuse    what reusing the draft's K/V of the first K layers in the verify pass could save
           (LayerSkip): the draft's own pass over 5 positions less its pass over 1 (its first K
           layers and output projection for the 4 positions it already computed: an upper
           bound), against the target's verify pass over 5 positions and a draft step
  widths   the target's pass over 1, 2, 3 and 5 inputs per row at batch 1, 8 and 32: what each
           drafted position adds to a verify pass, and so the most any draft could give
and the n-gram lookup's own cost per round, at 1 and 8 rows of 40 and 400 tokens.
"""
import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, ROOT)
from benchmarks.harness import write_report  # noqa: E402

WORK = os.path.join(ROOT, "work")
DRAFT_LEN = 4
LONG_LIMITS = dict(max_len_a=1.2, max_len_b=10)  # outputs as long as the paragraphs


def engines(model_draft, **limits):
    """{engine: the plugin's generation options}"""
    spec = lambda **kw: dict(generator="speculative", draft_len=DRAFT_LEN, **limits,  # noqa
                             **kw)
    out = {"default": dict(limits)}
    for name, kw in (("ngram", dict(draft_method="ngram")),
                     ("layers", dict(draft_method="layers")),
                     ("model draft", dict(draft_path=model_draft))):
        if name == "model draft" and model_draft is None:
            continue
        out[name] = spec(**kw)
        out[f"{name}, adaptive"] = spec(adaptive_draft_len=True, **kw)
    return out


def load_target(path, data, langs):
    from fairseq import checkpoint_utils

    from fairseq_fast.draft import target as tgt

    info = tgt.inspect(path, checkpoint_utils.load_checkpoint_to_cpu(path))
    info.source_lang, info.target_lang = langs
    model, task = tgt.load(path, data, info)
    return model, task, info


def measure_setting(label, path, data, langs, split, options, batch_size, n, args):
    """Rows of one setting at one batch size: every engine of `options` over the default."""
    from benchmarks.engines import measure, target_engine
    from benchmarks.models import target_inputs
    from fairseq_fast.draft import target as tgt

    model, task, info = load_target(path, data, langs)
    batches = target_inputs(task, info, data, split, n, batch_size)
    generators = {e: task.build_generator([model], tgt.generation_args(info, **kw))
                  for e, kw in options.items()}
    runs = [target_engine(e, g, model, task, info, batches) for e, g in generators.items()]
    sentences = sum(len(b) for b in batches)
    print(f"[draft-free] {label}, batch {batch_size}: {sentences} sentences, "
          f"{len(runs)} engines", flush=True)
    figures, _ = measure(runs, args.repeats, sentences, args.slices, reference="default")
    default = figures["default"]
    rows = []
    for e, g in generators.items():
        stats = getattr(g, "stats", None)
        row = {"setting": label, "batch_size": batch_size, "engine": e,
               "speed_over_default": round(figures[e]["sent_per_s"] / default["sent_per_s"], 3),
               "identical": round(figures[e]["identical"], 4),
               "ms_per_token": round(figures[e]["ms_per_token"], 3),
               "tokens": figures[e]["tokens"]}
        if stats is not None:
            row.update(alpha=round(stats.alpha, 4),
                       tokens_per_target_call=round(stats.tokens_per_target_call, 3),
                       plain_share=round(stats.plain_share, 4),
                       drafts_offered_per_round=round(stats.proposed
                                                      / max(stats.row_rounds, 1), 3))
        rows.append(row)
    return rows


def layer_sweep(label, path, data, langs, split, n, args):
    """alpha and speed of --draft-method layers at every K, --draft-len 4, batch 1."""
    from benchmarks.engines import measure, target_engine
    from benchmarks.models import target_inputs
    from fairseq_fast.draft import target as tgt

    model, task, info = load_target(path, data, langs)
    depth = len(model.decoder.layers)
    options = {"default": {}}
    for k in range(1, depth):
        options[f"K={k}"] = dict(generator="speculative", draft_method="layers",
                                 draft_layers=k, draft_len=DRAFT_LEN)
    batches = target_inputs(task, info, data, split, n, 1)
    generators = {e: task.build_generator([model], tgt.generation_args(info, **kw))
                  for e, kw in options.items()}
    runs = [target_engine(e, g, model, task, info, batches) for e, g in generators.items()]
    print(f"[draft-free] layer sweep, {label}: {len(batches)} sentences, K = 1..{depth - 1}",
          flush=True)
    figures, _ = measure(runs, max(args.repeats - 1, 1), len(batches), 1, reference="default")
    rows = []
    for e, g in generators.items():
        if e == "default":
            continue
        rows.append({"setting": label, "layers": int(e[2:]), "depth": depth,
                     "alpha": round(g.stats.alpha, 4),
                     "speed_over_default": round(figures[e]["sent_per_s"]
                                                 / figures["default"]["sent_per_s"], 3)})
    return rows


def pass_ms(backend, encoder_out, context, rows, widths, repeats):
    """Median milliseconds of backend.forward over each of `widths` inputs per row, for `rows`
    rows after the context [1, C] in every row (rolled back after each pass); the widths take
    turns within each repeat: {width: ms}."""
    import torch

    state = backend.init_state(encoder_out, rows, 64)
    backend.forward(state, context.expand(rows, -1))
    after = torch.full((rows,), context.size(1))
    feeds = {w: context[:, :w].expand(rows, -1).contiguous() for w in widths}
    times = {w: [] for w in widths}
    for repeat in range(repeats + 1):  # the first untimed: each width's first call warms up
        for w, feed in feeds.items():
            start = time.perf_counter()
            backend.forward(state, feed)
            if repeat:
                times[w].append(time.perf_counter() - start)
            backend.rollback(state, after)
    return {w: round(1e3 * statistics.median(t), 4) for w, t in times.items()}


def timed_models(path, data, langs, split, k=None, rows=1):
    """(the target, the speculative generator of --draft-method layers with K = k, the encoder
    output of `rows` copies of one test sentence, a 24-token context): what pass_ms runs on."""
    import torch

    from benchmarks.models import target_inputs
    from fairseq_fast.decoding.fused_layer import encode
    from fairseq_fast.generators.speculative import SpeculativeSequenceGenerator

    model, task, info = load_target(path, data, langs)
    spec = SpeculativeSequenceGenerator([model], task.target_dictionary,
                                        draft_method="layers", draft_layers=k or 0)
    source = target_inputs(task, info, data, split, 1, 1)[0][0].tokens
    net_input = {"src_tokens": source[None].expand(rows, -1).contiguous(),
                 "src_lengths": torch.full((rows,), source.numel())}
    context = torch.randint(task.target_dictionary.nspecial, len(task.target_dictionary),
                            (1, 24), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        encoder_out = encode(model, spec.encoder, net_input)
    return model, spec, encoder_out, context


def reuse_bound(label, path, data, langs, split, k=None, repeats=200):
    """Milliseconds: the target's verify pass over 5 positions and over 1, the draft's (the
    target's first k layers) pass over 5 and over 1, batch 1, after a 24-token context."""
    import torch

    model, spec, encoder_out, context = timed_models(path, data, langs, split, k)
    out = {"layers": len(spec.proposer.backend.lean.decoder.layers),
           "depth": len(model.decoder.layers)}
    with torch.no_grad():  # as the generators run
        for name, backend in (("target", spec.target), ("draft", spec.proposer.backend)):
            for width, ms in pass_ms(backend, encoder_out, context, 1, (1, 5), repeats).items():
                out[f"{name}_{width}_ms"] = ms
    out["setting"] = label
    out["saving_share_of_verify"] = round(
        (out["draft_5_ms"] - out["draft_1_ms"]) / out["target_5_ms"], 4)
    return out


def pass_widths(label, path, data, langs, split, widths=(1, 2, 3, 5), repeats=100):
    """Milliseconds of the target's pass over each of `widths` inputs per row, at batch 1, 8
    and 32, after a 24-token context (a verify pass of k drafts has k + 1 inputs a row)."""
    import torch

    rows = []
    for batch in (1, 8, 32):
        _, spec, encoder_out, context = timed_models(path, data, langs, split, rows=batch)
        with torch.no_grad():
            ms = pass_ms(spec.target, encoder_out, context, batch, widths,
                         repeats if batch < 32 else max(repeats // 4, 1))
            rows.append({"setting": label, "batch_size": batch,
                         "ms": {str(w): v for w, v in ms.items()}})
    return rows


def lookup_cost(rows, length, source, repeats=2000):
    """Microseconds per --draft-method ngram lookup of `rows` rows of `length` tokens with
    sources of `source` tokens (the C kernel on a CPU), with an n-gram found in every row."""
    import torch

    from fairseq_fast.speculative.ngram import lookup

    g = torch.Generator().manual_seed(0)
    src = torch.randint(4, 4000, (rows, source), generator=g)
    tokens = torch.cat([torch.full((rows, 1), 2), src[:, :length - 1],
                        torch.ones(rows, 16, dtype=torch.long)], dim=1)
    tokens[:, length - 3:length] = src[:, 5:8]  # the suffix occurs in the source
    n_tokens = torch.full((rows,), length)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        lookup(tokens, n_tokens, src, 1, 3, 8, 1, 2)
        times.append(time.perf_counter() - start)
    return {"rows": rows, "length": length, "source": source,
            "us": round(1e6 * statistics.median(times), 2)}


def summary(report):
    """The summary table's lines: per setting and batch size, each proposer's speed over the
    default generator at --draft-len 4 / adaptive."""
    rows = report["rows"]
    names = ["ngram", "layers", "model draft"]
    lines = ["| setting | batch | " + " | ".join(f"{n} (fixed / adaptive)" for n in names)
             + " |", "|---|---|" + "---|" * len(names)]
    keys = []
    for r in rows:
        if (r["setting"], r["batch_size"]) not in keys:
            keys.append((r["setting"], r["batch_size"]))
    for setting, batch in keys:
        mine = {r["engine"]: r for r in rows
                if r["setting"] == setting and r["batch_size"] == batch}
        cells = []
        for n in names:
            if n not in mine:
                cells.append("-")
                continue
            cells.append(f"{mine[n]['speed_over_default']:.2f}x / "
                         f"{mine[n + ', adaptive']['speed_over_default']:.2f}x")
        lines.append(f"| {setting} | {batch} | " + " | ".join(cells) + " |")
    return lines


def print_tables(report):
    lines = ["Speculative decoding over the default generator, greedy, at --draft-len "
             f"{DRAFT_LEN} / with --adaptive-draft-len:", ""] + summary(report)
    lines += ["", "Every run:", "",
              "| setting | batch | engine | x default | alpha | tokens/call | plain steps' "
              "share | drafts offered/round | identical | ms/token |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for r in report["rows"]:
        lines.append(
            f"| {r['setting']} | {r['batch_size']} | {r['engine']} | "
            f"{r['speed_over_default']:.2f}x | {r.get('alpha', '-')} | "
            f"{r.get('tokens_per_target_call', '-')} | "
            + (f"{100 * r['plain_share']:.1f}%" if "plain_share" in r else "-")
            + f" | {r.get('drafts_offered_per_round', '-')} | {100 * r['identical']:.1f}% | "
            f"{r['ms_per_token']:.2f} |")
    if report.get("sweep"):
        lines += ["", f"--draft-method layers at each K (--draft-len {DRAFT_LEN}, batch 1):", "",
                  "| setting | K of depth | alpha | x default |", "|---|---|---|---|"]
        for r in report["sweep"]:
            lines.append(f"| {r['setting']} | {r['layers']} of {r['depth']} | {r['alpha']:.3f} "
                         f"| {r['speed_over_default']:.2f}x |")
    if report.get("lookup"):
        lines += ["", "The n-gram lookup's own cost per round (the C kernel; 3- down to 1-grams, "
                  "8 tokens drafted):", "", "| rows | tokens per row | source tokens | "
                  "microseconds |", "|---|---|---|---|"]
        for r in report["lookup"]:
            lines.append(f"| {r['rows']} | {r['length']} | {r['source']} | {r['us']:.1f} |")
    if report.get("reuse"):
        lines += ["", "Reusing the draft's K/V in the verify pass (LayerSkip), batch 1, "
                  "milliseconds: what it could save at most (the draft's pass over 5 positions "
                  "less its pass over 1) against the verify pass:", "",
                  "| setting | K of depth | verify pass, 5 positions | target step | draft "
                  "step | draft over 5 positions | saving, share of the verify pass |",
                  "|---|---|---|---|---|---|---|"]
        for r in report["reuse"]:
            lines.append(f"| {r['setting']} | {r['layers']} of {r['depth']} | "
                         f"{r['target_5_ms']:.3f} | {r['target_1_ms']:.3f} | "
                         f"{r['draft_1_ms']:.3f} | {r['draft_5_ms']:.3f} | "
                         f"{100 * r['saving_share_of_verify']:.1f}% |")
    if report.get("widths"):
        widths = list(report["widths"][0]["ms"])
        lines += ["", "The target's pass by inputs per row (a verify pass of k drafts has k + 1), "
                  "after a 24-token context: milliseconds (over one input per row); the most "
                  "a draft that costs nothing and is always accepted could give over plain "
                  "steps (w tokens a pass of w inputs, at the best w measured):", "",
                  "| setting | batch | " + " | ".join(f"{w} per row" for w in widths)
                  + " | perfect draft, at most |",
                  "|---|---|" + "---|" * (len(widths) + 1)]
        for r in report["widths"]:
            one = r["ms"][widths[0]]
            best = max(widths, key=lambda w: int(w) * one / r["ms"][w])
            lines.append(f"| {r['setting']} | {r['batch_size']} | " + " | ".join(
                f"{r['ms'][w]:.3f} ({r['ms'][w] / one:.2f}x)" for w in widths)
                + f" | {int(best) * one / r['ms'][best]:.2f}x ({int(best) - 1} drafts) |")
    print("\n".join(lines))


def main():
    import torch

    import copy_pair
    import demo
    from benchmarks.models import widened_target

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=30, help="batch-1 sentences")
    ap.add_argument("--batch-sentences", type=int, default=64, help="batch-8 sentences")
    ap.add_argument("--long-sentences", type=int, default=12,
                    help="paragraphs of the long-source setting, at each batch size")
    ap.add_argument("--sweep-sentences", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--slices", type=int, default=2)
    ap.add_argument("--factors", default="1,4", help="widenings of the demo MT target")
    ap.add_argument("--copy-factors", default="1,4", help="widenings of the copy target")
    ap.add_argument("--copy", default=os.path.join(WORK, "copy"),
                    help="the copy pair's folder (scripts/copy_pair.py --out)")
    ap.add_argument("--copy-hours", type=float, default=0.7)
    ap.add_argument("--copy-draft-hours", type=float, default=0.25)
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--json", default=os.path.join(WORK, "benchmark_draft_free.json"))
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    copy_target, copy_draft, copy_data = copy_pair.build(args.copy, args.copy_hours,
                                                         args.copy_draft_hours)
    copy_langs = (copy_pair.SRC, copy_pair.TGT)
    mt_data = demo.binarise()
    factors = [int(f) for f in args.factors.split(",")]
    report = {"threads": args.threads, "draft_len": DRAFT_LEN, "copy_hours": args.copy_hours,
              "copy_draft_hours": args.copy_draft_hours, "rows": [], "sweep": [], "reuse": [],
              "widths": []}
    for factor in (int(f) for f in args.copy_factors.split(",")):
        path = widened_target(factor, copy_target)
        label = "copy" if factor == 1 else f"copy x{factor}"
        options = engines(copy_draft if factor == 1 else None)
        for batch_size, n in ((1, args.sentences), (8, args.batch_sentences)):
            report["rows"] += measure_setting(label, path, copy_data, copy_langs, "test",
                                              options, batch_size, n, args)
    for batch_size in (1, 8):
        report["rows"] += measure_setting(
            "long", copy_target, copy_data, copy_langs, "test1",
            engines(copy_draft, **LONG_LIMITS), batch_size, args.long_sentences, args)
    for factor in factors:
        path = widened_target(factor, os.path.join(demo.EXAMPLE, "target.pt"))
        draft = os.path.join(demo.EXAMPLE, "draft.pt" if factor == 1 else "draft_big.pt")
        for batch_size, n in ((1, args.sentences), (8, args.batch_sentences)):
            report["rows"] += measure_setting(f"mt x{factor}", path, mt_data, ("es", "en"),
                                              "test", engines(draft), batch_size, n, args)
    widest = widened_target(factors[-1], os.path.join(demo.EXAMPLE, "target.pt"))
    for label, path, data, langs in (("copy", copy_target, copy_data, copy_langs),
                                     (f"mt x{factors[-1]}", widest, mt_data, ("es", "en"))):
        report["sweep"] += layer_sweep(label, path, data, langs, "test", args.sweep_sentences,
                                       args)
        report["reuse"].append(reuse_bound(label, path, data, langs, "test"))
        report["widths"] += pass_widths(label, path, data, langs, "test")
    report["lookup"] = [lookup_cost(rows, length, length) for rows, length in
                        ((1, 40), (8, 40), (1, 400), (8, 400))]
    write_report(args.json, report)
    print_tables(report)


if __name__ == "__main__":
    main()
