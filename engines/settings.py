"""Settings: which engine, where state lives, which AWS endpoint and credentials profile, which
kubeconfig per cluster. One file (`hypergov.yaml`, optional) plus `HYPERGOV_*` environment
variables; switching from the embedded endpoint to a real account is a settings change only.

Credentials never live here: a profile name or the standard AWS environment variables are
passed through to boto3 and terraform untouched.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from engines.outcomes import PermanentError
from engines.state_url import parse_state_url
from hypergov.naming import ACCOUNT_ACCESS_ROLE

EngineName = Literal["auto", "pulumi", "terraform", "provider"]
ProviderSourceName = Literal["auto", "mirror", "registry"]
_EXACT_VERSION = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?")
_BRANCH = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/-]*")
AWS_SERVICES = ("iam", "sts", "organizations", "budgets", "eks", "sagemaker", "sns", "ssoadmin", "identitystore")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AwsSettings(_Strict):
    endpoint_url: str | None = Field(default=None, description=(
        "one URL serving every AWS service (the embedded endpoint); unset for real AWS"))
    endpoints: dict[str, str] = Field(default_factory=dict, description="per-service endpoint overrides")
    profile: str | None = Field(default=None, description="AWS shared-config profile to use")
    account_access_role: str = Field(default=ACCOUNT_ACCESS_ROLE, description=(
        "role assumed in each member account that hosts clusters"))
    max_retries: Annotated[int, Field(ge=0, le=25)] = Field(default=5, description=(
        "AWS SDK retries (terraform provider and boto3); low against the embedded endpoint"))

    def endpoint_for(self, service: str) -> str | None:
        return self.endpoints.get(service) or self.endpoint_url


class TerraformSettings(_Strict):
    binary: str = "terraform"
    provider_source: ProviderSourceName = Field(default="auto", description=(
        "where terraform installs hashicorp/aws from: 'mirror' (a filesystem mirror is required), "
        "'registry' (the Terraform registry, no mirror), or 'auto' (the mirror configured or found, "
        "else the registry); the version is pinned and checked against one shared lock file"))
    plugin_mirror: Path | None = Field(default=None, description=(
        "filesystem mirror holding registry.terraform.io/hashicorp/aws; discovered when unset"))
    provider_version: str = Field(default="5.100.0", description="exact hashicorp/aws version every stack uses")
    parallelism: Annotated[int, Field(ge=1, le=32)] = Field(default=2, description="stacks planned at once")
    provider_engine_parallelism: Annotated[int, Field(ge=1, le=256)] = Field(default=32, description=(
        "stacks planned or applied at once with engine: provider (its stacks mostly wait, on AWS and in the "
        "provider's own delays such as 5 s before each budget read, where a terraform process spends CPU)"))
    lock_while_planning: bool = Field(default=True, description=(
        "plans take the state lock; `plan --private-state` plans without it (a plan writes no state)"))
    refresh_while_planning: bool = Field(default=True, description=(
        "plans read every object of the state again first (terraform's refresh); only `hypergov plan "
        "--no-refresh` turns it off for its own plans (terraform's -refresh=false: faster, drift not shown), "
        "never a settings file or variable, so every plan made to apply refreshes"))

    @field_validator("refresh_while_planning")
    @classmethod
    def _always_refresh(cls, value: bool) -> bool:
        # `plan --no-refresh` sets it on its own copy (model_copy, not validated); the reconciler's and
        # apply's plans must see drift, so no file or variable may turn it off for them.
        if not value:
            raise ValueError("is turned off only by `hypergov plan --no-refresh` (every plan made to apply refreshes)")
        return value

    @field_validator("provider_version")
    @classmethod
    def _exact_version(cls, value: str) -> str:
        # Never a range: it is the version every stack's lock file pins, and a mirror's directory name.
        if not _EXACT_VERSION.fullmatch(value):
            raise ValueError(f"{value!r} is not an exact version such as 5.100.0 (ranges are not allowed)")
        return value

    @model_validator(mode="after")
    def _registry_uses_no_mirror(self) -> TerraformSettings:
        # A configured mirror that would be silently ignored is a mistake worth stopping on.
        if self.provider_source == "registry" and self.plugin_mirror is not None:
            raise ValueError("plugin_mirror is set but provider_source is 'registry'; unset one of them")
        return self


_TOPIC_ARN = re.compile(r"arn:aws[a-z-]*:sns:(?P<region>[a-z0-9-]+):(?P<account>\d{12}):[A-Za-z0-9_-]{1,256}(\.fifo)?")
NotifyEventName = Literal["drift", "pass-failed", "tree-rejected", "audit-push"]
NOTIFY_EVENTS: tuple[NotifyEventName, ...] = ("drift", "pass-failed", "tree-rejected", "audit-push")


class NotificationSink(_Strict):
    """Where the reconciler's notifications go. A webhook URL is a secret (Slack's carries its
    token): it is read from an environment variable or a file, never written in the settings."""

    kind: Literal["slack", "webhook", "sns"] = Field(description=(
        "slack: a Slack-compatible incoming webhook ({\"text\": ...}); webhook: a generic JSON POST; "
        "sns: an SNS topic (Publish)"))
    url_env: str | None = Field(default=None, description="slack/webhook: the environment variable holding the URL")
    url_file: Path | None = Field(default=None, description="slack/webhook: a file holding the URL (e.g. a "
                                  "mounted Kubernetes Secret)")
    topic_arn: str | None = Field(default=None, description="sns: the topic's ARN")

    @model_validator(mode="after")
    def _target(self) -> NotificationSink:
        if self.kind == "sns":
            if self.topic_arn is None or not _TOPIC_ARN.fullmatch(self.topic_arn):
                raise ValueError("an sns sink needs topic_arn: arn:aws:sns:<region>:<account id>:<topic name>")
            if self.url_env or self.url_file:
                raise ValueError("an sns sink takes topic_arn, not url_env / url_file")
        elif (self.url_env is None) == (self.url_file is None) or self.topic_arn:
            raise ValueError(f"a {self.kind} sink takes exactly one of url_env and url_file (its URL is a secret)")
        return self

    def label(self) -> str:
        """How logs and metrics name the sink: never its URL."""
        if self.kind == "sns":
            return f"sns:{self.topic_arn}"
        return f"{self.kind}:{'$' + self.url_env if self.url_env else self.url_file}"


class NotificationSettings(_Strict):
    sinks: list[NotificationSink] = Field(default_factory=list, description="where notifications go (none: off)")
    events: list[NotifyEventName] = Field(default_factory=lambda: list(NOTIFY_EVENTS), description=(
        "which events are sent: drift (new items only), pass-failed, tree-rejected, audit-push"))
    max_per_hour: Annotated[int, Field(ge=1, le=1000)] = Field(default=30, description=(
        "messages per sink in any hour; more are held back and counted in the next message"))
    attempts: Annotated[int, Field(ge=1, le=10)] = Field(default=3, description=(
        "tries per message on a temporary failure (5xx, 429, a connection error), with the reconciler's backoff"))


class Settings(_Strict):
    engine: EngineName = "auto"
    config_dir: Path = Path("config")
    state_dir: Path = Field(default=Path(".hypergov/state"), description="per-stack terraform state and plans")
    state_backend: str | None = Field(default=None, description=(
        "s3://bucket/prefix: every stack's terraform state in S3 (Terraform's S3 backend with its native "
        "lock file; the bucket in the org's home region, versioning enabled); unset: in state_dir"))
    pulumi_backend: str = Field(default="file://.hypergov/pulumi", description="Pulumi state backend URL")
    aws: AwsSettings = AwsSettings()
    terraform: TerraformSettings = TerraformSettings()
    kubeconfigs: dict[str, Path] = Field(default_factory=dict, description="cluster name -> kubeconfig file")
    audit_repo: Path | None = Field(default=None, description=(
        "Git repository that receives the audit records; default: the one holding config_dir"))
    audit_branch: str = Field(default="hypergov/audit", description=(
        "branch of audit_repo holding the audit records (never the governed branch); pushed to its remote"))
    audit_signing: Literal["ssh", "off"] = Field(default="ssh", description=(
        "ssh: every audit commit (git's gpg.format=ssh) and every published checkpoint is signed with "
        "audit_signing_key, else with a key made on first use at state_dir/audit/signing_key; off: unsigned, "
        "which `audit verify` reports (a record appended by anyone who can push then cannot be told apart)"))
    audit_signing_key: Path | None = Field(default=None, description=(
        "Ed25519 OpenSSH private key that signs the audit commits and checkpoints (e.g. the pod's secret); "
        "unset: one is made in the state directory"))
    audit_witness: list[str] = Field(default_factory=list, description=(
        "where the signed audit checkpoints are published, outside the repository (s3://bucket/prefix, or a "
        "directory); default: the state bucket with state_backend (versioned; Object Lock where enabled), "
        "else state_dir/audit/witness. More than one: each gets every checkpoint"))
    audit_alive_interval_s: int = Field(default=900, ge=60, description=(
        "the reconciler daemon publishes an 'I am alive' checkpoint this often, also when nothing changed; "
        "`audit verify` calls the checkpoints stale after three intervals without one"))
    audit_checkpoint_retention_days: int = Field(default=400, ge=1, description=(
        "S3 Object Lock retention (compliance mode) of each checkpoint, where the witness bucket has Object "
        "Lock enabled"))
    audit_allowed_signers: Path | None = Field(default=None, description=(
        "git's allowed-signers file: when set, `audit verify` requires every audit commit to be signed by one"))
    notifications: NotificationSettings = Field(default_factory=NotificationSettings, description=(
        "the reconciler daemon's notifications: drift, failed or refused passes, rejected trees, audit push"))
    require_reviewed: bool = Field(default=False, description=(
        "the reconciler refuses every stack with changes unless `hypergov plan --base` recorded the merge "
        "request's plan of the config tree it applies (looked up by the tree's Git id in the state bucket with "
        "state_backend, else in state_dir); unset: an unreviewed tree is applied and recorded as unreviewed"))

    @field_validator("state_backend")
    @classmethod
    def _state_location(cls, value: str | None) -> str | None:
        if value is not None:
            parse_state_url(value)
        return value

    @field_validator("audit_witness", mode="before")
    @classmethod
    def _witness_list(cls, value: object) -> object:
        # HYPERGOV_AUDIT_WITNESS holds them comma-separated
        return [w.strip() for w in value.split(",") if w.strip()] if isinstance(value, str) else value

    @field_validator("audit_branch")
    @classmethod
    def _branch_name(cls, value: str) -> str:
        # What `git check-ref-format --branch` refuses, checked here so the error names the setting.
        if not _BRANCH.fullmatch(value) or ".." in value or "//" in value or value.endswith((".lock", "/", ".")):
            raise ValueError(f"{value!r} is not a usable Git branch name (e.g. hypergov/audit)")
        return value

    def stacks_at_once(self, engine: str | None = None) -> int:
        """How many stacks `engine` (default: the chosen one) works on at once (`terraform.parallelism`,
        or with engine: provider `terraform.provider_engine_parallelism`)."""
        if (engine or self.engine) == "provider":
            return self.terraform.provider_engine_parallelism
        return self.terraform.parallelism

    def resolved_engine(self, owner: Literal["pulumi", "terraform"] | None = None,
                        ) -> Literal["pulumi", "terraform", "provider"]:
        """`auto` is the engine that owns the org's objects (`owner`, from `engines.ownership`'s
        record), else terraform, the default engine. Never whichever CLI happens to be installed:
        on a machine with the Pulumi CLI, `auto` would silently switch engines and state stores.
        `provider` (terraform's state, the AWS provider spoken to directly) is chosen by name only."""
        if self.engine != "auto":
            return self.engine
        return owner or "terraform"


class SettingsError(PermanentError):
    """The settings file or environment is unusable; the message says where and why."""

    reason = "settings"


_ENV_PREFIX = "HYPERGOV_"
_ENV_KEYS: dict[str, tuple[str, ...]] = {
    "HYPERGOV_ENGINE": ("engine",),
    "HYPERGOV_CONFIG_DIR": ("config_dir",),
    "HYPERGOV_STATE_DIR": ("state_dir",),
    "HYPERGOV_STATE_BACKEND": ("state_backend",),
    "HYPERGOV_PULUMI_BACKEND": ("pulumi_backend",),
    "HYPERGOV_AUDIT_REPO": ("audit_repo",),
    "HYPERGOV_AUDIT_BRANCH": ("audit_branch",),
    "HYPERGOV_AUDIT_SIGNING": ("audit_signing",),
    "HYPERGOV_AUDIT_SIGNING_KEY": ("audit_signing_key",),
    "HYPERGOV_AUDIT_ALLOWED_SIGNERS": ("audit_allowed_signers",),
    "HYPERGOV_AUDIT_WITNESS": ("audit_witness",),
    "HYPERGOV_REQUIRE_REVIEWED": ("require_reviewed",),
    "HYPERGOV_AWS_ENDPOINT_URL": ("aws", "endpoint_url"),
    "HYPERGOV_AWS_PROFILE": ("aws", "profile"),
    "HYPERGOV_AWS_MAX_RETRIES": ("aws", "max_retries"),
    "HYPERGOV_TERRAFORM_BINARY": ("terraform", "binary"),
    "HYPERGOV_TERRAFORM_PROVIDER_SOURCE": ("terraform", "provider_source"),
    "HYPERGOV_TERRAFORM_PLUGIN_MIRROR": ("terraform", "plugin_mirror"),
    "HYPERGOV_TERRAFORM_PARALLELISM": ("terraform", "parallelism"),
    "HYPERGOV_TERRAFORM_PROVIDER_ENGINE_PARALLELISM": ("terraform", "provider_engine_parallelism"),
}


def load_settings(path: Path | None = None, *, environ: Mapping[str, str] | None = None,
                  overrides: Mapping[str, object] | None = None) -> Settings:
    """Settings from `path` (default ./hypergov.yaml if present), then environment, then overrides."""
    env = os.environ if environ is None else environ
    data: dict[str, object] = {}
    file = path if path is not None else Path(env.get("HYPERGOV_SETTINGS", "hypergov.yaml"))
    if file.exists():
        try:
            loaded = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise SettingsError(f"{file}: not valid YAML: {exc}") from exc
        if not isinstance(loaded, dict):
            raise SettingsError(f"{file}: must be a mapping of settings")
        data = loaded
    elif path is not None:
        raise SettingsError(f"{file}: settings file not found")
    for var, keys in _ENV_KEYS.items():
        if var in env:
            _set(data, keys, env[var])
    for dotted, value in (overrides or {}).items():
        _set(data, tuple(dotted.split(".")), value)
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise SettingsError(f"{file if file.exists() else 'settings'}: '{where}': {first['msg']}") from exc


def _set(data: dict[str, object], keys: tuple[str, ...], value: object) -> None:
    node = data
    for key in keys[:-1]:
        child = node.setdefault(key, {})
        if not isinstance(child, dict):
            raise SettingsError(f"setting '{key}' must be a mapping")
        node = child
    node[keys[-1]] = value
