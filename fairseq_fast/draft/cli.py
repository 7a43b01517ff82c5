"""fairseq-fast-draft: a draft model for your own fairseq Transformer, in one command.

    fairseq-fast-draft --target TARGET.pt --data DATA_BIN --out DRAFT.pt \\
        [--source-lang S --target-lang T] [--decoder-layers K] [--hours H] [--workdir DIR]

DATA_BIN is the folder fairseq-preprocess wrote for the target (its dictionaries, train and
valid). The stages (package doc) run in order; each resumes from --workdir after an
interruption: run the same command again. Everything the tool needs is checked before any long
work starts, and a mistake is one line and exit status 2.
"""
import argparse
import json
import os
import shutil
import sys
import time

from fairseq_fast.errors import EXIT_CODE, UserError

DATA_SHARE = 1 / 3  # of --hours, at most, for the distillation data
STAGES = ("init", "data", "train", "export", "report")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="fairseq-fast-draft",
        description="Make a draft model for speculative decoding and BiLD from a fairseq "
                    "Transformer (task translation) or Transformer language model (task "
                    "language_modeling): the target's first decoder layers, distilled on the "
                    "target's own outputs, exported in float16 for --draft-path, and measured.")
    p.add_argument("--target", required=True, metavar="TARGET.pt",
                   help="the model to make a draft for (a fairseq checkpoint)")
    p.add_argument("--data", required=True, metavar="DATA_BIN",
                   help="the target's data-bin, as fairseq-preprocess wrote it: its "
                        "dictionaries and the train and valid splits")
    p.add_argument("--out", required=True, metavar="DRAFT.pt",
                   help="where to write the draft; the report goes beside it as DRAFT.json")
    p.add_argument("--source-lang", metavar="S",
                   help="translation: the source language (default: the target's, or the "
                        "data-bin's)")
    p.add_argument("--target-lang", metavar="T",
                   help="translation: the target language (default: the target's, or the "
                        "data-bin's)")
    p.add_argument("--decoder-layers", type=int, metavar="K",
                   help="decoder layers the draft keeps of the target's (default: a quarter of "
                        "them, rounded up: 6 -> 2, 12 -> 3, 24 -> 6). A draft step costs about "
                        "K / the target's layers of a target step, plus the output projection; "
                        "a deeper draft is kept more often")
    p.add_argument("--hours", type=float, default=1.0, metavar="H",
                   help="time to spend making the draft: the distillation data takes at most a "
                        "third of it (a random sample of a large corpus), training the rest; "
                        "the report adds a few minutes. A rerun with a larger H trains on from "
                        "where the last run stopped (default: 1)")
    p.add_argument("--workdir", metavar="DIR",
                   help="where the stages keep their work, for resuming (default: DRAFT.work "
                        "beside --out)")
    p.add_argument("--train-encoder", action="store_true",
                   help="train the draft's copy of the target's encoder too; by default it is "
                        "frozen, so the draft keeps the target's encoder exactly and speculative "
                        "decoding runs it once for both models")
    p.add_argument("--max-tokens", type=int, metavar="N",
                   help="tokens per training batch (default: sized for the machine's free "
                        "memory; at most 4,096 on a CPU, 16,384 on a GPU)")
    p.add_argument("--report-sentences", type=int, default=100, metavar="N",
                   help="valid sentences the report measures on, at batch 1 (0: no report)")
    return p


def main(argv=None) -> None:
    args = build_parser().parse_args(argv)
    try:
        run(args)
    except UserError as e:
        sys.stderr.write(f"fairseq-fast-draft: error: {e}\n")
        sys.exit(getattr(e, "exit_code", EXIT_CODE))
    except KeyboardInterrupt:
        sys.stderr.write(f"\nfairseq-fast-draft: interrupted; run the same command again to "
                         f"resume from {args.workdir}\n")
        sys.exit(130)


def say(text: str) -> None:
    sys.stderr.write(f"fairseq-fast-draft: {text}\n")
    sys.stderr.flush()


