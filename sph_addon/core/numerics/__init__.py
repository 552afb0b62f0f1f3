"""Numerics every room shares: smoothing kernels, pair and array kernels, small matrices, lattice sums,
numba options and its disk cache."""
