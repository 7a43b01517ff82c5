"""The shapes of the models fairseq users decode, as random-weight checkpoints.

Each `Shape` names a released model, where its architecture comes from, the fairseq task and
architecture that build it (with the options that differ from the architecture's defaults), its
dictionary size, its sources, and the generation settings its users run. `make(shape, folder)`
writes, once, what `fairseq-generate` (or `fairseq-interactive`, for a language model) needs to
run it: dictionaries, a binarised test set of random sentences, and a checkpoint of the model
fairseq builds from those options, its weights fairseq's own random initialisation stored in
float16 as released checkpoints are. `tiny(shape)` is the same shape at toy sizes, for a quick run
and the tests.

The weights are random, so the outputs are noise and rarely end on their own: every setting caps
the output length (--max-len-b), as long as a sentence of that task.
"""
import json
import os
import random
import subprocess
import sys
from dataclasses import dataclass, field, replace
from typing import Optional, Tuple

BIN = os.path.dirname(sys.executable)

TRANSLATION = "translation"
MULTILINGUAL = "translation_multi_simple_epoch"
LANGUAGE_MODEL = "language_modeling"
SPECIALS = 4  # <s> <pad> </s> <unk>, which fairseq's Dictionary adds before the words


@dataclass(frozen=True)
class Setting:
    """One way its users run a shape: `flags` for fairseq-generate, `batch` sentences a batch,
    `sentences` in all."""
    name: str
    batch: int
    sentences: int
    flags: Tuple[str, ...]


@dataclass(frozen=True)
class Shape:
    name: str
    source: str                        # where the architecture comes from
    task: str                          # TRANSLATION, MULTILINGUAL or LANGUAGE_MODEL
    arch: str                          # a registered fairseq architecture
    symbols: int                       # the model's dictionary, specials and language tokens in
    options: Tuple[str, ...]           # training-parser options over the architecture's defaults
    source_tokens: Tuple[int, int]     # a source's (or prompt's) length in words, lowest, highest
    settings: Tuple[Setting, ...]
    langs: Tuple[str, str] = ("en", "de")
    generate_options: Tuple[str, ...] = field(default=())   # what every run of it adds

    @property
    def words(self):
        """The words of its dictionary file: the symbols less fairseq's specials and, for the
        multilingual task, the language tokens it appends."""
        return self.symbols - SPECIALS - (len(self.langs) if self.task == MULTILINGUAL else 0)


def _s(*args):
    return tuple(str(a) for a in args)


GREEDY_1 = "greedy, batch 1"
BEAM_16 = "beam 5, batch 16"
PRE_NORM = _s("--encoder-normalize-before", "--decoder-normalize-before")
BIG = _s("--encoder-embed-dim", 1024, "--decoder-embed-dim", 1024, "--encoder-attention-heads", 16,
         "--decoder-attention-heads", 16)
M2M_GENERATE = _s("--encoder-langtok", "src", "--decoder-langtok")


def _m2m_options(layers, ffn):
    """M2M-100's and NLLB's transformer: layers + layers x 1024, FFN ffn, pre-norm, one
    dictionary for every embedding."""
    return BIG + PRE_NORM + _s("--encoder-layers", layers, "--decoder-layers", layers,
                               "--encoder-ffn-embed-dim", ffn, "--decoder-ffn-embed-dim", ffn,
                               "--share-all-embeddings")


def _translation_settings(tokens, greedy_sentences=12, beam=True):
    cap = _s("--max-len-a", 0, "--max-len-b", tokens)
    settings = [Setting(GREEDY_1, 1, greedy_sentences, _s("--beam", 1) + cap)]
    if beam:
        settings.append(Setting(BEAM_16, 16, 16, _s("--beam", 5) + cap))
    return tuple(settings)