# -- checks before any long work ------------------------------------------------------------
def check(args):
    """Everything that can be checked before the stages start; returns the target's info and
    its checkpoint state. Fills in args.workdir, the languages and args.decoder_layers."""
    from fairseq import checkpoint_utils

    from fairseq_fast.checkpoints import UnreadableCheckpoint
    from fairseq_fast.draft import init
    from fairseq_fast.draft import target as tgt

    if not args.hours > 0:
        raise UserError(f"--hours must be > 0 (got {args.hours})")
    if args.report_sentences < 0:
        raise UserError(f"--report-sentences must be >= 0 (got {args.report_sentences})")
    if args.max_tokens is not None and args.max_tokens < 16:
        raise UserError(f"--max-tokens must be >= 16 (got {args.max_tokens})")
    _check_file("--target", args.target)
    if os.path.isdir(args.out):
        raise UserError(f"--out {args.out} is a folder; give the draft's file name")
    out_dir = os.path.dirname(os.path.abspath(args.out))
    if not os.path.isdir(out_dir):
        raise UserError(f"--out {args.out}: no such folder {out_dir}")
    args.workdir = args.workdir or os.path.splitext(args.out)[0] + ".work"
    try:
        state = checkpoint_utils.load_checkpoint_to_cpu(args.target)
    except UnreadableCheckpoint as e:
        raise UserError(f"--target: {e}") from None
    info = tgt.inspect(args.target, state)
    if not os.path.isdir(args.data):
        raise UserError(f"--data {args.data}: no such folder")
    if info.kind == tgt.TRANSLATION:
        _languages(args, info)
    for path in tgt.dictionary_files(args.data, info):
        if not os.path.isfile(path):
            raise UserError(f"--data {args.data}: no dictionary {os.path.basename(path)} (the "
                            f"folder fairseq-preprocess wrote for the target is expected)")
    _check_dictionaries(args.data, info, state)
    for split in ("train", "valid"):
        for prefix in tgt.split_prefixes(args.data, info, split):
            if not all(os.path.isfile(prefix + ext) for ext in (".bin", ".idx")):
                raise UserError(f"--data {args.data}: no {split} split ({os.path.basename(prefix)}"
                                f".bin / .idx); fairseq-fast-draft distils on train and "
                                f"measures on valid")
    if info.decoder_layers < 2:
        raise UserError(f"--target {args.target} has {info.decoder_layers} decoder layer: a "
                        f"draft made of its first layers would be the target itself")
    if args.decoder_layers is None:
        args.decoder_layers = init.default_layers(info.decoder_layers)
        args.layers_chosen = (f"a quarter of the target's {info.decoder_layers}, rounded up; "
                              f"--decoder-layers to choose")
    else:
        args.layers_chosen = "--decoder-layers"
    if not 1 <= args.decoder_layers < info.decoder_layers:
        raise UserError(f"--decoder-layers must be between 1 and {info.decoder_layers - 1} for "
                        f"a target of {info.decoder_layers} decoder layers (got "
                        f"{args.decoder_layers})")
    _check_disk(args, info, state)
    return info, state


def _check_file(flag: str, path: str) -> None:
    if os.path.isdir(path):
        raise UserError(f"{flag} {path} is a folder, not a checkpoint")
    if not os.path.isfile(path):
        raise UserError(f"{flag} {path}: no such file")
    if not os.access(path, os.R_OK):
        raise UserError(f"{flag} {path}: not readable")


def _languages(args, info) -> None:
    from fairseq.data import data_utils

    found = data_utils.infer_language_pair(args.data)
    info.source_lang = args.source_lang or info.source_lang or found[0]
    info.target_lang = args.target_lang or info.target_lang or found[1]
    if not (info.source_lang and info.target_lang):
        raise UserError(f"--data {args.data}: cannot tell the language pair; give "
                        f"--source-lang and --target-lang")


def _check_dictionaries(data: str, info, state) -> None:
    """The data-bin's dictionaries must be the target's: equal to the dictionary files found
    beside the target checkpoint or in the data folder its config names, else of the sizes of
    its embeddings."""
    from fairseq.data import Dictionary

    from fairseq_fast.draft import target as tgt
    from fairseq_fast.speculative.draft_loading import dictionary_file, first_difference

    named = tgt.option(state["cfg"]["task"], "data")
    embeddings = {"encoder": "encoder.embed_tokens.weight", "decoder": "decoder.embed_tokens.weight"}
    sides = (["encoder", "decoder"] if info.kind == tgt.TRANSLATION else ["decoder"])
    for side, path in zip(sides, tgt.dictionary_files(data, info)):
        theirs = Dictionary.load(path)
        name = os.path.basename(path)
        ours_path = dictionary_file(info.path, named, [name])
        if ours_path is not None and os.path.abspath(ours_path) != os.path.abspath(path):
            ours = Dictionary.load(ours_path)
            diff = first_difference(theirs, ours)
            if diff is not None:
                raise UserError(
                    f"--data {data}: {name} ({len(theirs)} symbols) differs from the target's "
                    f"{ours_path} ({len(ours)} symbols), first at index {diff}: the draft must "
                    f"be trained on the target's own dictionaries")
            continue
        weight = state["model"].get(embeddings[side])
        if weight is not None and weight.size(0) != len(theirs):
            raise UserError(
                f"--data {data}: {name} has {len(theirs)} symbols, the target's {side} "
                f"embeddings {weight.size(0)}: the data-bin is not the target's")


