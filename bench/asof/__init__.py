"""As-of joins (issue 44): gsearch's asof_indices, merge_asof and join_asof against pandas, polars,
DuckDB and numpy on one host (asof_bench.py, CPU or CUDA), and the plots (plot_asof.py)."""
