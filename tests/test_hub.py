"""The hub interface: speculative translate() equals stock translate(); the draft loads once; a
program that imports the plugin keeps its process as it was."""
import json
import os
import subprocess
import sys

import pytest
import torch
from fairseq.models.transformer import TransformerModel

import fairseq_fast
from fairseq_fast.runtime import ModelRuntime
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
        loaded = next(iter(ModelRuntime.of(hub.models[0]).drafts.values()))
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


HOST = """
import atexit, json, multiprocessing, signal, sys, threading, time
import torch

def child(path):
    time.sleep(2)
    with open(path, "w") as f:
        f.write("finished")

def state():
    return dict(excepthook=sys.excepthook is sys.__excepthook__,
                threading_hook=threading.excepthook is threading.__excepthook__,
                signals=[str(signal.getsignal(s)) for s in (signal.SIGINT, signal.SIGTERM,
                                                           signal.SIGCHLD, signal.SIGPIPE)],
                allowlist=sorted(map(str, torch.serialization.get_safe_globals())),
                threads=torch.get_num_threads(), dtype=str(torch.get_default_dtype()))

if __name__ == "__main__":
    pair, out = sys.argv[1], sys.argv[2]
    before = state()
    import fairseq_fast
    from fairseq.models.transformer import TransformerModel
    imported = state()
    hub = TransformerModel.from_pretrained(
        pair, checkpoint_file="target.pt", data_name_or_path="./data-bin",
        user_dir=fairseq_fast.user_dir(), source_lang="src", target_lang="tgt").eval()
    src = open(pair + "/raw/test.src").readline().strip()
    hub.translate([src], beam=1)
    print(json.dumps(dict(before=before, imported=imported, used=state())), flush=True)
    held = open(out + "/held.txt", "w", buffering=1 << 20)  # buffered: written at exit
    held.write("x" * 1000)
    atexit.register(lambda: open(out + "/atexit.txt", "w").write("ran"))
    multiprocessing.Process(target=child, args=(out + "/child.txt",)).start()
    hub.translate([src], beam=1, min_len=300)  # a RunError, uncaught
"""


def test_a_host_program_keeps_its_process(tiny_pair, tmp_path):
    """Importing the plugin and decoding through the hub change nothing process-wide (exception
    hooks, signal handlers, torch's weights-only allowlist, threads, dtype); a plugin error the
    host leaves uncaught ends it as any exception would: the usual traceback and status 1, its
    non-daemon child finishing, its buffered file written, its atexit handlers run."""
    host = tmp_path / "host.py"
    host.write_text(HOST)
    run = subprocess.run([sys.executable, str(host), tiny_pair, str(tmp_path)],
                         capture_output=True, text=True, timeout=300)
    states = json.loads(run.stdout.strip().splitlines()[-1])
    assert states["imported"] == states["before"]
    assert states["used"] == states["before"]
    assert run.returncode == 1
    assert "Traceback (most recent call last)" in run.stderr
    assert run.stderr.rstrip().splitlines()[-1].startswith(
        "fairseq_fast.errors.RunError: --min-len 300 is more than")
    assert "fairseq_fast: error:" not in run.stderr
    assert (tmp_path / "held.txt").read_text() == "x" * 1000
    assert (tmp_path / "atexit.txt").read_text() == "ran"
    assert (tmp_path / "child.txt").read_text() == "finished"


def test_the_hub_loads_checkpoints_and_the_host_keeps_torchs_allowlist(hub, tmp_path):
    """fairseq's checkpoint types load inside the plugin's own loading only: a host's
    torch.load(weights_only=True) of a file holding an argparse.Namespace still refuses it."""
    import argparse
    import pickle

    path = tmp_path / "namespace.pt"
    torch.save({"args": argparse.Namespace(a=1)}, path)
    assert hub.translate("a", beam=1) is not None
    with pytest.raises(pickle.UnpicklingError, match="argparse.Namespace"):
        torch.load(path, weights_only=True)
