"""What the machine allows a decoder step: the bytes of weights a batch-1 step reads (float32,
CTranslate2's int8, the plugin's packing, less the FFN rows of zero units), the weights a
position multiplies, and whether the memory bandwidth measured around a run stayed at one
level.
"""

REGIME_AGREEMENT = 0.15  # the two triads around a run: within this of each other, or left out


def per_sentence(name):
    """Whether the decoder parameter `name` runs once per source sentence, not per step: the
    cross-attention's K/V projections."""
    return ".encoder_attn.k_proj." in name or ".encoder_attn.v_proj." in name


def weight_bytes(decoder, kind="float32"):
    """Bytes of decoder weights one batch-1 step reads: every layer's self-attention, the
    cross-attention's q and out projections, both FFN matrices, biases and norms, the output
    projection and one row of each embedding, the matrices stored as `kind`: "float32"; "int8"
    (CTranslate2: one byte per weight, a float32 scale per row); "plugin" (the plugin's
    small-matrix kernel, which takes every matrix at one row, packs a matrix whose values are
    all float16 numbers as float16: small_gemm.py)."""
    total = 0
    for name, p in decoder.named_parameters(remove_duplicate=False):
        if name == "embed_tokens.weight" or name.startswith("embed_positions."):
            total += p.size(1) * 4  # one row each
        elif per_sentence(name):
            continue
        elif p.dim() == 2 and kind == "int8":
            total += p.numel() + 4 * p.size(0)
        elif p.dim() == 2 and kind == "plugin":
            total += plugin_bytes(p)
        else:
            total += 4 * p.numel()
    return total


def plugin_bytes(weight):
    """The bytes of a matrix as the plugin's small-matrix kernel stores it: float16 where every
    value is a float16 number (small_gemm.py), else float32."""
    import torch

    from fairseq_fast.kernels import small_gemm

    w = weight.detach()
    half = small_gemm.available() and torch.equal(w.half().float(), w)
    return (2 if half else 4) * w.numel()


def ffn_density(model, task, samples, cfg):
    """The share of nonzero hidden units fc2 reads (relu(fc1(x))) in the decoder's and the
    encoder's layers, over stock greedy decoding of `samples`: what the plugin's fc2 kernel
    reads of its weight rows (csrc/small_gemm.c skips the rows of zero units)."""
    from benchmarks.engines import STOCK, build_generator

    counts = {"decoder": [0, 0], "encoder": [0, 0]}
    hooks = []
    for part in counts:
        for layer in getattr(model, part).layers:
            def hook(module, inputs, output, c=counts[part]):
                c[0] += int(inputs[0].ne(0).sum())
                c[1] += inputs[0].numel()
            hooks.append(layer.fc2.register_forward_hook(hook))
    try:
        generator = build_generator(STOCK, task, model, cfg, None, None, 1, None)
        for sample in samples:
            generator.generate([model], sample)
    finally:
        for h in hooks:
            h.remove()
    return {part: nonzero / max(total, 1) for part, (nonzero, total) in counts.items()}


def bytes_read(decoder, packed, density):
    """A batch-1 step's weight bytes as the plugin reads them: its packing's bytes, less the fc2
    weight rows of the hidden units that are zero (`density` of them are not, on average)."""
    skipped = sum(plugin_bytes(layer.fc2.weight) for layer in decoder.layers) * (1 - density)
    return packed - skipped


def matmul_params(decoder):
    """Weights a decoder position multiplies (its matrices less the cross-attention K/V, which
    run once per source sentence, plus the output projection): half its dense flops."""
    total = 0
    for name, p in decoder.named_parameters(remove_duplicate=False):
        if p.dim() == 2 and name.startswith("layers.") and not per_sentence(name):
            total += p.numel()
    projection = getattr(decoder, "output_projection", None)
    if projection is not None:
        total += projection.weight.numel()
    return total


def same_level(before, after, agree=REGIME_AGREEMENT):
    """Whether two triads agree within `agree` of the smaller: the machine's bandwidth stayed
    at one level between them."""
    return max(before, after) <= (1 + agree) * min(before, after)


def bracketed_shares(weight_bytes, tokens, seconds, brackets, agree=REGIME_AGREEMENT):
    """[(share, triad)] for each run (seconds, and the (before, after) triads around it) whose
    two triads are at the same level: the weight GB/s it ran at over their mean. A run whose
    triads differ more saw the machine's bandwidth change level and is left out."""
    shares = []
    for s, (before, after) in zip(seconds, brackets):
        if same_level(before, after, agree):
            triad = (before + after) / 2
            shares.append((weight_bytes * tokens / s / 1e9 / triad, triad))
    return shares
