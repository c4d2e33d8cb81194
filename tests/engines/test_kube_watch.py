"""`DynamicKubeApi.watch_kind` through the kubernetes client's real `Watch`: no kube-apiserver can
run here, so the dynamic resource's `get` is a fake answering with the watch's HTTP body (JSON
lines, as the API server streams them); the parsing, the bookmark and the 410 handling are the
client's and ours."""

from __future__ import annotations

import json
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from engines.kube import DynamicKubeApi, ResourceVersionExpired, WatchEvent
from engines.outcomes import classify

WORKLOADS = ("kueue.x-k8s.io/v1beta1", "Workload")


class StreamedResponse:
    """What urllib3 hands the watch: the body in chunks (split mid-line, as the network may)."""

    def __init__(self, lines: list[dict[str, Any]]) -> None:
        body = "".join(json.dumps(line) + "\n" for line in lines).encode()
        self.chunks = [body[i:i + 7] for i in range(0, len(body), 7)]
        self.status = 200
        self.closed = False

    def stream(self, amt: Any = None, decode_content: bool = False) -> Iterator[bytes]:
        yield from self.chunks

    def close(self) -> None:
        self.closed = True

    def release_conn(self) -> None:
        pass


class WatchingClient:
    """`resources.get(...)` -> a resource whose `get(watch=True, ...)` answers with `response`."""

    def __init__(self, response: StreamedResponse) -> None:
        self.response = response
        self.calls: list[dict[str, Any]] = []
        self.resources = self

    def get(self, *, api_version: str, kind: str) -> Any:
        assert (api_version, kind) == WORKLOADS
        return SimpleNamespace(get=self._get)

    def _get(self, **kwargs: Any) -> StreamedResponse:
        self.calls.append(kwargs)
        return self.response


def _workload(name: str, version: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "hyperpod-ns-vision", "uid": f"uid-{name}",
                         "resourceVersion": version}, "spec": {"podSets": []}}


def test_events_and_a_bookmark_arrive_in_order_with_their_versions() -> None:
    response = StreamedResponse([
        {"type": "ADDED", "object": _workload("a", "11")},
        {"type": "MODIFIED", "object": _workload("a", "12")},
        {"type": "DELETED", "object": _workload("a", "13")},
        {"type": "BOOKMARK", "object": {"kind": "Workload", "apiVersion": WORKLOADS[0],
                                        "metadata": {"resourceVersion": "20"}}},
    ])
    client = WatchingClient(response)
    events = list(DynamicKubeApi(client=client).watch_kind(*WORKLOADS, resource_version="10", timeout_s=30))
    assert [(e.type, e.resource_version) for e in events] == [
        ("ADDED", "11"), ("MODIFIED", "12"), ("DELETED", "13"), ("BOOKMARK", "20")]
    assert events[0] == WatchEvent(type="ADDED", resource_version="11",
                                   body={"apiVersion": WORKLOADS[0], "kind": "Workload", **_workload("a", "11")})
    [call] = client.calls  # one request: with a timeout, the client never resumes on its own
    assert (call["resource_version"], call["timeout_seconds"], call["allow_watch_bookmarks"], call["watch"]) == (
        "10", 30, True, True)
    assert response.closed


def test_a_410_error_event_is_a_typed_expiry_and_classified_temporary() -> None:
    response = StreamedResponse([{"type": "ERROR", "object": {
        "kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 410, "reason": "Expired",
        "message": "too old resource version: 10 (250)"}}])
    watch = DynamicKubeApi(client=WatchingClient(response)).watch_kind(*WORKLOADS, resource_version="10",
                                                                         timeout_s=30)
    with pytest.raises(ResourceVersionExpired) as raised:
        next(watch)
    assert "too old resource version: 10 (250)" in str(raised.value)
    assert classify(raised.value).kind == "temporary"


def test_another_error_event_is_not_an_expiry() -> None:
    response = StreamedResponse([{"type": "ERROR", "object": {
        "kind": "Status", "code": 403, "reason": "Forbidden", "message": "workloads is forbidden"}}])
    watch = DynamicKubeApi(client=WatchingClient(response)).watch_kind(*WORKLOADS, resource_version="10",
                                                                         timeout_s=30)
    with pytest.raises(Exception) as raised:
        next(watch)
    assert not isinstance(raised.value, ResourceVersionExpired)
    assert (classify(raised.value).kind, classify(raised.value).reason) == ("permanent", "access-denied")


def test_closing_the_watch_closes_the_connection() -> None:
    response = StreamedResponse([{"type": "ADDED", "object": _workload(name, str(i))}
                                 for i, name in enumerate("abc", start=11)])
    watch = DynamicKubeApi(client=WatchingClient(response)).watch_kind(*WORKLOADS, resource_version="10",
                                                                         timeout_s=30)
    assert next(watch).resource_version == "11"
    watch.close()
    assert response.closed