def _check_disk(args, info, state) -> None:
    """Room for the distillation data (chunks and data-bin) and the checkpoints."""
    from fairseq_fast.draft import target as tgt

    data_bytes = sum(os.path.getsize(p + ".bin")
                     for p in tgt.split_prefixes(args.data, info, "train"))
    kept = sum(v.numel() for k, v in state["model"].items()
               if hasattr(v, "numel") and not _dropped(k, args.decoder_layers))
    # chunks in int32 + the data-bin: ~3 copies of the training data; checkpoints: the
    # starting point, last, best and one by updates with Adam's two moments, the export
    need = 3 * data_bytes + kept * (4 + 3 * 12 + 2)
    where = os.path.abspath(args.workdir)
    while not os.path.isdir(where):
        where = os.path.dirname(where)
    done = _done_stages(args.workdir)
    if "data" in done:
        need -= 3 * data_bytes
    free = shutil.disk_usage(where).free
    if free < need:
        raise UserError(f"not enough disk space in {where}: the distillation data and "
                        f"checkpoints need about {need / 2**30:.1f} GiB, {free / 2**30:.1f} GiB "
                        f"is free (--workdir elsewhere?)")


def _dropped(name: str, layers: int) -> bool:
    import re

    layer = re.match(r"decoder\.layers\.(\d+)\.", name)
    return layer is not None and int(layer.group(1)) >= layers


# -- the work folder ----------------------------------------------------------------------------
def _state_path(workdir: str) -> str:
    return os.path.join(workdir, "stages.json")


def _done_stages(workdir: str) -> dict:
    try:
        with open(_state_path(workdir)) as f:
            return json.load(f).get("done", {})
    except (OSError, ValueError):
        return {}


class Workdir:
    """stages.json: the inputs the folder was made for, and each finished stage's summary."""

    def __init__(self, path: str, inputs: dict):
        self.path = path
        os.makedirs(path, exist_ok=True)
        self.state = {"inputs": inputs, "done": {}}
        try:
            with open(_state_path(path)) as f:
                old = json.load(f)
        except (OSError, ValueError):
            old = None
        if old is not None:
            if old.get("inputs") != inputs:
                changed = sorted(k for k in set(inputs) | set(old.get("inputs", {}))
                                 if inputs.get(k) != old.get("inputs", {}).get(k))
                raise UserError(f"--workdir {path} holds the work of another run (different "
                                f"{', '.join(changed)}); give another --workdir or remove it")
            self.state = old

    def done(self, stage: str):
        return self.state["done"].get(stage)

    def finish(self, stage: str, summary: dict) -> None:
        self.state["done"][stage] = summary
        for later in STAGES[STAGES.index(stage) + 1:]:  # made from this stage's result
            self.state["done"].pop(later, None)
        from fairseq_fast.draft.distill_data import _write_json

        _write_json(_state_path(self.path), self.state)

    def file(self, name: str) -> str:
        return os.path.join(self.path, name)


