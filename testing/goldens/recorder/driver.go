package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	dto "github.com/prometheus/client_model/go"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

const reference = "kube-scheduler v1.34.4"

// errRerun: a random choice upstream leaves open (a preemption candidate tie) went another way than
// the canonical one; the scenario is recorded again from the start.
var errRerun = errors.New("preemption tie resolved non-canonically")

const maxRuns = 64

// run is one recording of one scenario.
type run struct {
	ctx        context.Context
	name       string
	cfg        *config.KubeSchedulerConfiguration
	configFile bool
	s          *APIServer
	pv         *pvController
	claims     *claimController
	pdb        *disruptionController
	rec        *recorder
	sched      *scheduler.Scheduler
	hooked     map[string]bool
	pending    []document
	created    []string
	popped     bool
	parked     map[string]bool
	factory    *syncFactory
	client     kubernetes.Interface
}

// recordScenario records a scenario; it returns how many runs it took (more than one when a
// preemption tie had to be replayed).
func recordScenario(name, dir string) (*golden, int, error) {
	for i := 1; i <= maxRuns; i++ {
		g, err := recordOnce(name, dir)
		if !errors.Is(err, errRerun) {
			return g, i, err
		}
	}
	return nil, maxRuns, fmt.Errorf("a preemption tie never resolved to the canonical node in %d runs", maxRuns)
}

func recordOnce(name, dir string) (*golden, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	docs, err := loadDocuments(filepath.Join(dir, "scenario.yaml"))
	if err != nil {
		return nil, err
	}
	cfg, fromFile, err := schedulerConfig(dir)
	if err != nil {
		return nil, err
	}
	r := &run{ctx: ctx, name: name, cfg: cfg, configFile: fromFile, s: newAPIServer(startTime),
		rec: newRecorder(), hooked: map[string]bool{}, parked: map[string]bool{}}
	if err := r.loadCluster(docs); err != nil {
		return nil, err
	}
	if err := r.startScheduler(); err != nil {
		return nil, err
	}
	r.s.Locked(func() { r.pv.scheduling, r.claims.scheduling = true, true })
	for _, d := range r.pending {
		var err error
		r.s.Locked(func() {
			r.pdb.sync()
			r.s.now = d.obj.(*v1.Pod).CreationTimestamp.Time
		})
		if _, err = r.s.Create(d.obj); err != nil {
			return nil, fmt.Errorf("%s: %w", d.where, err)
		}
		r.created = append(r.created, podKey(d.obj.(*v1.Pod)))
		if err := r.drain(); err != nil {
			return nil, err
		}
	}
	return r.golden(), nil
}

// loadCluster creates every object but the pending pods, in document order, then lets the
// controllers settle (claims bound, budgets counted) as they would before the scheduler starts.
func (r *run) loadCluster(docs []document) error {
	cs := newClient(r.s)
	f := newSyncFactory(r.s, cs)
	r.factory = f
	r.client = cs
	if err := r.s.admission.wire(f); err != nil {
		return err
	}
	for _, pc := range systemPriorityClasses() {
		if _, err := r.s.Create(pc); err != nil {
			return err
		}
	}
	r.pv = newPVController(r.s)
	r.claims = newClaimController(r.s)
	r.pdb = &disruptionController{s: r.s, managed: map[string]bool{}}
	for _, d := range docs {
		if d.pending() {
			r.pending = append(r.pending, d)
			continue
		}
		var err error
		r.s.Locked(func() {
			m, _ := metaOf(d.obj)
			r.s.now = m.GetCreationTimestamp().Time
			var obj runtime.Object
			if obj, err = r.s.createLocked(d.obj); err == nil {
				if pdb, ok := obj.(*policyv1.PodDisruptionBudget); ok {
					r.pdb.adopt(pdb)
				}
				if pod, ok := obj.(*v1.Pod); ok {
					r.created = append(r.created, podKey(pod))
				}
			}
		})
		if err != nil {
			return fmt.Errorf("%s: %w", d.where, err)
		}
	}
	r.s.Locked(func() {
		r.pv.resync()
		r.claims.resync()
		r.pdb.sync()
	})
	return nil
}

