"""Frameworks built from the configuration's profiles (kube-scheduler's pkg/scheduler/profile).

:func:`new_map` builds one Framework per profile into a :class:`ProfileMap`;
:class:`ClusterEventRecorder` writes the Events the profiles report.
"""

from kubesched.profile.events import ClusterEventRecorder, truncate_message
from kubesched.profile.profile import (
    FrameworkOptions,
    ProfileMap,
    QueueNominator,
    guarded_less,
    ignore_resources_in_fit,
    new_map,
)

__all__ = [
    "ClusterEventRecorder",
    "FrameworkOptions",
    "ProfileMap",
    "QueueNominator",
    "guarded_less",
    "ignore_resources_in_fit",
    "new_map",
    "truncate_message",
]
