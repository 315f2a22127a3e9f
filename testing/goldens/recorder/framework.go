package main

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// recordingFramework wraps a profile's framework and reports what upstream computed at each extension
// point the scheduling cycle runs: the PreFilter result, every node's Filter status (the status the
// framework returned, i.e. the first rejecting plugin in profile order), the weighted per-plugin
// scores, the PostFilter outcome, and when binding starts and ends. Nothing is changed on the way; the
// plugins are the upstream plugins with their configured names, weights and arguments.
//
// Calls the plugins make through their own Handle (preemption's dry runs) go to the real framework and
// are not recorded.
type recordingFramework struct {
	framework.Framework
	rec *recorder
}

func (f *recordingFramework) RunPreFilterPlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod) (*framework.PreFilterResult, *fwk.Status, sets.Set[string]) {
	res, status, plugins := f.Framework.RunPreFilterPlugins(ctx, state, pod)
	f.rec.preFilter(res, status)
	return res, status, plugins
}

func (f *recordingFramework) RunFilterPluginsWithNominatedPods(ctx context.Context, state fwk.CycleState, pod *v1.Pod, info fwk.NodeInfo) *fwk.Status {
	status := f.Framework.RunFilterPluginsWithNominatedPods(ctx, state, pod, info)
	f.rec.filtered(info.Node().Name, status)
	return status
}

func (f *recordingFramework) HasScorePlugins() bool {
	has := f.Framework.HasScorePlugins()
	f.rec.hasScorePlugins(has)
	return has
}

func (f *recordingFramework) RunScorePlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) ([]framework.NodePluginScores, *fwk.Status) {
	scores, status := f.Framework.RunScorePlugins(ctx, state, pod, nodes)
	f.rec.scored(scores, status)
	return scores, status
}

func (f *recordingFramework) RunPostFilterPlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod, m framework.NodeToStatusReader) (*framework.PostFilterResult, *fwk.Status) {
	res, status := f.Framework.RunPostFilterPlugins(ctx, state, pod, m)
	f.rec.postFiltered(res, status)
	return res, status
}

func (f *recordingFramework) WaitOnPermit(ctx context.Context, pod *v1.Pod) *fwk.Status {
	f.rec.bindingStarted()
	return f.Framework.WaitOnPermit(ctx, pod)
}

func (f *recordingFramework) RunPostBindPlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) {
	f.Framework.RunPostBindPlugins(ctx, state, pod, nodeName)
	if m, err := state.Read(framework.PodsToActivateKey); err == nil {
		if p, ok := m.(*framework.PodsToActivate); ok && len(p.Map) > 0 {
			f.rec.fail("the binding cycle of %s/%s activates pods, which the recorder does not wait for", pod.Namespace, pod.Name)
		}
	}
	f.rec.bound(nodeName)
}
