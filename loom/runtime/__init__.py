"""Running programs: devices, placement and `loom.Array` (`devices`), `compile` / `execute` and the
executables they return (`executable`), the communicator the collective kernels call and the
per-thread SPMD context (`communicator`), meshes of devices in one process (`local`), many processes
on torch.distributed (`distributed`), and placed (MPMD) programs (`mpmd`)."""
