"""IAM behaves as AWS documents where moto does not: UpdateRole changes only what it names."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def test_update_role_keeps_what_the_request_omits(client: Callable[..., Any]) -> None:
    iam = client("iam")
    iam.create_role(RoleName="r", AssumeRolePolicyDocument="{}", Description="kept", MaxSessionDuration=7200)
    iam.update_role(RoleName="r", MaxSessionDuration=43200)
    role = iam.get_role(RoleName="r")["Role"]
    assert (role["Description"], role["MaxSessionDuration"]) == ("kept", 43200)
    iam.update_role(RoleName="r", Description="changed")
    role = iam.get_role(RoleName="r")["Role"]
    assert (role["Description"], role["MaxSessionDuration"]) == ("changed", 43200)
