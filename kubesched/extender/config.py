"""An extender's configuration, typed: the ``extenders:`` entries of KubeSchedulerConfiguration v1.

The loader checks their shape and validation checks weights, managed resources and the single
binder; this module turns the checked dict into the values the extender runs with, with
kube-scheduler's defaults (a 5s HTTP timeout, HTTPS without a CA meaning an unverified server).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched.config.decode import as_duration

#: kube-scheduler's DefaultExtenderTimeout.
DEFAULT_TIMEOUT_SECONDS = 5.0
#: The scheme of an extender that is a Python callable in this process (``python:module:function``).
PYTHON_SCHEME = "python:"


@dataclass(frozen=True, slots=True)
class TLSConfig:
    insecure: bool = False
    server_name: str = ""
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = ""
    cert_data: str = ""
    key_data: str = ""
    ca_data: str = ""


@dataclass(frozen=True, slots=True)
class ManagedResource:
    name: str
    ignored_by_scheduler: bool = False


@dataclass(frozen=True, slots=True)
class ExtenderConfig:
    url_prefix: str
    filter_verb: str = ""
    prioritize_verb: str = ""
    preempt_verb: str = ""
    bind_verb: str = ""
    weight: int = 0
    node_cache_capable: bool = False
    managed_resources: tuple[ManagedResource, ...] = ()
    ignorable: bool = False
    http_timeout: float = DEFAULT_TIMEOUT_SECONDS
    enable_https: bool = False
    tls: TLSConfig | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def in_process(self) -> bool:
        return self.url_prefix.startswith(PYTHON_SCHEME)

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], path: str = "extenders") -> ExtenderConfig:
        timeout = DEFAULT_TIMEOUT_SECONDS
        if raw.get("httpTimeout"):
            timeout = as_duration(raw["httpTimeout"], f"{path}.httpTimeout").total_seconds() or timeout
        tls_raw = raw.get("tlsConfig")
        tls = None
        if isinstance(tls_raw, Mapping):
            tls = TLSConfig(
                insecure=bool(tls_raw.get("insecure", False)),
                server_name=str(tls_raw.get("serverName") or ""),
                cert_file=str(tls_raw.get("certFile") or ""),
                key_file=str(tls_raw.get("keyFile") or ""),
                ca_file=str(tls_raw.get("caFile") or ""),
                cert_data=_data(tls_raw.get("certData")),
                key_data=_data(tls_raw.get("keyData")),
                ca_data=_data(tls_raw.get("caData")),
            )
        managed = tuple(
            ManagedResource(str(r.get("name") or ""), bool(r.get("ignoredByScheduler", False)))
            for r in raw.get("managedResources") or ()
        )
        return cls(
            url_prefix=str(raw.get("urlPrefix") or ""),
            filter_verb=str(raw.get("filterVerb") or ""),
            prioritize_verb=str(raw.get("prioritizeVerb") or ""),
            preempt_verb=str(raw.get("preemptVerb") or ""),
            bind_verb=str(raw.get("bindVerb") or ""),
            weight=int(raw.get("weight") or 0),
            node_cache_capable=bool(raw.get("nodeCacheCapable", False)),
            managed_resources=managed,
            ignorable=bool(raw.get("ignorable", False)),
            http_timeout=timeout,
            enable_https=bool(raw.get("enableHTTPS", False)),
            tls=tls,
        )


def _data(value: Any) -> str:
    """certData / keyData / caData: PEM bytes, which YAML/JSON carry base64-encoded (as []byte is)."""
    if not value:
        return ""
    import base64
    import binascii

    text = str(value)
    try:
        decoded = base64.b64decode(text, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return text  # already PEM text
    return decoded if "-----BEGIN" in decoded else text
