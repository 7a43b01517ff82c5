"""fairseq_fast's command-line flags, as a fairseq dataclass config.

The flags join fairseq's "Generation" options in fairseq-generate and fairseq-interactive (see
overrides.py for how). The hub passes the same names as keyword arguments:
`model.translate(text, generator="speculative", draft_path="draft.pt", draft_len=4)`.
"""
import os
from dataclasses import dataclass, field, fields
from typing import Optional

from fairseq.dataclass import FairseqDataclass
from omegaconf import open_dict

from fairseq_fast.checkpoints import checkpoint_file
from fairseq_fast.errors import UserError

GENERATORS = ("default", "speculative", "bild")
DRAFT_METHODS = ("model", "ngram", "layers")
MAX_WORKERS = 64
MAX_DRAFT_LEN = 32


@dataclass
class FastGenerationConfig(FairseqDataclass):
    generator: str = field(default="default", metadata={
        "help": "sequence generator: 'default' (fairseq's own), 'speculative' (a draft (see "
                "--draft-method) proposes --draft-len tokens, the --path model verifies them in "
                "one pass; greedy "
                "output identical to default, sampling exactly the --path model's distribution) "
                "or 'bild' (Big Little Decoder: the --draft-path model writes, the --path model "
                "takes over when it is unsure and rolls back tokens it disagrees with; faster, "
                "not identical; greedy only)"})
    draft_method: str = field(default="model", metadata={
        "help": "what proposes the drafts: 'model' (the --draft-path model), 'ngram' (n-gram "
                "lookup in the row's own text and, with a shared dictionary, its source: no "
                "draft model; pays where the output copies its input: summaries, corrections, "
                "paraphrases, post-editing) or 'layers' (the --path model's first "
                "--draft-layers decoder layers, its final norm and output projection: no new "
                "weights, no training). BiLD takes 'model' or 'layers'"})
    draft_path: Optional[str] = field(default=None, metadata={
        "help": "draft (small) model checkpoint for --generator speculative or bild; it must "
                "share the target model's dictionaries"})
    ngram_max: int = field(default=3, metadata={
        "help": "--draft-method ngram: the longest suffix looked up (tried first)"})
    ngram_min: int = field(default=1, metadata={
        "help": "--draft-method ngram: the shortest suffix looked up"})
    draft_layers: int = field(default=0, metadata={
        "help": "--draft-method layers: how many of the target's decoder layers draft (1 to "
                "its depth - 1); 0 = half its depth, rounded down"})
    draft_len: int = field(default=4, metadata={
        "help": "tokens the draft proposes per verification pass (gamma), 1..32: all K are kept "
                "only with probability alpha^K (alpha: the acceptance rate), so past a few tokens "
                "a longer draft mostly adds draft steps that are thrown away"})
    adaptive_draft_len: bool = field(default=False, metadata={
        "help": "before each pass, the draft length (0 to 2 x --draft-len) that buys the most "
                "tokens per second for the batch, priced from the acceptance rate and times of "
                "the target's passes and the draft's steps measured in this process (hub calls "
                "included): long where a pass costs about the same whatever its width (a large "
                "model at batch 1), short where it costs its rows (larger batches), 0 (plain "
                "decoding steps of the target, several in one call) where drafting does not pay "
                "at all; and a sentence gets the draft's encoder only once a pass drafts for "
                "it, which it does only while drafting repays that encoder. With --draft-method "
                "ngram each length is priced by the tokens per second its own rounds wrote, "
                "and chosen over plain steps only where it beats them clearly. "
                "Greedy output unchanged; --sampling keeps its distribution, but a fixed --seed "
                "no longer reproduces the samples"})
    draft_vocab: int = field(default=0, metadata={
        "help": "--generator speculative: the draft scores only the N most frequent target "
                "tokens (a smaller output projection per draft step; FR-Spec). Output is "
                "unchanged (the target verifies every draft token); a target token outside the "
                "N is never drafted, so fewer drafts may be kept. 0 = every token"})
    draft_vocab_counts: Optional[str] = field(default=None, metadata={
        "help": "token counts that rank --draft-vocab: a fairseq dictionary file ('symbol "
                "count' lines) of the target side of the training data, e.g. from "
                "fairseq-preprocess --only-source --dict-only. Default: the target dictionary's "
                "own order (by count; with a joined dictionary that counts the source too)"})
    bild_fallback_threshold: float = field(default=0.6, metadata={
        "help": "BiLD fallback: when the small model's probability for its next token is below "
                "this, the token is dropped and the large model writes it (0..1; 1 = the large "
                "model writes every token)"})
    bild_rollback_threshold: float = field(default=5.0, metadata={
        "help": "BiLD rollback: the first small-model token whose cross-entropy -log p_large "
                "exceeds this (and that the large model would not choose itself) is replaced "
                "by the large model's token, and the tokens after it are dropped (>= 0; 0 = "
                "output identical to the large model's greedy output)"})
    bild_max_small_steps: int = field(default=10, metadata={
        "help": "BiLD: the most tokens the small model writes before the large model checks "
                "them"})
    no_fast_beam: bool = field(default=False, metadata={
        "help": "plain beam search (no constraints, LM or EOS in a forced prefix) through fairseq's own "
                "generation loop instead of the plugin's (fused candidate selection, attention "
                "history gathered when a hypothesis is finalised, greedy steps run several at "
                "a time in one C call; same hypotheses)"})
    no_fast_cache: bool = field(default=False, metadata={
        "help": "fairseq's own incremental state instead of the plugin's (in-place K/V cache, "
                "encoder K/V once per source sentence, minimal beam reorders); implies "
                "--no-fast-prefill"})
    no_fast_diverse: bool = field(default=False, metadata={
        "help": "fairseq's own --diverse-beam-groups search instead of the plugin's copy of "
                "it, which finds each sentence's group overlap by its place in the batch "
                "(fairseq's looks it up by dataset id: an IndexError on most batches, another "
                "sentence's overlap on the rest)"})
    no_fast_linear: bool = field(default=False, metadata={
        "help": "the plugin's decoders (fast cache, speculative, BiLD) use torch's own ops "
                "everywhere: F.linear (MKL on x86) instead of the plugin's small-matrix kernel "
                "(built on first use with the C compiler) or oneDNN on weights packed once, "
                "matmul/softmax instead of its one-call attention kernel, and layer by layer "
                "in Python instead of one C call per decoder layer (float32 on CPU; results "
                "differ from torch's in float32 rounding only); on a GPU, launched one by one "
                "instead of replayed from CUDA graphs"})
    no_fast_ngram: bool = field(default=False, metadata={
        "help": "fairseq's own --no-repeat-ngram-size blocker instead of the plugin's "
                "vectorised one (fairseq's CPU path blocks nothing: fairseq issue #5206)"})
    no_fast_prefill: bool = field(default=False, metadata={
        "help": "feed forced prefixes (--prefix-size, prompts) one step per token as fairseq "
                "does, instead of in one decoder pass"})
    inflight_batching: bool = field(default=False, metadata={
        "help": "--generator speculative or bild, or greedy search (--beam 1): keep "
                "--batch-size sentences in flight; a sentence that finishes leaves at once and "
                "the next one takes its place, so a batch no longer waits for its slowest "
                "sentence (fairseq-interactive: across --buffer-size chunks when --input is a "
                "file, within each chunk on a terminal or pipe). Each sentence's output is what "
                "it gets without this flag, and the output keeps its order. It pays most for "
                "speculative decoding and BiLD, whose sentences end rounds apart, where a pass "
                "costs about the same whatever rows it holds; where a pass costs its rows (a "
                "small model on a few CPU cores) the joins can cost more than idle rows did"})
    postprocess_workers: int = field(default=0, metadata={
        "help": "fairseq-generate / fairseq-interactive: turn generated batches into text "
                "(dictionary, BPE, tokenizer, scoring) in N worker processes while the next "
                "batch is generated; output identical to the serial loop. 0 = fairseq's serial "
                "loop"})


