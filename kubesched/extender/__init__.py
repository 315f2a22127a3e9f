"""HTTP extenders: kube-scheduler's webhook way of adding filters, scores, preemption and binding.

Configured under ``extenders:`` in KubeSchedulerConfiguration; ``urlPrefix`` is an http(s) URL, or
``python:package.module:function`` for an extender called in process (see :mod:`.transport`).
:class:`HTTPExtender` implements the framework's :class:`~kubesched.framework.extender.Extender`.
"""

from kubesched.extender.config import ExtenderConfig, ManagedResource, TLSConfig
from kubesched.extender.http_extender import MAX_EXTENDER_PRIORITY, ExtenderVictims, HTTPExtender
from kubesched.extender.scheduling import (
    EXTENDER_NAME,
    build_extenders,
    extenders_binding,
    find_nodes_that_pass_extenders,
    ignored_by_scheduler,
    prioritize,
)
from kubesched.framework.extender import Extender, ExtenderError, FilterAnswer

__all__ = [
    "EXTENDER_NAME",
    "MAX_EXTENDER_PRIORITY",
    "Extender",
    "ExtenderConfig",
    "ExtenderError",
    "ExtenderVictims",
    "FilterAnswer",
    "HTTPExtender",
    "ManagedResource",
    "TLSConfig",
    "build_extenders",
    "extenders_binding",
    "find_nodes_that_pass_extenders",
    "ignored_by_scheduler",
    "prioritize",
]