type eventSink struct{ rec *recorder }

func (e eventSink) Eventf(regarding, _ runtime.Object, _, reason, _, note string, args ...interface{}) {
	e.rec.event(regarding, reason, note, args...)
}

func (r *run) startScheduler() error {
	sink := eventSink{rec: r.rec}
	sched, err := scheduler.New(r.ctx, r.client, r.factory, nil,
		func(string) events.EventRecorder { return sink },
		scheduler.WithComponentConfigVersion("kubescheduler.config.k8s.io/v1"),
		scheduler.WithProfiles(r.cfg.Profiles...),
		scheduler.WithPercentageOfNodesToScore(r.cfg.PercentageOfNodesToScore),
		scheduler.WithParallelism(r.cfg.Parallelism),
		scheduler.WithExtenders(r.cfg.Extenders...),
		// Every backoff is over before the next cycle (corpus timing rule): no backoff at all.
		scheduler.WithPodInitialBackoffSeconds(0),
		scheduler.WithPodMaxBackoffSeconds(0),
		scheduler.WithClock(newTickingClock(startTime)),
	)
	if err != nil {
		return err
	}
	r.sched = sched
	for name, fw := range sched.Profiles {
		r.hooked[name] = hookPreemption(fw, r.rec)
		sched.Profiles[name] = &recordingFramework{Framework: fw, rec: r.rec}
	}
	nextPod := sched.NextPod
	sched.NextPod = func(logger klog.Logger) (*framework.QueuedPodInfo, error) {
		pi, err := nextPod(logger)
		if err != nil || pi == nil || pi.Pod == nil {
			return pi, err
		}
		if r.parked[podKey(pi.Pod)] {
			// A looping pod after its two recorded attempts: it leaves the queue (see README).
			sched.SchedulingQueue.Done(pi.Pod.UID)
			return nil, nil
		}
		r.popped = true
		r.s.gate.begin(pi.Pod.Namespace, pi.Pod.Name)
		r.rec.popped(pi)
		return pi, nil
	}
	schedulePod := sched.SchedulePod
	sched.SchedulePod = func(ctx context.Context, fw framework.Framework, state fwk.CycleState, pod *v1.Pod) (scheduler.ScheduleResult, error) {
		r.rec.beginSchedule(fw.ProfileName())
		res, err := schedulePod(ctx, fw, state, pod)
		return r.afterSchedule(fw, res, err), err
	}
	failure := sched.FailureHandler
	sched.FailureHandler = func(ctx context.Context, fw framework.Framework, pi *framework.QueuedPodInfo, status *fwk.Status, ni *framework.NominatingInfo, start time.Time) {
		failure(ctx, fw, pi, status, ni, start)
		r.rec.failure(pi, status)
	}
	return nil
}