NAMES = tuple(f.name for f in fields(FastGenerationConfig) if not f.name.startswith("_"))
DEFAULTS = FastGenerationConfig()

# set on a generation config built from fairseq-generate's / fairseq-interactive's command line
FROM_COMMAND_LINE = "fairseq_fast_command_line"


def carry_into(cfg, args):
    """fairseq's converted config `cfg` (convert_namespace_to_omegaconf(args)), with our flags of
    the command line `args` copied into cfg.generation, which build_generator receives (fairseq's
    GenerationConfig has no fields for them, so the conversion drops them) and marked as coming
    from a command line. Returns cfg."""
    with open_dict(cfg):
        for name in NAMES:
            if hasattr(args, name):
                cfg.generation[name] = getattr(args, name)
        cfg.generation[FROM_COMMAND_LINE] = True
    return cfg


def from_command_line(gen_args) -> bool:
    """Whether a generation config came from a generation tool's command line (carry_into)."""
    return bool(getattr(gen_args, FROM_COMMAND_LINE, False))


def resolve(gen_args) -> FastGenerationConfig:
    """Our options for one build_generator call, from the generation config it receives: the
    command line's flags (carry_into) or the keyword arguments a hub call put on it, defaults for
    the rest."""
    values = {}
    for name in NAMES:
        given = getattr(gen_args, name, None) if gen_args is not None else None
        values[name] = getattr(DEFAULTS, name) if given is None else given
    cfg = FastGenerationConfig(**values)
    validate(cfg)
    return cfg


