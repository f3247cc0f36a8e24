"""deploy/kubernetes/ validates against the Kubernetes schemas (kubernetes-validate, offline) and
keeps what the app needs: probes on Streamlit's health path, ClientIP and cookie affinity."""
import json
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
MANIFESTS = sorted((ROOT / "deploy" / "kubernetes").glob("*.yaml"))


def documents() -> dict[str, dict]:
    return {doc["kind"]: doc for path in MANIFESTS for doc in yaml.safe_load_all(path.read_text()) if doc}


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
def test_each_manifest_validates_against_the_kubernetes_schemas(path):
    version = kubernetes_validate.latest_version()
    for doc in yaml.safe_load_all(path.read_text()):
        kubernetes_validate.validate(doc, version, strict=True)


def test_a_broken_manifest_is_refused():  # the validator is really checking
    broken = dict(documents()["Service"], spec={"sessionAffinity": "Sticky", "ports": "80"})
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, kubernetes_validate.latest_version(), strict=True)


def test_probes_ask_streamlit_health_and_the_image_user_runs_it():
    pod = documents()["Deployment"]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"]["path"] == "/_stcore/health"
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert container["resources"]["requests"]["memory"] and container["resources"]["limits"]["memory"]


def test_a_browser_stays_on_its_replica_and_websockets_stay_open():
    assert documents()["Service"]["spec"]["sessionAffinity"] == "ClientIP"
    notes = documents()["Ingress"]["metadata"]["annotations"]
    assert notes["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    assert int(notes["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 3600


UNITS = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "K": 10**3, "M": 10**6, "G": 10**9, "": 1}


def mib(quantity: str) -> float:
    """A Kubernetes memory quantity ('1500Mi', '2Gi', '1.6G') in MiB."""
    number = quantity.rstrip("KMGi")
    return float(number) * UNITS[quantity[len(number):]] / 2**20


def test_mib_reads_kubernetes_quantities():
    assert mib("1536Mi") == 1536 and mib("2Gi") == 2048 and round(mib("1G"), 1) == 953.7


def test_the_memory_request_holds_the_measured_class():
    """The request is at least the server's RSS with 60 sessions connected (a replica's class, docs/container.md),
    as measured (deploy/kubernetes/measured_rss.json, written from bench/load_protocol.py's run); the limit at
    least its peak with 60."""
    measured = json.loads((ROOT / "deploy" / "kubernetes" / "measured_rss.json").read_text())
    resources = documents()["Deployment"]["spec"]["template"]["spec"]["containers"][0]["resources"]
    assert mib(resources["requests"]["memory"]) >= measured["rss_connected_mb"]["60"]
    assert mib(resources["limits"]["memory"]) >= measured["rss_peak_mb"]["60"]
