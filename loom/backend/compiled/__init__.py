"""The compiled executor: a function lowered to Python source, one statement per op.

    codegen      the code generation engine (`ModuleCodegen`, `FunctionCodegen`) and its rule
                 table (`CODEGEN_RULES`, one rule per op for both array libraries); the region
                 ops' rules are in their op families (loom.ops.control_flow, reductions, indexing)
    regions      region analysis the rules share (elementwise bodies, native reducers, argmax)
    executables  `Executable` (numpy), `TorchExecutable`, CUDA-graph and inductor executables

    exe = compile_module(module)          # compiled once per module and entry
    exe(x, y); print(exe.source)
"""

from loom.backend.compiled.codegen import (
    CODEGEN_RULES,
    ELEMENTWISE,
    EXECUTOR,
    LIBRARIES,
    FunctionCodegen,
    InterpretedOp,
    ModuleCodegen,
    codegen_rule,
)
from loom.backend.compiled.executables import (
    CudaGraphExecutable,
    Executable,
    InductorExecutable,
    TorchExecutable,
    UnsupportedTypeError,
    compile_module,
)
from loom.backend.compiled.regions import argreduce_direction, is_elementwise_region, reducer_ufunc

__all__ = ["CODEGEN_RULES", "ELEMENTWISE", "EXECUTOR", "LIBRARIES", "CudaGraphExecutable",
           "Executable", "FunctionCodegen", "InductorExecutable", "InterpretedOp", "ModuleCodegen", "TorchExecutable",
           "UnsupportedTypeError", "argreduce_direction", "codegen_rule", "compile_module", "is_elementwise_region",
           "reducer_ufunc"]
