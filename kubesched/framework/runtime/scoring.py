"""The Score extension point: score, normalise and weight every plugin over the feasible nodes.

A plugin with a batch form (``score_nodes`` / ``normalize_scores``) scores all nodes in one call; the
others are called node by node and normalised through their ScoreExtensions, as kube-scheduler does.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from kubesched.api.objects import Pod
from kubesched.cache.snapshot import NodeInfoList
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import (
    MAX_NODE_SCORE,
    MAX_TOTAL_SCORE,
    MIN_NODE_SCORE,
    BatchScorePlugin,
    NodeScore,
    ScorePlugin,
)
from kubesched.framework.runtime.calls import SCORE_TYPES, PluginReturnError, call_plugin, call_status
from kubesched.framework.status import Code, Status, status_label

log = logging.getLogger(__name__)

MIN_INT64 = -(2**63)
#: The reductions themselves: ``ndarray.max`` adds a Python layer per call.
_highest, _lowest = np.maximum.reduce, np.minimum.reduce
assert MIN_NODE_SCORE == 0  # the range check reads scores as unsigned


@dataclass(slots=True)
class ScoreOutcome:
    """Weighted scores per plugin (arrays aligned with the scored nodes) and their totals."""

    plugin_scores: dict[str, np.ndarray] = field(default_factory=dict)
    total: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    raw_scores: dict[str, np.ndarray] = field(default_factory=dict)


class PluginFailure(RuntimeError):
    """A Score plugin failed; the message is the Error status kube-scheduler would report."""


def run_score_plugins(
    plugins: Sequence[ScorePlugin],
    batch_forms: Mapping[str, BatchScorePlugin],
    weights: Mapping[str, int],
    state: CycleState,
    pod: Pod,
    nodes: NodeInfoList,
    *,
    record_raw: bool = False,
) -> ScoreOutcome | Status:
    """Score, normalise and weight every plugin of ``plugins`` not skipped in ``state`` over ``nodes``;
    ``batch_forms`` holds the plugins whose batch form is used."""
    total = np.zeros(len(nodes), dtype=np.int64)
    out = ScoreOutcome(total=total)
    for plugin in plugins:
        if plugin.name in state.skip_score_plugins:
            continue
        try:
            batch_form = batch_forms.get(plugin.name)
            if batch_form is not None:
                raw, scores = _score_batch(batch_form, state, pod, nodes, keep_raw=record_raw)
            else:
                raw, scores = _score_per_node(plugin, state, pod, nodes)
        except PluginFailure as failure:
            return Status(Code.ERROR, (str(failure),))
        if record_raw:
            out.raw_scores[plugin.name] = raw
        # One reduction: as unsigned, a negative score is beyond any maximum (the range starts at 0).
        if scores.size and _highest(scores.view(np.uint64)) > MAX_NODE_SCORE:
            bad = int(_highest(scores) if _highest(scores) > MAX_NODE_SCORE else _lowest(scores))
            return Status(
                Code.ERROR,
                (
                    f'applying score defaultWeights on Score plugins: plugin "{plugin.name}" returns an invalid '
                    f"score {bad}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
                ),
            )
        weighted = scores * weights.get(plugin.name, 1)
        out.plugin_scores[plugin.name] = weighted
        total += weighted
    return out


def _int64s(values: object) -> np.ndarray:
    """``values`` as an int64 array (an int64 array itself as it is, without asarray's Python layer)."""
    if type(values) is np.ndarray and values.dtype == _INT64:
        return values
    return np.asarray(values, dtype=np.int64)


_INT64 = np.dtype(np.int64)


def _score_batch(
    plugin: BatchScorePlugin, state: CycleState, pod: Pod, nodes: NodeInfoList, *, keep_raw: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Raw and normalised scores of a plugin's batch form over ``nodes``. Normalising gets a copy of
    the raw scores only when they are kept (``keep_raw``); otherwise it gets the raw scores themselves,
    which are read again only as the result when it answers None ("does not normalise")."""
    timer = state.plugin_timer
    started = time.perf_counter() if timer is not None else 0.0
    try:
        raw = _int64s(plugin.score_nodes(state, pod, nodes))
        if timer is not None:
            timer.observe(plugin.score_nodes, status_label(None), started)
            started = time.perf_counter()
        shape = raw.shape
        normalized = plugin.normalize_scores(state, pod, raw.copy() if keep_raw else raw)
        if timer is not None:
            timer.observe(plugin.normalize_scores, status_label(None), started)
        final = raw if normalized is None else _int64s(normalized)
        count = len(nodes)
        if shape != (count,) or final.shape != (count,):
            raise PluginReturnError(f"returned {shape[0] if len(shape) else 'no'} scores for {count} nodes")
    except Exception as exc:
        log.warning("score plugin %s failed", plugin.name, exc_info=True)
        raise PluginFailure(f'running Score plugins: plugin "{plugin.name}" failed with: {exc}') from exc
    return raw, final


def _score_per_node(
    plugin: ScorePlugin, state: CycleState, pod: Pod, nodes: NodeInfoList
) -> tuple[np.ndarray, np.ndarray]:
    """Raw and normalised scores of a plugin's per-node form over ``nodes``."""
    values = np.zeros(len(nodes), dtype=np.int64)
    node_scores: list[NodeScore] = []
    for k, info in enumerate(nodes):
        score, status = call_plugin(plugin.score, state, pod, info, expect=SCORE_TYPES)
        if status is not None and status.code is not Code.SUCCESS:
            raise PluginFailure(f'running Score plugins: plugin "{plugin.name}" failed with: {status.message}')
        if not MIN_INT64 <= score <= MAX_TOTAL_SCORE:
            raise PluginFailure(
                f'running Score plugins: plugin "{plugin.name}" failed with: score {score} is out of the int64 range'
            )
        values[k] = score
        node_scores.append(NodeScore(info.name, int(score)))
    ext, status = call_plugin(lambda: (plugin.score_extensions(), None))
    if status is not None:
        raise PluginFailure(f'running Score plugins: plugin "{plugin.name}" failed with: {status.message}')
    if ext is None:
        return values, values
    status = call_status(ext.normalize_score, state, pod, node_scores)
    if status is not None and status.code is not Code.SUCCESS:
        raise PluginFailure(f'running Normalize on Score plugins: plugin "{plugin.name}" failed with: {status.message}')
    try:
        normalized = np.fromiter((ns.score for ns in node_scores), dtype=np.int64, count=len(node_scores))
    except (TypeError, ValueError, OverflowError) as err:
        raise PluginFailure(
            f'running Normalize on Score plugins: plugin "{plugin.name}" failed with: '
            f"scores are not all integers: {err}"
        ) from err
    return values, normalized
