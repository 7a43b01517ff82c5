"""What FairseqTask.build_generator returns: fairseq's SequenceGenerator with the plugin's fast
parts (fast.py) and its own beam-search loop (beam_search.py), the speculative generator
(speculative.py) and BiLD (bild.py). Imports the layers below it only."""
