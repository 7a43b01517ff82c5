"""Stage `report`: what the draft is worth, measured with the plugin on sentences of the valid
split at batch 1 (the setting speculative decoding is for), the engines taking turns sentence
by sentence so that a change in the machine's speed meets them alike:
    default       the plugin's default generator, greedy: the reference
    speculative   --generator speculative with the draft, --draft-len DRAFT_LEN, with
                  --adaptive-draft-len, and (a vocabulary of more than 2 x SHORTLIST) with
                  --draft-vocab SHORTLIST
    bild          --generator bild at its default thresholds
For each: seconds over the sentences, the speed over the default generator and tokens per target
call; for speculative decoding the acceptance rate alpha and the share of sentences identical to
the default's output (float32 near-ties aside, all of them); for BiLD, BLEU against the default's
greedy output over the dictionary's tokens (100: identical) and the share of tokens the draft
wrote.
"""
import dataclasses
import json
import os
import time
from typing import Dict, List

import torch
from tqdm import tqdm

from fairseq_fast.draft import target as tgt
from fairseq_fast.draft.target import LANGUAGE_MODEL, TRANSLATION, TargetInfo

DRAFT_LEN = 4
WARM_UP = 3
# with a larger target vocabulary the draft's output projection dominates its step: the report
# measures --draft-vocab SHORTLIST too (FR-Spec)
SHORTLIST = 8192


def engines(draft: str, vocabulary: int) -> Dict[str, dict]:
    """Each engine's options for task.build_generator (the plugin's flags)."""
    spec = {"generator": "speculative", "draft_path": draft, "draft_len": DRAFT_LEN}
    out = {"default": {}, "speculative": spec,
           "speculative adaptive": dict(spec, adaptive_draft_len=True)}
    if vocabulary > 2 * SHORTLIST:
        out[f"speculative vocab {SHORTLIST}"] = dict(spec, draft_vocab=SHORTLIST)
    out["bild"] = {"generator": "bild", "draft_path": draft}
    return out


def measure(info: TargetInfo, draft: str, data: str, sentences: int) -> dict:
    """The figures of the module doc, on the first `sentences` valid inputs in the tool's order."""
    from fairseq import utils

    from fairseq_fast.draft.distill_data import _order
    from fairseq_fast.speculative.draft_loading import load_draft, shares_encoder

    model, task = tgt.load(info.path, data, info)
    dataset = tgt.indexed(task, data, info, "valid")
    limit = None
    if info.kind == TRANSLATION:
        limit = utils.resolve_max_positions(task.max_positions(), model.max_positions())[0]
    items = tgt.sources(dataset, info, _order(len(dataset)), limit)[:sentences + WARM_UP]
    warm, items = items[:WARM_UP], items[WARM_UP:]
    if not items:
        return {"sentences": 0}
    options = engines(draft, len(task.target_dictionary))
    generators = {name: task.build_generator([model], tgt.generation_args(info, **flags))
                  for name, flags in options.items()}
    shared = shares_encoder(model, load_draft(task, draft, model))
    for generator in generators.values():
        for item in warm:
            tgt.generate(task, generator, model, [item], info)
        if hasattr(generator, "stats"):  # count the measured sentences only
            stats = generator.stats  # each counter anew: 0, or an empty Counter of seconds
            generator.stats = dataclasses.replace(stats, **{
                f.name: type(getattr(stats, f.name))() for f in dataclasses.fields(stats)
                if f.name != "eos"})
    seconds = {name: 0.0 for name in generators}
    outputs: Dict[str, Dict[int, torch.Tensor]] = {name: {} for name in generators}
    names = list(generators)
    cuda = next(model.parameters()).is_cuda
    with tqdm(total=len(items) * len(names), desc="report", unit=" runs",
              dynamic_ncols=True) as bar:
        for n, item in enumerate(items):
            for name in names[n % len(names):] + names[:n % len(names)]:
                start = time.perf_counter()
                out = tgt.generate(task, generators[name], model, [item], info)
                if cuda:
                    torch.cuda.synchronize()
                seconds[name] += time.perf_counter() - start
                outputs[name].update(out)
                bar.update(1)
    ids = [item.id for item in items]
    default = outputs["default"]
    result = {"sentences": len(items), "batch_size": 1, "device": _device_name(),
              "threads": torch.get_num_threads(), "encoder_shared": shared,
              "seconds": {name: round(s, 3) for name, s in seconds.items()}, "engines": {}}
    for name in names[1:]:
        stats = generators[name].stats
        entry = {"options": {k: v for k, v in options[name].items() if k != "draft_path"},
                 "speed_over_default": round(seconds["default"] / seconds[name], 3),
                 "tokens_per_target_call": round(stats.tokens_per_target_call, 3)}
        if name == "bild":
            entry["bleu_against_default"] = round(
                _bleu(task, [outputs[name][i] for i in ids], [default[i] for i in ids]), 2)
            entry["small_model_share"] = round(stats.small_share, 4)
        else:
            entry["alpha"] = round(stats.alpha, 4)
            entry["identical"] = round(sum(torch.equal(outputs[name][i], default[i])
                                           for i in ids) / len(ids), 4)
        result["engines"][name] = entry
    return result


