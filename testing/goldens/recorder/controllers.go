package main

import (
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	storagehelpers "k8s.io/component-helpers/storage/volume"
)

const noProvisioner = "kubernetes.io/no-provisioner"

// pvController does what kube-controller-manager's PV binder and a CSI external-provisioner do to the
// objects the scheduler reads (corpus README): claims naming a volume and volumes pre-bound to a
// claim get their binding completed; Immediate claims bind to the best matching Available volume
// (upstream FindMatchingVolume, access-mode groups as the binder's index orders them) or are
// provisioned by their class without topology; a WaitForFirstConsumer claim annotated with
// volume.kubernetes.io/selected-node is provisioned with hostname node affinity to that node;
// volumes without claimRef are Available. It reacts to watch events, reading the current objects.
type pvController struct {
	s          *APIServer
	scheduling bool
	emulated   []string
	warnings   []string
	warned     map[string]bool
}

func newPVController(s *APIServer) *pvController {
	c := &pvController{s: s, warned: map[string]bool{}}
	s.watchers = append(s.watchers, c.handle)
	return c
}

func (c *pvController) handle(ev storeEvent) {
	switch obj := ev.obj.(type) {
	case *v1.PersistentVolumeClaim:
		if ev.typ != eventDeleted {
			c.syncClaim(obj.Namespace, obj.Name)
		}
	case *v1.PersistentVolume:
		if ev.typ == eventDeleted {
			c.volumeDeleted(obj.Name)
		} else {
			c.syncVolume(obj.Name)
		}
	case *storagev1.StorageClass:
		if ev.typ == eventAdded {
			for _, o := range c.s.listLocked(kindByName["PersistentVolumeClaim"]) {
				pvc := o.(*v1.PersistentVolumeClaim)
				if storagehelpers.GetPersistentVolumeClaimClass(pvc) == obj.Name {
					c.syncClaim(pvc.Namespace, pvc.Name)
				}
			}
		}
	}
}

// resync brings every loaded volume and claim up to date (before scheduling starts).
func (c *pvController) resync() {
	for _, o := range c.s.listLocked(kindByName["PersistentVolume"]) {
		c.syncVolume(o.(*v1.PersistentVolume).Name)
	}
	for _, o := range c.s.listLocked(kindByName["PersistentVolumeClaim"]) {
		pvc := o.(*v1.PersistentVolumeClaim)
		c.syncClaim(pvc.Namespace, pvc.Name)
	}
}

func (c *pvController) claim(ns, name string) *v1.PersistentVolumeClaim {
	o, _ := c.s.getLocked(kindByName["PersistentVolumeClaim"], ns, name).(*v1.PersistentVolumeClaim)
	return o
}

func (c *pvController) volume(name string) *v1.PersistentVolume {
	o, _ := c.s.getLocked(kindByName["PersistentVolume"], "", name).(*v1.PersistentVolume)
	return o
}

func (c *pvController) volumes() []*v1.PersistentVolume {
	var out []*v1.PersistentVolume
	for _, o := range c.s.listLocked(kindByName["PersistentVolume"]) {
		out = append(out, o.(*v1.PersistentVolume))
	}
	return out
}

func fullyBound(pvc *v1.PersistentVolumeClaim) bool {
	return pvc.Spec.VolumeName != "" && metav1.HasAnnotation(pvc.ObjectMeta, storagehelpers.AnnBindCompleted)
}

