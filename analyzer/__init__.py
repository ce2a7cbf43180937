"""warplint: static analysis of CUDA kernels for memory-access efficiency.

Pipeline (each stage one verb, data flows one way):
    preprocess -> parse -> lower -> analyze -> check -> render
"""

__version__ = "0.1.0"
