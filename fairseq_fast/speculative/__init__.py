"""The pieces of speculative decoding: the draft model as proposer (proposer.py), acceptance
rules (acceptance.py), loading the draft and its shortlist (draft_loading.py, draft_vocab.py).
Imports the decoding and kernels layers only."""
