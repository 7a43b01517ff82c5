"""The models and data the benchmarks load: the demo target and its test set, the target widened
F times, the demo corpus binarised for training, and the generators and decoding loop that
every fairseq engine shares.
"""
import hashlib
import importlib.util
import os
import random
import subprocess
import sys
import time
from argparse import Namespace

from benchmarks import ROOT
from benchmarks.suites import SCRIPTS
WORK = os.path.join(ROOT, "work")
SCALE_WORK = os.path.join(WORK, "scale")  # the widened targets and their conversions
DATA = os.path.join(WORK, "data")  # prepare_data.py's output
TSV = os.path.join(ROOT, "..", "shared", "data", "bible_es_en.tsv")


def script(name):
    """One of the scripts in scripts/ (a user tool such as demo or widen_model, or a benchmark
    whose tables are rendered) as a module."""
    if SCRIPTS not in sys.path:
        sys.path.insert(0, SCRIPTS)
    return importlib.import_module(name)


def plugin_dir():
    """The fairseq_fast package Python imports here (fairseq refuses a --user-dir whose module
    name is already imported from elsewhere, e.g. a second checkout sharing this venv)."""
    spec = importlib.util.find_spec("fairseq_fast")
    if spec is not None and spec.origin is not None:
        return os.path.dirname(spec.origin)
    return os.path.join(ROOT, "fairseq_fast")


def add_model_args(ap, draft=True):
    """--target, --draft (optional) and --data, defaulting to the committed demo pair and the
    demo test set."""
    demo = script("demo")
    ap.add_argument("--target", default=os.path.join(demo.EXAMPLE, "target.pt"))
    if draft:
        ap.add_argument("--draft", default=os.path.join(demo.EXAMPLE, "draft.pt"))
    ap.add_argument("--data", default=os.path.join(demo.WORK, "bin"))


def load_target(path, data):
    """The target model (eval mode), its config and task, on the demo test set binarised at
    `data` (made by demo.py when missing)."""
    from fairseq import checkpoint_utils

    if not os.path.exists(data):
        data = script("demo").binarise()
    models, cfg, task = checkpoint_utils.load_model_ensemble_and_task(
        [path], arg_overrides={"data": data, "source_lang": "es", "target_lang": "en"})
    return models[0].eval(), cfg, task


def batches(task, n_sentences, batch_size, seed=1):
    """n_sentences drawn at random (fixed seed) from the whole test set, so that short and long
    sentences are represented as they are in the set; grouped by length into batches the way
    fairseq batches them."""
    task.load_dataset("test")
    ds = task.dataset("test")
    n = min(n_sentences, len(ds))
    chosen = random.Random(seed).sample(range(len(ds)), n)
    chosen.sort(key=lambda i: (ds.src_sizes[i], i))
    return [ds.collater([ds[i] for i in chosen[j:j + batch_size]])
            for j in range(0, n, batch_size)], n


def decode_all(generator, model, samples, seed, scores=None):
    """(wall seconds, {sentence id: hypothesis tokens}) of `generator` over `samples`, torch's
    random draws seeded with `seed`; `scores` (a dict) receives {sentence id: positional
    scores}."""
    import torch

    torch.manual_seed(seed)
    t0 = time.perf_counter()
    hyps = {}
    for s in samples:
        for i, h in zip(s["id"].tolist(), generator.generate([model], s)):
            hyps[i] = h[0]["tokens"].tolist()
            if scores is not None:
                scores[i] = h[0]["positional_scores"].tolist()
    return time.perf_counter() - t0, hyps


def gen_args(cfg, **kw):
    """The generation settings of `cfg` as an argparse Namespace, at most 200 tokens, `kw`
    set over them."""
    args = Namespace(**{k: getattr(cfg.generation, k) for k in cfg.generation.keys()})
    args.max_len_b = 200
    for k, v in kw.items():
        setattr(args, k, v)
    return args


def stock_generator(task, model, gen_cfg):
    """fairseq's own SequenceGenerator, as stock fairseq-generate builds it (the plugin's
    build_generator override bypassed)."""
    from fairseq.tasks import FairseqTask

    return FairseqTask.build_generator.__wrapped__(task, [model], gen_cfg)


def widened_target(factor, target):
    """Path of `target` widened `factor` times (work/scale/target_xF.pt for the demo target;
    another target's is named after it), made (widen_model.widen_checkpoint) when missing or
    older than the target or widen_model.py."""
    widen_model = script("widen_model")
    if factor == 1:
        return target
    path = os.path.join(SCALE_WORK, f"{_widened_name(target)}_x{factor}.pt")
    newest = max(os.path.getmtime(target), os.path.getmtime(widen_model.__file__))
    if not os.path.exists(path) or os.path.getmtime(path) < newest:
        print(f"[scale] widening {target} x{factor} -> {path}", flush=True)
        os.makedirs(SCALE_WORK, exist_ok=True)
        for note in widen_model.widen_checkpoint(target, path, factor):
            print(f"[scale]   {note}", flush=True)
    return path


def _widened_name(target):
    """The stem of `target`'s widened checkpoints: "target" for the demo target, else its file
    name and a digest of its full path (two targets never share one)."""
    demo_target = os.path.join(script("demo").EXAMPLE, "target.pt")
    full = os.path.realpath(target)
    if full == os.path.realpath(demo_target):
        return "target"
    stem = os.path.splitext(os.path.basename(full))[0]
    return f"{stem}-{hashlib.sha1(full.encode()).hexdigest()[:8]}"


def training_data():
    """The demo corpus binarised as the demo target was trained on (prepare_data.py)."""
    if not os.path.exists(os.path.join(DATA, "bin", "train.es-en.en.bin")):
        args = ["--tsv", TSV] if os.path.exists(TSV) else []
        subprocess.run([sys.executable, os.path.join(SCRIPTS, "prepare_data.py"),
                        "--out", DATA, *args], check=True)
    return os.path.join(DATA, "bin")


def target_inputs(task, info, data, split, n, batch_size, seed=1):
    """n inputs drawn at random (fixed seed) from `split` of a target that
    fairseq_fast.draft.target loads (translation or language model), batched by length."""
    from fairseq_fast.draft import target as tgt

    dataset = tgt.indexed(task, data, info, split)
    items = tgt.sources(dataset, info, range(len(dataset)))
    chosen = random.Random(seed).sample(items, min(n, len(items)))
    return list(tgt.batches(chosen, 10 ** 9, batch_size, info))
