"""Shared test wiring: the real control plane's marker and session fixture (see testing/controlplane)."""

pytest_plugins = ["testing.controlplane.pytest_plugin"]
