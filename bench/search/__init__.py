"""Batched search: the Python peers (torch, cupy, jax, gsearch-py), the row-batched, CPU and
call-overhead benchmarks, the bank-conflict table, and the plots and reports."""
