"""A throwaway control plane for tests and benchmarks: upstream etcd and kube-apiserver on loopback.

Independent of kubesched (it only starts processes and writes files), so the tests, the live benchmark
and a developer's shell can all use it::

    plane = ControlPlane.start()          # builds the binaries first when the cache is cold
    plane.admin_kubeconfig                # user "admin", group system:masters
    plane.scheduler_kubeconfig            # user system:kube-scheduler: only its bootstrap ClusterRoles
    plane.kubectl("get", "nodes")
    plane.restart_apiserver()             # same etcd, same port, same credentials
    plane.restart_etcd()                  # same data, same ports; waits until the API server is ready again
    plane.stop()

    audited = ControlPlane.start(audit_policy=policy)  # kube-apiserver's audit log, for who-did-what
    audited.audit_log                     # JSON lines (testing.controlplane.audit reads them)
    audited.service_account_kubeconfig("kube-system", "kubesched")  # a TokenRequest token for an SA

A plane nobody stopped is stopped when the interpreter exits; the pytest plugin also turns SIGTERM into
an interruption, so a terminated test run tears its plane down too.

The API server serves a certificate signed by a CA of the plane's own (``plane.ca_file``), which the
kubeconfigs name, so clients verify it as they would in a real cluster. Authentication is by static
bearer tokens (``--token-auth-file``), authorization is RBAC: the API
server's bootstrap policy creates the system:kube-scheduler and system:volume-scheduler ClusterRoles
and binds them to the user system:kube-scheduler, exactly as in a kubeadm cluster. There is no
controller manager and no kubelet, so the admission plugins that assume them (ServiceAccount, which
wants token controllers; TaintNodesByCondition, which would taint every new node not-ready) are off.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BUILD_SCRIPT = HERE / "build.sh"
SCHEDULER_USER = "system:kube-scheduler"


class ControlPlaneError(RuntimeError):
    """The control plane could not be built or started; the message says which step and why."""


def go_available() -> bool:
    return shutil.which("go") is not None


def _print_progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def build_binaries(progress: Callable[[str], None] = _print_progress) -> Path:
    """Run build.sh (a no-op when every binary is cached) and return the folder holding them.

    A cold build takes minutes, so build.sh's progress lines (``controlplane: ...``) are handed to
    ``progress`` as they come. The build runs in a process group of its own, ended when this call is
    interrupted, so no compiler is left running after a Ctrl-C or SIGTERM.
    """
    if not go_available():
        raise ControlPlaneError("Go is not installed: the reference control plane cannot be built")
    proc = subprocess.Popen(
        ["bash", str(BUILD_SCRIPT)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    tail: deque[str] = deque(maxlen=40)
    try:
        assert proc.stdout is not None and proc.stderr is not None
        for line in proc.stderr:
            tail.append(line.rstrip("\n"))
            if line.startswith("controlplane:"):
                progress(line.rstrip("\n"))
        out = proc.stdout.read()
        proc.wait()
    except BaseException:
        _terminate(proc)
        raise
    finally:
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
    if proc.returncode != 0 or not out.strip():
        raise ControlPlaneError(f"{BUILD_SCRIPT} failed ({proc.returncode}):\n" + "\n".join(tail))
    return Path(out.strip().splitlines()[-1])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _write_service_account_keys(folder: Path) -> tuple[Path, Path]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = folder / "sa.key"
    public = folder / "sa.pub"
    private.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    public.write_bytes(
        key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return private, public


def write_kubeconfig(path: Path, server: str, user: str, token: str, ca_file: Path | None = None) -> Path:
    """A kubeconfig for ``user`` authenticating with ``token``; the server's certificate is verified
    against ``ca_file`` (not verified at all without one)."""
    cluster: dict[str, object] = {"server": server}
    if ca_file is not None:
        cluster["certificate-authority"] = str(ca_file)
    else:
        cluster["insecure-skip-tls-verify"] = True
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "controlplane", "cluster": cluster}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": user, "context": {"cluster": "controlplane", "user": user}}],
        "current-context": user,
    }
    path.write_text(json.dumps(config, indent=2))
    return path


def self_signed_ca(common_name: str) -> tuple[Any, Any]:
    """A CA's private key and self-signed certificate (cryptography objects), valid for a week."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=7))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )
    return key, cert


