"""QueueingHints (kubesched.queue.hints): the hint map a profile's registrations make, and
isPodWorthRequeuing as a table."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kubesched.api.objects import Pod
from kubesched.framework.interfaces import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint
from kubesched.queue import events as ev
from kubesched.queue.hints import (
    PerPod,
    QueueingHintFunction,
    QueueingHints,
    Strategy,
    build_queueing_hint_map,
    default_queueing_hint,
)
from kubesched.queue.queued_pod_info import QueuedPodInfo
from tests.queue.conftest import mkpod

A = ActionType
NODE_ADD = ClusterEvent("Node", A.ADD)
POD_DELETE = ClusterEvent("Pod", A.DELETE)


def _skip(pod: Pod, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.QUEUE_SKIP


def _queue(pod: Pod, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.QUEUE


def _raises(pod: Pod, old: Any, new: Any) -> QueueingHint:
    raise RuntimeError("broken hint")


def _garbage(pod: Pod, old: Any, new: Any) -> Any:
    return "yes"


def test_the_hint_map_defaults_missing_hints_and_adds_taint_updates_to_node_adds() -> None:
    hint_map = build_queueing_hint_map(
        [
            ("Fit", [ClusterEventWithHint(NODE_ADD, _skip), POD_DELETE]),
            ("Taint", [ClusterEventWithHint(ClusterEvent("Node", A.ADD | A.UPDATE_NODE_TAINT), _skip)]),
            ("Gates", []),
        ],
        hints_enabled=True,
    )
    assert hint_map == {
        NODE_ADD: [QueueingHintFunction("Fit", _skip)],
        POD_DELETE: [QueueingHintFunction("Fit")],
        ClusterEvent("Node", A.UPDATE_NODE_TAINT): [QueueingHintFunction("Fit")],
        ClusterEvent("Node", A.ADD | A.UPDATE_NODE_TAINT): [QueueingHintFunction("Taint", _skip)],
    }
    assert hint_map[POD_DELETE][0].fn is default_queueing_hint and hint_map[POD_DELETE][0].always_queue


def test_with_hints_disabled_every_hint_is_the_default() -> None:
    hint_map = build_queueing_hint_map([("Fit", [ClusterEventWithHint(NODE_ADD, _skip)])], hints_enabled=False)
    assert all(f.always_queue for fns in hint_map.values() for f in fns)


def _qpi(*unschedulable: str, pending: tuple[str, ...] = (), pod: Pod | None = None) -> QueuedPodInfo:
    qpi = QueuedPodInfo(pod or mkpod("p"), datetime(2024, 1, 1, tzinfo=UTC))
    qpi.unschedulable_plugins.update(unschedulable)
    qpi.pending_plugins.update(pending)
    return qpi


HINTS = {
    "default-scheduler": {
        NODE_ADD: [QueueingHintFunction("Skipper", _skip), QueueingHintFunction("Queuer", _queue)],
        POD_DELETE: [QueueingHintFunction("Broken", _raises), QueueingHintFunction("Garbage", _garbage)],
        ClusterEvent("Node", A.UPDATE): [QueueingHintFunction("Wide")],
    }
}
OTHER_POD = mkpod("other")


@pytest.mark.parametrize(
    ("name", "qpi", "event", "new_obj", "want"),
    [
        ("no plugin to blame: any event", _qpi(), NODE_ADD, None, Strategy.AFTER_BACKOFF),
        ("a wildcard event", _qpi("Skipper"), ev.UnschedulableTimeout, None, Strategy.AFTER_BACKOFF),
        ("a wildcard aimed at another pod", _qpi("Skipper"), ev.EventForceActivate, OTHER_POD, Strategy.SKIP),
        (
            "a wildcard aimed at this pod",
            _qpi("Skipper", pod=OTHER_POD),
            ev.EventForceActivate,
            OTHER_POD,
            Strategy.AFTER_BACKOFF,
        ),
        (
            "a wildcard carrying something else than a pod",
            _qpi("Skipper"),
            ev.EventForceActivate,
            {"kind": "Node"},
            Strategy.SKIP,
        ),
        ("its plugin's hint says skip", _qpi("Skipper"), NODE_ADD, None, Strategy.SKIP),
        ("its plugin's hint says queue", _qpi("Queuer"), NODE_ADD, None, Strategy.AFTER_BACKOFF),
        (
            "queue from a plugin that answered Pending: at once",
            _qpi(pending=("Queuer",)),
            NODE_ADD,
            None,
            Strategy.IMMEDIATELY,
        ),
        (
            "queue from a rejecting plugin while another is pending",
            _qpi("Queuer", pending=("Skipper",)),
            NODE_ADD,
            None,
            Strategy.AFTER_BACKOFF,
        ),
        ("a plugin that did not reject the pod is not asked", _qpi("Nobody"), NODE_ADD, None, Strategy.SKIP),
        ("a hint that raises counts as queue", _qpi("Broken"), POD_DELETE, None, Strategy.AFTER_BACKOFF),
        ("a hint that answers nonsense counts as queue", _qpi("Garbage"), POD_DELETE, None, Strategy.AFTER_BACKOFF),
        (
            "a generic update wakes a generic registration",
            _qpi("Wide"),
            ClusterEvent("Node", A.UPDATE),
            None,
            Strategy.AFTER_BACKOFF,
        ),
        (
            "a specific update wakes a generic registration",
            _qpi("Wide"),
            ClusterEvent("Node", A.UPDATE_NODE_LABEL),
            None,
            Strategy.AFTER_BACKOFF,
        ),
        (
            "a profile the queue does not know",
            _qpi("Skipper", pod=mkpod("x", scheduler="other")),
            NODE_ADD,
            None,
            Strategy.AFTER_BACKOFF,
        ),
    ],
)
def test_worth_requeuing(name: str, qpi: QueuedPodInfo, event: ClusterEvent, new_obj: Any, want: Strategy) -> None:
    hints = QueueingHints(HINTS, v134_matching=True, on_error=lambda *a: None)
    assert hints.worth_requeuing(qpi, event, None, new_obj) is want


def test_v130_matching_treats_a_targeted_wildcard_as_any_wildcard() -> None:
    hints = QueueingHints(HINTS, v134_matching=False)
    assert hints.worth_requeuing(_qpi("Skipper"), ev.EventForceActivate, None, OTHER_POD) is Strategy.AFTER_BACKOFF


def test_errors_are_reported_with_plugin_and_event() -> None:
    seen: list[tuple[str, str]] = []
    hints = QueueingHints(
        HINTS, v134_matching=True, on_error=lambda err, plugin, event, qpi: seen.append((plugin, str(err)))
    )
    hints.worth_requeuing(_qpi("Broken"), POD_DELETE, mkpod("gone"), None)
    assert seen == [("Broken", "broken hint")]


def test_interest_in_an_event() -> None:
    hints = QueueingHints(HINTS, v134_matching=True)
    assert hints.is_event_of_interest(NODE_ADD) and hints.is_event_of_interest(ev.UnschedulableTimeout)
    assert not hints.is_event_of_interest(ClusterEvent("Node", A.DELETE))
    assert hints.interested_plugins(ClusterEvent("Node", A.UPDATE_NODE_TAINT)) == frozenset({"Wide"})
    assert hints.plugin_events()["Queuer"] == [NODE_ADD]


def test_per_pod_computes_once_per_pod_object() -> None:
    calls: list[str] = []

    def upper(pod: Pod) -> str:
        calls.append(pod.name)
        return pod.name.upper()

    memo: PerPod[str] = PerPod(upper, limit=2)
    a, a_again, b, c = mkpod("a"), mkpod("a"), mkpod("b"), mkpod("c")
    assert [memo(a), memo(a), memo(a_again)] == ["A", "A", "A"]
    assert calls == ["a", "a"]  # a new object of the same pod is computed afresh
    memo(b)
    memo(c)  # past the limit the memo starts over
    memo(b)
    assert calls == ["a", "a", "b", "c", "b"]
