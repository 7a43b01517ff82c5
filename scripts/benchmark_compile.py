#!/usr/bin/env python3
"""torch.compile of the decoder step (Inductor on CPU, with freezing) against the plugin's C kernels.

    python scripts/benchmark_compile.py [--models demo,x4] [--repeats 7] [--json FILE]

One greedy decoder step, every row at step 20 of a 30-token source, at 1 and 32 rows, for the
demo target and (when scripts/benchmark_scale.py has built it: work/scale/target_x4.pt) its x4
widening:

    kernels   the plugin's C decoder backend (a whole layer per call, the
              small-matrix linear, attention), as the speculative and default generators run it
    compiled  the same step written as torch ops over the same weights, static shapes (one graph
              per setting), compiled by torch.compile (Inductor, with
              torch._inductor.config.freezing, so weights are constants it may pack)
    eager     that torch function, uncompiled

Steps are timed in rounds that alternate the three (benchmarks.harness.interleave, the order
rotating); medians. The compiled step's logits are compared with the kernels' (max abs
difference): the same arithmetic in float32, rounded differently. Float32, CPU only.
"""
import argparse
import logging
import os
import sys
import time

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, ROOT)

from benchmarks.harness import (ROTATE, FunctionEngine, Result, interleave,  # noqa: E402
                                summarize, write_report)

import fairseq_fast  # noqa: E402,F401  (plugin overrides, as --user-dir would apply them)

from benchmarks.models import SCALE_WORK, add_model_args, load_target  # noqa: E402
from fairseq_fast.decoding.backends import decoder_backend  # noqa: E402

STEP, SOURCE = 20, 30


