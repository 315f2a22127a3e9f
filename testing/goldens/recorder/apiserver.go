package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
)

// The emulated API server: typed v1 objects with resourceVersions, UIDs and creation timestamps, the
// admission and defaulting a real kube-apiserver applies (admission.go), and watch events delivered
// synchronously, in order, to informers (informers.go) and to the emulated controllers (controllers.go).
//
// Every entry point takes mu for its whole duration, including the delivery of the events it caused and
// of the events the controllers cause in reaction: when a call returns, every handler has seen its effect.
// Handlers and controllers run with mu held and never call an entry point (controllers use the *Locked
// methods), so there is no re-entry.

type eventType int

const (
	eventAdded eventType = iota
	eventUpdated
	eventDeleted
)

type storeEvent struct {
	kind     *kindInfo
	typ      eventType
	old, obj runtime.Object
}

type entry struct {
	obj runtime.Object
	seq int // creation order: informers list objects in this order
}

// APIServer holds the cluster's objects.
type APIServer struct {
	mu          sync.Mutex
	objects     map[string]map[string]*entry // kind -> namespace/name
	seq         int
	rv          int64
	queue       []storeEvent
	dispatching bool
	informers   map[string]*syncInformer
	watchers    []func(storeEvent)
	now         time.Time // creation time given to objects without one (the current document's time)
	uids        int       // UIDs handed to objects that come from no document
	admission   *admission
	gate        *cycleGate
}

func newAPIServer(start time.Time) *APIServer {
	s := &APIServer{
		objects:   map[string]map[string]*entry{},
		informers: map[string]*syncInformer{},
		now:       start,
		gate:      newCycleGate(),
	}
	s.admission = newAdmission(s)
	for i := range kinds {
		s.informers[kinds[i].Kind] = newSyncInformer(s, &kinds[i])
	}
	return s
}

func objectKey(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

func (s *APIServer) nextRV() string {
	s.rv++
	return fmt.Sprint(s.rv)
}

// --- entry points (take mu) ------------------------------------------------------------------------

// Create admits and stores obj; uid and creationTimestamp are kept when set.
func (s *APIServer) Create(obj runtime.Object) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out, err := s.createLocked(obj)
	s.flushLocked()
	return out, err
}

func (s *APIServer) Update(obj runtime.Object, subresource string) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out, err := s.updateLocked(obj, subresource)
	s.flushLocked()
	return out, err
}

func (s *APIServer) Patch(k *kindInfo, ns, name string, pt types.PatchType, data []byte, subresource string) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out, err := s.patchLocked(k, ns, name, pt, data, subresource)
	s.flushLocked()
	return out, err
}

func (s *APIServer) Delete(k *kindInfo, ns, name string, uid *types.UID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.deleteLocked(k, ns, name, uid)
	s.flushLocked()
	return err
}

func (s *APIServer) Bind(b *v1.Binding) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.bindLocked(b)
	s.flushLocked()
	return err
}

// Get returns a copy of the object, or a NotFound error.
func (s *APIServer) Get(k *kindInfo, ns, name string) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.objects[k.Kind][objectKey(ns, name)]
	if e == nil {
		return nil, apierrors.NewNotFound(k.Resource.GroupResource(), name)
	}
	return e.obj.DeepCopyObject(), nil
}

// List returns copies of every object of the kind, in creation order.
func (s *APIServer) List(k *kindInfo) []runtime.Object {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []runtime.Object
	for _, o := range s.listLocked(k) {
		out = append(out, o.DeepCopyObject())
	}
	return out
}

// Locked runs fn with mu held and then delivers the events fn caused.
func (s *APIServer) Locked(fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn()
	s.flushLocked()
}

// --- with mu held ----------------------------------------------------------------------------------

func (s *APIServer) listLocked(k *kindInfo) []runtime.Object {
	entries := make([]*entry, 0, len(s.objects[k.Kind]))
	for _, e := range s.objects[k.Kind] {
		entries = append(entries, e)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].seq < entries[j].seq })
	out := make([]runtime.Object, len(entries))
	for i, e := range entries {
		out[i] = e.obj
	}
	return out
}

func (s *APIServer) getLocked(k *kindInfo, ns, name string) runtime.Object {
	if e := s.objects[k.Kind][objectKey(ns, name)]; e != nil {
		return e.obj
	}
	return nil
}

