"""The simulator's control plane: an in-memory API server (resourceVersions, watches, admission) and
the controllers of kube-controller-manager whose effects the scheduler sees, all started by one
:class:`~kubesched.embedded.controlplane.ControlPlane`."""
