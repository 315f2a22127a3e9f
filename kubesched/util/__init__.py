"""Ports of Go library behaviour that kube-scheduler's decisions depend on."""
