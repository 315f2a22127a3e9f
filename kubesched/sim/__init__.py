"""Offline simulation: the real scheduler on an embedded cluster and a virtual clock, with reports."""

from kubesched.sim.simulate import Simulation, SimulationError, SimulationResult, simulate

__all__ = ["Simulation", "SimulationError", "SimulationResult", "simulate"]
