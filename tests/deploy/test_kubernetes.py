"""deploy/kubernetes/ validates against the Kubernetes schemas (kubernetes-validate, offline) and
keeps what the app needs: probes on Streamlit's health path, ClientIP and cookie affinity."""
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
