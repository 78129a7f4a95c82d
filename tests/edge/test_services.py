"""The services of a real server process besides Play: operator calls need the admin token and
valid requests; health checking and reflection are served."""

from __future__ import annotations

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bisca.v1 import arena_pb2 as pb
from tests.support.arena import Arena


def test_operator_calls_need_the_admin_token_and_valid_requests(arena: Arena) -> None:
    with pytest.raises(grpc.RpcError) as denied:
        arena.stub.ListMatches(pb.ListMatchesRequest())
    assert denied.value.code() == grpc.StatusCode.UNAUTHENTICATED
    with pytest.raises(grpc.RpcError) as denied:
        arena.stub.ListMatches(pb.ListMatchesRequest(), metadata=[("authorization", "Bearer nope")])
    assert denied.value.code() == grpc.StatusCode.UNAUTHENTICATED
    with pytest.raises(grpc.RpcError) as bad:
        arena.create("belote", ["nobody", "nobody", "nobody", "nobody"])
    assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "no bot named 'nobody'" in bad.value.details()
    with pytest.raises(grpc.RpcError) as bad:
        arena.create("belote", ["x"], settings=pb.GameSettings(belote={"deals": 0}))
    assert "deals must be" in bad.value.details()
    with pytest.raises(grpc.RpcError) as missing:
        arena.stub.GetMatch(pb.GetMatchRequest(match_id="m-nope"), metadata=arena.auth)
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND
    # A status quoting what the caller sent is bounded (review 53: a 100 kB id came back as
    # RESOURCE_EXHAUSTED, the trailing metadata past the client's limit).
    with pytest.raises(grpc.RpcError) as missing:
        arena.stub.GetMatch(pb.GetMatchRequest(match_id="m" * 100_000), metadata=arena.auth)
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND
    assert (
        missing.value.details().startswith("no match 'mmm")
        and len(missing.value.details()) <= 1_000
    )
    # A match to list (its bot never comes: it fails after its join timeout).
    name, _ = arena.register("listed")
    match_id = arena.create("belote", [name] * 4, join_timeout_ms=500)
    listed = arena.stub.ListMatches(pb.ListMatchesRequest(), metadata=arena.auth)
    assert listed.matches
    assert match_id in [match.match_id for match in listed.matches]


def test_health_and_reflection_are_served(arena: Arena) -> None:
    channel = grpc.insecure_channel(arena.address)
    health = health_pb2_grpc.HealthStub(channel)
    reply = health.Check(health_pb2.HealthCheckRequest(service="bisca.v1.Arena"))
    assert reply.status == health_pb2.HealthCheckResponse.SERVING
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    responses = stub.ServerReflectionInfo(
        iter([reflection_pb2.ServerReflectionRequest(list_services="")])
    )
    services = {s.name for r in responses for s in r.list_services_response.service}
    assert "bisca.v1.Arena" in services
    # What ``grpcurl describe SYMBOL`` asks: the file defining a service or a message.
    for symbol in ("bisca.v1.Arena", "bisca.v1.ActionRequest"):
        (found,) = stub.ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(file_containing_symbol=symbol)])
        )
        assert found.WhichOneof("message_response") == "file_descriptor_response", found
        names = [
            descriptor_pb2.FileDescriptorProto.FromString(raw).name
            for raw in found.file_descriptor_response.file_descriptor_proto
        ]
        assert "bisca/v1/arena.proto" in names, names
