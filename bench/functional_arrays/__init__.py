"""Functional arrays: the Python replay of gsearch esfa gen's streams, and the plots."""