func (c *pvController) syncClaim(ns, name string) {
	claim := c.claim(ns, name)
	if claim == nil || fullyBound(claim) {
		return
	}
	if claim.Spec.VolumeName != "" {
		pv := c.volume(claim.Spec.VolumeName)
		if pv != nil && (pv.Spec.ClaimRef == nil || storagehelpers.IsVolumeBoundToClaim(pv, claim)) {
			c.bind(pv, claim, "claim names the volume")
		}
		return
	}
	className := storagehelpers.GetPersistentVolumeClaimClass(claim)
	var sc *storagev1.StorageClass
	if className != "" {
		sc, _ = c.s.getLocked(kindByName["StorageClass"], "", className).(*storagev1.StorageClass)
	}
	delayed := sc != nil && sc.VolumeBindingMode != nil && *sc.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer
	for _, pv := range c.volumes() {
		if storagehelpers.IsVolumeBoundToClaim(pv, claim) && pv.Spec.ClaimRef.Name == claim.Name {
			// A volume pre-bound to this claim: by its author, or by VolumeBinding's PreBind.
			if match, _ := storagehelpers.FindMatchingVolume(claim, []*v1.PersistentVolume{pv}, nil, nil, false, true); match != nil {
				c.bind(pv, claim, "volume pre-bound to the claim")
				return
			}
		}
	}
	selected, hasSelected := claim.Annotations[storagehelpers.AnnSelectedNode]
	if delayed && !hasSelected {
		return // waits for the scheduler to pick a node
	}
	if !delayed {
		if pv := c.bestImmediateMatch(claim); pv != nil {
			c.bind(pv, claim, "Immediate binding to the best matching volume")
			return
		}
	}
	provisioner := ""
	if sc != nil {
		provisioner = sc.Provisioner
	}
	if provisioner == "" || provisioner == noProvisioner {
		if !delayed {
			c.warn(claim, "Immediate claim with no matching PV and no provisioner; it stays unbound")
		}
		return
	}
	c.provision(claim, sc, selected)
}

// bestImmediateMatch is the PV binder's findBestMatchForClaim: volumes grouped by their access-mode
// set, the groups holding every mode the claim asks for tried from the fewest modes up.
func (c *pvController) bestImmediateMatch(claim *v1.PersistentVolumeClaim) *v1.PersistentVolume {
	groups := map[string][]*v1.PersistentVolume{}
	sizes := map[string]int{}
	for _, pv := range c.volumes() {
		if !storagehelpers.CheckAccessModes(claim, pv) {
			continue
		}
		modes := make([]string, 0, len(pv.Spec.AccessModes))
		for _, m := range pv.Spec.AccessModes {
			modes = append(modes, string(m))
		}
		sort.Strings(modes)
		key := fmt.Sprint(modes)
		groups[key] = append(groups[key], pv)
		sizes[key] = len(modes)
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if sizes[keys[i]] != sizes[keys[j]] {
			return sizes[keys[i]] < sizes[keys[j]]
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		if pv, _ := storagehelpers.FindMatchingVolume(claim, groups[k], nil, nil, false, true); pv != nil {
			return pv
		}
	}
	return nil
}

func (c *pvController) provision(claim *v1.PersistentVolumeClaim, sc *storagev1.StorageClass, node string) {
	name := "pvc-" + string(claim.UID)
	if c.volume(name) != nil {
		return
	}
	mode := v1.PersistentVolumeFilesystem
	if claim.Spec.VolumeMode != nil {
		mode = *claim.Spec.VolumeMode
	}
	reclaim := v1.PersistentVolumeReclaimDelete
	if sc.ReclaimPolicy != nil {
		reclaim = *sc.ReclaimPolicy
	}
	className := storagehelpers.GetPersistentVolumeClaimClass(claim)
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{storagehelpers.AnnDynamicallyProvisioned: sc.Provisioner}},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: claim.Spec.Resources.Requests[v1.ResourceStorage]},
			AccessModes:                   claim.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: reclaim,
			StorageClassName:              className,
			VolumeMode:                    &mode,
			PersistentVolumeSource:        v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: sc.Provisioner, VolumeHandle: name}},
			ClaimRef:                      claimRef(claim),
		},
	}
	if node != "" {
		hostname := node
		if n, ok := c.s.getLocked(kindByName["Node"], "", node).(*v1.Node); ok && n.Labels[v1.LabelHostname] != "" {
			hostname = n.Labels[v1.LabelHostname]
		}
		pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{hostname}}},
		}}}}
	}
	if claim.Annotations[storagehelpers.AnnStorageProvisioner] != sc.Provisioner {
		updated := claim.DeepCopy()
		metav1.SetMetaDataAnnotation(&updated.ObjectMeta, storagehelpers.AnnStorageProvisioner, sc.Provisioner)
		if _, err := c.s.updateLocked(updated, ""); err != nil {
			return
		}
	}
	if c.scheduling {
		c.emulated = append(c.emulated, fmt.Sprintf("pv %s provisioned for pvc %s/%s on node %s by the emulated provisioner %s",
			name, claim.Namespace, claim.Name, node, sc.Provisioner))
	}
	_, _ = c.s.createLocked(pv)
}

