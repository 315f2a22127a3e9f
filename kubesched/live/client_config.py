"""Where the connection settings come from: kubectl's search, done once for every command.

In order, the first that gives settings wins:

1. an explicit kubeconfig (``--kubeconfig``, or clientConnection.kubeconfig for ``run``): that file only;
2. ``$KUBECONFIG``: a list of paths (``:``-separated, ``;`` on Windows); missing entries are skipped and
   the files that exist are merged as client-go merges them (the first file to name a cluster, user or
   context keeps it, and the first ``current-context`` wins). When ``$KUBECONFIG`` is set, ``~/.kube/config``
   is not read unless the list names it;
3. ``~/.kube/config``;
4. in-cluster: the service account's token and CA under /var/run/secrets/kubernetes.io/serviceaccount
   and ``KUBERNETES_SERVICE_HOST``/``KUBERNETES_SERVICE_PORT``, as a pod sees them.

``--master`` replaces the server of the settings found; given alone (no kubeconfig flag), it is the whole
configuration, without credentials, as kube-scheduler's ``--master`` is. Reading the files, contexts,
tokens, client certificates and exec plugins is the official client's work; only the search and the
merge order are decided here.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

import yaml

log = logging.getLogger(__name__)

KUBECONFIG_ENV = "KUBECONFIG"
DEFAULT_KUBECONFIG = os.path.join("~", ".kube", "config")
SERVICE_HOST_ENV = "KUBERNETES_SERVICE_HOST"
SERVICE_PORT_ENV = "KUBERNETES_SERVICE_PORT"


class ClientConfigError(Exception):
    """No usable connection settings (nothing found, a broken kubeconfig, incomplete in-cluster files)."""


def kubeconfig_paths(explicit: str = "", environ: Mapping[str, str] | None = None) -> list[str]:
    """The kubeconfig files to merge, in precedence order; empty when there is none to read."""
    if explicit:
        return [explicit]
    env = os.environ if environ is None else environ
    listed = env.get(KUBECONFIG_ENV, "")
    candidates = listed.split(os.pathsep) if listed else [DEFAULT_KUBECONFIG]
    paths: list[str] = []
    for entry in candidates:
        path = os.path.expanduser(entry) if entry else ""
        if path and path not in paths and os.path.isfile(path):
            paths.append(path)
    return paths


def load_client_configuration(kubeconfig: str = "", master: str = "", context: str | None = None) -> Any:
    """A ``kubernetes.client.Configuration`` found as the module docstring says."""
    from kubernetes import client

    cfg = client.Configuration()
    if master and not kubeconfig:
        # client-go's BuildConfigFromFlags with a master URL and no kubeconfig: the address, no credentials.
        cfg.host = master.rstrip("/")
        log.info("connecting to %s without credentials (--master without --kubeconfig)", cfg.host)
        return cfg
    paths = kubeconfig_paths(kubeconfig)
    merged = _merge(paths) if paths else None
    if merged is not None:
        _load_kubeconfig(merged, paths, context, cfg)
        log.info("connection settings from %s", os.pathsep.join(paths))
    elif kubeconfig:
        raise ClientConfigError(f"{kubeconfig}: invalid kubeconfig: the file is empty")
    elif context:
        raise ClientConfigError(f"--context {context}: {_nothing_found()}")
    else:
        _load_in_cluster(cfg)
        log.info("connection settings from the in-cluster service account")
    if master:
        cfg.host = master.rstrip("/")
    return cfg


def _merge(paths: list[str]) -> Any:
    """The official client's merge of ``paths`` with client-go's current-context rule; None when every
    file is empty, so that the search goes on (client-go reads an empty file as an empty config)."""
    from kubernetes.config.config_exception import ConfigException
    from kubernetes.config.kube_config import KubeConfigMerger

    merger = KubeConfigMerger("")
    current = ""
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                loaded = yaml.safe_load(f)
        except OSError as err:
            raise ClientConfigError(f"{path}: {err.strerror or err}") from err
        except (yaml.YAMLError, UnicodeDecodeError) as err:
            raise ClientConfigError(f"{path}: invalid kubeconfig: {' '.join(str(err).split())}") from err
        if loaded is None:
            continue
        if not isinstance(loaded, dict):
            raise ClientConfigError(f"{path}: invalid kubeconfig: not a mapping")
        try:
            merger.load_config(path)
        except ConfigException as err:
            raise ClientConfigError(f"{path}: invalid kubeconfig: {err}") from err
        current = current or str(loaded.get("current-context") or "")
    if merger.config is None:
        return None
    if current:  # the official client lets the last file's current-context win; client-go, the first file's
        merger.config.value["current-context"] = current
    return merger.config


def _load_kubeconfig(merged: Any, paths: list[str], context: str | None, cfg: Any) -> None:
    from kubernetes.config.config_exception import ConfigException
    from kubernetes.config.kube_config import KubeConfigLoader

    where = os.pathsep.join(paths)
    try:
        # Relative paths in each file are read from that file's folder (config_base_path None).
        KubeConfigLoader(config_dict=merged, active_context=context, config_base_path=None).load_and_set(cfg)
    except ConfigException as err:
        raise ClientConfigError(f"{where}: invalid kubeconfig: {err}") from err
    except (KeyError, TypeError, ValueError, OSError) as err:  # a field of the wrong shape
        raise ClientConfigError(f"{where}: invalid kubeconfig: {type(err).__name__}: {err}") from err


def _load_in_cluster(cfg: Any) -> None:
    from kubernetes.config import ConfigException, load_incluster_config

    if not (os.environ.get(SERVICE_HOST_ENV) and os.environ.get(SERVICE_PORT_ENV)):
        raise ClientConfigError(_nothing_found())
    try:
        load_incluster_config(client_configuration=cfg)
    except ConfigException as err:
        raise ClientConfigError(f"in-cluster configuration: {err}") from err


def _nothing_found() -> str:
    listed = os.environ.get(KUBECONFIG_ENV, "")
    files = f"${KUBECONFIG_ENV} ({listed}) names no existing file" if listed else f"{DEFAULT_KUBECONFIG} does not exist"
    return (
        f"no kubeconfig found: no --kubeconfig given, {files}, and not running in a cluster "
        f"({SERVICE_HOST_ENV}/{SERVICE_PORT_ENV} not set)"
    )
