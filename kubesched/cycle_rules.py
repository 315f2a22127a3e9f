"""What the emulated version changes in the scheduling cycle itself (not in a plugin or the queue)."""

from __future__ import annotations

from dataclasses import dataclass

from kubesched.config.features import FeatureGates


@dataclass(frozen=True, slots=True)
class CycleRules:
    """What the emulated version changes in the scheduling cycle, read from the feature gates once."""

    #: v1.34: nodes outside a PreFilterResult share a status naming the PreFilter plugins that left them
    #: out (counted in the FitError), and those plugins are among the pod's rejectors.
    pre_filter_result_diagnosis: bool = True
    #: PodObservedGenerationTracking: the PodScheduled condition records the pod's generation.
    track_observed_generation: bool = True

    @classmethod
    def of(cls, features: FeatureGates) -> CycleRules:
        return cls(
            pre_filter_result_diagnosis=features.at_least("1.34"),
            track_observed_generation=features.enabled("PodObservedGenerationTracking"),
        )
