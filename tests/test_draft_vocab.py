"""--draft-vocab: the draft scores a frequency-ranked shortlist; output does not change.

Greedy equality with shortlists is part of test_speculative_equality's hypothesis cases and
sampling exactness of test_sampling_exactness; here: the ranking, the shortlisted logits, and
that the draft really proposes nothing outside the shortlist.
"""
import os

import pytest
import torch

from fairseq_fast.speculative.draft_vocab import shortlist
from fairseq_fast.errors import UserError
from fairseq_fast.decoding.lean_decoder import LeanDecoder
from fairseq_fast.generators.speculative import SpeculativeSequenceGenerator
from model_factory import DummyTask, make_dictionary, source_batch, translation_model

DICT = make_dictionary(10)  # 4 special symbols + w0 .. w9
TASK = DummyTask(DICT, DICT)


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_counts_rank_the_shortlist_and_specials_always_stay(tmp_path):
    counts = write(tmp_path / "dict.tgt.txt",
                   "w7 100\nw2 50\nw9 50\nnot_in_dict 999\nw5 3 #fairseq:overwrite\n")
    got = shortlist(DICT, DICT.nspecial + 4, counts).tolist()
    # w7 first; w2 before w9 (a tie keeps dictionary order); then w5
    assert got == sorted(list(range(DICT.nspecial)) + [DICT.index(w) for w in
                                                        ("w7", "w2", "w9", "w5")])
    # without a counts file: the dictionary's own order
    assert shortlist(DICT, DICT.nspecial + 2).tolist() == list(range(DICT.nspecial + 2))


def test_counts_file_is_read_once_until_it_changes(tmp_path, monkeypatch):
    """The hub builds a shortlist per translate() call: a counts file is read once per
    dictionary, and read again when it changes on disk, or for another dictionary."""
    from fairseq_fast.speculative import draft_vocab

    reads = []
    read = draft_vocab._read_counts
    monkeypatch.setattr(draft_vocab, "_read_counts", lambda p, d: reads.append(p) or read(p, d))
    path = tmp_path / "counts.txt"
    write(path, "w7 100\nw2 50\n")
    n = DICT.nspecial + 1
    assert DICT.index("w7") in shortlist(DICT, n, str(path)).tolist()
    assert DICT.index("w7") in shortlist(DICT, n, str(path)).tolist()
    assert len(reads) == 1
    write(path, "w3 1000\nw2 50\n")
    os.utime(path, ns=(0, os.stat(path).st_mtime_ns + 10**9))
    assert DICT.index("w3") in shortlist(DICT, n, str(path)).tolist()
    assert len(reads) == 2
    shortlist(make_dictionary(10), n, str(path))
    assert len(reads) == 3


def test_whole_vocabulary_means_no_shortlist():
    assert shortlist(DICT, 0) is None
    assert shortlist(DICT, len(DICT)) is None
    assert shortlist(DICT, len(DICT) + 5) is None


@pytest.mark.parametrize("n,text,needle", [
    (-1, None, "--draft-vocab must be >= 0"),
    (4, None, "leaves no room beside the dictionary's 4 special symbols"),
    (6, "w1 5\nw2\n", "line 2: expected 'symbol count'"),
    (6, "x 5\ny 2\n", "none of its symbols is in the target dictionary"),
])
def test_bad_shortlists_are_user_errors(tmp_path, n, text, needle):
    path = write(tmp_path / "counts.txt", text) if text is not None else None
    with pytest.raises(UserError, match=needle):
        shortlist(DICT, n, path)


def test_missing_counts_file_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="no such file"):
        shortlist(DICT, 6, str(tmp_path / "missing.txt"))


def test_shortlisted_logits_are_the_full_ones_or_minus_inf():
    model = translation_model(TASK, layers=1, dim=8, heads=1, seed=4)
    sample = source_batch(DICT, [5, 3], seed=1)
    enc = model.encoder.forward_torchscript(sample["net_input"])
    vocab = shortlist(DICT, 8)
    tokens = torch.tensor([[DICT.eos(), 5, 9], [DICT.eos(), 7, 6]])
    outputs = []
    for lean in (LeanDecoder(model.decoder), LeanDecoder(model.decoder, vocab)):
        state = lean.init_state(enc, 2, 8, torch.float64, torch.device("cpu"))
        outputs.append(lean.forward(state, tokens))
    full, short = outputs
    outside = torch.ones(len(DICT), dtype=torch.bool)
    outside[vocab] = False
    assert torch.allclose(short[..., vocab], full[..., vocab], rtol=0, atol=1e-12)
    assert torch.isneginf(short[..., outside]).all()
    # the cut rows follow the model when it changes dtype
    lean = LeanDecoder(model.decoder, vocab)
    lean.forward(lean.init_state(enc, 2, 8, torch.float64, torch.device("cpu")), tokens)
    model.float()
    enc32 = model.encoder.forward_torchscript(sample["net_input"])
    again = lean.forward(lean.init_state(enc32, 2, 8, torch.float32, torch.device("cpu")), tokens)
    assert again.dtype == torch.float32
    assert torch.allclose(again[..., vocab].double(), full[..., vocab], atol=1e-4)


def test_draft_proposes_only_shortlisted_tokens_and_output_is_unchanged():
    target = translation_model(TASK, layers=2, seed=5, eos_bias=-2.0)
    draft = translation_model(TASK, layers=1, dim=8, heads=1, seed=6)
    sample = source_batch(DICT, [6, 4, 2], seed=2)
    vocab = shortlist(DICT, 7)  # 3 of the 10 ordinary words
    plain = SpeculativeSequenceGenerator([target], DICT, draft_model=draft, max_len_b=12)
    short = SpeculativeSequenceGenerator([target], DICT, draft_model=draft, max_len_b=12,
                                         draft_vocab=vocab)
    proposed = []
    propose = short.proposer.propose

    def recording(*args, **kwargs):
        drafts, q, drafted = propose(*args, **kwargs)
        proposed.extend(drafts[b, j].item() for b in range(drafts.size(0))
                        for j in range(int(drafted[b])))
        return drafts, q, drafted

    short.proposer.propose = recording
    want = plain.generate([target], sample)
    got = short.generate([target], sample)
    assert [h[0]["tokens"].tolist() for h in got] == [h[0]["tokens"].tolist() for h in want]
    assert proposed and set(proposed) <= set(vocab.tolist())
    written = {t for h in got for t in h[0]["tokens"].tolist()}
    assert written - set(vocab.tolist())  # the target wrote tokens the draft cannot propose