def postprocess_workers(cfg) -> int:
    """--postprocess-workers of a generation tool's config (0 when not given)."""
    return int(getattr(cfg.generation, "postprocess_workers", None) or 0)


def validate(cfg: FastGenerationConfig) -> None:
    if not 0 <= int(cfg.postprocess_workers) <= MAX_WORKERS:
        raise UserError(f"--postprocess-workers must be between 0 and {MAX_WORKERS} "
                        f"(got {cfg.postprocess_workers})")
    if cfg.generator not in GENERATORS:
        raise UserError(f"unknown --generator {cfg.generator!r}; choose from "
                        + ", ".join(GENERATORS))
    # the values themselves are checked where they are used (draft_vocab.shortlist)
    if cfg.generator != "speculative" and (int(cfg.draft_vocab) or cfg.draft_vocab_counts):
        raise UserError("--draft-vocab / --draft-vocab-counts are for --generator speculative "
                        "(BiLD's output depends on the small model's whole distribution)"
                        if cfg.generator == "bild" else
                        "--draft-vocab / --draft-vocab-counts need --generator speculative")
    if cfg.draft_method not in DRAFT_METHODS:
        raise UserError(f"unknown --draft-method {cfg.draft_method!r}; choose from "
                        + ", ".join(DRAFT_METHODS))
    check_draft_method(cfg)
    if cfg.generator == "default":
        if cfg.draft_path:
            raise UserError("--draft-path is for --generator speculative or bild; the default "
                            "generator uses no draft (add --generator speculative)")
        return
    if cfg.draft_method == "model":
        if not cfg.draft_path:
            raise UserError(f"--generator {cfg.generator} needs --draft-path DRAFT.pt (or a "
                            f"--draft-method that needs no draft model: ngram, layers)")
        checkpoint_file("--draft-path", cfg.draft_path)
        if not os.access(cfg.draft_path, os.R_OK):
            raise UserError(f"--draft-path {cfg.draft_path}: not readable")
    if cfg.generator == "bild":
        check_thresholds(float(cfg.bild_fallback_threshold), float(cfg.bild_rollback_threshold),
                         cfg.bild_max_small_steps)
        if cfg.adaptive_draft_len:
            raise UserError("--adaptive-draft-len is for --generator speculative; BiLD's window "
                            "is set by --bild-fallback-threshold and --bild-max-small-steps")
    elif int(cfg.draft_len) < 1:
        raise UserError(f"--draft-len must be >= 1 (got {cfg.draft_len})")
    elif int(cfg.draft_len) > MAX_DRAFT_LEN:
        raise UserError(f"--draft-len must be at most {MAX_DRAFT_LEN} (got {cfg.draft_len}): "
                        "all K drafted tokens are kept only with probability alpha^K")


def check_draft_method(cfg: FastGenerationConfig) -> None:
    """The flags of one --draft-method that the others do not take."""
    method = cfg.draft_method
    if method != "model" and cfg.generator == "default":
        raise UserError(f"--draft-method {method} is for --generator speculative (or bild)")
    if method == "ngram":
        if cfg.generator == "bild":
            raise UserError("--generator bild does not take --draft-method ngram: BiLD's "
                            "fallback needs a small model's probabilities (use model or "
                            "layers)")
        if cfg.draft_path:
            raise UserError("--draft-method ngram uses no draft model: drop --draft-path")
        if int(cfg.draft_vocab) or cfg.draft_vocab_counts:
            raise UserError("--draft-vocab is for a draft model: --draft-method ngram scores "
                            "nothing")
        check_ngram_sizes(cfg.ngram_min, cfg.ngram_max)
    elif (cfg.ngram_min, cfg.ngram_max) != (DEFAULTS.ngram_min, DEFAULTS.ngram_max):
        raise UserError("--ngram-min / --ngram-max are for --draft-method ngram")
    if method == "layers":
        if cfg.draft_path:
            raise UserError("--draft-method layers drafts with the --path model's own layers: "
                            "drop --draft-path")
        if int(cfg.draft_layers) != cfg.draft_layers or cfg.draft_layers < 0:
            raise UserError(f"--draft-layers must be an integer >= 1, or 0 for half the "
                            f"target's depth (got {cfg.draft_layers})")
    elif cfg.draft_layers:
        raise UserError("--draft-layers is for --draft-method layers")