SHAPES = (
    Shape("transformer.wmt19.en-de",
          "fairseq examples/wmt19 (Ng et al. 2019): transformer_wmt_en_de_big with "
          "--encoder-ffn-embed-dim 8192, post-norm, a joined dictionary of about 42k symbols",
          TRANSLATION, "transformer_wmt_en_de_big", 42024,
          _s("--encoder-ffn-embed-dim", 8192, "--share-all-embeddings"), (20, 40),
          _translation_settings(48)),
    Shape("bart.large.cnn",
          "fairseq examples/bart: bart_large (12+12 x 1024, learned positions to 1,024), 50,264 "
          "symbols; CNN/DM settings of its summarisation README",
          TRANSLATION, "bart_large", 50264, (), (300, 900),
          (Setting("CNN/DM: beam 4, lenpen 2, min-len 55, no-repeat 3, batch 8", 8, 16,
                   _s("--beam", 4, "--lenpen", 2.0, "--max-len-a", 0, "--max-len-b", 140,
                      "--min-len", 55, "--no-repeat-ngram-size", 3)),),
          langs=("source", "target")),
    Shape("m2m100_418M",
          "fairseq examples/m2m_100 and facebook/m2m100_418M's config.json: 12+12 x 1024, FFN "
          "4096, pre-norm, 128,112 symbols; generation as its README runs it",
          MULTILINGUAL, "transformer_wmt_en_de_big", 128112,
          _m2m_options(12, 4096),
          (20, 40), _translation_settings(48), generate_options=M2M_GENERATE),
    Shape("nllb-200-distilled-600M",
          "facebook/nllb-200-distilled-600M's config.json (NLLB Team 2022): 12+12 x 1024, FFN "
          "4096, pre-norm, 256,206 symbols",
          MULTILINGUAL, "transformer_wmt_en_de_big", 256206,
          _m2m_options(12, 4096),
          (20, 40), _translation_settings(48), generate_options=M2M_GENERATE),
    Shape("nllb-200-1.3B",
          "facebook/nllb-200-1.3B's config.json: 24+24 x 1024, FFN 8192, pre-norm, 256,206 "
          "symbols",
          MULTILINGUAL, "transformer_wmt_en_de_big", 256206,
          _m2m_options(24, 8192),
          (20, 40), _translation_settings(48, greedy_sentences=6, beam=False),
          generate_options=M2M_GENERATE),
    Shape("xglm-564M",
          "fairseq examples/xglm and facebook/xglm-564M's config.json (Lin et al. 2021): 24 x "
          "1024, FFN 4096, 16 heads, GELU, pre-norm, sinusoidal positions, 256,008 symbols",
          LANGUAGE_MODEL, "transformer_lm_big", 256008,
          _s("--decoder-layers", 24, "--activation-fn", "gelu", "--dropout", 0,
             "--share-decoder-input-output-embed", "--tokens-per-sample", 2048),
          (256, 256),
          (Setting("256-token prompt, 64 new, greedy, batch 1", 1, 4,
                   _s("--beam", 1, "--max-len-a", 1, "--max-len-b", 64)),)),
)

# what tiny() keeps of each option, and what it sets instead
_TINY = {"--encoder-embed-dim": 64, "--decoder-embed-dim": 64, "--encoder-attention-heads": 4,
         "--decoder-attention-heads": 4, "--encoder-ffn-embed-dim": 128,
         "--decoder-ffn-embed-dim": 128, "--encoder-layers": 2, "--decoder-layers": 2}


def _pairs(options):
    """[(flag, value or None)] of an option list."""
    pairs, i = [], 0
    while i < len(options):
        value = options[i + 1] if i + 1 < len(options) and not options[i + 1].startswith("--") \
            else None
        pairs.append((options[i], value))
        i += 1 if value is None else 2
    return pairs


def _capped(flags, flag, most):
    flags = list(flags)
    if flag in flags:
        k = flags.index(flag) + 1
        flags[k] = str(min(int(flags[k]), most))
    return tuple(flags)


