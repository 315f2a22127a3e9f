"""DefaultBinder: bind the pod through the API (the pods/binding subresource)."""

from __future__ import annotations

from typing import Any

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.status import Status
from kubesched.klog import Logger, kobj, kref
from kubesched.plugins import names

NAME = names.DEFAULT_BINDER
#: The name kube-scheduler's framework gives the plugin's logger at Bind.
LOGGER_NAME = f"Bind.{NAME}"

logger = Logger(__name__)


def _api_error() -> type[Exception]:
    # Imported late: the cluster layer depends on more than a plugin module should load eagerly.
    from kubesched.cluster.protocol import ApiError

    return ApiError


class DefaultBinder:
    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if v := logger.v(3):
            v.info(
                "Attempting to bind pod to node", "logger", LOGGER_NAME, "pod", kobj(pod), "node", kref("", node_name)
            )
        try:
            self.handle.cluster.bind(pod.namespace, pod.name, node_name, uid=pod.uid or None)
        except _api_error() as err:
            return Status.from_error(err)
        return None


def new(args: Any, handle: Handle) -> DefaultBinder:
    return DefaultBinder(handle)
