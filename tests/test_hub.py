"""The hub interface: speculative translate() equals stock translate(); the draft loads once."""
import os

import pytest
import torch
from fairseq.models.transformer import TransformerModel

import fairseq_fast
from fairseq_fast.speculative import draft_loading
from fairseq_fast.errors import UserError


@pytest.fixture(scope="module")
def hub(tiny_pair):
    model = TransformerModel.from_pretrained(
        tiny_pair, checkpoint_file="target.pt", data_name_or_path="./data-bin",
        user_dir=fairseq_fast.user_dir(), source_lang="src", target_lang="tgt")
    return model.eval()


STOCK = dict(no_fast_cache=True, no_fast_ngram=True)  # fairseq's own generator, untouched


def sentences(tiny_pair, n=10):
    with open(os.path.join(tiny_pair, "raw", "test.src")) as f:
        return [line.strip() for line in f][:n]


def test_translate_equals_stock_and_reuses_draft(hub, tiny_pair):
    draft = os.path.join(tiny_pair, "draft.pt")
    src = sentences(tiny_pair)
    stock = hub.translate(src, beam=1, **STOCK)
    before = draft_loading.loads
    spec = hub.translate(src, beam=1, generator="speculative", draft_path=draft, draft_len=4)
    assert spec == stock
    assert draft_loading.loads == before + 1
    again = hub.translate(src[:3], beam=1, generator="speculative", draft_path=draft, draft_len=2)
    assert again == stock[:3]
    assert draft_loading.loads == before + 1  # the second call did not read the draft again


def test_sample_and_generate(hub, tiny_pair):
    draft = os.path.join(tiny_pair, "draft.pt")
    src = sentences(tiny_pair, 4)
    torch.manual_seed(0)
    samples = hub.sample(src, beam=1, sampling=True, sampling_topk=5, generator="speculative",
                         draft_path=draft)
    assert len(samples) == 4 and all(isinstance(s, str) and s for s in samples)
    tokens = [hub.encode(s) for s in src]
    stock = hub.generate(tokens, beam=1)
    spec = hub.generate(tokens, beam=1, generator="speculative", draft_path=draft)
    for a, b in zip(stock, spec):
        assert torch.equal(a[0]["tokens"], b[0]["tokens"])


@pytest.mark.parametrize("method", ["ngram", "layers"])
def test_draft_methods_without_a_draft_model(hub, tiny_pair, method):
    """draft_method="ngram" / "layers" as keywords: stock's translations, no draft read; the
    adaptive schedule (shared across calls) may run plain steps."""
    src = sentences(tiny_pair)
    stock = hub.translate(src, beam=1, **STOCK)
    before = draft_loading.loads
    for adaptive in (False, True, True):
        assert hub.translate(src, beam=1, generator="speculative", draft_method=method,
                             adaptive_draft_len=adaptive) == stock
    assert draft_loading.loads == before
    with pytest.raises(UserError, match="uses no draft model|own layers"):
        hub.translate(src, beam=1, generator="speculative", draft_method=method,
                      draft_path=os.path.join(tiny_pair, "draft.pt"))


def test_draft_follows_target_dtype(hub, tiny_pair):
    draft = os.path.join(tiny_pair, "draft.pt")
    src = sentences(tiny_pair, 3)
    stock = hub.translate(src, beam=1)
    hub.double()
    try:
        spec = hub.translate(src, beam=1, generator="speculative", draft_path=draft)
        loaded = next(iter(draft_loading._cache[hub.models[0]].values()))
        assert next(loaded.parameters()).dtype == torch.float64
        assert spec == stock
    finally:
        hub.float()


def test_hub_errors_are_exceptions(hub, tiny_pair):
    with pytest.raises(UserError, match="needs --beam 1"):
        hub.translate(["s1 s2"], beam=4, generator="speculative",
                      draft_path=os.path.join(tiny_pair, "draft.pt"))
    with pytest.raises(UserError, match="no such file"):
        hub.translate(["s1 s2"], beam=1, generator="speculative", draft_path="/nope.pt")
    with pytest.raises(UserError, match="postprocess_workers is a fairseq-generate"):
        hub.translate(["s1 s2"], beam=1, postprocess_workers=2)


def test_direct_python_api(hub, tiny_pair):
    """Users holding both models in memory build the generator themselves."""
    from fairseq_fast import SpeculativeSequenceGenerator

    draft = TransformerModel.from_pretrained(
        tiny_pair, checkpoint_file="draft.pt", data_name_or_path="./data-bin",
        source_lang="src", target_lang="tgt").models[0]
    target = hub.models[0]
    gen = SpeculativeSequenceGenerator([target], hub.tgt_dict, draft_model=draft, draft_len=3)
    tokens = [hub.encode(s) for s in sentences(tiny_pair, 5)]
    batch = hub._build_batches(tokens, skip_invalid_size_inputs=False)
    for sample in batch:
        out = gen.generate([target], sample)
        greedy = hub.task.build_generator([target], _greedy(hub)).generate([target], sample)
        assert len(greedy) == len(out)
        for a, b in zip(greedy, out):
            assert torch.equal(a[0]["tokens"], b[0]["tokens"])


def _greedy(hub):
    import copy
    from omegaconf import open_dict

    cfg = copy.deepcopy(hub.cfg.generation)
    with open_dict(cfg):
        cfg.beam = 1
    return cfg


@pytest.mark.parametrize("opts", [dict(beam=5), dict(beam=4, nbest=2, lenpen=0.7),
                                  dict(beam=3, no_repeat_ngram_size=0, max_len_b=5)])
def test_default_generator_equals_stock(hub, tiny_pair, opts):
    """Loading the plugin makes the hub's default generator the fast one; same output."""
    src = [hub.encode(s) for s in sentences(tiny_pair, 8)]
    ours = hub.generate(src, **opts)
    stock = hub.generate(src, **opts, **STOCK)
    for a, b in zip(ours, stock):
        assert [h["tokens"].tolist() for h in a] == [h["tokens"].tolist() for h in b]
        assert all(abs(float(x["score"]) - float(y["score"])) < 1e-4 for x, y in zip(a, b))


def test_default_generator_with_prefix(hub, tiny_pair):
    """A forced prefix (the hub's prefix_tokens) goes through the decoder in one pass."""
    src = [hub.encode(s) for s in sentences(tiny_pair, 4)]
    prefix = torch.stack([s[:2] for s in src])  # any tokens will do as a forced prefix
    batch = {"net_input": {"src_tokens": torch.stack([s[:4] for s in src]),
                           "src_lengths": torch.full((4,), 4)}}
    fast = hub.task.build_generator(hub.models, _args(hub, beam=3))
    stock = hub.task.build_generator(hub.models, _args(hub, beam=3, **STOCK))
    want = stock.generate(hub.models, batch, prefix_tokens=prefix)
    got = fast.generate(hub.models, batch, prefix_tokens=prefix)
    assert type(fast).__name__ == "FastSequenceGenerator" and fast.model.prefill
    for a, b in zip(got, want):
        assert [h["tokens"].tolist() for h in a] == [h["tokens"].tolist() for h in b]


def _args(hub, **kw):
    import copy

    from omegaconf import open_dict

    args = copy.deepcopy(hub.cfg.generation)
    with open_dict(args):
        for k, v in kw.items():
            setattr(args, k, v)
    return args