def check_ngram_sizes(ngram_min: int, ngram_max: int) -> None:
    if int(ngram_min) != ngram_min or ngram_min < 1:
        raise UserError(f"--ngram-min must be an integer >= 1 (got {ngram_min})")
    if int(ngram_max) != ngram_max or ngram_max < ngram_min:
        raise UserError(f"--ngram-max must be an integer >= --ngram-min {ngram_min} "
                        f"(got {ngram_max})")


def check_generation_args(args, cfg, extra_gen_cls_kwargs=None,
                          prefix_allowed_tokens_fn=None) -> None:
    """Refuse, with one line, every generation option the speculative and BiLD generators
    cannot honour (fairseq's generation config `args`, our resolved `cfg`)."""
    g = lambda name, default=None: getattr(args, name, default)  # noqa: E731
    name = f"--generator {cfg.generator}"
    if cfg.generator == "default":  # greedy search on the speculative loop, for its stream
        name = "--inflight-batching with the default generator"
        if g("sampling", False):
            raise UserError(f"{name} is greedy search only (no --sampling)")
    path, temperature = g("path") or "", g("temperature")
    check_draft_generator(name, models=len(path.split(os.pathsep)) if path else 1,
                          beam_size=g("beam", 5),
                          temperature=1.0 if temperature is None else temperature,
                          sampling=g("sampling", False), bild=cfg.generator == "bild")
    if g("nbest", 1) != 1:
        raise UserError(f"{name} supports --nbest 1 only (got {g('nbest')})")
    refused = [
        (g("constraints"), "--constraints"),
        ((g("diverse_beam_groups", -1) or -1) > 0, "--diverse-beam-groups"),
        ((g("diversity_rate", -1) or -1) > -1, "--diversity-rate"),
        (g("match_source_len", False), "--match-source-len"),
        (g("print_alignment"), "--print-alignment"),
        (g("score_reference", False), "--score-reference"),
        (g("lm_path"), "--lm-path (LM fusion)"),
        (extra_gen_cls_kwargs and extra_gen_cls_kwargs.get("lm_model") is not None, "LM fusion"),
        (prefix_allowed_tokens_fn is not None, "prefix_allowed_tokens_fn"),
    ]
    for bad, what in refused:
        if bad:
            raise UserError(f"{name} does not support {what}")


def check_draft_generator(name: str, models: int, beam_size: int, temperature: float,
                          sampling: bool, bild: bool, draft_len: int = 1) -> None:
    """What the speculative loop itself needs (generators/speculative.py checks its arguments
    here too, for callers that build it directly)."""
    if models != 1:
        raise UserError(f"{name} takes one target model in --path, got an ensemble of {models}")
    if beam_size != 1:
        raise UserError(f"{name} needs --beam 1 (got --beam {beam_size})")
    if temperature <= 0:
        raise UserError(f"{name} does not support --temperature <= 0 (got {temperature})")
    if bild and sampling:
        raise UserError(f"{name} does not support --sampling (BiLD is greedy only)")
    if int(draft_len) != draft_len or draft_len < 1:
        raise UserError(f"--draft-len must be an integer >= 1 (got {draft_len})")


def check_thresholds(fallback: float, rollback: float, max_small_steps: int) -> None:
    if not 0.0 <= fallback <= 1.0:
        raise UserError(f"--bild-fallback-threshold must be in [0, 1] (got {fallback})")
    if not rollback >= 0.0:
        raise UserError(f"--bild-rollback-threshold must be >= 0 (got {rollback})")
    if int(max_small_steps) != max_small_steps or max_small_steps < 1:
        raise UserError(f"--bild-max-small-steps must be an integer >= 1 (got {max_small_steps})")
