package main

import (
	"errors"
	"fmt"
	"hash/fnv"
	"slices"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
)

// The annotation kube-controller-manager's resourceclaim controller puts on a claim it generates from a
// template: the name of the pod's entry in spec.resourceClaims.
const podClaimAnnotation = "resource.kubernetes.io/pod-claim-name"

// claimController does what kube-controller-manager's resourceclaim controller (and the garbage
// collector, for generated claims) does to the objects the scheduler reads:
//
//   - a pod naming a ResourceClaimTemplate gets a claim made from it (owned by the pod, annotated with
//     the pod's claim name, named <pod>-<claim>-<5 characters> as the API server's generateName makes
//     it, the characters here a hash of the pod's UID and claim name instead of random), and the claim's
//     name in status.resourceClaimStatuses;
//   - a bound pod whose claim is allocated but not reserved for it gets reserved;
//   - when a pod is deleted or done, its entries leave the reservedFor of its claims; a claim reserved
//     for nobody any more that the scheduler allocated (it holds the delete-protection finalizer) is
//     deallocated and loses the finalizer; a generated claim of a deleted or done pod is deleted.
//
// It reacts to watch events synchronously, like the PV controller (controllers.go).
type claimController struct {
	s          *APIServer
	scheduling bool
	emulated   []string
}

func newClaimController(s *APIServer) *claimController {
	c := &claimController{s: s}
	s.watchers = append(s.watchers, c.handle)
	return c
}

func (c *claimController) handle(ev storeEvent) {
	switch obj := ev.obj.(type) {
	case *v1.Pod:
		if len(obj.Spec.ResourceClaims) == 0 {
			return
		}
		if ev.typ == eventDeleted || isPodDone(obj) {
			c.release(obj)
		}
		if ev.typ != eventDeleted {
			c.syncPod(obj.Namespace, obj.Name)
		}
	case *resourcev1.ResourceClaim:
		if ev.typ != eventDeleted {
			c.syncClaim(obj.Namespace, obj.Name)
		}
	}
}

// resync brings every loaded pod and claim up to date (before scheduling starts).
func (c *claimController) resync() {
	for _, o := range c.s.listLocked(kindByName["ResourceClaim"]) {
		claim := o.(*resourcev1.ResourceClaim)
		c.syncClaim(claim.Namespace, claim.Name)
	}
	for _, o := range c.s.listLocked(kindByName["Pod"]) {
		pod := o.(*v1.Pod)
		if len(pod.Spec.ResourceClaims) > 0 {
			c.syncPod(pod.Namespace, pod.Name)
		}
	}
}

func isPodDone(pod *v1.Pod) bool {
	return podutil.IsPodPhaseTerminal(pod.Status.Phase) || pod.DeletionTimestamp != nil && pod.Spec.NodeName == ""
}

func (c *claimController) pod(ns, name string) *v1.Pod {
	o, _ := c.s.getLocked(kindByName["Pod"], ns, name).(*v1.Pod)
	return o
}

func (c *claimController) claim(ns, name string) *resourcev1.ResourceClaim {
	o, _ := c.s.getLocked(kindByName["ResourceClaim"], ns, name).(*resourcev1.ResourceClaim)
	return o
}

// release syncs the claims of a pod that is gone or will not run any more.
func (c *claimController) release(pod *v1.Pod) {
	for i := range pod.Spec.ResourceClaims {
		name, _, err := resourceclaim.Name(pod, &pod.Spec.ResourceClaims[i])
		if err == nil && name != nil {
			c.syncClaim(pod.Namespace, *name)
		}
	}
}

