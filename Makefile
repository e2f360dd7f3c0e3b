# Quick start: `make demo` and `make test` each work from a fresh clone.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint bench clean

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

test: $(VENV)/.installed-test
	$(BIN)/ruff check loom tests benchmarks examples
	$(BIN)/python -m pytest tests

lint: $(VENV)/.installed-test
	$(BIN)/ruff check loom tests benchmarks examples

bench: $(VENV)/.installed-test
	$(BIN)/python benchmarks/ir_throughput.py

clean:
	rm -rf $(VENV) build *.egg-info
