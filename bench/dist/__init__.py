"""The distributed family (gsearch.distributed): the CPU benchmark over MPI, the
torch.distributed peer and the plots."""