def tiny(shape: Shape) -> Shape:
    """`shape` at toy sizes: 64 dims, 2+2 layers, 1,000 words, short sources and outputs; its
    task, norms, positions, embedding sharing and generation settings kept."""
    sizes = {k: v for k, v in _TINY.items()
             if not (shape.task == LANGUAGE_MODEL and k.startswith("--encoder"))}
    options = [x for flag, value in _pairs(shape.options) if flag not in _TINY
               for x in (flag, value) if x is not None]
    for key, value in sizes.items():
        options += [key, str(value)]
    settings = tuple(replace(s, batch=min(s.batch, 4), sentences=min(s.sentences, 4),
                             flags=_capped(_capped(s.flags, "--max-len-b", 12), "--min-len", 6))
                     for s in shape.settings)
    lo, hi = shape.source_tokens
    return replace(shape, name=shape.name + "-tiny", options=tuple(options),
                   symbols=1000 + shape.symbols - shape.words,
                   source_tokens=(min(lo, 8), min(hi, 16)), settings=settings)


def dictionary_file(path, words):
    with open(path, "w") as f:
        f.writelines(f"w{i} 1\n" for i in range(words))


def sentences(shape: Shape, n: int, seed: int = 0):
    """n random sentences of the shape's source lengths, words drawn from its dictionary."""
    rng = random.Random(seed)
    lo, hi = shape.source_tokens
    return [" ".join(f"w{rng.randrange(shape.words)}" for _ in range(rng.randint(lo, hi)))
            for _ in range(n)]


def _multilingual_options(shape: Shape, folder: str):
    """The multilingual task's options, for training and generation alike (none for the
    others)."""
    if shape.task != MULTILINGUAL:
        return []
    src, tgt = shape.langs
    return ["--lang-pairs", f"{src}-{tgt}", "--fixed-dictionary",
            os.path.join(folder, "dict.txt"), *shape.generate_options]


def model_options(shape: Shape, folder: str):
    """The training-parser arguments that build the shape's model and task."""
    args = [folder, "--task", shape.task, "--arch", shape.arch, *shape.options,
            *_multilingual_options(shape, folder)]
    if shape.task == TRANSLATION:
        args += ["--source-lang", shape.langs[0], "--target-lang", shape.langs[1]]
    return args


def subset(shape: Shape, setting: Setting):
    """The test subset that holds `setting`'s sentences: test, test1, test2, ... by its place
    in the shape's settings."""
    i = shape.settings.index(setting)
    return "test" if i == 0 else f"test{i}"


def generate_options(shape: Shape, folder: str, setting: Setting):
    """What fairseq-generate (fairseq-interactive for a language model) takes to run `setting`:
    the data folder, the checkpoint, the task, its language options and the test subset."""
    args = [folder, "--path", checkpoint_path(folder), "--task", shape.task]
    if shape.task in (TRANSLATION, MULTILINGUAL):
        args += ["--source-lang", shape.langs[0], "--target-lang", shape.langs[1],
                 "--gen-subset", subset(shape, setting)]
    return args + _multilingual_options(shape, folder)


def checkpoint_path(folder):
    return os.path.join(folder, "model.pt")


def prompts_path(folder, shape: Shape, setting: Setting):
    return os.path.join(folder, f"prompts.{subset(shape, setting)}.txt")


def make(shape: Shape, folder: str, log=print) -> dict:
    """Write the shape's dictionary, test subsets (or prompt files) and float16 checkpoint in
    `folder`, unless they are there for this very shape: {"parameters", "megabytes"}. Each
    setting's subset holds the first `setting.sentences` of the same random sentences."""
    os.makedirs(folder, exist_ok=True)
    data, meta = os.path.join(folder, "data.json"), os.path.join(folder, "shape.json")
    if _read(data) != {"shape": repr(shape)}:
        log(f"[shapes] making {shape.name}'s test sentences in {folder}")
        dictionary_file(os.path.join(folder, "dict.txt"), shape.words)
        lines = sentences(shape, max(s.sentences for s in shape.settings))
        for setting in shape.settings:
            if shape.task == LANGUAGE_MODEL:
                with open(prompts_path(folder, shape, setting), "w") as f:
                    f.writelines(line + "\n" for line in lines[:setting.sentences])
            else:
                _binarise(shape, folder, lines[:setting.sentences], subset(shape, setting))
        with open(data, "w") as f:
            json.dump({"shape": repr(shape)}, f)
    made = _read(meta)
    if made.get("model") != _model_key(shape):
        log(f"[shapes] making {shape.name}'s random-weight checkpoint in {folder}")
        parameters = _checkpoint(shape, folder)
        made = {"model": _model_key(shape), "parameters": parameters,
                "megabytes": os.path.getsize(checkpoint_path(folder)) / 1e6}
        with open(meta, "w") as f:
            json.dump(made, f)
    return made


