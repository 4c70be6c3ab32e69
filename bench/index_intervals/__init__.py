"""Index intervals: the plots of index_intervals_bench."""
