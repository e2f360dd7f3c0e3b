"""Where the test data lives, for test modules at any depth under tests/."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
ROOT = TESTS.parent
CORPUS = TESTS / "corpus"
DATA = TESTS / "data"
EXAMPLES = ROOT / "examples"
LOOM = ROOT / "loom"
