"""Turning generated batches into fairseq's output lines, away from the generation loop.

`fairseq-generate` and `fairseq-interactive` turn every finished batch into text: dictionary
lookups, BPE and tokenizer decoding, the S-/T-/H-/D-/P-/A- lines and, for generate, the scorer's
inputs. With --postprocess-workers N > 0 (see pipeline.py) the main loop only generates, packs each
batch with `pack_generated` / `pack_interactive` (CPU arrays, no model state) and worker processes
call `GenerateLines` / `InteractiveLines` on it. Each returns the batch's text, one string per
sentence (so that the writer can count exactly what reached the output), byte for byte what
fairseq's own loop prints (fairseq_cli/generate.py and interactive.py in fairseq 0.12), and the
(reference, hypothesis) pairs for the scorer, which the writer feeds in order.
"""
import math
from dataclasses import dataclass
from typing import Any, List, Optional

import torch
from fairseq import utils

HYPO_KEYS = ("tokens", "score", "positional_scores", "alignment", "steps", "history")


# -- packing: tensors travel between processes as numpy arrays (pickled by value, no shared
#    memory segment per tensor) and come back as tensors of the same dtype ----------------------
class _Array:
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array


def to_wire(x):
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu()  # a copy: the generator may reuse its buffers for the next batch
        return x.clone() if x.dtype == torch.bfloat16 else _Array(x.numpy().copy())
    if isinstance(x, dict):
        return {k: to_wire(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(to_wire(v) for v in x)
    return x


def from_wire(x):
    if isinstance(x, _Array):
        return torch.from_numpy(x.array)
    if isinstance(x, dict):
        return {k: from_wire(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(from_wire(v) for v in x)
    return x


def _hypos(hypos, nbest):
    return [[{k: h[k] for k in HYPO_KEYS if k in h} for h in row[:nbest]] for row in hypos]


@dataclass
class Packed:
    """One generated batch, as the workers see it (no model state, CPU only)."""
    seq: int  # position in the output
    sentences: int
    payload: Any  # to_wire() form of the batch


def pack_generated(seq, sample, hypos, nbest, originals=None) -> Packed:
    """fairseq-generate: the batch's ids, padded source and target, and its n best hypotheses.
    `originals` holds the raw (source, target) strings when --replace-unk needs them."""
    net = sample["net_input"]
    payload = dict(ids=sample["id"].tolist(), src=net.get("src_tokens"),
                   target=sample["target"], hypos=_hypos(hypos, nbest), originals=originals)
    return Packed(seq, len(payload["ids"]), to_wire(payload))


def pack_interactive(seq, results, nbest) -> Packed:
    """fairseq-interactive: one input buffer's results, sorted by input order, as
    (id, source tokens, hypotheses, constraints, seconds per sentence)."""
    rows = [(i, src, _hypos([h], nbest)[0], info["constraints"], info["time"])
            for i, src, h, info in sorted(results, key=lambda r: r[0])]
    return Packed(seq, len(rows), to_wire(rows))


# -- formatting -------------------------------------------------------------------------------
class _Lines:
    """What both tools share: decoding and the H-/D-/P- lines of one hypothesis."""

    def __init__(self, cfg, src_dict, tgt_dict, tokenizer, bpe, align_dict, strip_symbols):
        self.src_dict, self.tgt_dict = src_dict, tgt_dict
        self.tokenizer, self.bpe, self.align_dict = tokenizer, bpe, align_dict
        self.strip_symbols = strip_symbols
        self.post_process = cfg.common_eval.post_process
        self.nbest = cfg.generation.nbest
        self.print_alignment = cfg.generation.print_alignment

    def decode(self, x):
        if self.bpe is not None:
            x = self.bpe.decode(x)
        if self.tokenizer is not None:
            x = self.tokenizer.decode(x)
        return x

    def hypothesis(self, hypo, src_str):
        return utils.post_process_prediction(
            hypo_tokens=hypo["tokens"].int().cpu(), src_str=src_str,
            alignment=hypo.get("alignment"), align_dict=self.align_dict,
            tgt_dict=self.tgt_dict, remove_bpe=self.post_process,
            extra_symbols_to_ignore=self.strip_symbols)

    @staticmethod
    def scored_lines(out, sample_id, hypo, hypo_str, detok_hypo_str):
        score = hypo["score"] / math.log(2)  # base 2, as fairseq prints
        out.append("H-{}\t{}\t{}".format(sample_id, score, hypo_str))
        out.append("D-{}\t{}\t{}".format(sample_id, score, detok_hypo_str))
        out.append("P-{}\t{}".format(sample_id, " ".join(
            "{:.4f}".format(x) for x in hypo["positional_scores"].div_(math.log(2)).tolist())))

    @staticmethod
    def hard_alignment_line(sample_id, alignment):
        return "A-{}\t{}".format(sample_id, " ".join(
            "{}-{}".format(src, tgt) for src, tgt in alignment))


class GenerateLines(_Lines):
    """fairseq-generate's per-batch output and scorer inputs."""

    def __init__(self, cfg, src_dict, tgt_dict, tokenizer, bpe, align_dict, strip_symbols,
                 string_scorer: bool):
        super().__init__(cfg, src_dict, tgt_dict, tokenizer, bpe, align_dict, strip_symbols)
        self.quiet = cfg.common_eval.quiet
        self.print_step = cfg.generation.print_step
        self.retain_iter_history = cfg.generation.retain_iter_history
        self.string_scorer = string_scorer

    def __call__(self, packed: Packed):
        b = from_wire(packed.payload)
        out: List[str] = []
        scored = []
        has_target = b["target"] is not None
        pad = self.tgt_dict.pad()
        starts: List[int] = []  # where each sentence's lines begin in `out`
        for i, sample_id in enumerate(b["ids"]):
            starts.append(len(out))
            src_tokens = utils.strip_pad(b["src"][i, :], pad) if b["src"] is not None else None
            target_tokens = None
            if has_target:
                target_tokens = utils.strip_pad(b["target"][i, :], pad).int().cpu()
            if self.align_dict is not None:
                src_str, target_str = b["originals"][i]
            else:
                src_str = (self.src_dict.string(src_tokens, self.post_process)
                           if self.src_dict is not None else "")
                if has_target:
                    target_str = self.tgt_dict.string(
                        target_tokens, self.post_process, escape_unk=True,
                        extra_symbols_to_ignore=self.strip_symbols)
            src_str = self.decode(src_str)
            if has_target:
                target_str = self.decode(target_str)
            if not self.quiet:
                if self.src_dict is not None:
                    out.append("S-{}\t{}".format(sample_id, src_str))
                if has_target:
                    out.append("T-{}\t{}".format(sample_id, target_str))
            for j, hypo in enumerate(b["hypos"][i]):
                hypo_tokens, hypo_str, alignment = self.hypothesis(hypo, src_str)
                detok_hypo_str = self.decode(hypo_str)
                if not self.quiet:
                    self.scored_lines(out, sample_id, hypo, hypo_str, detok_hypo_str)
                    self.extra_lines(out, sample_id, hypo, alignment, src_str)
                if has_target and j == 0:
                    if self.string_scorer:
                        scored.append((target_str, detok_hypo_str))
                        continue
                    if self.align_dict is not None or self.post_process is not None:
                        target_tokens = self.tgt_dict.encode_line(target_str,
                                                                  add_if_not_exist=True)
                        hypo_tokens = self.tgt_dict.encode_line(detok_hypo_str,
                                                                add_if_not_exist=True)
                    scored.append((target_tokens.numpy(), hypo_tokens.numpy()))
        return _per_sentence(out, starts), scored

    def extra_lines(self, out, sample_id, hypo, alignment, src_str):
        if self.print_alignment == "hard":
            out.append(self.hard_alignment_line(sample_id, alignment))
        if self.print_alignment == "soft":
            out.append("A-{}\t{}".format(sample_id, " ".join(
                ",".join(src_probs) for src_probs in alignment)))
        if self.print_step:
            out.append("I-{}\t{}".format(sample_id, hypo["steps"]))
        if self.retain_iter_history:
            for step, h in enumerate(hypo["history"]):
                _, h_str, _ = utils.post_process_prediction(
                    hypo_tokens=h["tokens"].int().cpu(), src_str=src_str, alignment=None,
                    align_dict=None, tgt_dict=self.tgt_dict, remove_bpe=None)
                out.append("E-{}_{}\t{}".format(sample_id, step, h_str))


class InteractiveLines(_Lines):
    """fairseq-interactive's output for one input buffer."""

    def __call__(self, packed: Packed):
        out: List[str] = []
        starts: List[int] = []
        for id_, src_tokens, hypos, constraints, seconds in from_wire(packed.payload):
            starts.append(len(out))
            src_str = ""
            if self.src_dict is not None:
                src_str = self.src_dict.string(src_tokens, self.post_process)
                out.append("S-{}\t{}".format(id_, src_str))
                out.append("W-{}\t{:.3f}\tseconds".format(id_, seconds))
                for constraint in constraints:
                    out.append("C-{}\t{}".format(
                        id_, self.tgt_dict.string(constraint, self.post_process)))
            for hypo in hypos:
                _, hypo_str, alignment = self.hypothesis(hypo, src_str)
                self.scored_lines(out, id_, hypo, hypo_str, self.decode(hypo_str))
                if self.print_alignment:
                    out.append(self.hard_alignment_line(id_, alignment))
        return _per_sentence(out, starts), []


def _per_sentence(out: List[str], starts: List[int]) -> List[str]:
    """Each sentence's lines as one string, "\n" after every line."""
    ends = starts[1:] + [len(out)]
    return ["".join(line + "\n" for line in out[a:b]) for a, b in zip(starts, ends)]


def add_to_scorer(scorer, scored) -> None:
    """Feed a batch's (reference, hypothesis) pairs to fairseq's scorer, in order."""
    for ref, hyp in scored:
        if isinstance(ref, str):
            scorer.add_string(ref, hyp)
        else:
            scorer.add(torch.from_numpy(ref), torch.from_numpy(hyp))


def originals(task, subset, ids) -> Optional[list]:
    dataset = task.dataset(subset)
    return [(dataset.src.get_original_text(i), dataset.tgt.get_original_text(i)) for i in ids]
