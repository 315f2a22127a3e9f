package main

import (
	"context"
	"io"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	admissionapi "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/informers"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	schedulingapiv1 "k8s.io/kubernetes/pkg/apis/scheduling/v1"
	podstore "k8s.io/kubernetes/pkg/registry/core/pod"
	"k8s.io/kubernetes/plugin/pkg/admission/priority"
	"k8s.io/kubernetes/plugin/pkg/admission/storage/storageclass/setdefault"
)

// admission is what kube-apiserver v1.34 does to an object between decoding and storage that the
// scheduler can see: v1 defaulting (feature-gated defaults included, e.g. pod-level requests), the
// Priority and DefaultStorageClass admission plugins, and for pods the registry strategy's
// PrepareForCreate (generation 1, SchedulingGated condition, matchLabelKeys/mismatchLabelKeys merged
// into affinity and topology spread selectors) and validation. All of it is upstream code, run on the
// internal types as the API server runs it.
type admission struct {
	s         *APIServer
	priority  *priority.Plugin
	defaultSC admissionapi.MutationInterface
}

func newAdmission(s *APIServer) *admission {
	return &admission{s: s}
}

// wire gives the admission plugins their listers (the emulated API server's own informers).
func (a *admission) wire(f informers.SharedInformerFactory) error {
	a.priority = priority.NewPlugin()
	a.priority.SetExternalKubeInformerFactory(f)
	plugins := admissionapi.NewPlugins()
	setdefault.Register(plugins)
	chain, err := plugins.NewFromPlugins([]string{setdefault.PluginName}, noConfig{}, factoryInitializer{f}, nil)
	if err != nil {
		return err
	}
	a.defaultSC = chain.(admissionapi.MutationInterface)
	return nil
}

type noConfig struct{}

func (noConfig) ConfigFor(string) (io.Reader, error) { return nil, nil }

type factoryInitializer struct {
	f informers.SharedInformerFactory
}

func (i factoryInitializer) Initialize(p admissionapi.Interface) {
	if w, ok := p.(initializer.WantsExternalKubeInformerFactory); ok {
		w.SetExternalKubeInformerFactory(i.f)
	}
}

// create applies defaulting and admission to a new object; it returns the object to store.
func (a *admission) create(k *kindInfo, obj runtime.Object) (runtime.Object, error) {
	legacyscheme.Scheme.Default(obj)
	switch o := obj.(type) {
	case *v1.Pod:
		return a.createPod(o)
	case *v1.PersistentVolumeClaim:
		return a.createClaim(o)
	case *v1.Namespace:
		if o.Labels == nil {
			o.Labels = map[string]string{}
		}
		o.Labels[v1.LabelMetadataName] = o.Name
		o.Status.Phase = v1.NamespaceActive
	case *schedulingv1.PriorityClass:
		internal, err := toInternal(o)
		if err != nil {
			return nil, err
		}
		attrs := a.attributes(internal, k, "", o.Name)
		if err := a.priority.Validate(context.Background(), attrs, nil); err != nil {
			return nil, err
		}
	}
	return obj, nil
}

func (a *admission) createPod(pod *v1.Pod) (runtime.Object, error) {
	given := pod.Status.DeepCopy()
	internal := &api.Pod{}
	if err := legacyscheme.Scheme.Convert(pod, internal, nil); err != nil {
		return nil, err
	}
	ctx := genericapirequest.WithNamespace(context.Background(), pod.Namespace)
	if err := a.priority.Admit(ctx, a.attributes(internal, kindByName["Pod"], pod.Namespace, pod.Name), nil); err != nil {
		return nil, err
	}
	podstore.Strategy.PrepareForCreate(ctx, internal)
	if errs := podstore.Strategy.Validate(ctx, internal); len(errs) > 0 {
		return nil, apierrors.NewInvalid(api.Kind("Pod"), pod.Name, errs)
	}
	out := &v1.Pod{}
	if err := legacyscheme.Scheme.Convert(internal, out, nil); err != nil {
		return nil, err
	}
	// PrepareForCreate resets the status. A pod that arrives bound (existing load) or finished keeps
	// the status its manifest gives, as its kubelet would report it; a bound one without startTime has
	// been running since its creation.
	if out.Spec.NodeName != "" || given.Phase == v1.PodSucceeded || given.Phase == v1.PodFailed {
		qos := out.Status.QOSClass
		out.Status = *given
		if out.Status.QOSClass == "" {
			out.Status.QOSClass = qos
		}
		if out.Spec.NodeName != "" && out.Status.StartTime == nil {
			start := out.CreationTimestamp
			out.Status.StartTime = &start
			if out.Status.Phase == "" || out.Status.Phase == v1.PodPending {
				out.Status.Phase = v1.PodRunning
			}
		}
	}
	return out, nil
}

func (a *admission) createClaim(pvc *v1.PersistentVolumeClaim) (runtime.Object, error) {
	internal := &api.PersistentVolumeClaim{}
	if err := legacyscheme.Scheme.Convert(pvc, internal, nil); err != nil {
		return nil, err
	}
	attrs := a.attributes(internal, kindByName["PersistentVolumeClaim"], pvc.Namespace, pvc.Name)
	if err := a.defaultSC.Admit(context.Background(), attrs, nil); err != nil {
		return nil, err
	}
	out := &v1.PersistentVolumeClaim{}
	if err := legacyscheme.Scheme.Convert(internal, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

func (a *admission) attributes(obj runtime.Object, k *kindInfo, ns, name string) admissionapi.Attributes {
	gr := k.Resource.GroupResource()
	internalKind := schema.GroupKind{Group: gr.Group, Kind: k.Kind}.WithVersion(runtime.APIVersionInternal)
	resource := gr.WithVersion(runtime.APIVersionInternal)
	return admissionapi.NewAttributesRecord(obj, nil, internalKind, ns, name, resource, "",
		admissionapi.Create, &metav1.CreateOptions{}, false, nil)
}

func toInternal(obj runtime.Object) (runtime.Object, error) {
	gvks, _, err := legacyscheme.Scheme.ObjectKinds(obj)
	if err != nil {
		return nil, err
	}
	gv := schema.GroupVersion{Group: gvks[0].Group, Version: runtime.APIVersionInternal}
	return legacyscheme.Scheme.UnsafeConvertToVersion(obj.DeepCopyObject(), gv)
}

// systemPriorityClasses are the classes kube-apiserver creates at start-up.
func systemPriorityClasses() []*schedulingv1.PriorityClass {
	var out []*schedulingv1.PriorityClass
	for _, pc := range schedulingapiv1.SystemPriorityClasses() {
		out = append(out, pc.DeepCopy())
	}
	return out
}
