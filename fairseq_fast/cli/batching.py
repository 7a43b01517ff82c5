"""Batches that lose no sentence (the `keep_last_batch` override, see overrides.py).

fairseq's `data_utils.batch_by_size` cuts the sorted indices into batches of at most
--max-tokens / --batch-size, each rounded down to a multiple of --required-batch-size-multiple
(default 8), the remainder carried into the next batch. Whatever is left at the end forms the last
batch, and fairseq then drops that batch whenever its size is not a multiple of the multiple
(`if bsz_mult > 1 and len(b[-1]) % bsz_mult != 0: b = b[:-1]`; fairseq issue #5036). The indices
are sorted by length, so the sentences dropped are the longest ones, silently: `fairseq-generate`
on 100 sentences writes 96 (99 with --batch-size 1) and reports "Translated 96 sentences".

With the plugin loaded the dropped batch is put back: the batches are fairseq's own, in fairseq's
order, plus the one it dropped, so every sentence is generated. A sentence longer than
--max-tokens (fairseq asserts) is a one-line error, and so is one longer than the model takes
without --skip-invalid-size-inputs-valid-test (fairseq raises a bare Exception).
"""

import numpy as np

from fairseq_fast.errors import UserError


def keep_last_batch(original):
    def batch_by_size(indices, num_tokens_fn, num_tokens_vec=None, max_tokens=None,
                      max_sentences=None, required_batch_size_multiple=1, fixed_shapes=None):
        if not isinstance(indices, np.ndarray):  # as fairseq does; read once, used twice here
            indices = np.fromiter(indices, dtype=np.int64, count=-1)
        try:
            batches = original(indices, num_tokens_fn, num_tokens_vec=num_tokens_vec,
                               max_tokens=max_tokens, max_sentences=max_sentences,
                               required_batch_size_multiple=required_batch_size_multiple,
                               fixed_shapes=fixed_shapes)
        except AssertionError as e:
            if "max_tokens" not in str(e) or not max_tokens or len(indices) == 0:
                raise
            sizes = (np.asarray(num_tokens_vec) if num_tokens_vec is not None
                     else np.array([num_tokens_fn(i) for i in indices]))
            longest = int(np.argmax(sizes))
            raise UserError(f"sentence {indices[longest]} has {int(sizes[longest])} tokens, "
                            f"more than --max-tokens {int(max_tokens)}; raise "
                            f"--max-tokens") from None
        if fixed_shapes is not None or required_batch_size_multiple <= 1:
            return batches
        return _with_dropped_batch(indices, batches)

    return batch_by_size


def _with_dropped_batch(indices, batches):
    """`batches` plus the indices after the last of them: fairseq builds its batches from
    consecutive runs of `indices`, and only ever drops the last one."""
    covered = sum(len(b) for b in batches)
    if covered >= len(indices):
        return batches
    rest = indices[covered:]
    if covered and not np.array_equal(np.concatenate(batches), indices[:covered]):
        raise AssertionError("fairseq's batches are not consecutive runs of the indices")
    return list(batches) + [rest]


def too_long_is_one_line(original):
    """FairseqTask.filter_indices_by_size, its "Size of sample #... is invalid" Exception (a
    sentence longer than the model's positions) raised as a UserError with fairseq's message."""
    def filter_indices_by_size(self, indices, dataset, max_positions=None,
                               ignore_invalid_inputs=False):
        try:
            return original(self, indices, dataset, max_positions, ignore_invalid_inputs)
        except Exception as e:  # noqa: BLE001  (fairseq raises a bare Exception)
            if type(e) is not Exception or not str(e).startswith("Size of sample #"):
                raise
            raise UserError(str(e)) from None

    return filter_indices_by_size