func (s *APIServer) enqueue(ev storeEvent) { s.queue = append(s.queue, ev) }

// flushLocked delivers queued events in order; events caused by handlers are appended and delivered too.
func (s *APIServer) flushLocked() {
	if s.dispatching {
		return
	}
	s.dispatching = true
	defer func() { s.dispatching = false }()
	for len(s.queue) > 0 {
		ev := s.queue[0]
		s.queue = s.queue[1:]
		if inf := s.informers[ev.kind.Kind]; inf != nil {
			inf.deliver(ev)
		}
		for _, w := range s.watchers {
			w(ev)
		}
	}
}

func (s *APIServer) createLocked(obj runtime.Object) (runtime.Object, error) {
	k, err := kindOf(obj)
	if err != nil {
		return nil, err
	}
	obj = obj.DeepCopyObject()
	m, _ := meta.Accessor(obj)
	if m.GetName() == "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("%s: metadata.name: Required value", k.Kind))
	}
	if k.Namespaced {
		if m.GetNamespace() == "" {
			m.SetNamespace(metav1.NamespaceDefault)
		}
		if err := s.ensureNamespaceLocked(m.GetNamespace()); err != nil {
			return nil, err
		}
	} else {
		m.SetNamespace("")
	}
	key := objectKey(m.GetNamespace(), m.GetName())
	if s.objects[k.Kind][key] != nil {
		return nil, apierrors.NewAlreadyExists(k.Resource.GroupResource(), m.GetName())
	}
	if m.GetUID() == "" {
		s.uids++
		m.SetUID(types.UID(fmt.Sprintf("00000000-0000-4000-9000-%012d", s.uids)))
	}
	if m.GetCreationTimestamp().Time.IsZero() {
		m.SetCreationTimestamp(metav1.NewTime(s.now))
	}
	obj, err = s.admission.create(k, obj)
	if err != nil {
		return nil, err
	}
	m, _ = meta.Accessor(obj)
	m.SetResourceVersion(s.nextRV())
	if s.objects[k.Kind] == nil {
		s.objects[k.Kind] = map[string]*entry{}
	}
	s.seq++
	s.objects[k.Kind][key] = &entry{obj: obj, seq: s.seq}
	s.enqueue(storeEvent{kind: k, typ: eventAdded, obj: obj})
	return obj.DeepCopyObject(), nil
}

