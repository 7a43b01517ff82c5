"""The tables, diagnostic lines and plot of scripts/benchmark_scale.py's JSON: print_tables,
print_diagnostics and plot(report, png), which the script and benchmarks/render.py call.
"""
import json
import os

from benchmarks import ctranslate2_worker as ct2
from benchmarks.engines import (ADAPTIVE_OF, BIG, BIG_ADAPTIVE, DEFAULT, ENGINES, SPEC_ADAPTIVE,
                                SPECULATIVE, SPECULATIVE_ENGINES)
from benchmarks.limits import REGIME_AGREEMENT, same_level
from benchmarks.steps import KERNEL_ROWS

# the JSON key of each speculative engine's figures (alpha, c, bound) in a row
FIGURES_KEY = {SPECULATIVE: "speculative", BIG: "speculative_big"}


def ct2_label(report):
    """CTranslate2's thread counts as the report ran them, for a caption."""
    return ct2.threads_label(report["ct2_threads"])


def _lean_step_share(s, best):
    """The lean step's share of the triads measured around it (of the run's best triad in a
    report from before them)"""
    if "lean_step_triads" not in s:
        return f"{100 * s['lean_step_gbs'] / best:.0f}% of triad"
    before, after = s["lean_step_triads"]
    pair = f"{before:.1f}/{after:.1f}"
    if not same_level(before, after):
        return f"the bandwidth changed level around it: triads {pair} GB/s"
    share = 2 * s["lean_step_gbs"] / (before + after)
    return f"{100 * share:.0f}% of the triads around it, {pair} GB/s"


def _default_share(d, row):
    """The default's batch-1 share of the triad at the bytes it reads, and of which runs"""
    by_run = d.get("read_triad_share_by_run")
    if by_run is None:  # a report from before the triads after each run
        return f"{100 * d['read_triad_share']:.0f}% of the triads just before them"
    runs = len(row["triad_brackets"])
    if not by_run:
        return (f"no share: the bandwidth changed level during each of its {runs} runs (the "
                f"triads before and after differ by more than {100 * REGIME_AGREEMENT:.0f}%)")
    each = ", ".join(f"{100 * share:.0f}% of {triad:.1f}" for share, triad in by_run)
    return (f"{100 * d['read_triad_share']:.0f}% of the triads around them, median of the "
            f"{len(by_run)} of {runs} runs whose triads before and after agree: {each} GB/s")


