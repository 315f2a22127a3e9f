"""The cluster protocol over a live API server (``kubesched run``)."""

from kubesched.cluster.kube.cluster import InformerWatch, KubeCluster
from kubesched.cluster.kube.connection import ConnectionOptions, RestClient, load_client_configuration
from kubesched.cluster.kube.events import EventRecorder

__all__ = ["ConnectionOptions", "EventRecorder", "InformerWatch", "KubeCluster", "RestClient",
           "load_client_configuration"]
