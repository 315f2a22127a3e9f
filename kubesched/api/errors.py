"""Errors raised while reading Kubernetes objects.

Every error carries the field path (``spec.containers[0].resources.requests.cpu``) so that callers
that know more (the manifest loader knows the file and document, the scheduler knows the pod) can
prefix it and report exactly where the bad value is.
"""

from __future__ import annotations


class ObjectError(ValueError):
    """A value in a Kubernetes object that cannot be understood.

    ``path`` is the dotted field path inside the object, ``reason`` the human explanation.
    """

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}" if path else reason)

    def under(self, prefix: str) -> ObjectError:
        """The same error with ``prefix`` put in front of the path (for nested parsing)."""
        if not prefix:
            return self
        path = f"{prefix}.{self.path}" if self.path and not self.path.startswith("[") else prefix + self.path
        return ObjectError(path, self.reason)
