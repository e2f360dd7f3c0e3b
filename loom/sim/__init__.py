"""loom.sim: a machine description, a roofline cost model and a step-time simulator for
partitioned (per-device) programs, with timelines written as Chrome traces."""

from loom.sim.cost import Decision, collective_time, op_time, windowed_einsum_decision
from loom.sim.machine import Machine
from loom.sim.simulate import Prediction, SimulationError, simulate
from loom.sim.timeline import Timeline

__all__ = ["Decision", "Machine", "Prediction", "SimulationError", "Timeline", "collective_time", "op_time",
           "simulate", "windowed_einsum_decision"]
