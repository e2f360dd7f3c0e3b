# Quick start: `make demo` and `make test` each work from a fresh clone.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

# Test workers (pytest-xdist): the fastest count measured on a 2-core CI machine. Whole files go
# to one worker (--dist loadfile), so what a module computes once for its cases (jax's lowerings
# and results, compiled programs) is computed once: tests/backend ran in 159 s that way, 182-188 s
# with --dist load and 184 s with worksteal (same shared machine, back to back).
TEST_WORKERS ?= 2
TEST_DIST ?= loadfile

# Bytecode is written even where the environment turns it off: a test run starts dozens of
# processes that import loom and the tests (xdist workers, gloo ranks, torchrun, JAX oracles), and
# importing loom from compiled files takes about a third less CPU.
export PYTHONDONTWRITEBYTECODE :=

.PHONY: demo test test-fast fuzz lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.installed-demo: $(VENV)/.installed
	$(BIN)/pip install -q -e '.[demo]'
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(BIN)/pip install -q -e '.[test]'
	touch $@

demo: $(VENV)/.installed-demo
	$(BIN)/loom demo

test: lint
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist $(TEST_DIST) tests

# The edit-test loop: every package's core, without the tests marked slow (see tests/conftest.py).
test-fast: $(VENV)/.installed-test
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist $(TEST_DIST) -m "not slow" tests

# The adversarial suite at length: FUZZ_EXAMPLES mutants of the corpus through parse / verify /
# print / reparse (seeded by FUZZ_SEED), printing the count of each outcome.
FUZZ_EXAMPLES ?= 100000
FUZZ_SEED ?= 1
fuzz: $(VENV)/.installed-test
	LOOM_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) LOOM_FUZZ_SEED=$(FUZZ_SEED) $(BIN)/python -m pytest -n 0 -s tests/adversarial

lint: $(VENV)/.installed-test
	$(BIN)/ruff check loom tests benchmarks examples
	$(BIN)/mypy

bench: $(VENV)/.installed-test
	$(BIN)/python benchmarks/ir_throughput.py

clean:
	rm -rf $(VENV) build *.egg-info
