"""Execution: a reference interpreter and a compiled executor for StableHLO programs.

    loom.backend.compile(module_or_text, entry="main", executor="compiled" | "interpreter")
    loom.backend.execute(module_or_text, *args, entry="main", executor=...)
"""

from loom.backend.api import EXECUTORS, compile, execute  # noqa: A004
from loom.backend.common import ArgumentError, ExecutionError, MissingRuleError
from loom.backend.compiled import CODEGEN_RULES, Executable
from loom.backend.custom_calls import CUSTOM_CALLS, register_custom_call
from loom.backend.interpreter import INTERPRETER_RULES, Interpreter
from loom.backend.kernels import KERNELS, Kernel

__all__ = ["CODEGEN_RULES", "CUSTOM_CALLS", "EXECUTORS", "INTERPRETER_RULES", "KERNELS", "ArgumentError",
           "Executable", "ExecutionError", "Interpreter", "Kernel", "MissingRuleError", "compile", "execute",
           "register_custom_call"]

import loom.backend.knn_kernels  # noqa: E402, F401  (registers kernels)
