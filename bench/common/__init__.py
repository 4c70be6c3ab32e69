"""What the benchmarks share (Python): the numpy replica of the input generators (inputs), the
source stamp, machine facts, atomic JSON writes, the plot scripts' helpers, and the comparison of
two runs."""