def _write_serving_certificate(ca_file: Path, cert_file: Path, key_file: Path) -> None:
    """A CA, and a serving certificate it signs for the loopback address and the in-cluster names.
    Made once per plane, so a restarted API server keeps them."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    ca_key, ca = self_signed_ca("controlplane-ca")
    now = datetime.datetime.now(datetime.UTC)
    key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.DNSName(n) for n in ("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc")]
    addresses = [x509.IPAddress(ipaddress.ip_address(a)) for a in ("127.0.0.1", "10.0.0.1")]
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=7))
        .add_extension(x509.SubjectAlternativeName([*names, *addresses]), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    ca_file.parent.mkdir(parents=True, exist_ok=True)
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )


# Planes started and not yet stopped, stopped at interpreter exit if their owner never did.
_RUNNING: dict[int, ControlPlane] = {}


def stop_running_planes() -> None:
    for plane in list(_RUNNING.values()):
        plane.stop()


atexit.register(stop_running_planes)


@dataclass
class ControlPlane:
    """A running etcd + kube-apiserver pair; see the module docstring."""

    bin_dir: Path
    work_dir: Path
    etcd_port: int
    apiserver_port: int
    admin_token: str
    scheduler_token: str
    log_dir: Path
    _etcd: subprocess.Popen | None = None
    _apiserver: subprocess.Popen | None = None
    _own_work_dir: bool = False
    extra_tokens: dict[str, str] = field(default_factory=dict)
    #: An audit.k8s.io/v1 Policy (as a dict): kube-apiserver then logs what it matches to :attr:`audit_log`.
    audit_policy: dict[str, Any] | None = None
    #: etcd's peer port, chosen at its first start and kept, so a restarted etcd finds itself in its data.
    etcd_peer_port: int = 0

    # -- lifecycle ------------------------------------------------------------------------------------
    @classmethod
    def start(
        cls,
        work_dir: Path | None = None,
        bin_dir: Path | None = None,
        timeout: float = 120.0,
        audit_policy: dict[str, Any] | None = None,
    ) -> ControlPlane:
        bin_dir = bin_dir or build_binaries()
        own = work_dir is None
        work = Path(tempfile.mkdtemp(prefix="kubesched-controlplane-")) if work_dir is None else work_dir
        work.mkdir(parents=True, exist_ok=True)
        plane = cls(
            bin_dir=bin_dir,
            work_dir=work,
            etcd_port=free_port(),
            apiserver_port=free_port(),
            admin_token=secrets.token_hex(16),
            scheduler_token=secrets.token_hex(16),
            log_dir=work / "logs",
            _own_work_dir=own,
            audit_policy=audit_policy,
        )
        _RUNNING[id(plane)] = plane
        try:
            plane.log_dir.mkdir(exist_ok=True)
            plane._write_credentials()
            plane._start_etcd()
            plane._start_apiserver()
            plane.wait_ready(timeout)
        except BaseException:
            plane.stop()
            raise
        return plane

    def stop(self) -> None:
        """Stop both processes and remove the work folder (its tokens and keys) when the plane made it.

        Every step runs even when one is interrupted (a second Ctrl-C or SIGTERM during teardown); the
        interruption is raised again once nothing is left behind."""
        interrupted: BaseException | None = None
        for step in (self.stop_apiserver, self._stop_etcd, self._remove_work_dir):
            try:
                step()
            except BaseException as err:
                interrupted = interrupted or err
        _RUNNING.pop(id(self), None)
        if interrupted is not None:
            raise interrupted

    def _stop_etcd(self) -> None:
        _terminate(self._etcd)
        self._etcd = None

    def _remove_work_dir(self) -> None:
        if self._own_work_dir and not os.environ.get("KUBESCHED_KEEP_CONTROLPLANE"):
            shutil.rmtree(self.work_dir, ignore_errors=True)

    def stop_apiserver(self) -> None:
        _terminate(self._apiserver)
        self._apiserver = None

    def start_apiserver(self, timeout: float = 120.0) -> None:
        self._start_apiserver()
        self.wait_ready(timeout)

    def restart_apiserver(self, timeout: float = 120.0) -> None:
        """Stop kube-apiserver and start it again on the same port over the same etcd."""
        self.stop_apiserver()
        self.start_apiserver(timeout)

    def stop_etcd(self) -> None:
        """Stop etcd (its data stays): kube-apiserver answers errors until it is back."""
        self._stop_etcd()

    def start_etcd(self, timeout: float = 120.0) -> None:
        """Start etcd again over its data and ports, and wait until kube-apiserver is ready again."""
        self._start_etcd()
        self._wait_etcd_healthy(timeout)
        self.wait_ready(timeout)

    def restart_etcd(self, timeout: float = 120.0) -> None:
        """Stop etcd and start it again with its data kept; kube-apiserver keeps running throughout."""
        self.stop_etcd()
        self.start_etcd(timeout)

    def __enter__(self) -> ControlPlane:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- where to reach it ----------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.apiserver_port}"

    @property
    def pids(self) -> list[int]:
        """The process ids of etcd and kube-apiserver while they run."""
        return [proc.pid for proc in (self._etcd, self._apiserver) if proc is not None and proc.poll() is None]

    @property
    def ca_file(self) -> Path:
        """The CA that signed the API server's serving certificate."""
        return self.work_dir / "certs" / "ca.crt"

    @property
    def serving_cert_file(self) -> Path:
        return self.work_dir / "certs" / "apiserver.crt"

    @property
    def serving_key_file(self) -> Path:
        return self.work_dir / "certs" / "apiserver.key"

    @property
    def admin_kubeconfig(self) -> Path:
        return self.work_dir / "admin.kubeconfig"

    @property
    def scheduler_kubeconfig(self) -> Path:
        return self.work_dir / "scheduler.kubeconfig"

    @property
    def audit_log(self) -> Path:
        """kube-apiserver's audit log (JSON lines; written only when the plane has an audit policy)."""
        return self.log_dir / "audit.log"

    def service_account_kubeconfig(self, namespace: str, name: str, *, seconds: int = 3600) -> Path:
        """A kubeconfig for the ServiceAccount ``namespace/name`` (which must exist) with a token from the
        TokenRequest API, as a pod of that account would get one: the API server's user is then
        ``system:serviceaccount:<namespace>:<name>`` with the groups of service accounts."""
        token = self.kubectl("create", "token", name, "-n", namespace, f"--duration={seconds}s").stdout.strip()
        user = f"system:serviceaccount:{namespace}:{name}"
        return write_kubeconfig(
            self.work_dir / f"sa-{namespace}-{name}.kubeconfig", self.url, user, token, self.ca_file
        )

    def kubeconfig_for(self, user: str, groups: tuple[str, ...] = ()) -> Path:
        """A kubeconfig for another static user; it must have been known when the API server started
        (the token file is read once), so only users created with :meth:`start` or restarts after."""
        token = self.extra_tokens.get(user)
        if token is None:
            raise ControlPlaneError(f"user {user!r} has no token in this control plane")
        return write_kubeconfig(
            self.work_dir / f"{user.replace(':', '_')}.kubeconfig", self.url, user, token, self.ca_file
        )

    def kubectl(
        self, *args: str, kubeconfig: Path | None = None, input: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        cmd = [str(self.bin_dir / "kubectl"), "--kubeconfig", str(kubeconfig or self.admin_kubeconfig), *args]
        proc = subprocess.run(cmd, input=input, capture_output=True, text=True, check=False, timeout=120)
        if check and proc.returncode != 0:
            raise ControlPlaneError(f"kubectl {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
        return proc

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Poll /readyz with the admin token until it answers 200 (or the API server exits)."""
        context = ssl.create_default_context(cafile=str(self.ca_file))
        deadline = time.monotonic() + timeout
        last = "no answer yet"
        while time.monotonic() < deadline:
            if self._apiserver is not None and self._apiserver.poll() is not None:
                raise ControlPlaneError(
                    f"kube-apiserver exited ({self._apiserver.returncode}); "
                    f"log tail:\n{_tail(self.log_dir / 'kube-apiserver.log')}"
                )
            request = urllib.request.Request(
                f"{self.url}/readyz", headers={"Authorization": f"Bearer {self.admin_token}"}
            )
            try:
                with urllib.request.urlopen(request, context=context, timeout=5) as resp:
                    if resp.status == 200:
                        return
            except urllib.error.HTTPError as err:
                last = f"HTTP {err.code}"
            except OSError as err:
                last = str(err)
            time.sleep(0.25)
        raise ControlPlaneError(
            f"kube-apiserver not ready after {timeout:.0f}s ({last}); log tail:\n"
            f"{_tail(self.log_dir / 'kube-apiserver.log')}"
        )

    def _wait_etcd_healthy(self, timeout: float) -> None:
        """Poll etcd's /health until it says so (kube-apiserver's /readyz may still hold an old verdict)."""
        deadline = time.monotonic() + timeout
        last = "no answer yet"
        while time.monotonic() < deadline:
            if self._etcd is not None and self._etcd.poll() is not None:
                raise ControlPlaneError(
                    f"etcd exited ({self._etcd.returncode}); log tail:\n{_tail(self.log_dir / 'etcd.log')}"
                )
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.etcd_port}/health", timeout=5) as resp:
                    if json.loads(resp.read()).get("health") == "true":
                        return
            except (OSError, ValueError) as err:
                last = str(err)
            time.sleep(0.25)
        raise ControlPlaneError(
            f"etcd not healthy after {timeout:.0f}s ({last}); log tail:\n{_tail(self.log_dir / 'etcd.log')}"
        )

    # -- internals ------------------------------------------------------------------------------------
    def _write_credentials(self) -> None:
        self.extra_tokens.setdefault("system:kube-scheduler", self.scheduler_token)
        lines = [
            f'{self.admin_token},admin,admin-uid,"system:masters"',
            f"{self.scheduler_token},{SCHEDULER_USER},{SCHEDULER_USER}",
        ]
        for user in ("kubesched-test-user",):
            token = self.extra_tokens.setdefault(user, secrets.token_hex(16))
            lines.append(f"{token},{user},{user}")
        (self.work_dir / "tokens.csv").write_text("\n".join(lines) + "\n")
        _write_service_account_keys(self.work_dir)
        _write_serving_certificate(self.ca_file, self.serving_cert_file, self.serving_key_file)
        write_kubeconfig(self.admin_kubeconfig, self.url, "admin", self.admin_token, self.ca_file)
        write_kubeconfig(self.scheduler_kubeconfig, self.url, SCHEDULER_USER, self.scheduler_token, self.ca_file)

    def _start_etcd(self) -> None:
        peer = self.etcd_peer_port = self.etcd_peer_port or free_port()
        client = f"http://127.0.0.1:{self.etcd_port}"
        cmd = [
            str(self.bin_dir / "etcd"),
            "--name",
            "default",
            "--data-dir",
            str(self.work_dir / "etcd"),
            "--listen-client-urls",
            client,
            "--advertise-client-urls",
            client,
            "--listen-peer-urls",
            f"http://127.0.0.1:{peer}",
            "--initial-advertise-peer-urls",
            f"http://127.0.0.1:{peer}",
            "--initial-cluster",
            f"default=http://127.0.0.1:{peer}",
            "--unsafe-no-fsync",
            "--log-level",
            "warn",
        ]
        self._etcd = _spawn(cmd, self.log_dir / "etcd.log", append=True)

    def _start_apiserver(self) -> None:
        w = self.work_dir
        cmd = [
            str(self.bin_dir / "kube-apiserver"),
            "--etcd-servers",
            f"http://127.0.0.1:{self.etcd_port}",
            "--bind-address",
            "127.0.0.1",
            "--advertise-address",
            "127.0.0.1",
            "--secure-port",
            str(self.apiserver_port),
            "--tls-cert-file",
            str(self.serving_cert_file),
            "--tls-private-key-file",
            str(self.serving_key_file),
            "--authorization-mode",
            "RBAC",
            "--token-auth-file",
            str(w / "tokens.csv"),
            "--anonymous-auth=false",
            "--disable-admission-plugins",
            "ServiceAccount,TaintNodesByCondition",
            "--service-account-issuer",
            "https://kubernetes.default.svc.cluster.local",
            "--service-account-key-file",
            str(w / "sa.pub"),
            "--service-account-signing-key-file",
            str(w / "sa.key"),
            "--service-cluster-ip-range",
            "10.0.0.0/24",
            "--max-requests-inflight",
            "3000",
            "--max-mutating-requests-inflight",
            "1000",
            "--enable-priority-and-fairness=false",
            "--profiling=false",
            "--v",
            "1",
        ]
        if self.audit_policy is not None:
            policy = w / "audit-policy.json"
            policy.write_text(json.dumps(self.audit_policy))
            # Blocking mode (the log backend's default): an event is written before its request returns.
            cmd += [
                "--audit-policy-file",
                str(policy),
                "--audit-log-path",
                str(self.audit_log),
                "--audit-log-format",
                "json",
                "--audit-log-mode",
                "blocking",
            ]
        self._apiserver = _spawn(cmd, self.log_dir / "kube-apiserver.log", append=True)


def _spawn(cmd: list[str], log: Path, *, append: bool = False) -> subprocess.Popen:
    with open(log, "a" if append else "w") as out:
        return subprocess.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )


def _terminate(proc: subprocess.Popen | None) -> None:
    """SIGTERM the process's group (it leads one: see :func:`_spawn`), SIGKILL it when it lingers or the
    wait is interrupted, and reap it."""
    if proc is None or proc.poll() is not None:
        return
    _signal_group(proc, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        pass
    except BaseException:
        _kill(proc)
        raise
    _kill(proc)


def _kill(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        _signal_group(proc, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)


def _signal_group(proc: subprocess.Popen, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


if __name__ == "__main__":  # pragma: no cover - a developer's shell: start one and wait
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stopped by `kill` as by Ctrl-C
    plane = ControlPlane.start()
    print(f"export KUBECONFIG={plane.admin_kubeconfig}  # scheduler: {plane.scheduler_kubeconfig}", flush=True)
    try:
        signal.pause()
    finally:
        plane.stop()
