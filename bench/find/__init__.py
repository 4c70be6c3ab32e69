"""The unsorted search (find, count, isin): the Python benchmark against torch, cupy and numpy,
and the plots."""