func (c *claimController) syncPod(ns, name string) {
	pod := c.pod(ns, name)
	if pod == nil || pod.DeletionTimestamp != nil || isPodDone(pod) {
		return
	}
	created := map[string]string{}
	for _, podClaim := range pod.Spec.ResourceClaims {
		if claimName := c.ensureClaim(pod, podClaim); claimName != "" {
			created[podClaim.Name] = claimName
		}
	}
	if len(created) > 0 {
		updated := pod.DeepCopy()
		for _, podClaim := range pod.Spec.ResourceClaims { // spec order
			claimName, ok := created[podClaim.Name]
			if !ok {
				continue
			}
			updated.Status.ResourceClaimStatuses = slices.DeleteFunc(updated.Status.ResourceClaimStatuses,
				func(s v1.PodResourceClaimStatus) bool { return s.Name == podClaim.Name })
			updated.Status.ResourceClaimStatuses = append(updated.Status.ResourceClaimStatuses,
				v1.PodResourceClaimStatus{Name: podClaim.Name, ResourceClaimName: &claimName})
		}
		out, err := c.s.updateLocked(updated, "status")
		if err != nil {
			return
		}
		pod = out.(*v1.Pod)
	}
	if pod.Spec.NodeName != "" {
		c.reserveForBoundPod(pod)
	}
}

// ensureClaim makes the claim of a pod's template entry when there is none; it returns the name of a
// claim made (or found orphaned) that the pod's status does not list yet, else "".
func (c *claimController) ensureClaim(pod *v1.Pod, podClaim v1.PodResourceClaim) string {
	name, mustCheckOwner, err := resourceclaim.Name(pod, &podClaim)
	switch {
	case errors.Is(err, resourceclaim.ErrClaimNotFound):
	case err != nil || name == nil:
		return ""
	case *name != "":
		if claim := c.claim(pod.Namespace, *name); claim != nil && (!mustCheckOwner || resourceclaim.IsForPod(pod, claim) == nil) {
			return ""
		}
	}
	if podClaim.ResourceClaimTemplateName == nil {
		return ""
	}
	if existing := c.ownedClaim(pod, podClaim.Name); existing != nil {
		return existing.Name
	}
	templateName := *podClaim.ResourceClaimTemplateName
	template, _ := c.s.getLocked(kindByName["ResourceClaimTemplate"], pod.Namespace, templateName).(*resourcev1.ResourceClaimTemplate)
	if template == nil {
		c.emulated = append(c.emulated, fmt.Sprintf("pod %s/%s: resource claim template %q not found; the emulated resourceclaim controller creates no claim",
			pod.Namespace, pod.Name, templateName))
		return ""
	}
	claim := claimFromTemplate(pod, podClaim.Name, template)
	if _, err := c.s.createLocked(claim); err != nil {
		return ""
	}
	c.emulated = append(c.emulated, fmt.Sprintf("resourceclaim %s/%s created from template %s for pod %s/%s by the emulated resourceclaim controller",
		pod.Namespace, claim.Name, templateName, pod.Namespace, pod.Name))
	return claim.Name
}

// ownedClaim is a claim generated earlier for this pod entry (by owner and annotation).
func (c *claimController) ownedClaim(pod *v1.Pod, podClaimName string) *resourcev1.ResourceClaim {
	for _, o := range c.s.listLocked(kindByName["ResourceClaim"]) {
		claim := o.(*resourcev1.ResourceClaim)
		if claim.Namespace == pod.Namespace && metav1.IsControlledBy(claim, pod) && claim.Annotations[podClaimAnnotation] == podClaimName {
			return claim
		}
	}
	return nil
}

// claimFromTemplate is the controller's claim for a pod entry: the template's metadata and spec, the
// pod as controlling owner, and a name <pod>-<entry>-<suffix> shortened as the controller shortens it.
func claimFromTemplate(pod *v1.Pod, podClaimName string, template *resourcev1.ResourceClaimTemplate) *resourcev1.ResourceClaim {
	annotations := map[string]string{}
	for k, v := range template.Spec.ObjectMeta.Annotations {
		annotations[k] = v
	}
	annotations[podClaimAnnotation] = podClaimName
	base := pod.Name + "-" + podClaimName + "-"
	const maxBaseLen = 57
	if len(base) > maxBaseLen {
		base = pod.Name[0:len(pod.Name)*maxBaseLen/len(base)] + "-" + podClaimName[0:len(podClaimName)*maxBaseLen/len(base)]
	}
	yes := true
	return &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:      base + nameSuffix(string(pod.UID)+"/"+podClaimName),
			Namespace: pod.Namespace,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID,
				Controller: &yes, BlockOwnerDeletion: &yes}},
			Annotations: annotations,
			Labels:      template.Spec.ObjectMeta.Labels,
		},
		Spec: *template.Spec.Spec.DeepCopy(),
	}
}

