"""Running programs on many devices: the communicator the collective kernels call, the per-thread
SPMD context (which partition the running program is), meshes of devices in one process and many
processes on torch.distributed."""
