package main

import (
	"context"
	"math"
	"sort"
	"sync"

	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
)

// Preemption runs asynchronously in v1.34: the scheduling cycle picks the candidate and a goroutine
// deletes the victims, the first n-1 in parallel. The recorder uses the seams upstream exposes for
// tests: Evaluator.PreemptPod (replaced by a wrapper that lets victims go one at a time in the
// candidate's victim order, so deletions reach the queue in a fixed order) and Evaluator.Interface
// (wrapped to see every candidate the dry run found, to check the node choice).
type preemptionHook struct {
	rec  *recorder
	mu   sync.Mutex
	cond *sync.Cond
	turn int
	of   string // preemptor UID the turns belong to
}

func hookPreemption(fw framework.Framework, rec *recorder) bool {
	for _, pl := range fw.PreEnqueuePlugins() {
		dp, ok := pl.(*defaultpreemption.DefaultPreemption)
		if !ok {
			continue
		}
		h := &preemptionHook{rec: rec}
		h.cond = sync.NewCond(&h.mu)
		ev := dp.Evaluator
		ev.Interface = &recordingInterface{Interface: ev.Interface, rec: rec}
		orig := ev.PreemptPod
		ev.PreemptPod = func(ctx context.Context, c preemption.Candidate, preemptor, victim *v1.Pod, pluginName string) error {
			idx := 0
			for i, p := range c.Victims().Pods {
				if p.UID == victim.UID {
					idx = i
				}
			}
			h.waitTurn(string(preemptor.UID), idx)
			err := orig(ctx, c, preemptor, victim, pluginName)
			if err == nil {
				rec.victim(podKey(victim))
			}
			h.done()
			return err
		}
		return true
	}
	return false
}

func (h *preemptionHook) waitTurn(preemptor string, idx int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.of != preemptor {
		h.of, h.turn = preemptor, 0
	}
	for h.turn != idx {
		h.cond.Wait()
	}
}

func (h *preemptionHook) done() {
	h.mu.Lock()
	h.turn++
	h.cond.Broadcast()
	h.mu.Unlock()
}

type recordingInterface struct {
	preemption.Interface
	rec *recorder
}

func (r *recordingInterface) SelectVictimsOnNode(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo, pdbs []*policy.PodDisruptionBudget) ([]*v1.Pod, int, *fwk.Status) {
	pods, violations, status := r.Interface.SelectVictimsOnNode(ctx, state, pod, nodeInfo, pdbs)
	if status.IsSuccess() && len(pods) > 0 {
		r.rec.candidate(nodeInfo.Node().Name, pods, violations)
	}
	return pods, violations, status
}

func (r *recordingInterface) GetOffsetAndNumCandidates(nodes int32) (int32, int32) {
	offset, num := r.Interface.GetOffsetAndNumCandidates(nodes)
	if num < nodes {
		r.rec.fail("preemption samples %d of %d potential nodes from a random offset; scenarios must stay within %d", num, nodes, num)
	}
	return offset, num
}

// bestCandidates applies pickOneNodeForPreemption's criteria to the candidates the dry run found and
// returns the nodes still tied after all of them (upstream then takes the first in map order, i.e. any
// of them). A victim without startTime counts as starting now, the same instant for every node.
func bestCandidates(cands map[string]candidate) []string {
	nodes := make([]string, 0, len(cands))
	for n := range cands {
		nodes = append(nodes, n)
	}
	criteria := []func(candidate) float64{
		func(c candidate) float64 { return -float64(c.pdbViolations) },
		func(c candidate) float64 { return -float64(corev1helpers.PodPriority(c.victims[0])) },
		func(c candidate) float64 {
			var sum int64
			for _, p := range c.victims {
				sum += int64(corev1helpers.PodPriority(p)) + int64(math.MaxInt32+1)
			}
			return -float64(sum)
		},
		func(c candidate) float64 { return -float64(len(c.victims)) },
		earliestStartOfMostImportant,
	}
	for _, f := range criteria {
		best := math.Inf(-1)
		var kept []string
		for _, n := range nodes {
			s := f(cands[n])
			if s > best {
				best, kept = s, nil
			}
			if s == best {
				kept = append(kept, n)
			}
		}
		nodes = kept
		if len(nodes) == 1 {
			break
		}
	}
	sort.Strings(nodes)
	return nodes
}

func earliestStartOfMostImportant(c candidate) float64 {
	maxPrio := corev1helpers.PodPriority(c.victims[0])
	earliest := math.Inf(1)
	for _, p := range c.victims {
		prio := corev1helpers.PodPriority(p)
		start := math.Inf(1)
		if p.Status.StartTime != nil {
			start = float64(p.Status.StartTime.UnixNano())
		}
		switch {
		case prio > maxPrio:
			maxPrio, earliest = prio, start
		case prio == maxPrio && start < earliest:
			earliest = start
		}
	}
	return earliest
}
