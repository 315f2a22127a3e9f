package main

import (
	"fmt"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	// The API groups whose v1 defaulting and internal conversions the emulated API server applies.
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
)

// kindInfo describes one kind the emulated API server stores.
type kindInfo struct {
	Kind       string
	Resource   schema.GroupVersionResource
	Namespaced bool
	Type       reflect.Type // the pointer type, e.g. *v1.Pod
}

var kinds = []kindInfo{
	{"Namespace", v1.SchemeGroupVersion.WithResource("namespaces"), false, reflect.TypeOf(&v1.Namespace{})},
	{"Node", v1.SchemeGroupVersion.WithResource("nodes"), false, reflect.TypeOf(&v1.Node{})},
	{"Pod", v1.SchemeGroupVersion.WithResource("pods"), true, reflect.TypeOf(&v1.Pod{})},
	{"PersistentVolume", v1.SchemeGroupVersion.WithResource("persistentvolumes"), false, reflect.TypeOf(&v1.PersistentVolume{})},
	{"PersistentVolumeClaim", v1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), true, reflect.TypeOf(&v1.PersistentVolumeClaim{})},
	{"Service", v1.SchemeGroupVersion.WithResource("services"), true, reflect.TypeOf(&v1.Service{})},
	{"ReplicationController", v1.SchemeGroupVersion.WithResource("replicationcontrollers"), true, reflect.TypeOf(&v1.ReplicationController{})},
	{"StorageClass", storagev1.SchemeGroupVersion.WithResource("storageclasses"), false, reflect.TypeOf(&storagev1.StorageClass{})},
	{"CSINode", storagev1.SchemeGroupVersion.WithResource("csinodes"), false, reflect.TypeOf(&storagev1.CSINode{})},
	{"CSIDriver", storagev1.SchemeGroupVersion.WithResource("csidrivers"), false, reflect.TypeOf(&storagev1.CSIDriver{})},
	{"CSIStorageCapacity", storagev1.SchemeGroupVersion.WithResource("csistoragecapacities"), true, reflect.TypeOf(&storagev1.CSIStorageCapacity{})},
	{"VolumeAttachment", storagev1.SchemeGroupVersion.WithResource("volumeattachments"), false, reflect.TypeOf(&storagev1.VolumeAttachment{})},
	{"PriorityClass", schedulingv1.SchemeGroupVersion.WithResource("priorityclasses"), false, reflect.TypeOf(&schedulingv1.PriorityClass{})},
	{"PodDisruptionBudget", policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets"), true, reflect.TypeOf(&policyv1.PodDisruptionBudget{})},
	{"ReplicaSet", appsv1.SchemeGroupVersion.WithResource("replicasets"), true, reflect.TypeOf(&appsv1.ReplicaSet{})},
	{"StatefulSet", appsv1.SchemeGroupVersion.WithResource("statefulsets"), true, reflect.TypeOf(&appsv1.StatefulSet{})},
	{"ResourceClaim", resourcev1.SchemeGroupVersion.WithResource("resourceclaims"), true, reflect.TypeOf(&resourcev1.ResourceClaim{})},
	{"ResourceSlice", resourcev1.SchemeGroupVersion.WithResource("resourceslices"), false, reflect.TypeOf(&resourcev1.ResourceSlice{})},
	{"DeviceClass", resourcev1.SchemeGroupVersion.WithResource("deviceclasses"), false, reflect.TypeOf(&resourcev1.DeviceClass{})},
	{"ResourceClaimTemplate", resourcev1.SchemeGroupVersion.WithResource("resourceclaimtemplates"), true, reflect.TypeOf(&resourcev1.ResourceClaimTemplate{})},
}

var (
	kindByType     = map[reflect.Type]*kindInfo{}
	kindByName     = map[string]*kindInfo{}
	kindByResource = map[string]*kindInfo{} // "group/resource"
)

func init() {
	for i := range kinds {
		k := &kinds[i]
		kindByType[k.Type] = k
		kindByName[k.Kind] = k
		kindByResource[k.Resource.Group+"/"+k.Resource.Resource] = k
	}
}

// kindOf names the stored kind of a typed object, or fails for a type the emulated API server does not hold.
func kindOf(obj runtime.Object) (*kindInfo, error) {
	k, ok := kindByType[reflect.TypeOf(obj)]
	if !ok {
		return nil, fmt.Errorf("objects of type %T are not supported", obj)
	}
	return k, nil
}

func kindForResource(gvr schema.GroupVersionResource) (*kindInfo, error) {
	k, ok := kindByResource[gvr.Group+"/"+gvr.Resource]
	if !ok {
		return nil, fmt.Errorf("resource %s is not supported", gvr.String())
	}
	return k, nil
}
