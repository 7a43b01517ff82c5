"""Micro-timings of one decoder call: stock's incremental step, the plugin's lean step and
verify pass, the decoder's matmuls alone, and the plugin's matmul at many rows.
"""
import copy

from benchmarks.harness import micro_time

KERNEL_ROWS = 64  # the rows at which kernel_gflops measures the arithmetic's rate


def step_parts(model, sample, k):
    """One decoder call each for one sentence at position ~20, on the model's device and dtype:
    {stock_step: stock's incremental step, lean_step: the lean step (1 token), verify: the lean
    verify pass (k+1 tokens), matmul_only: the decoder's matmuls alone}."""
    import torch
    import torch.nn.functional as F

    from fairseq_fast.decoding.backends import decoder_backend

    param = next(model.parameters())
    net1 = {k2: v[:1] for k2, v in sample["net_input"].items()}
    enc1 = model.encoder.forward_torchscript(net1)
    prefix = torch.full((1, 21), 5, dtype=torch.long, device=param.device)
    prefix[0, 0] = 2
    dec = model.decoder
    state = {}
    for t in range(1, 21):  # build the cache; each call below runs one more step
        dec(prefix[:, :t], encoder_out=enc1, incremental_state=state)
    backend = decoder_backend(model)
    st = backend.init_state(enc1, 1, 64)
    backend.forward(st, prefix[:, :20])

    def lean_call(n):
        st.lengths.fill_(20)
        backend.forward(st, prefix[:, 20:20 + n] if n == 1 else prefix[:, :1].expand(1, n))

    linears = [m for m in dec.modules() if isinstance(m, torch.nn.Linear)]
    x = {m: torch.randn(1, 1, m.in_features, device=param.device, dtype=param.dtype)
         for m in linears}

    def matmuls():
        for m in linears:
            F.linear(x[m], m.weight, m.bias)

    return {"stock_step": lambda: dec(prefix, encoder_out=enc1,
                                      incremental_state=copy.copy(state)),
            "lean_step": lambda: lean_call(1), "verify": lambda: lean_call(k + 1),
            "matmul_only": matmuls}


def step_costs(model, sample, k):
    """Milliseconds per decoder call (median of 50) of each of step_parts: stock_step_ms,
    lean_step_ms, verify_ms, matmul_only_ms."""
    return {f"{name}_ms": 1e3 * micro_time(fn)
            for name, fn in step_parts(model, sample, k).items()}


def kernel_gflops(weight, rows, repeats=30):
    """GFLOP/s of the plugin's matmul (packed_linear.py's route for that many rows: the
    small-matrix kernel up to 160) on `weight` at `rows` rows, median of `repeats`: the
    arithmetic a verify pass can reach once its rows are many enough to be bound by it."""
    import torch

    from fairseq_fast.kernels.packed_linear import PackedLinear

    linear = PackedLinear()
    x = torch.randn(rows, weight.size(1))
    w = weight.detach().float()
    seconds = micro_time(lambda: linear(x, w), repeats)
    return 2 * w.numel() * rows / seconds / 1e9