func claimRef(claim *v1.PersistentVolumeClaim) *v1.ObjectReference {
	return &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: claim.Namespace,
		Name: claim.Name, UID: claim.UID, ResourceVersion: claim.ResourceVersion}
}

// bind completes a binding as the PV controller does: the volume first (claimRef, phase Bound), then
// the claim (volumeName, bind-completed, phase Bound).
func (c *pvController) bind(pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim, why string) {
	volume, dirty, err := storagehelpers.GetBindVolumeToClaim(pv, claim)
	if err != nil {
		return
	}
	if dirty {
		updated, err := c.s.updateLocked(volume, "")
		if err != nil {
			return
		}
		volume = updated.(*v1.PersistentVolume)
	}
	if volume.Status.Phase != v1.VolumeBound {
		volume.Status.Phase = v1.VolumeBound
		if _, err := c.s.updateLocked(volume, "status"); err != nil {
			return
		}
	}
	pvc := claim.DeepCopy()
	metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, storagehelpers.AnnBindCompleted, "yes")
	if pvc.Spec.VolumeName != pv.Name {
		metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, storagehelpers.AnnBoundByController, "yes")
	}
	pvc.Spec.VolumeName = pv.Name
	updated, err := c.s.updateLocked(pvc, "")
	if err != nil {
		return
	}
	pvc = updated.(*v1.PersistentVolumeClaim)
	pvc.Status.Phase = v1.ClaimBound
	pvc.Status.AccessModes = pv.Spec.AccessModes
	pvc.Status.Capacity = pv.Spec.Capacity
	if _, err := c.s.updateLocked(pvc, "status"); err != nil {
		return
	}
	key := claim.Namespace + "/" + claim.Name
	if c.scheduling {
		c.emulated = append(c.emulated, fmt.Sprintf("pvc %s bound to pv %s by the emulated PV controller (after the scheduler's PreBind)", key, pv.Name))
		return
	}
	if p := pv.Annotations[storagehelpers.AnnDynamicallyProvisioned]; p != "" && pv.Name == "pvc-"+string(claim.UID) {
		why = "Immediate binding, dynamically provisioned by " + p
	}
	c.emulated = append(c.emulated, fmt.Sprintf("pvc %s bound to pv %s before scheduling (PV controller: %s)", key, pv.Name, why))
}

func (c *pvController) syncVolume(name string) {
	pv := c.volume(name)
	if pv == nil {
		return
	}
	if pv.Spec.ClaimRef == nil {
		if pv.Status.Phase != v1.VolumeAvailable {
			c.setVolumePhase(pv, v1.VolumeAvailable)
		}
		return
	}
	claim := c.claim(pv.Spec.ClaimRef.Namespace, pv.Spec.ClaimRef.Name)
	if claim == nil {
		if pv.Spec.ClaimRef.UID != "" && pv.Status.Phase == v1.VolumeBound {
			c.setVolumePhase(pv, v1.VolumeReleased)
		} else if pv.Status.Phase == "" {
			c.setVolumePhase(pv, v1.VolumeAvailable)
		}
		return
	}
	if !storagehelpers.IsVolumeBoundToClaim(pv, claim) {
		return
	}
	switch {
	case (claim.Spec.VolumeName == "" || claim.Spec.VolumeName == pv.Name) && !fullyBound(claim):
		why := "volume pre-bound to the claim"
		if claim.Spec.VolumeName == pv.Name {
			why = "claim names the volume"
		}
		c.bind(pv, claim, why)
	case claim.Spec.VolumeName == pv.Name && (pv.Spec.ClaimRef.UID != claim.UID || pv.Status.Phase != v1.VolumeBound):
		// Bound both ways; the volume's claimRef still lacks the claim's UID, or its phase lags.
		c.bind(pv, claim, "claim names the volume")
	}
}

