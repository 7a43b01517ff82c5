"""Tiny random fairseq models and batches for tests (built with fairseq's own classes)."""
import argparse

import torch
from fairseq.data import Dictionary
from fairseq.models.transformer import TransformerModel, base_architecture
from fairseq.models.transformer_lm import TransformerLanguageModel, base_lm_architecture


class DummyTask:
    def __init__(self, src_dict, tgt_dict):
        self.source_dictionary = src_dict
        self.target_dictionary = tgt_dict


def make_dictionary(size: int, prefix: str = "w") -> Dictionary:
    d = Dictionary()
    for i in range(size):
        d.add_symbol(f"{prefix}{i}")
    d.finalize(padding_factor=1)
    return d


def translation_model(task, layers=2, enc_layers=1, dim=16, heads=2, ffn=32, learned_pos=False,
                      normalize_before=False, share=False, eos_bias=0.0, seed=0, max_pos=64,
                      layernorm_embedding=False, no_scale_embedding=False, dtype=torch.float64,
                      activation="relu"):
    torch.manual_seed(seed)
    args = argparse.Namespace(
        encoder_layers=enc_layers, decoder_layers=layers, encoder_embed_dim=dim,
        decoder_embed_dim=dim, encoder_ffn_embed_dim=ffn, decoder_ffn_embed_dim=ffn,
        encoder_attention_heads=heads, decoder_attention_heads=heads,
        encoder_learned_pos=learned_pos, decoder_learned_pos=learned_pos,
        encoder_normalize_before=normalize_before, decoder_normalize_before=normalize_before,
        share_decoder_input_output_embed=share, layernorm_embedding=layernorm_embedding,
        no_scale_embedding=no_scale_embedding, dropout=0.0, attention_dropout=0.0,
        max_source_positions=max_pos, max_target_positions=max_pos, activation_fn=activation)
    base_architecture(args)
    model = TransformerModel.build_model(args, task)
    _spread_logits(model.decoder, task.target_dictionary, eos_bias)
    return model.to(dtype).eval()


def language_model(task, layers=2, dim=16, heads=2, ffn=32, learned_pos=False,
                   normalize_before=False, share=True, eos_bias=0.0, seed=0, max_pos=64,
                   dtype=torch.float64, activation="relu"):
    torch.manual_seed(seed)
    args = argparse.Namespace(
        decoder_layers=layers, decoder_embed_dim=dim, decoder_ffn_embed_dim=ffn,
        decoder_attention_heads=heads, decoder_learned_pos=learned_pos,
        decoder_normalize_before=normalize_before, share_decoder_input_output_embed=share,
        dropout=0.0, attention_dropout=0.0, tokens_per_sample=max_pos, max_target_positions=max_pos,
        add_bos_token=False, activation_fn=activation)
    base_lm_architecture(args)
    model = TransformerLanguageModel.build_model(args, task)
    _spread_logits(model.decoder, task.target_dictionary, eos_bias)
    return model.to(dtype).eval()


def _spread_logits(decoder, dictionary, eos_bias):
    """Random init gives near-uniform outputs; scale the output layer so choices are decisive
    (as in a trained model) and bias EOS to control sentence lengths."""
    with torch.no_grad():
        proj = decoder.output_projection
        if proj.weight is not decoder.embed_tokens.weight:
            proj.weight.mul_(4.0)
        if proj.bias is None:
            proj.bias = torch.nn.Parameter(torch.zeros(proj.weight.size(0)))
        proj.bias.zero_()
        proj.bias[dictionary.eos()] = eos_bias


def prompt_batch(dictionary, prompts, seed=0):
    """Language-model prompts of the given lengths as fairseq's language_modeling task passes
    them: right-padded prefix tokens (also the source tokens). Returns (sample, prefix | None)."""
    g = torch.Generator().manual_seed(seed)
    prefix = torch.full((len(prompts), max(max(prompts), 1)), dictionary.pad(), dtype=torch.long)
    for i, n in enumerate(prompts):
        prefix[i, :n] = torch.randint(dictionary.nspecial, len(dictionary), (n,), generator=g)
    sample = {"net_input": {"src_tokens": prefix, "src_lengths": torch.tensor(prompts)}}
    return sample, (prefix if max(prompts) > 0 else None)


def source_batch(dictionary, lengths, seed=0, device="cpu"):
    """Left-padded source batch as fairseq's LanguagePairDataset makes it (EOS-terminated)."""
    g = torch.Generator().manual_seed(seed)
    bsz, width = len(lengths), max(lengths) + 1
    src = torch.full((bsz, width), dictionary.pad(), dtype=torch.long)
    for i, n in enumerate(lengths):
        body = torch.randint(dictionary.nspecial, len(dictionary), (n,), generator=g)
        src[i, width - n - 1: width - 1] = body
        src[i, width - 1] = dictionary.eos()
    return {"id": torch.arange(bsz), "net_input": {
        "src_tokens": src.to(device), "src_lengths": torch.tensor([n + 1 for n in lengths])}}


def reference_banned(tokens, step: int, n: int) -> set:
    """The n-gram blocking rule, plainly: the tokens banned after tokens[0..step]."""
    if step + 2 - n < 0:
        return set()
    suffix = tokens[step - n + 2: step + 1]
    return {tokens[c + n - 1] for c in range(step - n + 2) if tokens[c: c + n - 1] == suffix}
