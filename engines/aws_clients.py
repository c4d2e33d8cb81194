"""boto3 clients per account and region, as the settings say: the embedded endpoint or real AWS,
a named profile or the ambient credentials, and a role assumed in member accounts.

Only the edge of hypergov builds clients; everything else receives them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import boto3
from botocore.config import Config

from engines.settings import AwsSettings


@dataclass
class AwsClients:
    settings: AwsSettings
    partition: str = "aws"
    _base: Any = None
    _caller_account: str | None = None
    _assumed: dict[str, Any] = field(default_factory=dict)
    # boto3 sessions are not thread-safe and stacks are planned and applied from worker threads:
    # sessions and clients are made under this lock (re-entrant; the clients are thread-safe).
    _lock: threading.RLock = field(default_factory=threading.RLock)

    def _config(self) -> Config:
        return Config(retries={"max_attempts": max(1, self.settings.max_retries), "mode": "standard"})

    def _base_session(self) -> Any:
        if self._base is None:
            self._base = boto3.session.Session(profile_name=self.settings.profile)
        return self._base

    def require_credentials(self) -> None:
        """Fail once, before any stack is planned, when boto3 finds no credentials at all (else
        every stack's terraform would start only to print the same error per provider alias)."""
        from botocore.exceptions import NoCredentialsError

        with self._lock:
            if self._base_session().get_credentials() is None:
                raise NoCredentialsError()

    def client(self, service: str, *, region: str, account: str | None = None) -> Any:
        """A client for `service` acting in `account` (assuming the access role when it is not
        the caller's own account)."""
        with self._lock:
            session = self._session_for(account, region)
            return session.client(service, region_name=region, endpoint_url=self.settings.endpoint_for(service),
                                  config=self._config())

    def caller_account(self, region: str) -> str:
        with self._lock:
            if self._caller_account is None:
                sts = self._base_session().client("sts", region_name=region, config=self._config(),
                                                  endpoint_url=self.settings.endpoint_for("sts"))
                self._caller_account = str(sts.get_caller_identity()["Account"])
            return self._caller_account

    def _session_for(self, account: str | None, region: str) -> Any:
        if account is None or account == self.caller_account(region):
            return self._base_session()
        if account not in self._assumed:
            sts = self._base_session().client("sts", region_name=region, endpoint_url=self.settings.endpoint_for("sts"),
                                              config=self._config())
            role = f"arn:{self.partition}:iam::{account}:role/{self.settings.account_access_role}"
            creds = sts.assume_role(RoleArn=role, RoleSessionName="hypergov")["Credentials"]
            self._assumed[account] = boto3.session.Session(
                aws_access_key_id=creds["AccessKeyId"], aws_secret_access_key=creds["SecretAccessKey"],
                aws_session_token=creds["SessionToken"])
        return self._assumed[account]
