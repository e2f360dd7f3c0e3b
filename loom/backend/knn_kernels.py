"""Kernels of the knn dialect for both executors."""
