"""The data sources a run's plans read, with one read shared where every stack would repeat it.

Each project stack finds the roles Identity Center provisioned for its personas with
`aws_iam_roles` (the name carries a random suffix: `naming.sso_role_name_regex`), and the
provider answers each such read by listing every role under Identity Center's path in the account
(ListRoles, 100 a page) and keeping the names that match. An org of a thousand projects has some
two thousand such roles in an account: twenty pages per lookup, two lookups per stack, a thousand
stacks; the listing is the same every time. So while a run only plans, the provider lists each
(provider, path) once, without the name filter, and each lookup keeps from that listing what the
provider itself would have kept: the data source filters on its side, after listing
(`dataSourceRolesRead` in the AWS provider), so the answer differs only in the names kept.

Only a regex hypergov makes is applied here (`naming.sso_role_name_matcher`: literal, so Python's
`re` and the provider's RE2 agree); any other goes to the provider. A lookup that keeps nothing
goes to the provider as well (the role may be new since the listing; and "nothing" is the shape
only the provider knows). Once the run applies anything (`stop_sharing`), every read goes to the
provider: an apply provisions roles, and a lookup after it must see them.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from engines.provider.client import ProviderClient, ReadState, has_errors
from engines.provider.cty import CtyValue
from hypergov.naming import sso_role_name_matcher

ROLES_DATA_SOURCE = "aws_iam_roles"


class DataReads:
    """ReadDataSource for a run's plans, the account's role listing read once per provider and path."""

    def __init__(self) -> None:
        # keyed by the client itself, not its id(): a key keeps its client alive, so a later
        # client (another account's provider) cannot take a dead one's address and its listing
        self._listings: dict[tuple[ProviderClient, str], Future[ReadState]] = {}
        self._lock = threading.Lock()
        self._sharing = True

    def stop_sharing(self) -> None:
        """From now on every read goes to the provider (the run applies: roles may appear)."""
        with self._lock:
            self._sharing = False
            self._listings.clear()

    def read(self, client: ProviderClient, type_name: str, config: CtyValue) -> ReadState:
        matcher = _role_matcher(type_name, config)
        if matcher is None or not isinstance(config, dict):
            return client.read_data(type_name, config)
        listing = self._listing(client, {**config, "name_regex": None})
        if listing is None or has_errors(listing.diagnostics) or listing.deferred is not None \
                or not isinstance(listing.new_state, dict):
            return client.read_data(type_name, config)
        kept = _kept(listing.new_state, matcher.search)
        if not kept["names"]:
            return client.read_data(type_name, config)
        return ReadState(new_state={**listing.new_state, **kept, "name_regex": config["name_regex"]},
                         private=b"", diagnostics=listing.diagnostics)

    def _listing(self, client: ProviderClient, widened: dict[str, CtyValue]) -> ReadState | None:
        """The provider's read of every role under the path (the first caller reads, the others
        wait for its answer); None once sharing stopped."""
        key = (client, json.dumps(widened, sort_keys=True, default=str))
        with self._lock:
            if not self._sharing:
                return None
            listing = self._listings.get(key)
            first = listing is None
            if listing is None:
                listing = self._listings[key] = Future()
        if first:
            try:
                listing.set_result(client.read_data(ROLES_DATA_SOURCE, widened))
            except BaseException as exc:
                listing.set_exception(exc)
                with self._lock:
                    self._listings.pop(key, None)  # a failed read is not kept: the next lookup reads again
                raise
        try:
            return listing.result()
        except Exception:  # the first reader's failure is its own; this lookup reads alone
            return None


def _role_matcher(type_name: str, config: CtyValue) -> re.Pattern[str] | None:
    if type_name != ROLES_DATA_SOURCE or not isinstance(config, dict):
        return None
    regex = config.get("name_regex")
    return sso_role_name_matcher(regex) if isinstance(regex, str) else None


def _kept(listed: dict[str, CtyValue], matches: Callable[[str], Any]) -> dict[str, CtyValue]:
    """The listing's names that match, and their ARNs (a role ARN ends with `/<name>`; a name
    is unique in its account), in the listing's order (a set's, as the provider sends it)."""
    names: list[CtyValue] = [n for n in _strings(listed.get("names")) if matches(n)]
    wanted = set(names)
    return {"names": names, "arns": [a for a in _strings(listed.get("arns")) if a.rsplit("/", 1)[-1] in wanted]}


def _strings(value: CtyValue) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
