"""`fairseq-fast-draft`: a draft model for the user's own target, in one command.

    fairseq-fast-draft --target TARGET.pt --data DATA_BIN --out DRAFT.pt [--hours 1]

The stages (cli.py runs them in order; each resumes from --workdir after an interruption):
    init    the target's embeddings, encoder and first K decoder layers (layer dropping: the
            dictionaries and the embedding space are the target's by construction)   init.py
    data    sequence-level distillation data: the target's greedy translations (or, for a
            language model, continuations) of the training sources, through the plugin's own
            generator, written as a fairseq data-bin                            distill_data.py
    train   word-level distillation with fairseq-train and the `draft_kd` criterion
            (criterion.py), until --hours is spent                                   train.py
    export  float16 weights only, loadable as --draft-path                          export.py
    report  acceptance rate, tokens per target call, and speed over the default generator at
            batch 1 for speculative decoding and BiLD, on the valid split           report.py
"""
