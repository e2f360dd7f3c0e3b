"""A machine description for the cost model: one device's peak FLOP/s and memory bandwidth, and
the links between devices (bandwidth per direction, latency per hop, topology)."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TOPOLOGIES = ("ring", "torus2d", "torus3d", "switch", "shared")
COLLECTIVES = ("all_gather", "reduce_scatter", "all_reduce", "all_to_all", "collective_permute",
               "collective_broadcast")


@dataclass(frozen=True)
class Machine:
    """`peak_flops`: FLOP/s of one device for the dtype used; `memory_bandwidth`: B/s of its
    memory; `link_bandwidth`: B/s per direction of one link; `link_latency`: s per hop;
    `topology`: "ring", "torus2d", "torus3d" (wraparound on every axis), "switch" (every device
    one link from a crossbar) or "shared" (one medium of `link_bandwidth` in all, like a bus or a
    metered loopback: every transfer in flight, of every device, shares it); `topology_shape`: the
    torus's (or ring's) extent per axis; `op_overhead`: seconds every executed op that computes
    or moves memory costs on top of its roofline (an executor's dispatch: 0 for the presets'
    asynchronously launched kernels, about the cost of one small numpy call for loom's CPU
    executors); `cores`: the processors the devices' compute shares (0: one per device; N
    processes on C < N cores time-slice, and `peak_flops`, `memory_bandwidth` and `op_overhead`
    are then one process's running alone on a core); `collective_bandwidth`: per collective kind
    ("all_gather", "reduce_scatter", ...), the bandwidth its implementation achieves in place of
    `link_bandwidth` in the cost model's algorithm for it (a runtime whose algorithm for a kind is
    slower than the model's ring, as gloo's reduce_scatter; measured by
    loom.sim.calibrate.effective_bandwidth; a mapping, kept as sorted (kind, B/s) pairs);
    `transfer_cpu`: the fraction of a core each device's transfers keep busy while in flight (a
    CPU runtime's communication threads copying bytes): where the device's share of the cores
    leaves no room for it beside the device's compute, the two slow each other alike
    (cost.transfer_slowdown; measured by loom.sim.calibrate.transfer_cpu_from_slowdown)."""

    name: str
    peak_flops: float
    memory_bandwidth: float
    link_bandwidth: float
    link_latency: float
    topology: str = "ring"
    topology_shape: tuple[int, ...] = ()
    op_overhead: float = 0.0
    cores: int = 0
    collective_bandwidth: tuple[tuple[str, float], ...] = ()
    transfer_cpu: float = 0.0

    def __post_init__(self) -> None:
        if self.topology not in TOPOLOGIES:
            raise ValueError(f"Machine {self.name!r}: topology {self.topology!r} is not one of {TOPOLOGIES}")
        for field in ("peak_flops", "memory_bandwidth", "link_bandwidth"):
            if not getattr(self, field) > 0:
                raise ValueError(f"Machine {self.name!r}: {field} must be positive, got {getattr(self, field)}")
        for field in ("link_latency", "op_overhead", "cores", "transfer_cpu"):
            if getattr(self, field) < 0:
                raise ValueError(f"Machine {self.name!r}: {field} must be >= 0, got {getattr(self, field)}")
        object.__setattr__(self, "topology_shape", tuple(int(s) for s in self.topology_shape))
        rates = dict(self.collective_bandwidth)
        for kind, rate in rates.items():
            if kind not in COLLECTIVES or not rate > 0:
                raise ValueError(f"Machine {self.name!r}: collective_bandwidth {kind!r}: {rate} is not a positive "
                                 f"bandwidth of one of {COLLECTIVES}")
        object.__setattr__(self, "collective_bandwidth", tuple(sorted((k, float(r)) for k, r in rates.items())))
        if not 0 <= self.transfer_cpu < 1:
            raise ValueError(f"Machine {self.name!r}: transfer_cpu must be in [0, 1) of a core, "
                             f"got {self.transfer_cpu}")
        axes = {"torus2d": 2, "torus3d": 3}.get(self.topology)
        if axes is not None and len(self.topology_shape) != axes:
            raise ValueError(f"Machine {self.name!r}: a {self.topology} needs a topology_shape of {axes} axes, "
                             f"got {self.topology_shape}")

    @staticmethod
    def preset(name: str) -> Machine:
        """"tpu-v4", "h100" or "h200" (figures in the docstring of PRESETS' entries)."""
        if name not in PRESETS:
            raise ValueError(f"no machine preset {name!r}; presets: {sorted(PRESETS)}")
        return PRESETS[name]

    def bandwidth_of(self, kind: str) -> float:
        """The bandwidth the cost model prices collective `kind` at: its calibrated
        collective_bandwidth, else link_bandwidth."""
        return dict(self.collective_bandwidth).get(kind, self.link_bandwidth)

    def with_(self, **changes: Any) -> Machine:
        return dataclasses.replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["topology_shape"] = list(self.topology_shape)
        d["collective_bandwidth"] = dict(self.collective_bandwidth)
        return d

    @staticmethod
    def from_json(d: dict[str, Any], where: str = "<dict>") -> Machine:
        fields = {f.name for f in dataclasses.fields(Machine)}
        unknown, missing = set(d) - fields, {f.name for f in dataclasses.fields(Machine)
                                             if f.default is dataclasses.MISSING} - set(d)
        if unknown or missing:
            raise ValueError(f"{where}: not a Machine: unknown fields {sorted(unknown)}, missing {sorted(missing)}")
        return Machine(**{**d, "topology_shape": tuple(d.get("topology_shape", ())),
                          "collective_bandwidth": tuple(dict(d.get("collective_bandwidth", {})).items())})

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(json.dumps(self.to_json(), indent=1) + "\n")
        return path

    @staticmethod
    def load(path: str | Path) -> Machine:
        return Machine.from_json(json.loads(Path(path).read_text()), str(path))

    @staticmethod
    def named(spec: str | Path | Machine) -> Machine:
        """A Machine, a preset's name, or the path of a saved Machine JSON."""
        if isinstance(spec, Machine):
            return spec
        if not isinstance(spec, (str, Path)) or (spec not in PRESETS and not Path(spec).is_file()):
            raise ValueError(f"{spec!r} is neither a machine preset ({', '.join(sorted(PRESETS))}) nor the path of "
                             f"a saved Machine's JSON")
        return Machine.preset(spec) if spec in PRESETS else Machine.load(spec)


PRESETS: dict[str, Machine] = {
    # TPU v4 (cloud.google.com/tpu/docs/v4; jax-ml/scaling-book): 275e12 bf16 FLOP/s per chip,
    # 1200 GB/s HBM2, ICI 4.5e10 B/s per link one way, ~1 us per hop, 3-D torus with wraparound
    # (4x4x4 is the smallest slice with wraparound on every axis; pods are shaped by with_()).
    "tpu-v4": Machine("tpu-v4", 275e12, 1.2e12, 4.5e10, 1e-6, "torus3d", (4, 4, 4)),
    # H100 SXM (NVIDIA datasheet via scaling-book gpus.md): 989e12 dense bf16 FLOP/s, 3.35e12 B/s
    # HBM3, NVLink 4 through NVSwitch: 450e9 B/s per direction per GPU. The per-hop latency
    # (2 us through the switch) is an assumption, not a published figure.
    "h100": Machine("h100", 989e12, 3.35e12, 450e9, 2e-6, "switch", (8,)),
    # H200 SXM: the same die (989e12 dense bf16), 4.8e12 B/s HBM3e, the same NVLink 4.
    "h200": Machine("h200", 989e12, 4.8e12, 450e9, 2e-6, "switch", (8,)),
}

__all__ = ["COLLECTIVES", "Machine", "PRESETS", "TOPOLOGIES"]