// afterSchedule checks upstream's result against what was recorded and resolves a score tie to the
// smallest node name (see README: selectHost picks uniformly among the tied nodes; the result is
// replaced by one of the outcomes it can give, never by a node outside the tie).
func (r *run) afterSchedule(fw framework.Framework, res scheduler.ScheduleResult, err error) scheduler.ScheduleResult {
	var nodes []string
	if infos, lerr := fw.SnapshotSharedLister().NodeInfos().List(); lerr == nil {
		for _, ni := range infos {
			nodes = append(nodes, ni.Node().Name)
		}
	}
	sort.Strings(nodes)
	r.rec.mu.Lock()
	defer r.rec.mu.Unlock()
	a := r.rec.cur
	a.allNodes, a.result, a.err = nodes, res, err
	if err != nil {
		var fitErr *framework.FitError
		if errors.As(err, &fitErr) {
			for node, st := range a.nodeStatus {
				if got := fitErr.Diagnosis.NodeToStatus.Get(node); got.Code() != st.Code() || got.Plugin() != st.Plugin() {
					r.rec.problems = append(r.rec.problems, fmt.Sprintf("%s: node %s recorded %v, diagnosis has %v", a.key, node, st, got))
				}
			}
		}
		return res
	}
	feasible := a.feasibleNodes()
	if a.fullPass() && len(a.nodeStatus) < searchable(a) {
		// percentageOfNodesToScore stopped the search early: which nodes were found depends on how
		// the parallel Filter calls interleaved.
		r.rec.problems = append(r.rec.problems, fmt.Sprintf("%s: Filter stopped after %d of %d nodes (percentageOfNodesToScore); not deterministic", a.key, len(a.nodeStatus), searchable(a)))
	}
	if len(feasible) != res.FeasibleNodes {
		r.rec.problems = append(r.rec.problems, fmt.Sprintf("%s: recorded %d feasible nodes, upstream %d", a.key, len(feasible), res.FeasibleNodes))
	}
	a.ties = a.computeTies(feasible)
	found := false
	for _, n := range a.ties {
		found = found || n == res.SuggestedHost
	}
	if !found || len(a.ties) == 0 {
		r.rec.problems = append(r.rec.problems, fmt.Sprintf("%s: upstream chose %s outside the recorded ties %v", a.key, res.SuggestedHost, a.ties))
		return res
	}
	res.SuggestedHost = a.ties[0]
	return res
}

// searchable is how many existing nodes a full Filter pass covers (those of a PreFilterResult, if any).
func searchable(a *attempt) int {
	if a.preRes == nil || a.preRes.AllNodes() {
		return len(a.allNodes)
	}
	n := 0
	for _, node := range a.allNodes {
		if a.preRes.NodeNames.Has(node) {
			n++
		}
	}
	return n
}

// drain runs scheduling cycles until the activeQ is empty.
func (r *run) drain() error {
	q := r.sched.SchedulingQueue
	for {
		if n := len(q.PodsInBackoffQ()); n > 0 {
			return fmt.Errorf("%d pods in the backoffQ with zero backoff", n)
		}
		if len(q.PodsInActiveQ()) == 0 {
			return nil
		}
		if err := r.cycle(); err != nil {
			return err
		}
	}
}

