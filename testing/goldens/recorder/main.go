// Command recorder records kube-scheduler v1.34.4's decisions on conformance scenarios, in-process,
// as golden files in the corpus format. It is test tooling: see ../README.md.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"k8s.io/klog/v2"
)

func main() {
	out := flag.String("out", "", "folder to write <scenario>.json into")
	verbose := flag.Int("v", -1, "klog verbosity of the scheduler (default: silent)")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: %s -out DIR PATH...\n  PATH: a scenario folder (holding scenario.yaml) or a folder of scenario folders\n", os.Args[0])
		flag.PrintDefaults()
	}
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	quiet(*verbose)
	scenarios, err := findScenarios(flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	names := make([]string, 0, len(scenarios))
	for name := range scenarios {
		names = append(names, name)
	}
	sort.Strings(names)
	failed := 0
	for _, name := range names {
		began := time.Now()
		g, runs, err := recordScenario(name, scenarios[name])
		if err == nil {
			var data []byte
			if data, err = marshalGolden(g); err == nil {
				err = os.WriteFile(filepath.Join(*out, name+".json"), data, 0o644)
			}
		}
		if err != nil {
			failed++
			fmt.Fprintf(os.Stderr, "%-40s FAILED: %v\n", name, err)
			continue
		}
		note := ""
		if runs > 1 {
			note = fmt.Sprintf("  (%d runs: preemption tie)", runs)
		}
		fmt.Fprintf(os.Stderr, "%-40s %3d attempts  %6.2fs%s\n", name, len(g.Attempts), time.Since(began).Seconds(), note)
	}
	if failed > 0 {
		fmt.Fprintf(os.Stderr, "%d of %d scenarios failed\n", failed, len(names))
		os.Exit(1)
	}
}

// findScenarios maps scenario names (folder names) to folders; two folders with one name are an error.
func findScenarios(paths []string) (map[string]string, error) {
	found := map[string]string{}
	add := func(dir string) error {
		name := filepath.Base(dir)
		if prev, dup := found[name]; dup {
			return fmt.Errorf("two scenarios named %s: %s and %s", name, prev, dir)
		}
		found[name] = dir
		return nil
	}
	for _, p := range paths {
		if _, err := os.Stat(filepath.Join(p, "scenario.yaml")); err == nil {
			if err := add(p); err != nil {
				return nil, err
			}
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, err
		}
		n := 0
		for _, e := range entries {
			dir := filepath.Join(p, e.Name())
			if _, err := os.Stat(filepath.Join(dir, "scenario.yaml")); e.IsDir() && err == nil {
				if err := add(dir); err != nil {
					return nil, err
				}
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("%s: no scenario.yaml in it or in its folders", p)
		}
	}
	return found, nil
}

func quiet(v int) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	if v < 0 {
		_ = fs.Set("logtostderr", "false")
		_ = fs.Set("stderrthreshold", "FATAL")
		klog.SetOutput(io.Discard)
		return
	}
	_ = fs.Set("v", fmt.Sprint(v))
}
