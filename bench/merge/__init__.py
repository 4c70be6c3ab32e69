"""The merge family (merge, sort, set operations, join): the Python benchmarks, and the plots."""