func (r *run) cycle() error {
	r.popped = false
	r.sched.ScheduleOne(r.ctx)
	r.s.gate.end()
	if !r.popped {
		return nil
	}
	a := r.rec.current()
	if !a.started {
		return nil // skipped (being deleted, or already assumed)
	}
	if a.err == nil && !a.failed {
		select {
		case <-r.rec.bindDone:
		case <-time.After(10 * time.Minute):
			return fmt.Errorf("%s: binding did not finish", a.key)
		}
		waitFor(func() bool { return metricValue("scheduler_goroutines", "operation", metrics.Binding) == 0 })
	}
	waitFor(preemptionsDone)
	if a.nominated != "" && !r.hooked[a.profile] {
		return fmt.Errorf("%s: profile %s preempts without DefaultPreemption's hooks", a.key, a.profile)
	}
	if os.Getenv("RECORDER_DEBUG") != "" && a.nominated != "" {
		fmt.Fprintf(os.Stderr, "%s: nominated %s among %d candidates, best %v\n", a.key, a.nominated, len(a.candidates), bestCandidates(a.candidates))
	}
	if a.nominated != "" && len(a.candidates) > 1 {
		best := bestCandidates(a.candidates)
		if !contains(best, a.nominated) {
			return fmt.Errorf("%s: preemption chose %s outside the best candidates %v", a.key, a.nominated, best)
		}
		if a.nominated != best[0] {
			return errRerun
		}
	}
	r.rec.mu.Lock()
	problems := r.rec.problems
	r.rec.mu.Unlock()
	if len(problems) > 0 {
		return fmt.Errorf("recording is inconsistent: %v", problems)
	}
	g := a.toGolden()
	if a.failed && (!a.failStatus.IsRejected() || (a.failedInfo != nil &&
		a.failedInfo.UnschedulablePlugins.Len() == 0 && a.failedInfo.PendingPlugins.Len() == 0)) {
		g.Looping = true
		if a.number >= 2 {
			r.parked[a.key] = true
		}
	}
	r.rec.records = append(r.rec.records, g)
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func waitFor(cond func() bool) {
	for !cond() {
		time.Sleep(100 * time.Microsecond)
	}
}

// preemptionsDone: every asynchronous preemption started (one PreemptionVictims observation each)
// has finished its goroutine (one PreemptionGoroutinesExecutionTotal increment each).
func preemptionsDone() bool {
	return metricValue("scheduler_preemption_victims", "", "") == metricValue("scheduler_preemption_goroutines_execution_total", "", "")
}

// metricValue sums a metric of the scheduler's registry over the series whose label has the value
// (all series when label is ""): counters and gauges by value, histograms by sample count.
func metricValue(name, label, value string) float64 {
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		panic(err)
	}
	sum := 0.0
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if label != "" && !hasLabel(m.GetLabel(), label, value) {
				continue
			}
			switch {
			case m.Counter != nil:
				sum += m.GetCounter().GetValue()
			case m.Gauge != nil:
				sum += m.GetGauge().GetValue()
			case m.Histogram != nil:
				sum += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return sum
}

func hasLabel(pairs []*dto.LabelPair, name, value string) bool {
	for _, p := range pairs {
		if p.GetName() == name && p.GetValue() == value {
			return true
		}
	}
	return false
}

// golden assembles the recording.
func (r *run) golden() *golden {
	g := &golden{
		Reference: reference,
		Scenario:  r.name,
		Config: goldenConfig{
			PercentageOfNodesToScore: *r.cfg.PercentageOfNodesToScore,
			Parallelism:              r.cfg.Parallelism,
			Ties:                     "first",
			CatchUpGate:              true,
			ConfigFile:               r.configFile,
		},
		Attempts: r.rec.records,
		Final:    map[string]*string{},
	}
	for _, p := range r.cfg.Profiles {
		g.Config.Profiles = append(g.Config.Profiles, p.SchedulerName)
	}
	if g.Attempts == nil {
		g.Attempts = []goldenAttempt{}
	}
	podKind := kindByName["Pod"]
	exists := map[string]*v1.Pod{}
	for _, o := range r.s.List(podKind) {
		pod := o.(*v1.Pod)
		exists[podKey(pod)] = pod
	}
	for _, d := range r.pending {
		key := podKey(d.obj.(*v1.Pod))
		pod := exists[key]
		if pod != nil && pod.Spec.NodeName != "" {
			node := pod.Spec.NodeName
			g.Final[key] = &node
		} else {
			g.Final[key] = nil
		}
		if pod != nil && pod.Spec.NodeName == "" && pod.Status.NominatedNodeName != "" {
			if g.Nominated == nil {
				g.Nominated = map[string]string{}
			}
			g.Nominated[key] = pod.Status.NominatedNodeName
		}
		if r.rec.counts[key] == 0 {
			g.NeverAttempted = append(g.NeverAttempted, key)
		}
	}
	for _, key := range r.created {
		if exists[key] == nil {
			g.Deleted = append(g.Deleted, key)
		}
	}
	sort.Strings(g.Deleted)
	sort.Strings(g.NeverAttempted)
	g.Warnings = append(g.Warnings, r.pv.warnings...)
	for _, key := range g.NeverAttempted {
		if pod := exists[key]; pod != nil && !r.sched.Profiles.HandlesSchedulerName(pod.Spec.SchedulerName) {
			g.Warnings = append(g.Warnings, fmt.Sprintf("pod %s: schedulerName %q matches no profile; never scheduled", key, pod.Spec.SchedulerName))
		}
	}
	g.Emulated = append(r.pv.emulated, r.claims.emulated...)
	g.Claims = goldenClaims(r.s)
	return g
}