def functional_step(decoder):
    """step(tokens [B, 1], pos_emb [B, 1, C], keys, values ([B, H, t, D] per layer), cross_k,
    cross_v ([B, H, S, D] per layer)) -> logits [B, 1, V]: one step of a plain fairseq
    TransformerDecoder in torch ops (the kind the C layer runs: ReLU, affine layer norms)."""
    layers = list(decoder.layers)
    pre = layers[0].normalize_before

    def attend(q, k, v):
        return torch.softmax(q @ k.transpose(-1, -2), dim=-1) @ v

    def heads(x, h):
        b, n, c = x.shape
        return x.view(b, n, h, c // h).transpose(1, 2)

    def merge(x):
        b, h, n, d = x.shape
        return x.transpose(1, 2).reshape(b, n, h * d)

    def block(x, norm, fn):
        y = fn(norm(x) if pre else x) + x
        return y if pre else norm(y)

    def step(tokens, pos_emb, keys, values, cross_k, cross_v):
        x = decoder.embed_scale * F.embedding(tokens, decoder.embed_tokens.weight) + pos_emb
        for i, layer in enumerate(layers):
            sa, h = layer.self_attn, layer.self_attn.num_heads

            def self_attention(y, sa=sa, h=h, i=i):
                q = heads(sa.q_proj(y) * sa.scaling, h)
                k = torch.cat([keys[i], heads(sa.k_proj(y), h)], dim=2)
                v = torch.cat([values[i], heads(sa.v_proj(y), h)], dim=2)
                return sa.out_proj(merge(attend(q, k, v)))

            x = block(x, layer.self_attn_layer_norm, self_attention)
            ca = layer.encoder_attn

            def cross_attention(y, ca=ca, h=h, i=i):
                q = heads(ca.q_proj(y) * ca.scaling, h)
                return ca.out_proj(merge(attend(q, cross_k[i], cross_v[i])))

            x = block(x, layer.encoder_attn_layer_norm, cross_attention)
            x = block(x, layer.final_layer_norm,
                      lambda y, layer=layer: layer.fc2(F.relu(layer.fc1(y))))
        if decoder.layer_norm is not None:
            x = decoder.layer_norm(x)
        return decoder.output_projection(x)

    return step


def setting(model, rows, threads):
    """Times per step (ms) of the three engines and the compiled-vs-kernel logit difference."""
    decoder = model.decoder
    torch.manual_seed(0)
    src = torch.randint(4, 100, (rows, SOURCE))
    src[:, -1] = 2
    encoder_out = model.encoder(src, src_lengths=torch.full((rows,), SOURCE))
    backend = decoder_backend(model)
    lean = backend.lean
    state = backend.init_state(encoder_out, rows, 64)
    prefix = torch.randint(4, 100, (rows, STEP))
    backend.forward(state, prefix)  # the first 20 inputs in the cache
    tokens = torch.randint(4, 100, (rows, 1))
    keys = [state.self_k[i, :, :, :STEP].contiguous() for i in range(len(lean.layers))]
    values = [state.self_v[i, :, :, :STEP].contiguous() for i in range(len(lean.layers))]
    pos_emb = lean._positions(torch.full((rows, 1), STEP), STEP + 1)
    args = (tokens, pos_emb, keys, values, state.cross_k, state.cross_v)

    def kernels():
        out = backend.forward(state, tokens)
        backend.rollback(state, torch.full((rows,), STEP))
        return out

    step = functional_step(decoder)
    start = time.perf_counter()
    import torch._inductor.config as inductor_config
    inductor_config.freezing = True
    compiled = torch.compile(step, backend="inductor", dynamic=False)
    want = compiled(*args)  # compiles
    compile_s = time.perf_counter() - start
    got = kernels()
    diff = float((want - got).abs().max())
    calls = {"kernels": kernels, "compiled": lambda: compiled(*args),
             "eager": lambda: step(*args)}

    def engine(name, fn):
        def run(part):
            t0 = time.perf_counter()
            for _ in range(ARGS.steps):
                fn()
            return Result(time.perf_counter() - t0)
        return FunctionEngine(name, run, lambda: [fn() for _ in range(3)])

    timings = interleave([engine(name, fn) for name, fn in calls.items()], None, ARGS.repeats,
                         ROTATE)
    medians = {name: f.seconds / ARGS.steps * 1e3 for name, f in summarize(timings).items()}
    return {"rows": rows, "threads": threads, "kernels_ms": medians["kernels"],
            "compiled_ms": medians["compiled"], "eager_ms": medians["eager"],
            "compiled_over_kernels": medians["compiled"] / medians["kernels"],
            "max_abs_logit_diff": diff, "compile_s": compile_s}


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_model_args(ap, draft=False)
    ap.add_argument("--models", default="demo,x4",
                    help="demo, x2 and/or x4 (work/scale/target_xN.pt, made by "
                         "benchmark_scale.py)")
    ap.add_argument("--rows", default="1,32")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--steps", type=int, default=20, help="steps per timed round")
    ap.add_argument("--json", default=os.path.join(ROOT, "work", "benchmark_compile.json"))
    ARGS = ap.parse_args()
    logging.getLogger("filelock").setLevel(logging.WARNING)  # Inductor's cache locks
    threads = torch.get_num_threads()
    report = {"threads": threads, "step": STEP, "source_len": SOURCE, "settings": []}
    for name in ARGS.models.split(","):
        path = (ARGS.target if name == "demo"
                else os.path.join(SCALE_WORK, f"target_{name}.pt"))
        if not os.path.exists(path):
            print(f"{name}: {path} not found, skipped")
            continue
        model = load_target(path, ARGS.data)[0].float().eval()
        for rows in map(int, ARGS.rows.split(",")):
            with torch.no_grad():
                row = setting(model, rows, threads)
            row["model"] = name
            report["settings"].append(row)
            print(f"{name} {rows:>2} rows: kernels {row['kernels_ms']:.3f} ms, compiled "
                  f"{row['compiled_ms']:.3f} ms ({row['compiled_over_kernels']:.2f}x the "
                  f"kernels' time), eager {row['eager_ms']:.3f} ms; max |logit diff| "
                  f"{row['max_abs_logit_diff']:.1e}; compiled in {row['compile_s']:.0f} s",
                  flush=True)
            torch._dynamo.reset()
    write_report(ARGS.json, report)


ARGS = None
if __name__ == "__main__":
    main()
