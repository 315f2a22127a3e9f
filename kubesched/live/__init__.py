"""A real API server: the REST client, informers, the event recorder and leader election, behind the
cluster protocol (``kubesched run``, ``kubesched snapshot``)."""
