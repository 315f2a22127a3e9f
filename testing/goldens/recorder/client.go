package main

import (
	"context"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
)

// newClient returns a clientset whose every call is served by the emulated API server. Writes to pods
// other than the one of the scheduling cycle in progress wait for the cycle to end (cycleGate); the
// wait happens before the call enters the fake clientset, which serves one call at a time.
func newClient(s *APIServer) kubernetes.Interface {
	cs := fake.NewClientset()
	cs.PrependReactor("*", "*", func(action k8stesting.Action) (bool, runtime.Object, error) {
		obj, err := s.serve(action)
		return true, obj, err
	})
	return &gatedClient{Clientset: cs, s: s}
}

type gatedClient struct {
	*fake.Clientset
	s *APIServer
}

func (c *gatedClient) CoreV1() corev1client.CoreV1Interface {
	return &gatedCore{CoreV1Interface: c.Clientset.CoreV1(), s: c.s}
}

type gatedCore struct {
	corev1client.CoreV1Interface
	s *APIServer
}

func (c *gatedCore) Pods(ns string) corev1client.PodInterface {
	return &gatedPods{PodInterface: c.CoreV1Interface.Pods(ns), s: c.s, ns: ns}
}

type gatedPods struct {
	corev1client.PodInterface
	s  *APIServer
	ns string
}

func (p *gatedPods) Create(ctx context.Context, pod *v1.Pod, opts metav1.CreateOptions) (*v1.Pod, error) {
	p.s.gate.wait(p.ns, pod.Name)
	return p.PodInterface.Create(ctx, pod, opts)
}

func (p *gatedPods) Update(ctx context.Context, pod *v1.Pod, opts metav1.UpdateOptions) (*v1.Pod, error) {
	p.s.gate.wait(p.ns, pod.Name)
	return p.PodInterface.Update(ctx, pod, opts)
}

func (p *gatedPods) UpdateStatus(ctx context.Context, pod *v1.Pod, opts metav1.UpdateOptions) (*v1.Pod, error) {
	p.s.gate.wait(p.ns, pod.Name)
	return p.PodInterface.UpdateStatus(ctx, pod, opts)
}

func (p *gatedPods) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*v1.Pod, error) {
	p.s.gate.wait(p.ns, name)
	return p.PodInterface.Patch(ctx, name, pt, data, opts, subresources...)
}

func (p *gatedPods) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	p.s.gate.wait(p.ns, name)
	return p.PodInterface.Delete(ctx, name, opts)
}

func (p *gatedPods) Bind(ctx context.Context, b *v1.Binding, opts metav1.CreateOptions) error {
	p.s.gate.wait(p.ns, b.Name)
	return p.PodInterface.Bind(ctx, b, opts)
}

func (s *APIServer) serve(action k8stesting.Action) (runtime.Object, error) {
	k, err := kindForResource(action.GetResource())
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	ns := action.GetNamespace()
	switch action.GetVerb() {
	case "get":
		return s.Get(k, ns, action.(k8stesting.GetAction).GetName())
	case "list":
		return s.list(k, ns)
	case "create":
		a := action.(k8stesting.CreateAction)
		if a.GetSubresource() == "binding" {
			b, ok := a.GetObject().(*v1.Binding)
			if !ok {
				return nil, apierrors.NewBadRequest("binding: unexpected object")
			}
			return nil, s.Bind(b)
		}
		if a.GetSubresource() != "" {
			return nil, apierrors.NewBadRequest("create of subresource " + a.GetSubresource() + " is not supported")
		}
		return s.Create(a.GetObject())
	case "update":
		a := action.(k8stesting.UpdateAction)
		return s.Update(a.GetObject(), a.GetSubresource())
	case "patch":
		a := action.(k8stesting.PatchAction)
		return s.Patch(k, ns, a.GetName(), a.GetPatchType(), a.GetPatch(), a.GetSubresource())
	case "delete":
		a := action.(k8stesting.DeleteAction)
		var uid *types.UID
		if p := a.GetDeleteOptions().Preconditions; p != nil {
			uid = p.UID
		}
		return nil, s.Delete(k, ns, a.GetName(), uid)
	}
	return nil, apierrors.NewBadRequest(fmt.Sprintf("%s %s is not supported", action.GetVerb(), k.Resource.Resource))
}

func objectName(obj runtime.Object) string {
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetName()
	}
	return ""
}

func (s *APIServer) list(k *kindInfo, ns string) (runtime.Object, error) {
	gvk := k.Resource.GroupVersion().WithKind(k.Kind + "List")
	list, err := legacyscheme.Scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	var items []runtime.Object
	for _, obj := range s.List(k) {
		if m, _ := meta.Accessor(obj); ns == "" || m.GetNamespace() == ns {
			items = append(items, obj)
		}
	}
	if err := meta.SetList(list, items); err != nil {
		return nil, err
	}
	return list, nil
}

// cycleGate holds back pod writes that do not concern the pod of the scheduling cycle in progress
// until the cycle (its failure handling included) is over. Only the asynchronous preemption goroutine
// writes such objects during a cycle, so its effects always come after the preemptor's failure
// handling: the order in which a real API server's latency almost always puts them, made certain.
type cycleGate struct {
	mu      sync.Mutex
	cond    *sync.Cond
	open    bool
	ns, pod string
}

func newCycleGate() *cycleGate {
	g := &cycleGate{}
	g.cond = sync.NewCond(&g.mu)
	return g
}

func (g *cycleGate) begin(ns, pod string) {
	g.mu.Lock()
	g.open, g.ns, g.pod = true, ns, pod
	g.mu.Unlock()
}

func (g *cycleGate) end() {
	g.mu.Lock()
	g.open = false
	g.cond.Broadcast()
	g.mu.Unlock()
}

func (g *cycleGate) wait(ns, pod string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.open && !(ns == g.ns && pod == g.pod) {
		g.cond.Wait()
	}
}
