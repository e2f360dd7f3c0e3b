"""Kernels of the stack dialect (saved values of reverse-mode loops) for both executors."""
