"""Rewriting and pass infrastructure: patterns, the pattern rewriter, the greedy driver, passes,
the pass manager and MLIR's textual pipeline syntax."""

from loom.rewrite.applicator import PatternApplicator
from loom.rewrite.declarative import DeclarativePattern
from loom.rewrite.effects import is_op_trivially_dead, is_pure, would_op_be_trivially_dead
from loom.rewrite.folding import constant_value, fold_op
from loom.rewrite.greedy import GreedyRewriteConfig, apply_patterns_greedily
from loom.rewrite.instrumentation import IRPrinting, PassInstrumentation, PassTiming
from loom.rewrite.interfaces import CallableOpInterface, CallOpInterface
from loom.rewrite.listener import RewriteListener
from loom.rewrite.pass_manager import OpPassManager, PassManager
from loom.rewrite.passes import (
    Option,
    OptionError,
    Pass,
    PassError,
    PassManagerError,
    PassVerifyError,
    lookup_pass,
    register_pass,
    registered_passes,
)
from loom.rewrite.pattern import FunctionPattern, RewritePattern, pattern
from loom.rewrite.pipeline import PipelineParseError
from loom.rewrite.rewriter import PatternRewriter

__all__ = [
    "CallOpInterface", "CallableOpInterface", "DeclarativePattern", "FunctionPattern", "GreedyRewriteConfig",
    "IRPrinting", "OpPassManager", "Option", "OptionError", "Pass", "PassError", "PassInstrumentation", "PassManager",
    "PassManagerError", "PassTiming", "PassVerifyError", "PatternApplicator", "PatternRewriter",
    "PipelineParseError", "RewriteListener", "RewritePattern", "apply_patterns_greedily", "constant_value",
    "fold_op", "is_op_trivially_dead", "is_pure", "lookup_pass", "pattern", "register_pass", "registered_passes",
    "would_op_be_trivially_dead",
]
