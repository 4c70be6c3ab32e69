"""Selection (select, topk, partition, quantile): the Python benchmarks against torch, cupy and
numpy, and the plots."""