def _bleu(task, hyps: List[torch.Tensor], refs: List[torch.Tensor]) -> float:
    import sacrebleu

    text = task.target_dictionary.string
    return sacrebleu.corpus_bleu([text(h) for h in hyps], [[text(r) for r in refs]],
                                 tokenize="none").score


def _device_name() -> str:
    if torch.cuda.is_available():
        return torch.cuda.get_device_name()
    return f"CPU, {torch.get_num_threads()} threads"


def best_command(info: TargetInfo, data: str, draft: str, result: dict) -> str:
    """The command line of the fastest exact engine (speculative decoding's)."""
    exact = {name: e for name, e in result["engines"].items() if "identical" in e}
    best = max(exact.values(), key=lambda e: e["speed_over_default"])
    flags = " ".join(f"--{k.replace('_', '-')}" + ("" if v is True else f" {v}")
                     for k, v in best["options"].items() if k != "generator")
    tool = "fairseq-generate" if info.kind == TRANSLATION else "fairseq-interactive"
    task = f" --task {LANGUAGE_MODEL}" if info.kind == LANGUAGE_MODEL else ""
    return (f"{tool} {data}{task} --path {info.path} --user-dir $(fairseq-fast-user-dir) "
            f"--beam 1 --generator speculative --draft-path {draft} {flags}")


def render(result: dict, command: str) -> str:
    """The report as the tool prints it."""
    if not result.get("sentences"):
        return "report: no valid sentence to measure on"
    lines = [f"report: {result['sentences']} valid sentences, batch 1, {result['device']}; "
             f"the draft {'shares' if result['encoder_shared'] else 'does not share'} the "
             f"target's encoder",
             f"  {'engine':<22}{'seconds':>9}{'x default':>11}{'alpha':>8}"
             f"{'tokens/call':>13}  output"]
    lines.append(f"  {'default':<22}{result['seconds']['default']:>9.2f}{1.0:>11.2f}")
    for name, e in result["engines"].items():
        bild = "identical" not in e  # its alpha is not Leviathan et al.'s: no column
        output = (f"BLEU {e['bleu_against_default']:.1f} against the default's, "
                  f"{100 * e['small_model_share']:.0f}% of the tokens the draft's" if bild else
                  f"{100 * e['identical']:.1f}% identical")
        alpha = "-" if bild else f"{e['alpha']:.3f}"
        lines.append(f"  {name:<22}{result['seconds'][name]:>9.2f}"
                     f"{e['speed_over_default']:>11.2f}{alpha:>8}"
                     f"{e['tokens_per_target_call']:>13.2f}  {output}")
    spec = max(e["speed_over_default"] for e in result["engines"].values() if "identical" in e)
    bild = result["engines"]["bild"]["speed_over_default"]
    if bild <= spec:
        lines.append("  BiLD is not faster than exact speculative decoding here: use "
                     "speculative decoding")
    lines.append("use it:")
    lines.append(f"  {command}")
    return "\n".join(lines)


def write(path: str, value: dict) -> None:
    with open(path + ".part", "w") as f:
        json.dump(value, f, indent=1)
    os.replace(path + ".part", path)