func (c *pvController) setVolumePhase(pv *v1.PersistentVolume, phase v1.PersistentVolumePhase) {
	updated := pv.DeepCopy()
	updated.Status.Phase = phase
	_, _ = c.s.updateLocked(updated, "status")
}

func (c *pvController) volumeDeleted(name string) {
	for _, o := range c.s.listLocked(kindByName["PersistentVolumeClaim"]) {
		pvc := o.(*v1.PersistentVolumeClaim)
		if pvc.Spec.VolumeName == name {
			lost := pvc.DeepCopy()
			lost.Status.Phase = v1.ClaimLost
			_, _ = c.s.updateLocked(lost, "status")
		}
	}
}

func (c *pvController) warn(claim *v1.PersistentVolumeClaim, text string) {
	key := claim.Namespace + "/" + claim.Name
	if c.warned[key] {
		return
	}
	c.warned[key] = true
	c.warnings = append(c.warnings, fmt.Sprintf("pvc %s: %s", key, text))
}

// disruptionController keeps the status of PodDisruptionBudgets loaded without one, as
// kube-controller-manager would with every bound pod healthy (no kubelet makes pods unready).
type disruptionController struct {
	s       *APIServer
	managed map[string]bool
}

func (d *disruptionController) adopt(pdb *policyv1.PodDisruptionBudget) {
	if apiequality.Semantic.DeepEqual(pdb.Status, policyv1.PodDisruptionBudgetStatus{}) {
		d.managed[pdb.Namespace+"/"+pdb.Name] = true
	}
}

// sync recomputes every managed budget's status (before each pending pod is created).
func (d *disruptionController) sync() {
	for _, o := range d.s.listLocked(kindByName["PodDisruptionBudget"]) {
		pdb := o.(*policyv1.PodDisruptionBudget)
		if !d.managed[pdb.Namespace+"/"+pdb.Name] {
			continue
		}
		updated := pdb.DeepCopy()
		updated.Status = d.status(pdb)
		_, _ = d.s.updateLocked(updated, "status")
	}
}

func (d *disruptionController) status(pdb *policyv1.PodDisruptionBudget) policyv1.PodDisruptionBudgetStatus {
	var selector labels.Selector = labels.Nothing()
	if pdb.Spec.Selector != nil {
		if s, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err == nil {
			selector = s
		}
	}
	healthy := int32(0)
	for _, o := range d.s.listLocked(kindByName["Pod"]) {
		pod := o.(*v1.Pod)
		if pod.Namespace != pdb.Namespace || pod.Spec.NodeName == "" || pod.Status.Phase == v1.PodSucceeded ||
			pod.Status.Phase == v1.PodFailed || !selector.Matches(labels.Set(pod.Labels)) {
			continue
		}
		healthy++
	}
	expected := healthy
	desired, failed := int32(0), false
	if pdb.Spec.MaxUnavailable != nil {
		v, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, int(expected), true)
		failed = err != nil
		desired = max(0, expected-int32(v))
	} else if pdb.Spec.MinAvailable != nil {
		v, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, int(expected), true)
		failed = err != nil
		desired = int32(v)
	}
	allowed := int32(0)
	if !failed && expected > 0 {
		allowed = max(0, healthy-desired)
	}
	cond := metav1.Condition{Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionFalse,
		Reason: policyv1.InsufficientPodsReason, ObservedGeneration: pdb.Generation, LastTransitionTime: pdb.CreationTimestamp}
	if failed {
		cond.Reason = policyv1.SyncFailedReason
	} else if allowed > 0 {
		cond.Status, cond.Reason = metav1.ConditionTrue, policyv1.SufficientPodsReason
	}
	return policyv1.PodDisruptionBudgetStatus{
		ObservedGeneration: pdb.Generation,
		DisruptionsAllowed: allowed,
		CurrentHealthy:     healthy,
		DesiredHealthy:     desired,
		ExpectedPods:       expected,
		Conditions:         []metav1.Condition{cond},
	}
}

var _ runtime.Object = &v1.Pod{}