func (s *APIServer) ensureNamespaceLocked(name string) error {
	nsKind := kindByName["Namespace"]
	if s.getLocked(nsKind, "", name) != nil {
		return nil
	}
	_, err := s.createLocked(&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	return err
}

// updateLocked replaces an object. Without a subresource the stored status is kept (the kinds the
// scheduler reads have a status subresource); with "status" only the status changes. An update that
// changes nothing is not written and causes no event, as in etcd3 storage.
func (s *APIServer) updateLocked(obj runtime.Object, subresource string) (runtime.Object, error) {
	k, err := kindOf(obj)
	if err != nil {
		return nil, err
	}
	m, _ := meta.Accessor(obj)
	ns := m.GetNamespace()
	if k.Namespaced && ns == "" {
		ns = metav1.NamespaceDefault
	}
	e := s.objects[k.Kind][objectKey(ns, m.GetName())]
	if e == nil {
		return nil, apierrors.NewNotFound(k.Resource.GroupResource(), m.GetName())
	}
	cur, _ := meta.Accessor(e.obj)
	if rv := m.GetResourceVersion(); rv != "" && rv != cur.GetResourceVersion() {
		return nil, apierrors.NewConflict(k.Resource.GroupResource(), m.GetName(),
			fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	var next runtime.Object
	if subresource == "status" {
		next = e.obj.DeepCopyObject()
		copyField(next, obj, "Status")
	} else {
		next = obj.DeepCopyObject()
		copyField(next, e.obj, "Status")
		nm, _ := meta.Accessor(next)
		nm.SetNamespace(ns)
		nm.SetUID(cur.GetUID())
		nm.SetCreationTimestamp(cur.GetCreationTimestamp())
		nm.SetGeneration(cur.GetGeneration())
		legacyscheme.Scheme.Default(next)
	}
	nm, _ := meta.Accessor(next)
	nm.SetResourceVersion(cur.GetResourceVersion())
	if apiequality.Semantic.DeepEqual(next, e.obj) {
		return e.obj.DeepCopyObject(), nil
	}
	nm.SetResourceVersion(s.nextRV())
	old := e.obj
	e.obj = next
	s.enqueue(storeEvent{kind: k, typ: eventUpdated, old: old, obj: next})
	return next.DeepCopyObject(), nil
}

// copyField sets dst.<field> = src.<field> when the type has that field.
func copyField(dst, src runtime.Object, field string) {
	d := reflect.ValueOf(dst).Elem().FieldByName(field)
	sv := reflect.ValueOf(src).Elem().FieldByName(field)
	if d.IsValid() && sv.IsValid() && d.CanSet() {
		d.Set(sv)
	}
}

func (s *APIServer) patchLocked(k *kindInfo, ns, name string, pt types.PatchType, data []byte, subresource string) (runtime.Object, error) {
	cur := s.getLocked(k, ns, name)
	if cur == nil {
		return nil, apierrors.NewNotFound(k.Resource.GroupResource(), name)
	}
	original, err := json.Marshal(cur)
	if err != nil {
		return nil, err
	}
	var patched []byte
	switch pt {
	case types.StrategicMergePatchType:
		patched, err = strategicpatch.StrategicMergePatch(original, data, reflect.New(k.Type.Elem()).Interface())
	case types.MergePatchType:
		patched, err = jsonpatch.MergePatch(original, data)
	case types.JSONPatchType:
		var p jsonpatch.Patch
		if p, err = jsonpatch.DecodePatch(data); err == nil {
			patched, err = p.Apply(original)
		}
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("patch type %s is not supported", pt))
	}
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	next := reflect.New(k.Type.Elem()).Interface().(runtime.Object)
	if err := json.Unmarshal(patched, next); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	nm, _ := meta.Accessor(next)
	nm.SetResourceVersion("")
	return s.updateLocked(next, subresource)
}

func (s *APIServer) deleteLocked(k *kindInfo, ns, name string, uid *types.UID) error {
	key := objectKey(ns, name)
	e := s.objects[k.Kind][key]
	if e == nil {
		return apierrors.NewNotFound(k.Resource.GroupResource(), name)
	}
	m, _ := meta.Accessor(e.obj)
	if uid != nil && *uid != m.GetUID() {
		return apierrors.NewConflict(k.Resource.GroupResource(), name,
			fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s)", *uid, m.GetUID()))
	}
	delete(s.objects[k.Kind], key)
	s.enqueue(storeEvent{kind: k, typ: eventDeleted, old: e.obj, obj: e.obj})
	return nil
}

// bindLocked is the pods/binding subresource: it sets spec.nodeName and PodScheduled=True.
func (s *APIServer) bindLocked(b *v1.Binding) error {
	k := kindByName["Pod"]
	ns := b.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	cur, _ := s.getLocked(k, ns, b.Name).(*v1.Pod)
	if cur == nil {
		return apierrors.NewNotFound(k.Resource.GroupResource(), b.Name)
	}
	if b.UID != "" && b.UID != cur.UID {
		return apierrors.NewConflict(k.Resource.GroupResource(), b.Name,
			fmt.Errorf("precondition failed: UID in precondition: %v, UID in object meta: %v", b.UID, cur.UID))
	}
	if cur.Spec.NodeName != "" {
		return apierrors.NewConflict(k.Resource.GroupResource(), b.Name,
			fmt.Errorf("pod %v is already assigned to node %q", b.Name, cur.Spec.NodeName))
	}
	pod := cur.DeepCopy()
	pod.Spec.NodeName = b.Target.Name
	for key, value := range b.Annotations {
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[key] = value
	}
	setPodScheduledTrue(&pod.Status)
	pod.ResourceVersion = s.nextRV()
	s.objects[k.Kind][objectKey(ns, b.Name)].obj = pod
	s.enqueue(storeEvent{kind: k, typ: eventUpdated, old: cur, obj: pod})
	return nil
}

func setPodScheduledTrue(status *v1.PodStatus) {
	for i := range status.Conditions {
		if status.Conditions[i].Type == v1.PodScheduled {
			if status.Conditions[i].Status != v1.ConditionTrue {
				status.Conditions[i].Status = v1.ConditionTrue
				status.Conditions[i].Reason = ""
				status.Conditions[i].Message = ""
			}
			return
		}
	}
	status.Conditions = append(status.Conditions, v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue})
}
