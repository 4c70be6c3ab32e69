"""The search server: the Python benchmark (torch, gsearch.Server, numpy), and the plots."""
