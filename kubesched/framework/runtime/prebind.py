"""PreBind's chain: the plugins run in order, and one may wait for the cluster before the next runs.

A plugin that answers with a :class:`~kubesched.framework.pending.PendingStatus` (claims being bound,
say) pauses the chain; whatever resolves it resumes the chain with the next plugin, so the binding
cycle waits without holding a thread.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import PreBindPlugin
from kubesched.framework.pending import PendingStatus
from kubesched.framework.runtime.calls import PluginReturnError, log_plugin_failure, shown
from kubesched.framework.status import Code, Status


def run_pre_bind(
    plugins: Sequence[PreBindPlugin],
    state: CycleState,
    pod: Pod,
    node_name: str,
    done: Callable[[Status | None], None],
    index: int,
) -> None:
    """PreBind plugins from ``index`` on, until one waits (it resumes the rest when it resolves), one
    fails, or all passed. (Functions, not closures: a closure that names itself, or two that name each
    other, would keep every binding cycle's objects alive until the garbage collector ran.)"""
    while index < len(plugins):
        plugin = plugins[index]
        index += 1
        try:
            answer = plugin.pre_bind(state, pod, node_name)
            if answer is not None and not isinstance(answer, (Status, PendingStatus)):
                raise PluginReturnError(f"returned {shown(answer)}, expected a Status or None")
        except Exception as exc:
            log_plugin_failure(plugin.pre_bind, exc)
            answer = Status.from_error(exc)
        if isinstance(answer, PendingStatus):
            answer.on_done(
                functools.partial(_resume_pre_bind, plugins, state, pod, node_name, done, plugin.name, index)
            )
            return
        failure = _pre_bind_failure(plugin.name, answer)
        if failure is not None:
            done(failure)
            return
    done(None)


def _resume_pre_bind(
    plugins: Sequence[PreBindPlugin],
    state: CycleState,
    pod: Pod,
    node_name: str,
    done: Callable[[Status | None], None],
    name: str,
    nxt: int,
    status: Status | None,
) -> None:
    """A waiting PreBind plugin resolved: stop at its failure, or go on with the next plugin."""
    failure = _pre_bind_failure(name, status)
    if failure is not None:
        done(failure)
    else:
        run_pre_bind(plugins, state, pod, node_name, done, nxt)


def _pre_bind_failure(name: str, status: Status | None) -> Status | None:
    """A PreBind plugin's failure as the runner reports it (a rejection as is, else an Error)."""
    if status is None or status.code is Code.SUCCESS:
        return None
    if status.is_rejected():
        status.plugin = name
        return status
    return Status(Code.ERROR, (f'running PreBind plugin "{name}": {status.message}',), plugin=name, error=status.error)
