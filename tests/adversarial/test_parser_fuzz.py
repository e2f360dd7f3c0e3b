"""Mutated corpus files through parse / verify / print / reparse (see fuzz_support): every mutant
parses and round-trips, or fails with a located ParseError or a VerifyError; nothing else is
raised and nothing runs past the time limit.

By default a few hundred derandomized examples (a few seconds). `make fuzz` runs many more:
LOOM_FUZZ_EXAMPLES=100000 (and LOOM_FUZZ_SEED to change the seed), printing the count of each
outcome.
"""

from __future__ import annotations

import os
from collections import Counter

from adversarial.fuzz_support import HARD_TOKENS, check, corpus_texts, mutate, time_limit
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("LOOM_FUZZ_EXAMPLES", "300"))
SEED = int(os.environ.get("LOOM_FUZZ_SEED", "0"))
TIME_LIMIT = 2.0  # seconds per mutant: parse, verify, print twice, reparse twice

TEXTS = corpus_texts()
EDIT = st.tuples(st.integers(0, 8), st.integers(0, 1 << 16), st.integers(0, 1 << 16), st.integers(0, 1 << 16))


def test_corpus_is_there() -> None:
    assert len(TEXTS) > 100 and len(HARD_TOKENS) > 50


def test_mutants_parse_and_round_trip_or_fail_located() -> None:
    counts: Counter[str] = Counter()

    @settings(max_examples=EXAMPLES, derandomize=SEED == 0, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.integers(0, len(TEXTS) - 1), st.lists(EDIT, min_size=1, max_size=4), st.booleans())
    def one(which: int, edits: list, allow_unregistered: bool) -> None:
        text = mutate(TEXTS[which], edits)
        with time_limit(TIME_LIMIT):
            counts[check(text, allow_unregistered)] += 1

    if SEED:
        one = seed(SEED)(one)
    one()
    print(f"\n{sum(counts.values())} mutants: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    assert counts["parsed"] and counts["parse error"]
