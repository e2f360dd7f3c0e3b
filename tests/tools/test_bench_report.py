"""`loom bench report`: the table it prints from records written by the benchmarks' `write_record`."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import re
import time

import numpy as np
from support.paths import ROOT

from loom.tools import loom_main


def load_bench_common(results):
    """benchmarks/bench_common.py (not a package), writing its records into `results`."""
    spec = importlib.util.spec_from_file_location("bench_common_under_test", ROOT / "benchmarks" / "bench_common.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.RESULTS = results
    return module


def report(results) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = loom_main.main(["bench", "report", "--results", str(results)])
    return status, out.getvalue()


def test_report_prints_the_medians_spread_and_ratios_of_the_raw_timings(tmp_path):
    bench_common = load_bench_common(tmp_path)
    rng = np.random.default_rng(3)
    times = {"loom": list(rng.uniform(0.01, 0.02, 7)), "peer": list(rng.uniform(0.02, 0.05, 6))}
    record = bench_common.Record("toy", {"n": 10})
    record.add_all("n=10", times, loom={"recall": 0.96})
    record.ratio("n=10", "loom", "peer")
    path = record.write()
    # an earlier record of the same benchmark, which the report must not show
    earlier = json.loads(path.read_text())
    earlier["rows"][0]["seconds"] = [9.0]
    (tmp_path / "toy-20000101-0000.json").write_text(json.dumps(earlier))

    status, text = report(tmp_path)
    assert status == 0
    saved = json.loads(path.read_text())
    assert saved["machine"]["load_average_1min"] >= 0 and saved["commit"]
    assert path.name in text and "toy-20000101-0000.json" not in text
    assert saved["commit"][:12] in text
    for name, ts in times.items():
        line = next(line for line in text.splitlines() if line.startswith(f"n=10: {name} "))
        runs, median, low, high = line.split()[2:6]
        assert int(runs) == len(ts)
        assert float(median) == round(float(np.median(ts)), 6)
        assert (float(low), float(high)) == (round(min(ts), 6), round(max(ts), 6))
    assert "recall 0.96" in text
    ratio = float(re.search(r"median peer / median loom = ([0-9.]+)", text).group(1))
    assert ratio == round(float(np.median(times["peer"]) / np.median(times["loom"])), 3)


def test_report_reads_timings_of_a_record_without_rows(tmp_path):
    bench_common = load_bench_common(tmp_path)
    ts = [0.5, 0.25, 0.75, 1.0]
    bench_common.write_record("legacy", {"sizes": [{"tools": {"x": {"seconds": {"parse": ts}}}}]})
    status, text = report(tmp_path)
    assert status == 0
    line = next(line for line in text.splitlines() if line.startswith("sizes/0/tools/x: parse"))
    assert float(line.split()[3]) == float(np.median(ts))


def test_report_without_records_fails_with_the_folder_named(tmp_path, capsys):
    assert loom_main.main(["bench", "report", "--results", str(tmp_path)]) == 1
    assert str(tmp_path) in capsys.readouterr().err


def test_markdown_report_has_the_same_medians(tmp_path):
    bench_common = load_bench_common(tmp_path)
    ts = [0.3, 0.1, 0.2]
    record = bench_common.Record("md", {})
    record.add("c", "loom", ts)
    record.write()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert loom_main.main(["bench", "report", "--results", str(tmp_path), "--markdown"]) == 0
    row = next(line for line in out.getvalue().splitlines() if line.startswith("| c | loom |"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[2:6] == ["3", f"{np.median(ts):.6f}", f"{min(ts):.6f}", f"{max(ts):.6f}"]


def test_a_second_record_in_the_same_minute_is_kept_beside_the_first_and_reported_as_the_latest(tmp_path,
                                                                                               monkeypatch):
    bench_common = load_bench_common(tmp_path)
    now, strftime = time.localtime(), time.strftime
    monkeypatch.setattr(time, "strftime", lambda fmt, t=None: strftime(fmt, now))  # both in one minute
    paths = []
    for n in (1, 2):
        record = bench_common.Record("toy", {"n": n})
        record.add_all("case", {"loom": [0.01 * n] * 3})
        paths.append(record.write())
    assert paths[0] != paths[1] and all(p.exists() for p in paths)
    assert paths[1].stem == f"{paths[0].stem}{strftime('%S', now)}"
    assert json.loads(paths[0].read_text())["settings"] == {"n": 1}
    status, out = report(tmp_path)
    assert status == 0 and paths[1].name in out and paths[0].name not in out
