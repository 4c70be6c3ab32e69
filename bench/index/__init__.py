"""The static index (gsearch.Index): the Python benchmark against torch, and the plots."""
