package main

import (
	"fmt"
	"sort"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// skippedReason is what a node outside a PreFilterResult shows (the corpus wording).
const skippedReason = "node not in the PreFilterResult node set (not evaluated)"

// attempt is one scheduling attempt of one pod: its scheduling cycle and, when the cycle succeeded,
// its binding cycle (and the preemption it started).
type attempt struct {
	podInfo  *framework.QueuedPodInfo
	key      string
	profile  string
	number   int
	startNNN string
	started  bool // SchedulePod ran

	allNodes    []string
	preRes      *framework.PreFilterResult
	preStatus   *fwk.Status
	nodeStatus  map[string]*fwk.Status
	scoreCalled bool
	noScoring   bool
	scores      []framework.NodePluginScores
	result      scheduler.ScheduleResult
	err         error
	ties        []string
	nominated   string
	candidates  map[string]candidate

	failStatus *fwk.Status
	failedInfo *framework.QueuedPodInfo
	failed     bool
	message    string
	binding    bool
	boundNode  string
	victims    []string
}

type candidate struct {
	victims       []*v1.Pod
	pdbViolations int
}

// recorder collects attempts; the scheduler reports to it through the wrappers in framework.go,
// driver.go and preemption.go. Only one attempt is in progress at a time.
type recorder struct {
	mu       sync.Mutex
	cur      *attempt
	records  []goldenAttempt
	counts   map[string]int
	bindDone chan struct{}
	problems []string
	rerun    bool // a preemption tie went another way than the canonical choice
}

func newRecorder() *recorder {
	return &recorder{counts: map[string]int{}, bindDone: make(chan struct{}, 1)}
}

func (r *recorder) fail(format string, args ...interface{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

func podKey(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

// popped starts a cycle for the pod the queue handed out.
func (r *recorder) popped(pi *framework.QueuedPodInfo) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cur = &attempt{
		podInfo:    pi,
		key:        podKey(pi.Pod),
		startNNN:   pi.Pod.Status.NominatedNodeName,
		nodeStatus: map[string]*fwk.Status{},
		candidates: map[string]candidate{},
	}
}

func (r *recorder) current() *attempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cur
}

func (r *recorder) beginSchedule(profile string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.cur
	a.started = true
	a.profile = profile
	r.counts[a.key]++
	a.number = r.counts[a.key]
}

func (r *recorder) preFilter(res *framework.PreFilterResult, status *fwk.Status) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cur.preRes, r.cur.preStatus = res, status
}

func (r *recorder) filtered(node string, status *fwk.Status) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cur.nodeStatus[node] = status
}

func (r *recorder) hasScorePlugins(has bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cur.noScoring = !has
}

func (r *recorder) scored(scores []framework.NodePluginScores, status *fwk.Status) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !status.IsSuccess() {
		return
	}
	r.cur.scoreCalled = true
	r.cur.scores = append([]framework.NodePluginScores(nil), scores...)
}

func (r *recorder) postFiltered(res *framework.PostFilterResult, status *fwk.Status) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if status.IsSuccess() && res != nil && res.NominatingInfo != nil {
		r.cur.nominated = res.NominatedNodeName
	}
}

func (r *recorder) candidate(node string, victims []*v1.Pod, violations int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cur.candidates[node] = candidate{victims: victims, pdbViolations: violations}
}

func (r *recorder) bindingStarted() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cur.binding = true
}

func (r *recorder) bound(node string) {
	r.mu.Lock()
	r.cur.boundNode = node
	r.mu.Unlock()
	r.bindDone <- struct{}{}
}

// failure is called after upstream's failure handling (event, queue, status patch) is complete.
func (r *recorder) failure(pi *framework.QueuedPodInfo, status *fwk.Status) {
	r.mu.Lock()
	a := r.cur
	a.failed = true
	a.failStatus = status
	a.failedInfo = pi
	binding := a.binding
	r.mu.Unlock()
	if binding {
		r.bindDone <- struct{}{}
	}
}

func (r *recorder) victim(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cur.victims = append(r.cur.victims, key)
}

// event receives every event the scheduler records.
func (r *recorder) event(regarding runtime.Object, reason, note string, args ...interface{}) {
	pod, ok := regarding.(*v1.Pod)
	if !ok || reason != "FailedScheduling" {
		return
	}
	msg := fmt.Sprintf(note, args...)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur != nil && r.cur.key == podKey(pod) {
		r.cur.message = msg
	}
}

// feasibleNodes are the nodes whose last Filter run in this attempt passed.
func (a *attempt) feasibleNodes() []string {
	out := []string{}
	for node, st := range a.nodeStatus {
		if st.IsSuccess() {
			out = append(out, node)
		}
	}
	sort.Strings(out)
	return out
}

// computeTies returns the feasible nodes sharing the best total score.
func (a *attempt) computeTies(feasible []string) []string {
	if len(feasible) <= 1 {
		return feasible
	}
	if !a.scoreCalled {
		return feasible // no Score plugins: every node scores 1
	}
	var best int64
	var ties []string
	for i, s := range a.scores {
		if i == 0 || s.TotalScore > best {
			best, ties = s.TotalScore, nil
		}
		if s.TotalScore == best {
			ties = append(ties, s.Name)
		}
	}
	sort.Strings(ties)
	return ties
}
