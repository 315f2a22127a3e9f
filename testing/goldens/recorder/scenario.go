package main

import (
	"bufio"
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	"sigs.k8s.io/yaml"
)

// startTime is the creation time of the first document; document i is created i seconds later.
var startTime = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// document is one object of scenario.yaml with its 0-based index (List items count one each).
type document struct {
	index int
	obj   runtime.Object
	where string
}

func (d document) pending() bool {
	pod, ok := d.obj.(*v1.Pod)
	return ok && pod.Spec.NodeName == ""
}

// loadDocuments decodes scenario.yaml strictly (an unknown field is an error naming the document) and
// gives each object the corpus metadata: creationTimestamp start+i seconds and UID ...-8000-<i+1>,
// unless the manifest sets them.
func loadDocuments(path string) ([]document, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	codec := json.NewSerializerWithOptions(json.DefaultMetaFactory, legacyscheme.Scheme, legacyscheme.Scheme,
		json.SerializerOptions{Yaml: true, Strict: true})
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs []document
	for n := 1; ; n++ {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, n, err)
		}
		if isBlank(raw) {
			n--
			continue
		}
		where := fmt.Sprintf("%s: document %d", path, n)
		objs, err := decodeDocument(codec, raw, where)
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			docs = append(docs, document{index: len(docs), obj: obj, where: where})
		}
	}
	for _, d := range docs {
		m, err := metaOf(d.obj)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.where, err)
		}
		if m.GetCreationTimestamp().Time.IsZero() {
			m.SetCreationTimestamp(metav1.NewTime(startTime.Add(time.Duration(d.index) * time.Second)))
		}
		if m.GetUID() == "" {
			m.SetUID(docUID(d.index))
		}
	}
	return docs, nil
}

func isBlank(raw []byte) bool {
	for _, line := range strings.Split(string(raw), "\n") {
		t := strings.TrimSpace(line)
		if t != "" && !strings.HasPrefix(t, "#") && t != "---" {
			return false
		}
	}
	return true
}

func decodeDocument(codec runtime.Decoder, raw []byte, where string) ([]runtime.Object, error) {
	var head struct {
		Kind  string               `json:"kind"`
		Items []stdjson.RawMessage `json:"items"`
	}
	if err := yaml.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if head.Kind == "List" {
		var out []runtime.Object
		for i, item := range head.Items {
			obj, _, err := codec.Decode(item, nil, nil)
			if err != nil {
				return nil, fmt.Errorf("%s: items[%d]: %w", where, i, err)
			}
			out = append(out, obj)
		}
		return out, nil
	}
	obj, _, err := codec.Decode(raw, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if _, err := kindOf(obj); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return []runtime.Object{obj}, nil
}

// schedulerConfig reads config.yaml (or the v1 defaults) through the scheduler's own scheme:
// conversion, v1 defaulting and validation as kube-scheduler does. percentageOfNodesToScore is 100
// unless the file sets it (corpus rule).
func schedulerConfig(dir string) (*config.KubeSchedulerConfiguration, bool, error) {
	path := filepath.Join(dir, "config.yaml")
	data, err := os.ReadFile(path)
	fromFile := err == nil
	if errors.Is(err, os.ErrNotExist) {
		data = []byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
		path = "default configuration"
	} else if err != nil {
		return nil, false, err
	}
	obj, _, err := schedscheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	cfg, ok := obj.(*config.KubeSchedulerConfiguration)
	if !ok {
		return nil, false, fmt.Errorf("%s: not a KubeSchedulerConfiguration", path)
	}
	var raw map[string]interface{}
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	if _, set := raw["percentageOfNodesToScore"]; !set {
		hundred := int32(100)
		cfg.PercentageOfNodesToScore = &hundred
	}
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, fromFile, nil
}

func metaOf(obj runtime.Object) (metav1.Object, error) { return meta.Accessor(obj) }

// docUID is the UID of document i (the corpus numbering).
func docUID(i int) types.UID { return types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", i+1)) }
