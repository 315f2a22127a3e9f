"""Extender: what the framework and preemption need of a scheduler extender.

kube-scheduler keeps this interface in its framework package and implements it in the HTTP extender
(``pkg/scheduler/extender.go``); here too: :mod:`kubesched.extender` implements it over HTTP (or an
in-process call) and sits above the framework, which only sees this protocol and the values it
exchanges.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from kubesched.api.objects import Pod
from kubesched.cache.node_info import NodeInfo


class ExtenderError(RuntimeError):
    """An extender that could not be reached, answered with an error, or answered nonsense."""


@dataclass(slots=True)
class Victims:
    """Pods to evict on one node, most important first, and how many of them break a PDB
    (extender/v1's Victims: what preemption hands an extender's preempt verb and gets back)."""

    pods: list[Pod]
    num_pdb_violations: int = 0


@dataclass(slots=True)
class FilterAnswer:
    """What an extender's filter verb said: the nodes it kept, and why it dropped the others."""

    nodes: list[str]
    failed: dict[str, str]
    failed_and_unresolvable: dict[str, str]


class Extender(Protocol):
    """One configured extender. Every verb raises :class:`ExtenderError` when the extender fails."""

    @property
    def name(self) -> str:
        """Identifies the extender (its urlPrefix)."""
        ...

    @property
    def weight(self) -> int: ...

    def is_ignorable(self) -> bool:
        """Whether scheduling goes on without this extender when it fails (filter, preempt, bind)."""
        ...

    def is_filter(self) -> bool: ...

    def is_prioritizer(self) -> bool: ...

    def is_binder(self) -> bool: ...

    def supports_preemption(self) -> bool: ...

    def is_interested(self, pod: Pod) -> bool:
        """Whether the extender manages a resource ``pod`` asks for (every pod when it manages none)."""
        ...

    def filter(self, pod: Pod, nodes: Sequence[NodeInfo]) -> FilterAnswer: ...

    def prioritize(self, pod: Pod, nodes: Sequence[NodeInfo]) -> tuple[dict[str, int], int]:
        """Node name -> score (0..MaxExtenderPriority), and this extender's weight."""
        ...

    def process_preemption(
        self, pod: Pod, victims: Mapping[str, Victims], node_infos: Mapping[str, NodeInfo]
    ) -> dict[str, Victims]:
        """The candidate nodes (and victims on each) the extender accepts of ``victims``."""
        ...

    def bind(self, pod: Pod, node: str) -> None: ...
