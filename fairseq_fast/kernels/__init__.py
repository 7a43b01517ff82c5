"""The C kernels and their Python side (the lowest layer): the small-matrix linear, attention,
whole layers, beam candidates and n-gram blocking in csrc/, built, loaded and declared by loader.py;
packed_linear.py picks a matmul per call; cpu_attention.py calls the attention kernel. Imports
nothing else of the plugin but errors and options."""
