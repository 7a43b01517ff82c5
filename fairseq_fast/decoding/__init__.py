"""Decoding a fairseq Transformer step by step: the K/V cache with rollback (decoder_state.py),
the lean forward pass (lean_decoder.py) and its fused C layers (fused_layer.py), fairseq's
EnsembleModel on them (ensemble.py), stock's per-step score edits (step_rules.py), the n-gram
rule (ngram_blocker.py), and which models the fast path takes (model_gate.py). Imports the
kernels layer only."""