def print_tables(report):
    bw = report["bandwidth"]
    triad = max(bw["triad_gbs"])
    print(f"\nmemory bandwidth: triad {triad:.1f} GB/s, read {max(bw['read_gbs']):.1f} GB/s "
          f"(best of {len(bw['triad_gbs'])} measurements; arrays {bw['array_mib']} MiB, L3 "
          f"{bw['l3_mib']} MiB); torch {report['threads']} threads, CTranslate2 "
          f"{ct2_label(report)}")
    print("\nsummary (batch-1 greedy unless stated; spec: the demo draft, big: the big draft)")
    print("| x | parameters | weight MB/step (plugin's; read) | default ms/step | "
          "default GB/s (% triad; of what it reads) | "
          "spec / default (bound) | spec / default bs 8 | beam 5 bs 32 default / stock | "
          "spec / CTranslate2 int8 | big / default (bound) | big / default bs 8 | "
          "big / CTranslate2 int8 | adaptive / default, bs 1; bs 8 (spec; big) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for s in report["scales"]:
        rows = {(r["setting"], r["batch_size"]): r for r in s["rows"]}
        g1, g8, b32 = rows.get(("greedy", 1)), rows.get(("greedy", 8)), rows.get(("beam 5", 32))
        d = g1["engines"]["fairseq_fast default"]
        ct2 = g1["engines"].get("CTranslate2 int8")
        spec = g1["engines"]["fairseq_fast speculative"]
        beam = b32["engines"]["fairseq_fast default"]["sent_per_s"] / b32["engines"][
            "stock fairseq"]["sent_per_s"]
        print(f"| {s['factor']} | {s['parameters'] / 1e6:.1f}M | "
              f"{s['weight_bytes_per_step'] / 1e6:.1f} "
              f"({s['weight_bytes_per_step_plugin'] / 1e6:.1f}"
              + (f"; {s['weight_bytes_per_step_read'] / 1e6:.1f}"
                 if "weight_bytes_per_step_read" in s else "")
              + f") | {d['ms_per_token']:.2f} | {d['weight_gbs']:.1f} "
              f"({100 * d.get('triad_share', d['weight_gbs'] / triad):.0f}%"
              + (f"; {100 * d['read_triad_share']:.0f}%" if "read_triad_share" in d else "")
              + ") | "
              f"{g1['speculative']['speedup_vs_default']:.2f}x "
              f"({g1['speculative']['bound']:.2f}x) | "
              f"{g8['speculative']['speedup_vs_default']:.2f}x | "
              f"{beam:.2f}x | "
              + (f"{spec['sent_per_s'] / ct2['sent_per_s']:.2f}x | " if ct2 else "- | ")
              + _big_summary(g1, g8, ct2) + f" {_adaptive_summary(g1, g8)} |")
    for s in report["scales"]:
        print(f"\nx{s['factor']}: {s['embed_dim']} dims, FFN {s['ffn_dim']}, {s['heads']} heads; "
              f"{s['parameters'] / 1e6:.1f}M parameters; decoder weights read per step "
              f"{s['weight_bytes_per_step'] / 1e6:.1f} MB float32 (the plugin's packing "
              f"{s['weight_bytes_per_step_plugin'] / 1e6:.1f} MB, int8 "
              f"{s['weight_bytes_per_step_int8'] / 1e6:.1f} MB); lean step "
              f"{s['target_costs']['lean_step_ms']:.2f} ms = {s['lean_step_gbs']:.1f} GB/s "
              f"({_lean_step_share(s, triad)})"
              + (f"; a read over a buffer of the float32 weights' size runs at "
                 f"{s['read_gbs_at_weights']:.1f} GB/s" if "read_gbs_at_weights" in s else "")
              + (f"; the plugin's matmul on fc1's weight at {KERNEL_ROWS} rows: "
                 f"{s['kernel_gflops']:.0f} GFLOP/s" if "kernel_gflops" in s else ""))
        if "ffn_density" in s:
            g1 = next(r for r in s["rows"] if (r["setting"], r["batch_size"]) == ("greedy", 1))
            d = g1["engines"][DEFAULT]
            read = s["weight_bytes_per_step_read"]
            print(f"fc2 reads the weight rows of nonzero hidden units only: "
                  f"{100 * s['ffn_density']['decoder']:.0f}% of the decoder's were nonzero "
                  f"({100 * s['ffn_density']['encoder']:.0f}% of the encoder's; stock greedy, 8 "
                  f"sentences), so a batch-1 step reads {read / 1e6:.1f} MB; the default's "
                  f"batch-1 runs at that: {read / d['ms_per_token'] / 1e6:.1f} GB/s "
                  f"({_default_share(d, g1)}). GB/s and % of triad below count every weight.")
        print("| setting | batch | engine | sent/s | x stock | x default | identical | "
              "ms/token | weight GB/s | % of triad | peak RSS MiB |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for row in s["rows"]:
            eng = row["engines"]
            for e in ENGINES:
                if e not in eng:
                    continue
                f = eng[e]
                gbs = f.get("weight_gbs")
                shown = e + (f" ({f['threads']} thr)" if "threads" in f else "")
                print(f"| {row['setting']} | {row['batch_size']} | {shown} | "
                      f"{f['sent_per_s']:.2f} | "
                      f"{f['sent_per_s'] / eng['stock fairseq']['sent_per_s']:.2f}x | "
                      f"{f['sent_per_s'] / eng['fairseq_fast default']['sent_per_s']:.2f}x | "
                      f"{100 * f['identical']:.0f}% | {f['ms_per_token']:.2f} | "
                      + (f"{gbs:.1f} | {100 * f.get('triad_share', gbs / triad):.0f}% | "
                         if gbs else "- | - | ")
                      + f"{f['peak_rss_mib']:.0f} |")


def print_diagnostics(report):
    """The lines behind the tables, per target size: the triads around the default's runs,
    each speculative engine's bound and where its time goes, the adaptive schedule's lengths,
    and the identical checks."""
    for s in report["scales"]:
        print(f"\nx{s['factor']}:")
        for row in s["rows"]:
            if row.get("triad_brackets"):
                print(f"{row['setting']}, batch {row['batch_size']}: triads before and after the "
                      f"turns of each of the default's runs " + ", ".join(
                          f"{a:.1f}/{b:.1f}" for a, b in row["triad_brackets"])
                      + " GB/s; % of triad: the default's runs against the mean of the two "
                        "around each, where they agree within "
                        f"{100 * REGIME_AGREEMENT:.0f}% (median), the other engines against the "
                        "median of all of them")
            elif row.get("default_runs_triads"):
                print(_default_runs_line(row))
            elif row.get("triad_gbs"):  # a report from before the triads after each run
                print(f"{row['setting']}, batch {row['batch_size']}: triad just before each of "
                      f"the default's runs " + ", ".join(f"{t:.1f}" for t in row["triad_gbs"])
                      + " GB/s; % of triad: each of the default's runs against the triad just "
                        "before it (median), the other engines against those triads' median")
        for row in s["rows"]:
            for e, key in FIGURES_KEY.items():
                sp = row.get(key)
                if not sp:
                    continue
                c_step = f" (c_step {s['c_step']:.3f})" if e == SPECULATIVE else ""
                print(f"{e[len('fairseq_fast '):]}, batch {row['batch_size']}: alpha "
                      f"{sp['alpha']:.3f}, gamma {sp['gamma']}, c {sp['c']:.3f}{c_step}, E "
                      f"{sp['expected_tokens_per_verify']:.2f} tokens/verify, bound "
                      f"{sp['bound']:.2f}x, speculative / default {sp['speedup_vs_default']:.2f}x "
                      f"= {100 * sp['share_of_bound']:.0f}% of the bound")
                if row["batch_size"] == 1 and "verify_ms" in sp:
                    print(f"  a pass: verify {sp['verify_ms']:.2f} ms (the default: "
                          f"{sp['default_ms_per_token']:.2f} ms a token), drafting "
                          f"{sp['draft_ms_per_verify']:.2f} ms, "
                          + (f"the encoders {sp['encoders_ms_per_verify']:.2f} ms, "
                             if "encoders_ms_per_verify" in sp else "")
                          + f"the rest {sp['other_ms_per_verify']:.2f} ms; "
                          f"{sp['tokens_per_target_call']:.2f} tokens a pass (E "
                          f"{sp['expected_tokens_per_verify']:.2f})")
                warning = _level_warning(sp, row["engines"].get(e, {}))
                if warning:
                    print(warning)
                if row["batch_size"] == 1 and "share_of_bound_ceiling" in sp:
                    print(f"  with the loop free and a verify pass costing a default token "
                          f"(the encoders, drafting and tokens a pass as measured): "
                          f"{100 * sp['share_of_bound_ceiling']:.0f}% of the bound")
            eng = row["engines"]
            for e in SPECULATIVE_ENGINES:
                if "split" in eng.get(e, {}):
                    print(_split_line(e, eng[e]["split"], row, s))
            for e, fixed in ADAPTIVE_OF.items():
                if "mean_draft_len" in eng.get(e, {}):
                    f = eng[e]
                    print(f"{e[len('fairseq_fast '):]}, batch {row['batch_size']}: "
                          f"{f['mean_draft_len']:.2f} drafts a pass on average, alpha "
                          f"{f['alpha']:.3f}; / default "
                          f"{f['sent_per_s'] / eng['fairseq_fast default']['sent_per_s']:.2f}x, "
                          f"/ fixed length {f['sent_per_s'] / eng[fixed]['sent_per_s']:.2f}x")
            if "stock_identical_to_x1" in row:
                print(f"stock {row['setting']} batch {row['batch_size']}: identical to x1 "
                      f"{100 * row['stock_identical_to_x1']:.1f}%")
        if "identical" in s:
            print(f"identical pass: {json.dumps(s['identical'])}")


def _level_warning(sp, figures):
    """A line when a batch-1 verify pass (gamma + 1 positions over the same weights) took less
    than the default's decoder step (its ms/token less its encoders' share): possible only when
    the two engines' runs met different bandwidth levels, which flatters the ratio."""
    split = figures.get("split", {})
    if "verify_ms" not in sp or "default_encoder_share" not in split:
        return None
    step = sp["default_ms_per_token"] * (1 - split["default_encoder_share"])
    if sp["verify_ms"] >= step:
        return None
    return (f"  a verify pass took less than the default's decoder step ({sp['verify_ms']:.2f} "
            f"against {step:.2f} ms): the engines' runs met different bandwidth levels, and "
            f"this ratio over the default is flattered")


def _default_runs_line(row):
    """A batched greedy row's default runs, each with the triads around it."""
    return (f"{row['setting']}, batch {row['batch_size']}: the default's runs "
            + ", ".join(f"{sec:.2f} s (triads {a:.1f}/{b:.1f} GB/s)"
                        for sec, a, b in row["default_runs_triads"])
            + "; where a step of these rows is partly bound by memory, its time moves with the "
              "bandwidth level, and every speedup over it at this batch with it")


def _split_line(engine, sp, row, s):
    """One speculative engine's split_figures, as a line."""
    shares = sp["shares"]
    line = (f"{engine[len('fairseq_fast '):]}, batch {row['batch_size']}, its time: verify "
            f"{100 * shares['verify']:.0f}%, drafting {100 * shares['drafting']:.0f}%, the "
            f"encoders {100 * shares['encoders']:.0f}%, the rest {100 * shares['rest']:.0f}%; "
            f"{sp['verified_per_token']:.2f} positions verified a token, "
            f"{100 * sp['useful_share']:.0f}% of them decided; verify "
            f"{sp['verify_gflops']:.0f} GFLOP/s dense-equivalent")
    if "kernel_gflops" in s:
        line += (f" ({100 * sp['verify_gflops'] / s['kernel_gflops']:.0f}% of the matmul's "
                 f"{s['kernel_gflops']:.0f} at {KERNEL_ROWS} rows)")
    if "decode_speedup" in sp:
        bound = row.get(FIGURES_KEY.get(engine, ""), {}).get("bound")
        line += (f"; decoding alone (the target's encoder and K/V, "
                 f"{100 * sp['default_encoder_share']:.0f}% of the default's time, out of "
                 f"both): {sp['decode_speedup']:.2f}x over the "
                 f"default" + (f" = {100 * sp['decode_speedup'] / bound:.0f}% of the bound"
                               if bound else ""))
    if "no_waste_loop_free" in sp:
        line += (f"; with no position wasted and the loop free: "
                 f"{sp['no_waste_loop_free']:.2f}x")
    return line


def _adaptive_summary(g1, g8):
    """'a1; a8 (spec); b1; b8 (big)': the adaptive engines over the default ('-' where not run)"""
    parts = []
    for e, label in ((SPEC_ADAPTIVE, "spec"), (BIG_ADAPTIVE, "big")):
        ratios = ["-" if not r or e not in r["engines"] else
                  f"{r['engines'][e]['sent_per_s'] / r['engines'][DEFAULT]['sent_per_s']:.2f}x"
                  for r in (g1, g8)]
        parts.append(f"{'; '.join(ratios)} ({label})")
    return "; ".join(parts)


def _big_summary(g1, g8, ct2):
    """The big draft's columns of the summary ('-' where it was not run)."""
    if "speculative_big" not in g1:
        return "- | - | - |"
    big = g1["speculative_big"]
    ratio = (g1["engines"][BIG]["sent_per_s"] / ct2["sent_per_s"]) if ct2 else None
    return (f"{big['speedup_vs_default']:.2f}x ({big['bound']:.2f}x) | "
            + (f"{g8['speculative_big']['speedup_vs_default']:.2f}x | "
               if "speculative_big" in g8 else "- | ")
            + (f"{ratio:.2f}x |" if ratio else "- |"))


def plot(report, png):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scales = report["scales"]
    triad = max(report["bandwidth"]["triad_gbs"])
    mb = [s["weight_bytes_per_step"] / 1e6 for s in scales]
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for e, marker in zip(ENGINES, "os^v<Dx"):
        pts = [(s["weight_bytes_per_step"] / 1e6, r["engines"][e]["ms_per_token"])
               for s in scales for r in s["rows"]
               if (r["setting"], r["batch_size"]) == ("greedy", 1) and e in r["engines"]]
        if pts:
            ax.plot(*zip(*pts), marker=marker, label=f"{e} (ms per token)")
    ax.plot(mb, [s["target_costs"]["lean_step_ms"] for s in scales], color="tab:gray",
            linestyle="-.", marker=".", label="lean decoder step alone")
    ax.plot(mb, [x / triad for x in mb], "k--",
            label=f"float32 weights / triad bandwidth ({triad:.0f} GB/s): the physical limit")
    ax.plot(mb, [s["weight_bytes_per_step_plugin"] / 1e6 / triad for s in scales], "k:",
            label="the same for the weights as the plugin packs them")
    for s, x in zip(scales, mb):
        ax.annotate(f"x{s['factor']}\n{s['parameters'] / 1e6:.0f}M", (x, x / triad),
                    fontsize=8, xytext=(0, -24), textcoords="offset points", ha="center")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(mb, [f"{x:.0f}" for x in mb])
    ax.minorticks_off()
    ax.set_xlabel("decoder weights read per step (MB, float32)")
    ax.set_ylabel("ms per token, greedy, batch 1")
    n = scales[0]["rows"][0]["sentences"]
    ax.set_title(f"demo target widened x{', x'.join(str(s['factor']) for s in scales)}: step time "
                 f"against model size\n({n} sentences, median of {report['repeats']}, torch "
                 f"{report['threads']} threads, CTranslate2 {ct2_label(report)})", fontsize=10)
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(png)), exist_ok=True)
    fig.savefig(png, dpi=110)