# -- the stages ----------------------------------------------------------------------------
def run(args) -> None:
    import torch

    from fairseq_fast.draft import distill_data, export, init, report, train
    from fairseq_fast.draft import target as tgt

    info, state = check(args)
    inputs = {"target": os.path.abspath(args.target),
              "target_size": os.path.getsize(args.target),
              "data": os.path.abspath(args.data), "source_lang": info.source_lang,
              "target_lang": info.target_lang, "decoder_layers": args.decoder_layers,
              "train_encoder": bool(args.train_encoder)}
    work = Workdir(args.workdir, inputs)
    frozen = not args.train_encoder and info.kind == tgt.TRANSLATION
    where = tgt.device()
    say(f"target {args.target}: a {info.arch} ({info.kind}), {info.decoder_layers} decoder "
        f"layers, {info.parameters / 1e6:.1f}M parameters; "
        f"{'GPU ' + torch.cuda.get_device_name() if where.type == 'cuda' else f'CPU, {torch.get_num_threads()} threads'}")
    say(f"draft: the target's first {args.decoder_layers} decoder layers ({args.layers_chosen})"
        + ("; encoder frozen: the draft keeps the target's and shares it when decoding"
           if frozen else "; encoder trained" if info.kind == tgt.TRANSLATION else ""))
    say(f"--hours {args.hours:g}: distillation data at most {args.hours * DATA_SHARE * 60:.0f} "
        f"minutes, training the rest; work folder {args.workdir}")
    budget = args.hours * 3600
    since = time.time()  # each finished stage records its wall time ("wall_seconds")

    start = init.layer_dropped(state, args.decoder_layers, train_encoder=not frozen)
    shape, positions = _shape(start), _positions(state)
    if not work.done("init"):
        init.write(start, work.file("init.pt"))
        work.finish("init", {"parameters": tgt.parameters(start["model"]),
                             "wall_seconds": _since(since)})
        say(f"init: {work.done('init')['parameters'] / 1e6:.1f}M parameters")
    del state, start

    if not work.done("data"):
        stage = distill_data.DistillData(work.file("distill"), info, args.data, args.target)
        since = time.time()
        summary = stage.run(budget * DATA_SHARE)
        work.finish("data", {**summary, "wall_seconds": _since(since)})
        left = summary["sources"] - summary["train_sentences"]
        say(f"data: {summary['sources']:,} of {summary['of']:,} training sources in "
            f"{summary['seconds'] / 60:.1f} minutes: {summary['train_sentences']:,} pairs, "
            f"{summary['train_tokens']:,} target tokens"
            + (f" ({left:,} left out: too long for the target, too short to prompt, or an "
               f"empty output)" if left else ""))
    data_seconds = work.done("data")["seconds"]
    if not work.done("data")["train_sentences"]:
        raise UserError(f"the distillation data's share of --hours {args.hours:g} translated no "
                        f"training source: give more --hours (or remove {args.workdir})")

    # what the data left, and never less than the rest of the budget (its last chunk may end
    # past its share)
    hours = max(budget - data_seconds, budget * (1 - DATA_SHARE)) / 3600
    trained = work.done("train")
    if not trained or trained["hours"] < hours - 1e-6:
        max_tokens = args.max_tokens or train.batch_tokens(*shape)
        save_dir = work.file("checkpoints")
        cmd = train.arguments(work.file("distill/data-bin"), info, info.arch,
                              work.file("init.pt"), save_dir, hours, max_tokens, frozen,
                              positions)
        say(f"train: {max_tokens:,} tokens per batch, until {hours * 60:.0f} minutes of "
            f"training (log: {work.file('train.log')})")
        since = time.time()
        figures = train.run(cmd, save_dir, hours * 3600, work.file("train.log"))
        work.finish("train", {"hours": hours, **figures, "wall_seconds": _since(since)})

    if not work.done("export"):
        since = time.time()
        best = train.best_checkpoint(work.file("checkpoints"))
        size = export.slim(best, args.out, data=os.path.abspath(args.data))
        work.finish("export", {"from": best, "bytes": size, "wall_seconds": _since(since)})
        say(f"export: {args.out} ({size / 2**20:.1f} MiB, float16)")

    since = time.time()
    summary = {"target": os.path.abspath(args.target), "draft": os.path.abspath(args.out),
               "decoder_layers": args.decoder_layers, "encoder_frozen": frozen}
    if args.report_sentences:
        result = report.measure(info, args.out, args.data, args.report_sentences)
        summary["report"] = result
        if result.get("sentences"):
            command = report.best_command(info, args.data, args.out, result)
            summary["command"] = command
            print(report.render(result, command))
    work.finish("report", {"wall_seconds": _since(since)})
    summary["stages"] = work.state["done"]
    # each stage as the run that finished it took it (a resumed stage: its last run only)
    summary["wall_seconds"] = round(sum(stage.get("wall_seconds", 0.0)
                                        for stage in work.state["done"].values()), 1)
    report.write(os.path.splitext(args.out)[0] + ".json", summary)
    say(f"done; the report is in {os.path.splitext(args.out)[0]}.json")


def _since(start: float) -> float:
    return round(time.time() - start, 1)


def _shape(state: dict):
    """(vocabulary, model dimension, layers) of the starting point, for batch sizing."""
    weights = state["model"]
    embed = weights["decoder.embed_tokens.weight"]
    layers = {tuple(k.split(".")[:3]) for k in weights
              if k.startswith(("decoder.layers.", "encoder.layers."))}
    return embed.size(0), embed.size(1), max(len(layers), 1)


def _positions(state: dict):
    """The target's (max source positions or None, max target positions or None)."""
    from fairseq_fast.draft.target import model_config, option

    model = model_config(state)
    return option(model, "max_source_positions"), option(model, "max_target_positions")


if __name__ == "__main__":
    main()
