"""loom's command-line programs: `loom-opt` (in the habits of mlir-opt) and `loom` (demo, opt, bench)."""
