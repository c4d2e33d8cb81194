"""The embedded endpoint, in this process, one per test module (each module's accounts are its own)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from embedded_aws import EmbeddedAws


@pytest.fixture(scope="module")
def aws() -> Iterator[EmbeddedAws]:
    with EmbeddedAws() as endpoint:
        yield endpoint