def _read(path):
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)


def _model_key(shape):
    """What the checkpoint depends on."""
    return repr((shape.task, shape.arch, shape.symbols, shape.options, shape.langs,
                 shape.generate_options))


def _binarise(shape, folder, lines, name):
    src, tgt = shape.langs
    raw = os.path.join(folder, "raw")
    os.makedirs(raw, exist_ok=True)
    for lang in (src, tgt):
        with open(os.path.join(raw, f"{name}.{lang}"), "w") as f:
            f.writelines(line + "\n" for line in lines)
    dictionary = os.path.join(folder, "dict.txt")
    done = subprocess.run(
        [os.path.join(BIN, "fairseq-preprocess"), "--source-lang", src, "--target-lang", tgt,
         "--testpref", os.path.join(raw, name), "--destdir", os.path.join(raw, "bin"),
         "--srcdict", dictionary, "--tgtdict", dictionary, "--workers", "1"],
        capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"shapes: fairseq-preprocess failed:\n{done.stderr[-2000:]}")
    for lang in (src, tgt):  # fairseq-preprocess names its one test subset "test"
        for ext in ("bin", "idx"):
            os.replace(os.path.join(raw, "bin", f"test.{src}-{tgt}.{lang}.{ext}"),
                       os.path.join(folder, f"{name}.{src}-{tgt}.{lang}.{ext}"))
        dict_copy = os.path.join(raw, "bin", f"dict.{lang}.txt")
        os.replace(dict_copy, os.path.join(folder, f"dict.{lang}.txt"))


def _checkpoint(shape, folder):
    from fairseq import options, tasks
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf

    parser = options.get_training_parser()
    args = options.parse_args_and_arch(parser, model_options(shape, folder))
    cfg = convert_namespace_to_omegaconf(args)
    task = tasks.setup_task(cfg.task)
    model = task.build_model(cfg.model)
    parameters = sum(p.numel() for p in model.parameters())
    save_float16(model, cfg, checkpoint_path(folder))
    return parameters


def save_float16(model, cfg, path):
    """Save `model` as a fairseq checkpoint at `path`, float16 and tied tensors stored once, as
    in a released checkpoint (the plugin's draft exporter writes it)."""
    from fairseq_fast.draft.export import write_half

    write_half(model.state_dict(), cfg, path, epoch=1)


def step_parameters(path):
    """The weights a decoder step of the checkpoint at `path` reads, in parameters: the decoder's
    layers and output projection, less what a step does not touch (positions, the encoder
    attention's key and value projections, which are computed once per source). Tied weights
    count once."""
    import torch

    state = torch.load(path, map_location="cpu", mmap=True, weights_only=False)["model"]
    seen, total = set(), 0
    for name, value in state.items():
        if not name.startswith("decoder.") or "embed_positions" in name \
                or ".encoder_attn.k_proj." in name or ".encoder_attn.v_proj." in name \
                or name.endswith(".version") or not value.is_floating_point():
            continue
        key = (value.untyped_storage().data_ptr(), value.storage_offset(), tuple(value.shape))
        if key not in seen:
            seen.add(key)
            total += value.numel()
    return total


def find(name: str, shapes=SHAPES) -> Optional[Shape]:
    return next((s for s in shapes if s.name == name), None)
