"""Differential testing of kubesched against upstream kube-scheduler on the real control plane.

:mod:`generator` turns a seed into a small cluster scenario; :mod:`upstream` plays it on etcd +
kube-apiserver with kube-scheduler (the oracle) one pending pod at a time, recording the state each
decision was made on; :mod:`replay` asks kubesched to decide on exactly that state; :mod:`compare`
judges the two verdicts and names the known version differences that explain a mismatch. The tests
(tests/differential) and ``python -m benchmarks.differential`` both drive :mod:`harness`.
"""
