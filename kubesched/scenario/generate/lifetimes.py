"""Lifetime (and inter-arrival) distributions, written ``NAME:ARGS`` with Go durations as arguments.

* ``const:10m`` - always that long;
* ``exp:10m`` - exponential with that mean;
* ``uniform:1m:20m`` - uniform between the two;
* ``lognormal:10m:1.0`` - log-normal with that median and shape sigma (heavy-tailed, as job
  lengths in cluster traces are).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kubesched.scenario.timing import parse_duration_seconds


@dataclass(frozen=True)
class Distribution:
    """A parsed distribution: its text, its mean in seconds, and a sampler over a NumPy generator."""

    text: str
    mean: float
    sample: Callable[[np.random.Generator, int], np.ndarray]


def parse_distribution(text: str) -> Distribution:
    """Parse ``NAME:ARGS``; ValueError naming what is wrong otherwise."""
    name, _, rest = text.partition(":")
    args = rest.split(":") if rest else []

    def seconds(i: int) -> float:
        return parse_duration_seconds(args[i], f"{text}: argument {i + 1}")

    def need(n: int) -> None:
        if len(args) != n:
            raise ValueError(f"{text}: {name} takes {n} argument(s), got {len(args)}")

    if name == "const":
        need(1)
        value = seconds(0)
        return Distribution(text, value, lambda rng, n: np.full(n, value))
    if name == "exp":
        need(1)
        mean = seconds(0)
        return Distribution(text, mean, lambda rng, n: rng.exponential(mean, n))
    if name == "uniform":
        need(2)
        low, high = seconds(0), seconds(1)
        if high < low:
            raise ValueError(f"{text}: the upper bound is below the lower one")
        return Distribution(text, (low + high) / 2, lambda rng, n: rng.uniform(low, high, n))
    if name == "lognormal":
        need(2)
        median = seconds(0)
        try:
            sigma = float(args[1])
        except ValueError:
            raise ValueError(f"{text}: sigma must be a number, got {args[1]!r}") from None
        if median <= 0 or sigma < 0:
            raise ValueError(f"{text}: the median must be positive and sigma not negative")
        mu = math.log(median)
        return Distribution(text, math.exp(mu + sigma * sigma / 2), lambda rng, n: rng.lognormal(mu, sigma, n))
    raise ValueError(f"{text}: unknown distribution {name!r}; expected const, exp, uniform or lognormal")