// nameSuffix is five characters of the API server's generateName alphabet, from a hash of key.
func nameSuffix(key string) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	n := h.Sum64()
	out := make([]byte, 5)
	for i := range out {
		out[i] = alphabet[n%uint64(len(alphabet))]
		n /= uint64(len(alphabet))
	}
	return string(out)
}

func (c *claimController) reserveForBoundPod(pod *v1.Pod) {
	for i := range pod.Spec.ResourceClaims {
		name, mustCheckOwner, err := resourceclaim.Name(pod, &pod.Spec.ResourceClaims[i])
		if err != nil || name == nil {
			continue
		}
		claim := c.claim(pod.Namespace, *name)
		if claim == nil || (mustCheckOwner && resourceclaim.IsForPod(pod, claim) != nil) {
			continue
		}
		if claim.Status.Allocation != nil && !resourceclaim.IsReservedForPod(pod, claim) {
			updated := claim.DeepCopy()
			updated.Status.ReservedFor = append(updated.Status.ReservedFor,
				resourcev1.ResourceClaimConsumerReference{Resource: "pods", Name: pod.Name, UID: pod.UID})
			_, _ = c.s.updateLocked(updated, "status")
		}
	}
}

// syncClaim drops reservations of pods that are gone or done, deallocates a claim nobody uses any more,
// and deletes a generated claim whose pod is gone or done.
func (c *claimController) syncClaim(ns, name string) {
	claim := c.claim(ns, name)
	if claim == nil {
		return
	}
	var valid []resourcev1.ResourceClaimConsumerReference
	for _, ref := range claim.Status.ReservedFor {
		if ref.APIGroup == "" && ref.Resource == "pods" {
			if pod := c.pod(ns, ref.Name); pod == nil || pod.UID != ref.UID || isPodDone(pod) {
				continue
			}
		}
		valid = append(valid, ref)
	}
	if len(valid) < len(claim.Status.ReservedFor) {
		updated := claim.DeepCopy()
		updated.Status.ReservedFor = valid
		protected := slices.Contains(updated.Finalizers, resourcev1.Finalizer)
		if len(valid) == 0 && protected {
			updated.Status.Allocation = nil
		}
		out, err := c.s.updateLocked(updated, "status")
		if err != nil {
			return
		}
		claim = out.(*resourcev1.ResourceClaim)
		if i := slices.Index(claim.Finalizers, resourcev1.Finalizer); i >= 0 && claim.Status.Allocation == nil {
			claim.Finalizers = slices.Delete(claim.Finalizers, i, i+1)
			if out, err = c.s.updateLocked(claim, ""); err != nil {
				return
			}
			claim = out.(*resourcev1.ResourceClaim)
		}
		if c.scheduling {
			c.emulated = append(c.emulated, fmt.Sprintf("resourceclaim %s/%s released by the emulated resourceclaim controller (reserved for %d, allocated %t)",
				ns, name, len(valid), claim.Status.Allocation != nil))
		}
	}
	if len(valid) > 0 {
		return
	}
	for _, owner := range claim.OwnerReferences {
		if owner.Controller == nil || !*owner.Controller || owner.APIVersion != "v1" || owner.Kind != "Pod" {
			continue
		}
		if pod := c.pod(ns, owner.Name); pod == nil || pod.UID != owner.UID || isPodDone(pod) {
			if err := c.s.deleteLocked(kindByName["ResourceClaim"], ns, name, nil); err == nil && c.scheduling {
				c.emulated = append(c.emulated, fmt.Sprintf("resourceclaim %s/%s of pod %s deleted by the emulated resourceclaim controller", ns, name, owner.Name))
			}
		}
		return
	}
}
