"""The pod-scale claim, simulated: GPT-style models of 10B to 1T parameters on TPU v4 slices of
64 to 1024 chips, one layer's forward and backward per chip (loom.sim.pod: the per-device program,
decompose-collective-matmul in auto mode priced on the slice, schedule-latency-hiding, then
loom.sim.simulate), before and after decomposition, for every model-axis size the layout allows.

    python benchmarks/overlap_pod.py            # every model (seconds on an idle 2-core machine)
    python benchmarks/overlap_pod.py --quick    # 10B and 500B, two model-axis sizes
    python benchmarks/overlap_pod.py --bidirectional --trace pod.json
    python benchmarks/overlap_pod.py --bidirectional --concatenate

Per model it prints the step time (layers x the layer's time), the utilisation of peak FLOP/s
(the program's FLOPs over that time) and the speedup, next to the paper's headline figures
(Wang et al., ASPLOS'23 abstract: 1.14-1.38x; 72% of peak for 500B on 1024 chips). These are
predictions of a roofline model, not measurements: the record's rows hold one predicted time each.
What drives the differences from the paper is listed in loom.sim.pod's docstring.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench_common import Record, fmt  # noqa: E402

from loom.sim import pod  # noqa: E402

PAPER = {"speedup": (1.14, 1.38), "utilisation_500B_1024": 0.72}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="10B and 500B, model axes of 8 and 16 only")
    ap.add_argument("--bidirectional", action="store_true", help="decompose into two-way ring loops")
    ap.add_argument("--concatenate", action="store_true",
                    help="with --bidirectional: one dot per round of the two shards concatenated")
    ap.add_argument("--trace", help="write the 500B layer's predicted timeline (decomposed) as a Chrome trace")
    opts = ap.parse_args()
    models = [m for m in pod.MODELS if not opts.quick or m.name in ("10B", "500B")]
    record = Record("overlap_pod", {"machine": "tpu-v4 preset shaped per slice", "sequence": 2048,
                                    "batch": "2 sequences per chip", "bidirectional": opts.bidirectional,
                                    "concatenate": opts.concatenate,
                                    "quick": opts.quick, "paper": PAPER})
    summary, slower = [], []
    print(f"{'model':>5} {'chips':>5} {'mesh':>8} {'step before':>12} {'step after':>12} {'speedup':>8} "
          f"{'util before':>11} {'util after':>10} {'transfers':>9}")
    for model in models:
        chips = pod.CHIPS[model.name]
        sizes = [dy for dy in pod.model_axis_sizes(model, chips) if not opts.quick or dy in (8, 16)]
        pairs = pod.compare(model, chips, sizes, opts.bidirectional, opts.concatenate)
        for before, after in pairs:
            case = f"{model.name} on {chips} ({before.dx}x{before.dy})"
            for r, name in ((before, "undecomposed"), (after, "decomposed")):
                record.add(case, name, [r.step_time], utilisation=r.utilisation, dx=r.dx, dy=r.dy,
                           layer_seconds=r.layer.step_time, compute_seconds=r.layer.compute_time,
                           communication_seconds=r.layer.communication_time, transfers=r.transfers)
            ratio = record.ratio(case, "decomposed", "undecomposed")
            if after.transfers and ratio < 1 - 1e-9:
                slower.append(case)
            print(f"{model.name:>5} {chips:>5} {f'{before.dx}x{before.dy}':>8} {fmt(before.step_time):>12} "
                  f"{fmt(after.step_time):>12} {ratio:>7.3f}x {before.utilisation:>10.1%} {after.utilisation:>9.1%} "
                  f"{after.transfers:>9}")
        fastest_before = min((b for b, _ in pairs), key=lambda r: r.step_time)
        fastest_after = min((a for _, a in pairs), key=lambda r: r.step_time)
        best_same = max(pairs, key=lambda p: p[0].step_time / p[1].step_time)
        summary.append({"model": model.name, "parameters": model.parameters, "chips": chips,
                        "fastest_undecomposed": {"dy": fastest_before.dy, "step_seconds": fastest_before.step_time,
                                                 "utilisation": fastest_before.utilisation},
                        "fastest_decomposed": {"dy": fastest_after.dy, "step_seconds": fastest_after.step_time,
                                               "utilisation": fastest_after.utilisation},
                        "speedup_fastest_over_fastest": fastest_before.step_time / fastest_after.step_time,
                        "largest_speedup_same_mesh": {"dy": best_same[0].dy,
                                                      "speedup": best_same[0].step_time / best_same[1].step_time}})
    print("\nper model: fastest mesh of each variant (predicted), and the largest speedup on one mesh")
    for s in summary:
        fb, fa, same = s["fastest_undecomposed"], s["fastest_decomposed"], s["largest_speedup_same_mesh"]
        print(f"{s['model']:>5} on {s['chips']:>4}: undecomposed {fmt(fb['step_seconds'])} (dy {fb['dy']}, "
              f"{fb['utilisation']:.1%} of peak), decomposed {fmt(fa['step_seconds'])} (dy {fa['dy']}, "
              f"{fa['utilisation']:.1%}): {s['speedup_fastest_over_fastest']:.3f}x; on dy {same['dy']}: "
              f"{same['speedup']:.3f}x")
    print(f"paper (abstract): {PAPER['speedup'][0]}-{PAPER['speedup'][1]}x; "
          f"{PAPER['utilisation_500B_1024']:.0%} of peak for 500B on 1024 chips")
    if slower:
        print(f"the cost model chose a decomposition that the simulation finds slower in: {', '.join(slower)}")
    else:
        print("no decomposition the cost model chose made a step slower")
    if opts.trace:
        model = next(m for m in pod.MODELS if m.name == "500B")
        pod.run(model, 1024, 16, True, bidirectional=opts.bidirectional).layer.timeline.write_chrome(opts.trace)
        print(f"trace: {opts.trace}")
    record.write(summary=summary, slower_where_chosen=slower)
    return 1 if slower else 0


if __name__ == "__main__":
    sys.exit(main())
