"""boto3 clients per account and region, as the settings say: the embedded endpoint or real AWS,
a named profile or the ambient credentials, and a role assumed in member accounts.

Only the edge of hypergov builds clients; everything else receives them.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
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
    _assumed: dict[str, tuple[Any, float]] = field(default_factory=dict)  # account -> (session, renew after)
    # One client per service, account and region: making one costs tens of milliseconds (a driver
    # plan of a cluster with a hundred quotas made hundreds), and boto3's clients are thread-safe.
    _clients: dict[tuple[str, str | None, str], tuple[Any, Any]] = field(default_factory=dict)
    # boto3 sessions are not thread-safe and stacks are planned and applied from worker threads:
    # sessions and clients are made under this lock (re-entrant; the clients are thread-safe).
    _lock: threading.RLock = field(default_factory=threading.RLock)
    clock: Any = time.time  # seconds since the epoch (tests move it)

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
            made = self._clients.get((service, account, region))
            if made is None or made[0] is not session:  # none yet, or the role's credentials were renewed
                client = session.client(service, region_name=region, endpoint_url=self.settings.endpoint_for(service),
                                        config=self._config())
                made = self._clients[(service, account, region)] = (session, client)
            return made[1]

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
        assumed = self._assumed.get(account)
        if assumed is None or self.clock() >= assumed[1]:
            sts = self._base_session().client("sts", region_name=region, endpoint_url=self.settings.endpoint_for("sts"),
                                              config=self._config())
            role = f"arn:{self.partition}:iam::{account}:role/{self.settings.account_access_role}"
            creds = sts.assume_role(RoleArn=role, RoleSessionName="hypergov")["Credentials"]
            session = boto3.session.Session(
                aws_access_key_id=creds["AccessKeyId"], aws_secret_access_key=creds["SecretAccessKey"],
                aws_session_token=creds["SessionToken"])
            assumed = self._assumed[account] = (session, _renew_after(creds.get("Expiration"), now=self.clock()))
        return assumed[0]


RENEW_BEFORE_S = 300.0  # a role's credentials are renewed this long before they expire (a daemon runs for days)
DEFAULT_ROLE_SESSION_S = 3600.0  # AssumeRole's DurationSeconds default, when the answer has no expiry


def _renew_after(expiration: datetime | None, *, now: float) -> float:
    """When the credentials of an assumed role should be renewed: before they expire, at the latest."""
    expires = expiration.timestamp() if isinstance(expiration, datetime) else now + DEFAULT_ROLE_SESSION_S
    return max(now, expires - RENEW_BEFORE_S)
