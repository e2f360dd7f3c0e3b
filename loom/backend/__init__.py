"""Execution: a reference interpreter and a compiled executor for StableHLO programs.
`compile` / `execute`, which choose between them, are in `loom.runtime.executable`.
"""

from loom.backend.common import ArgumentError, ExecutionError, MissingRuleError
from loom.backend.compiled import CODEGEN_RULES, Executable
from loom.backend.custom_calls import CUSTOM_CALLS, register_custom_call
from loom.backend.interpreter import INTERPRETER_RULES, Interpreter
from loom.backend.kernels import KERNELS, Kernel

__all__ = ["CODEGEN_RULES", "CUSTOM_CALLS", "INTERPRETER_RULES", "KERNELS", "ArgumentError", "Executable",
           "ExecutionError", "Interpreter", "Kernel", "MissingRuleError", "register_custom_call"]

import loom.backend.knn_kernels  # noqa: E402, F401  (registers kernels)
