package main

import (
	"context"
	"reflect"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/informers/apps"
	"k8s.io/client-go/informers/core"
	"k8s.io/client-go/informers/internalinterfaces"
	"k8s.io/client-go/informers/policy"
	"k8s.io/client-go/informers/resource"
	"k8s.io/client-go/informers/scheduling"
	"k8s.io/client-go/informers/storage"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// syncInformer is a SharedIndexInformer fed by the emulated API server: it is always synced, and each
// watch event reaches its indexer and then its handlers (in registration order) before the API call
// that caused it returns. The pod informer leaves out terminal pods, as kube-scheduler's pod informer
// does with its field selector.
type syncInformer struct {
	s        *APIServer
	kind     *kindInfo
	indexer  cache.Indexer
	handlers []cache.ResourceEventHandler
}

func newSyncInformer(s *APIServer, k *kindInfo) *syncInformer {
	return &syncInformer{
		s:       s,
		kind:    k,
		indexer: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}),
	}
}

func (i *syncInformer) visible(obj runtime.Object) bool {
	if pod, ok := obj.(*v1.Pod); ok {
		return pod.Status.Phase != v1.PodSucceeded && pod.Status.Phase != v1.PodFailed
	}
	return true
}

func (i *syncInformer) has(obj runtime.Object) bool {
	_, exists, _ := i.indexer.Get(obj)
	return exists
}

// deliver runs with the API server's lock held.
func (i *syncInformer) deliver(ev storeEvent) {
	switch ev.typ {
	case eventAdded:
		if i.visible(ev.obj) {
			_ = i.indexer.Add(ev.obj)
			for _, h := range i.handlers {
				h.OnAdd(ev.obj, false)
			}
		}
	case eventUpdated:
		was, is := i.has(ev.old), i.visible(ev.obj)
		switch {
		case was && is:
			_ = i.indexer.Update(ev.obj)
			for _, h := range i.handlers {
				h.OnUpdate(ev.old, ev.obj)
			}
		case was:
			_ = i.indexer.Delete(ev.old)
			for _, h := range i.handlers {
				h.OnDelete(ev.old)
			}
		case is:
			_ = i.indexer.Add(ev.obj)
			for _, h := range i.handlers {
				h.OnAdd(ev.obj, false)
			}
		}
	case eventDeleted:
		if i.has(ev.old) {
			_ = i.indexer.Delete(ev.old)
			for _, h := range i.handlers {
				h.OnDelete(ev.old)
			}
		}
	}
}

type syncedRegistration struct{}

func (syncedRegistration) HasSynced() bool { return true }

// AddEventHandler replays the current objects (creation order) as the initial list, then keeps the
// handler for later events.
func (i *syncInformer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	i.s.mu.Lock()
	defer i.s.mu.Unlock()
	for _, obj := range i.s.listLocked(i.kind) {
		if i.visible(obj) {
			h.OnAdd(obj, true)
		}
	}
	i.handlers = append(i.handlers, h)
	return syncedRegistration{}, nil
}

func (i *syncInformer) AddEventHandlerWithResyncPeriod(h cache.ResourceEventHandler, _ time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	return i.AddEventHandler(h)
}

func (i *syncInformer) AddEventHandlerWithOptions(h cache.ResourceEventHandler, _ cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	return i.AddEventHandler(h)
}

func (i *syncInformer) RemoveEventHandler(cache.ResourceEventHandlerRegistration) error { return nil }
func (i *syncInformer) GetStore() cache.Store                                           { return i.indexer }
func (i *syncInformer) GetIndexer() cache.Indexer                                       { return i.indexer }
func (i *syncInformer) AddIndexers(ix cache.Indexers) error                             { return i.indexer.AddIndexers(ix) }
func (i *syncInformer) GetController() cache.Controller                                 { return nil }
func (i *syncInformer) Run(<-chan struct{})                                             {}
func (i *syncInformer) RunWithContext(context.Context)                                  {}
func (i *syncInformer) HasSynced() bool                                                 { return true }
func (i *syncInformer) LastSyncResourceVersion() string                                 { return "" }
func (i *syncInformer) SetWatchErrorHandler(cache.WatchErrorHandler) error              { return nil }
func (i *syncInformer) SetWatchErrorHandlerWithContext(cache.WatchErrorHandlerWithContext) error {
	return nil
}
func (i *syncInformer) SetTransform(cache.TransformFunc) error { return nil }
func (i *syncInformer) IsStopped() bool                        { return false }

// syncFactory is a SharedInformerFactory whose typed informers are the API server's syncInformers. The
// embedded real factory is never started; it only answers for API groups the scheduler does not read.
type syncFactory struct {
	informers.SharedInformerFactory
	s     *APIServer
	mu    sync.Mutex
	extra map[reflect.Type]*syncInformer
}

func newSyncFactory(s *APIServer, cs kubernetes.Interface) *syncFactory {
	return &syncFactory{
		SharedInformerFactory: informers.NewSharedInformerFactory(cs, 0),
		s:                     s,
		extra:                 map[reflect.Type]*syncInformer{},
	}
}

func (f *syncFactory) InformerFor(obj runtime.Object, _ internalinterfaces.NewInformerFunc) cache.SharedIndexInformer {
	t := reflect.TypeOf(obj)
	if k, ok := kindByType[t]; ok {
		return f.s.informers[k.Kind]
	}
	// A type the emulated API server does not store (an alpha API): an informer that stays empty.
	f.mu.Lock()
	defer f.mu.Unlock()
	if inf, ok := f.extra[t]; ok {
		return inf
	}
	inf := newSyncInformer(f.s, &kindInfo{Kind: t.String(), Resource: schema.GroupVersionResource{Resource: t.String()}, Type: t})
	f.extra[t] = inf
	return inf
}

func (f *syncFactory) Start(<-chan struct{}) {}
func (f *syncFactory) Shutdown()             {}
func (f *syncFactory) WaitForCacheSync(<-chan struct{}) map[reflect.Type]bool {
	return map[reflect.Type]bool{}
}

func (f *syncFactory) Core() core.Interface         { return core.New(f, metav1.NamespaceAll, nil) }
func (f *syncFactory) Storage() storage.Interface   { return storage.New(f, metav1.NamespaceAll, nil) }
func (f *syncFactory) Resource() resource.Interface { return resource.New(f, metav1.NamespaceAll, nil) }
func (f *syncFactory) Policy() policy.Interface     { return policy.New(f, metav1.NamespaceAll, nil) }
func (f *syncFactory) Apps() apps.Interface         { return apps.New(f, metav1.NamespaceAll, nil) }
func (f *syncFactory) Scheduling() scheduling.Interface {
	return scheduling.New(f, metav1.NamespaceAll, nil)
}
