"""Fixtures shared by the test modules, and the markers of every test (registered in pyproject.toml).

Markers are given here, not in the test files: `jax` / `torch` to the tests of a module that
imports them, `gpu` to tests skipped without a CUDA device (by a mark or in their body),
`multiprocess` to tests of a module that starts processes of its own (torch.distributed), and
`slow` to the modules and tests listed in SLOW (measured, see there).
`make test-fast` runs `-m "not slow"`.

Strict runs: with `CI` set (`.ci/run` sets it), a skip is a failure unless it is for missing
hardware (a CUDA device): a missing or broken oracle (jax, jaxlib's MLIR bindings, torch, faiss,
hypothesis) or a missing corpus fails the run instead of hiding its checks. The summary at the end
lists every skip with its reason (`-rs` in pyproject's addopts).

The test modules sit in folders that mirror loom/ (tests/ir, tests/backend, ...), with basenames
unique across folders (SLOW names them, and pytest imports them by basename); what they share is
in tests/support, imported by name (pyproject puts tests/ on the path).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

import pytest


@pytest.fixture
def jax_x64():
    """float64 in jax for one test (other tests compare against float32 jax): modules that need it
    throughout say `pytestmark = pytest.mark.usefixtures("jax_x64")`."""
    jax = pytest.importorskip("jax")
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", previous)


@pytest.fixture(scope="module")
def jax_ir():
    """jaxlib's MLIR bindings (`ir`) and a context with the dialects JAX registers (StableHLO,
    CHLO, sdy, func), for checking loom's text against MLIR's parser and printer."""
    pytest.importorskip("jax")
    from jax._src.interpreters import mlir
    from jaxlib.mlir import ir
    return ir, mlir.make_ir_context()


@pytest.fixture
def loom_x64():
    """64-bit values in loom (`loom.config` enable_x64) for one test: suites that check float64
    results say `pytestmark = pytest.mark.usefixtures("loom_x64")`."""
    import loom
    with loom.config.override(enable_x64=True):
        yield


# Measured with `pytest -n 2 --durations=0` on a shared 2-core machine: modules whose tests take
# 10 s or more together and are not a package's core (higher orders, full op tables, other
# engines' conformance), and single tests of 4 s or more (every parametrization), as "module" or
# "module::test". What is left runs in under two minutes with -n 2.
SLOW = frozenset({
    # whole modules
    "test_backend_conformance.py", "test_bf16_frontend.py", "test_cli.py", "test_control_flow_grad.py",
    "test_control_flow_nested_second_order.py", "test_control_flow_second_order.py", "test_examples.py",
    "test_grad_all_orders.py", "test_grad_array_ops.py", "test_jacobians.py", "test_knn_real_embeddings.py",
    "test_knn_triton.py", "test_linalg.py", "test_elementwise_math.py", "test_array_api.py", "test_functions_and_nn.py",
    "test_dtypes_sets_and_index_tricks.py", "test_numpy_kernel_edge_cases.py", "test_properties.py", "test_random.py",
    "test_rules_indexing.py", "test_scipy.py", "test_torch_gather_scatter.py", "test_torch_native.py",
    # single tests
    "test_collective_reduce.py::test_over_processes_with_gloo",
    "test_linalg_solve.py::test_lax_cholesky_values_grad_jvp",
    "test_approx_topk.py::test_fused_kernel_equals_reference_across_tilings",
    "test_approx_topk.py::test_fused_kernel_uses_no_more_threads_than_blas_was_given",
    "test_approx_topk.py::test_recall_on_random_data",
    "test_control_flow.py::test_indexing_by_a_loop_counter_is_one_dynamic_slice",
    "test_dialects.py::test_canonicalize_random_programs_match_mlir",
    "test_fuse.py::test_fused_data_dependent_loop_matches_jax",
    "test_fuse.py::test_fused_training_step_matches_jax",
    "test_grad.py::test_grad_matches_jax",
    "test_knn.py::test_low_precision_database_is_searched_exactly_without_a_float32_copy",
    "test_knn_sharded.py::test_the_example_over_gloo_processes_answers_as_one_process",
    "test_lax_ops.py::test_lax_op_matches_jax_inside_jit",
    "test_lax_special.py::test_associative_scan_gradients_and_vmap_match_jax",
    "test_lax_special.py::test_associative_scan_matches_jax",
    "test_passes.py::test_inline_ir_dumps_match_mlir",
    "test_passes.py::test_ir_printing_after_all_matches_mlir",
    "test_passes.py::test_ir_printing_selected_passes",
    "test_stop_gradient.py::test_values_and_gradients_match_jax",
    "test_stop_gradient.py::test_vmap_and_vmap_of_grad_match_jax",
    "test_vmap.py::test_grad_of_vmap",
    "test_vmap.py::test_vmap_matches_loop_and_jax",
    # measured again with the tables and process tests added since (single tests of 3 s or more)
    "test_eager_jit_parity.py",
    "test_op_info.py::test_values_match_the_oracle", "test_op_info.py::test_vjp_matches_jax",
    "test_op_info.py::test_vmap_matches_a_loop",
    "test_lax_bindings.py::test_binding_matches_jax_lax",
    "test_lax_bindings.py::test_binding_accepts_the_dtypes_jax_lax_accepts",
    "test_shard_map.py::test_values_match_jax", "test_shard_map_vma.py::test_accepts_exactly_what_jax_accepts",
    "test_elementwise_bindings.py::test_function_matches_jax_numpy",
    "test_float_types.py::test_arithmetic_rounds_at_the_types_width",
    "test_float_types.py::test_convert_to_and_from_the_type",
    "test_ir_core.py::test_parsing_memory_per_op_is_bounded",
    "test_dialects.py::test_integer_folds_match_numpy",
    "test_distributed.py::test_a_rank_stuck_elsewhere_is_named_and_the_others_fail_within_the_timeout",
    "test_distributed.py::test_every_collective_matches_the_spec",
    "test_distributed.py::test_a_killed_rank_makes_the_others_fail_naming_it",
    "test_linalg_solve.py::test_lax_triangular_solve_values_grad_jvp",
    "test_collective_matmul_jax.py::test_jax_shard_map_programs",
    "test_persistence.py::test_save_killed_at_random_points_leaves_old_or_new_and_next_save_cleans_up",
    "test_dtype_policy.py::test_environment_variable_read_at_import",
    "test_subbyte.py::test_ops_wrap_at_their_width_as_xla",
    "test_batch_norm.py::test_against_xla",
    "test_mpmd.py::test_on_gloo_processes_a_device_runs_at_most_parallel_iterations_ahead",
    "test_jvp.py::test_jvp_matches_jax",
    "test_threads_mixed.py::test_threads_mixing_jit_grad_knn_search_and_index_updates_agree_with_single_threaded_results",
    "test_linalg_solve.py::test_triangular_solve_against_xla",
    "test_index_threads.py::test_search_racing_add_and_remove_sees_a_consistent_snapshot",
    "test_sharded_jit.py::test_lowering_matches_jax_byte_for_byte",
    "test_lax_special.py::test_derivatives_match_jax",
    # measured again, single tests of 3 s or more in both of two loaded runs (scaled by the load)
    "test_pretty_form.py::test_jax_lowerings_print_as_mlir", "test_layers.py::test_imports_point_down_the_layers",
    "test_grad.py::test_pytree_params", "test_grad.py::test_transformed_module_round_trips",
    "test_dialects.py::test_float_folds_are_computed_in_the_type_precision",
    "test_control_flow_vmap.py::test_against_jax_vmap",
    "test_mpmd.py::test_the_example_pipeline_and_its_gradient_equal_the_single_device_run",
    "test_local_mesh.py::test_compiled_program_shared_by_threads_with_an_interpreted_op",
    "test_layers.py::test_allowlist_is_current", "test_threads.py::test_threads_trace_and_transform_independently",
    # the longest left in `make test-fast` (process runs, generators, gradient suites, fold tables), each
    # package's core still covered there: the in-process runs, the corpus decompositions, the corpus itself,
    # the integer and float folds, the op rules, the programs on torch, the exact results and recall
    "test_collective_matmul.py::test_decomposed_program_runs_with_a_gloo_process_per_device",
    "test_spmd_partition.py::test_transformer_example_under_torchrun_equals_one_device",
    "test_sdy.py::test_generator_writes_exactly_the_corpus", "test_dialects.py::test_dense_folds_match_mlir",
    "test_lax_ops.py::test_lax_grad_through_conv_and_dynamic_slice", "test_dialects.py::test_cmpf_folds_match_mlir",
    "test_lax_ops.py::test_dynamic_index_in_dim_matches_jax", "test_jvp.py::test_composes_with_grad_and_itself",
    "test_torch_backend.py::test_gradient_suite_on_torch_matches_numpy",
    "test_approx_topk.py::test_fusion_fires_on_traced_programs_and_keeps_results",
    # the longest left after that (an idle run): three processes of nested loops (the in-process nested
    # loops and the two-process loops stay), the jitted-argument fuzz (the parser fuzz stays)
    "test_mpmd_loop_settings.py::test_on_gloo_processes_nested_loops_with_their_own_bounds_match_one_device",
    "test_argument_fuzz.py::test_jitted_functions_agree_with_jax_or_name_the_argument",
})

# `--dist loadfile` hands whole modules to the workers, in collection order once xdist's own
# reordering (by count of tests) is off (pytest_configure): the modules measured longest in a full
# run go first, longest first, and the rest, by count of tests, fill in behind them, so that no
# worker is left running one long module alone at the end.
LONGEST_FIRST = (
    "test_knn_real_embeddings.py", "test_eager_jit_parity.py", "test_linalg.py", "test_backend_conformance.py",
    "test_distributed.py", "test_knn_sharded.py", "test_scipy.py", "test_random.py",
    "test_dtypes_sets_and_index_tricks.py", "test_grad_all_orders.py", "test_op_info.py", "test_functions_and_nn.py",
    "test_grad.py", "test_elementwise_math.py", "test_knn_triton.py", "test_pod.py", "test_rules_indexing.py",
    "test_torch_gather_scatter.py", "test_float_types.py", "test_approx_topk.py", "test_spmd_partition.py",
    "test_collective_matmul.py", "test_cli.py", "test_array_api.py", "test_dialects.py", "test_fuse.py",
)


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config.option, "loadscopereorder"):  # pytest-xdist's option
        config.option.loadscopereorder = False


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """With the slow tests deselected (`make test-fast`), a module that is slow as a whole is not
    even imported: each worker collects the whole tree, and those modules' imports and tables took
    a quarter of its collection."""
    if config.option.markexpr == "not slow" and collection_path.name in SLOW:
        return True
    return None


def _longest_modules_first(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    count = Counter(item.path for item in items)
    # a stable sort: the order within a module stays
    items.sort(key=lambda item: (rank.get(item.path.name, len(rank)), -count[item.path]))


_MODULE_MARKERS = {
    "jax": re.compile(r"^\s*(import jax|from jax)|importorskip\(\"jax", re.M),
    "torch": re.compile(r"^\s*(import torch|from torch)|importorskip\(\"torch", re.M),
    "multiprocess": re.compile(r"torch\.distributed|torchrun|multiprocessing"),
}
_NEEDS_GPU = re.compile(r"needs a CUDA|needs a GPU|CUDA GPU")


def _module_markers(path: Path, cache: dict[Path, list[str]] = {}) -> list[str]:  # noqa: B006 (a cache)
    found = cache.get(path)
    if found is None:
        source = path.read_text(encoding="utf-8")
        found = cache[path] = [name for name, pattern in _MODULE_MARKERS.items() if pattern.search(source)]
    return found


def _needs_gpu(item: pytest.Item) -> bool:
    """Skipped without CUDA: by a skipif mark, or by a `pytest.skip("needs a CUDA ...")` in its body."""
    if any(_NEEDS_GPU.search(str(m.kwargs.get("reason", ""))) for m in item.iter_markers("skipif")):
        return True
    code = getattr(getattr(item, "function", None), "__code__", None)
    return code is not None and any(isinstance(c, str) and _NEEDS_GPU.search(c) for c in code.co_consts)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.fspath))
        for name in _module_markers(path):
            item.add_marker(name)
        if _needs_gpu(item):
            item.add_marker("gpu")
        module = path.name
        test = item.nodeid.split("::", 1)[-1].split("[", 1)[0]
        if module in SLOW or f"{module}::{test}" in SLOW:
            item.add_marker("slow")
    _longest_modules_first(items)


STRICT = os.environ.get("CI", "").lower() in ("1", "true", "yes")
_HARDWARE = re.compile(r"CUDA|GPU", re.I)


def _skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    return str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)


def _strict(report: pytest.TestReport | pytest.CollectReport) -> None:
    """In a strict run, turn a skip for anything but missing hardware into a failure."""
    if not STRICT or not report.skipped or hasattr(report, "wasxfail"):
        return
    reason = _skip_reason(report)
    if _HARDWARE.search(reason):
        return
    report.outcome = "failed"
    report.longrepr = (f"skipped in a strict run (CI is set): {reason}\n"
                       "only a missing CUDA device may skip; install the test extras (make test) or fix the import")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> object:
    outcome = yield
    _strict(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> object:
    outcome = yield
    _strict(outcome.get_result())
