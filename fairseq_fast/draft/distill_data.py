"""Stage `data`: sequence-level distillation data (Kim & Rush 2016), the target's greedy output for
the training sources, through the plugin's own default generator, batched.

The training sources are taken in a fixed random order, in chunks; each chunk's output is saved
in the work folder as it is finished, so an interrupted run resumes at the next chunk. The stage
stops when every source is done or its time budget is spent (a large corpus is then distilled in
part, a random sample of it). The valid split's first VALID_SENTENCES sources (in the same kind of
order) are distilled first: fairseq-train validates on them. Then the outputs are written as a
fairseq data-bin (mmap indexed datasets, the user's dictionaries), directly from the token ids:
no detokenising and re-encoding.

A translation pair is (the source as the data-bin stores it, the target's translation). A
language model's line is its prompt (the first tokens of a line of the data) and the target's
continuation.
"""
import glob
import json
import os
import shutil
import time
from typing import Dict, List

import torch
from tqdm import tqdm

from fairseq_fast.draft import target as tgt
from fairseq_fast.draft.target import TRANSLATION, TargetInfo

CHUNK = 1000
VALID_SENTENCES = 1000
SEED = 1


def batch_limits() -> Dict[str, int]:
    """Tokens and sentences per generation batch: large enough that a step's weights are read
    for many rows at once."""
    if tgt.device().type == "cuda":
        return {"max_tokens": 16000, "max_sentences": 256}
    return {"max_tokens": 6000, "max_sentences": 64}


def _order(n: int, limit: int = 0) -> List[int]:
    g = torch.Generator().manual_seed(SEED)
    order = torch.randperm(n, generator=g).tolist()
    return order[:limit] if limit else order


class DistillData:
    """The stage's files in `folder`: valid.pt, train-NNNNN.pt (one per chunk), progress.json
    (seconds spent), and data-bin/ when finished."""

    def __init__(self, folder: str, info: TargetInfo, data: str, target_path: str):
        self.folder, self.info, self.data, self.target_path = folder, info, data, target_path
        self.bin = os.path.join(folder, "data-bin")
        os.makedirs(folder, exist_ok=True)

    # -- bookkeeping --------------------------------------------------------------------------
    def _progress_file(self):
        return os.path.join(self.folder, "progress.json")

    def spent(self) -> float:
        """Seconds spent generating so far, over every run."""
        try:
            with open(self._progress_file()) as f:
                return float(json.load(f)["seconds"])
        except (OSError, ValueError, KeyError):
            return 0.0

    def _add_time(self, seconds: float) -> None:
        _write_json(self._progress_file(), {"seconds": self.spent() + seconds})

    def _chunk_file(self, index: int) -> str:
        return os.path.join(self.folder, f"train-{index:05d}.pt")

    # -- the stage ----------------------------------------------------------------------------
    def run(self, budget: float) -> dict:
        """Generate until done or `budget` seconds (over every run) are spent, then binarise.
        Returns a summary: the training sources done, of how many, and binarise()'s."""
        model, task = tgt.load(self.target_path, self.data, self.info)
        generator = task.build_generator([model], tgt.generation_args(self.info))
        limits = batch_limits()
        max_source = None
        if self.info.kind == TRANSLATION:
            from fairseq import utils

            max_source = utils.resolve_max_positions(task.max_positions(),
                                                     model.max_positions())[0]

        def distil(dataset, ids, bar):
            items = tgt.sources(dataset, self.info, ids, max_source)
            out = {}
            for batch in tgt.batches(items, limits["max_tokens"], limits["max_sentences"],
                                     self.info):
                out.update(tgt.generate(task, generator, model, batch, self.info))
                bar.update(len(batch))
            bar.update(len(ids) - len(items))  # the ones left out
            return out

        valid_file = os.path.join(self.folder, "valid.pt")
        if not os.path.exists(valid_file):
            dataset = tgt.indexed(task, self.data, self.info, "valid")
            ids = _order(len(dataset), VALID_SENTENCES)
            start = time.perf_counter()
            with _bar(len(ids), "data: valid") as bar:
                _save(distil(dataset, ids, bar), valid_file)
            self._add_time(time.perf_counter() - start)

        dataset = tgt.indexed(task, self.data, self.info, "train")
        order = _order(len(dataset))
        chunks = [order[i:i + CHUNK] for i in range(0, len(order), CHUNK)]
        done = [os.path.exists(self._chunk_file(i)) for i in range(len(chunks))]
        finished = sum(len(c) for c, d in zip(chunks, done) if d)
        with _bar(len(order), "data: train", initial=finished) as bar:
            for index, ids in enumerate(chunks):
                if done[index]:
                    continue
                if self.spent() >= budget:
                    bar.write(f"fairseq-fast-draft: the distillation data's time is spent: "
                              f"{finished:,} of {len(order):,} training sources translated")
                    break
                start = time.perf_counter()
                _save(distil(dataset, ids, bar), self._chunk_file(index))
                self._add_time(time.perf_counter() - start)
                finished += len(ids)
        return {**self.binarise(task), "sources": finished, "of": len(order)}

    def binarise(self, task) -> dict:
        """Write data-bin/ (train and valid) from the saved outputs; the pairs (lines) and
        tokens written, and the seconds spent generating."""
        from fairseq.data import indexed_dataset

        part = self.bin + ".part"
        shutil.rmtree(part, ignore_errors=True)
        os.makedirs(part)
        for path in tgt.dictionary_files(self.data, self.info):
            shutil.copy(path, part)
        dictionary = task.source_dictionary
        counts = {}
        for split in ("valid", "train"):
            files = ([os.path.join(self.folder, "valid.pt")] if split == "valid" else
                     sorted(glob.glob(os.path.join(self.folder, "train-*.pt"))))
            outputs = {}
            for path in files:
                outputs.update(torch.load(path, weights_only=True))
            source = tgt.indexed(task, self.data, self.info, split)
            prefixes = tgt.split_prefixes(part, self.info, split)
            builders = [indexed_dataset.make_builder(indexed_dataset.data_file_path(p), "mmap",
                                                     vocab_size=len(dictionary))
                        for p in prefixes]
            sentences = tokens = 0
            for i in sorted(outputs):
                out = outputs[i]
                if self.info.kind == TRANSLATION:
                    if out.numel() <= 1:  # an empty translation: nothing to learn from
                        continue
                    builders[0].add_item(source[i])
                    builders[1].add_item(out)
                else:
                    builders[0].add_item(out)
                sentences += 1
                tokens += out.numel()
            for builder, prefix in zip(builders, prefixes):
                builder.finalize(indexed_dataset.index_file_path(prefix))
            counts[split] = {"sentences": sentences, "tokens": tokens}
        shutil.rmtree(self.bin, ignore_errors=True)
        os.replace(part, self.bin)
        return {"train_sentences": counts["train"]["sentences"],
                "train_tokens": counts["train"]["tokens"],
                "valid_sentences": counts["valid"]["sentences"], "seconds": self.spent()}


def _bar(total: int, what: str, initial: int = 0):
    return tqdm(total=total, initial=initial, desc=what, unit=" sentences", dynamic_ncols=True,
                leave=True)


def _save(outputs: Dict[int, torch.Tensor], path: str) -> None:
    torch.save({i: t.to(torch.int32) for i, t in outputs.items()}, path + ".part")
    os.replace(path + ".part", path)


def _write_json(path: str, value) -> None:
    with open(path + ".part", "w") as f:
        json.dump(value, f, indent=1)
    os.replace(path + ".part", path)
