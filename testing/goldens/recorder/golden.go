package main

import (
	"bytes"
	"encoding/json"
	"sort"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// The golden.json format of the conformance corpus (its README defines every field).

type golden struct {
	Reference      string                 `json:"reference"`
	Scenario       string                 `json:"scenario"`
	Config         goldenConfig           `json:"config"`
	Attempts       []goldenAttempt        `json:"attempts"`
	Final          map[string]*string     `json:"final"`
	Nominated      map[string]string      `json:"nominated,omitempty"`
	Deleted        []string               `json:"deleted,omitempty"`
	NeverAttempted []string               `json:"neverAttempted,omitempty"`
	Warnings       []string               `json:"warnings,omitempty"`
	Emulated       []string               `json:"emulated,omitempty"`
	Claims         map[string]goldenClaim `json:"claims,omitempty"`
}

// goldenClaim is a ResourceClaim at the end of the scenario: the devices of its allocation (absent when
// not allocated), in the allocation's order, and the pods it is reserved for.
type goldenClaim struct {
	Devices     []goldenDevice `json:"devices,omitempty"`
	ReservedFor []string       `json:"reservedFor,omitempty"`
}

type goldenDevice struct {
	Request string `json:"request"`
	Driver  string `json:"driver"`
	Pool    string `json:"pool"`
	Device  string `json:"device"`
}

type goldenConfig struct {
	PercentageOfNodesToScore int32    `json:"percentageOfNodesToScore"`
	Parallelism              int32    `json:"parallelism"`
	Ties                     string   `json:"ties"`
	CatchUpGate              bool     `json:"catchUpGate"`
	Profiles                 []string `json:"profiles"`
	ConfigFile               bool     `json:"configFile"`
}

type filterEntry struct {
	Plugin  string   `json:"plugin"`
	Code    string   `json:"code"`
	Reasons []string `json:"reasons"`
}

type goldenAttempt struct {
	Pod                string                      `json:"pod"`
	Attempt            int                         `json:"attempt"`
	Profile            string                      `json:"profile"`
	Result             string                      `json:"result"`
	Node               string                      `json:"node,omitempty"`
	Message            *string                     `json:"message,omitempty"`
	Feasible           []string                    `json:"feasible"`
	Filter             map[string]filterEntry      `json:"filter"`
	Scores             map[string]map[string]int64 `json:"scores"`
	Total              map[string]int64            `json:"total"`
	Ties               []string                    `json:"ties"`
	NominatedNode      string                      `json:"nominatedNode,omitempty"`
	Victims            []string                    `json:"victims,omitempty"`
	StartNominatedNode string                      `json:"startNominatedNode,omitempty"`
	EvaluatedNodes     int                         `json:"evaluatedNodes,omitempty"`
	Looping            bool                        `json:"looping,omitempty"`
}

func entryOf(st *fwk.Status) filterEntry {
	reasons := st.Reasons()
	if reasons == nil {
		reasons = []string{}
	}
	return filterEntry{Plugin: st.Plugin(), Code: st.Code().String(), Reasons: reasons}
}

// toGolden turns a finished attempt into its record.
func (a *attempt) toGolden() goldenAttempt {
	g := goldenAttempt{
		Pod:                a.key,
		Attempt:            a.number,
		Profile:            a.profile,
		Feasible:           []string{},
		Filter:             map[string]filterEntry{},
		Scores:             map[string]map[string]int64{},
		Total:              map[string]int64{},
		Ties:               []string{},
		NominatedNode:      a.nominated,
		StartNominatedNode: a.startNNN,
	}
	preRejected := a.preStatus != nil && a.preStatus.IsRejected()
	if preRejected {
		for _, n := range a.allNodes {
			g.Filter[n] = entryOf(a.preStatus)
		}
	} else {
		if a.preRes != nil && !a.preRes.AllNodes() && a.fullPass() {
			for _, n := range a.allNodes {
				if !a.preRes.NodeNames.Has(n) {
					g.Filter[n] = filterEntry{Plugin: "PreFilterResult", Code: "Skipped", Reasons: []string{skippedReason}}
				}
			}
		}
		for n, st := range a.nodeStatus {
			if !st.IsSuccess() {
				g.Filter[n] = entryOf(st)
			}
		}
	}
	feasible := a.feasibleNodes()
	if a.err == nil && !preRejected {
		g.Feasible = feasible
		g.Ties = a.ties
		if len(feasible) > 1 {
			if a.scoreCalled {
				for _, ns := range a.scores {
					g.Scores[ns.Name] = pluginScores(ns)
					g.Total[ns.Name] = ns.TotalScore
				}
			} else {
				for _, n := range feasible {
					g.Scores[n] = map[string]int64{}
					g.Total[n] = 1
				}
			}
		}
	}
	switch {
	case a.failed:
		g.Result = "Error"
		if a.failStatus.IsRejected() {
			g.Result = "Unschedulable"
		}
		msg := a.message
		g.Message = &msg
	default:
		g.Result = "Scheduled"
		g.Node = a.boundNode
	}
	if len(a.victims) > 0 {
		g.Victims = append([]string(nil), a.victims...)
		sort.Strings(g.Victims)
	}
	if a.err == nil {
		g.EvaluatedNodes = a.result.EvaluatedNodes
	} else {
		// A failed cycle has no count from upstream: the nodes that got a verdict (a PreFilter
		// rejection counts for every node, as the corpus does).
		for _, e := range g.Filter {
			if e.Code != "Skipped" {
				g.EvaluatedNodes++
			}
		}
	}
	return g
}

// fullPass tells whether Filter ran over the nodes of the PreFilterResult (not only over the
// nominated node, whose success ends the search).
func (a *attempt) fullPass() bool {
	if a.startNNN == "" {
		return true
	}
	st, ok := a.nodeStatus[a.startNNN]
	return !(ok && st.IsSuccess() && len(a.nodeStatus) == 1)
}

func pluginScores(ns framework.NodePluginScores) map[string]int64 {
	out := map[string]int64{}
	for _, ps := range ns.Scores {
		out[ps.Name] = ps.Score
	}
	return out
}

// marshalGolden renders a golden file: two-space indentation, no HTML escaping, a final newline.
func marshalGolden(g *golden) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(g); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// goldenClaims keys every ResourceClaim left at the end: "namespace/name" for a claim of its own, and
// "namespace/pod/entry" for one generated from a template for that pod's spec.resourceClaims entry
// (generated names end in characters the API server picks at random).
func goldenClaims(s *APIServer) map[string]goldenClaim {
	out := map[string]goldenClaim{}
	for _, o := range s.List(kindByName["ResourceClaim"]) {
		claim := o.(*resourcev1.ResourceClaim)
		key := claim.Namespace + "/" + claim.Name
		if owner := metav1.GetControllerOf(claim); owner != nil && owner.Kind == "Pod" && claim.Annotations[podClaimAnnotation] != "" {
			key = claim.Namespace + "/" + owner.Name + "/" + claim.Annotations[podClaimAnnotation]
		}
		var g goldenClaim
		if claim.Status.Allocation != nil {
			for _, r := range claim.Status.Allocation.Devices.Results {
				g.Devices = append(g.Devices, goldenDevice{Request: r.Request, Driver: r.Driver, Pool: r.Pool, Device: r.Device})
			}
		}
		for _, ref := range claim.Status.ReservedFor {
			g.ReservedFor = append(g.ReservedFor, ref.Name)
		}
		out[key] = g
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
