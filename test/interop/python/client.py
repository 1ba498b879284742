"""Calls Gatehouse with Debian's python3-grpcio and stubs generated from proto/ (by the interop test).

Usage: client.py HOST:PORT TOKEN — prints one JSON object with what each call saw.
"""
import json
import sys

import grpc
from gatehouse.admin.v1 import user_pb2, user_pb2_grpc
from google.rpc import error_details_pb2, status_pb2


def typed_error(error):
    """The status code, ErrorInfo reason and BadRequest fields of a failed call."""
    details = dict(error.trailing_metadata() or ()).get("grpc-status-details-bin")
    status = status_pb2.Status.FromString(details) if details else status_pb2.Status()
    info, bad_request = error_details_pb2.ErrorInfo(), error_details_pb2.BadRequest()
    for any_detail in status.details:
        if any_detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            any_detail.Unpack(info)
        if any_detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            any_detail.Unpack(bad_request)
    return {"code": error.code().name, "reason": info.reason, "fields": [v.field for v in bad_request.field_violations]}


def main(target, token):
    metadata = (("authorization", "Bearer " + token),)
    with grpc.insecure_channel(target) as channel:
        users = user_pb2_grpc.UserServiceStub(channel)
        created = users.CreateHumanUser(
            user_pb2.CreateHumanUserRequest(
                user_name="python-grpc",
                profile=user_pb2.Profile(first_name="Py", last_name="Thon"),
                email=user_pb2.Email(email="python-grpc@example.com"),
            ),
            metadata=metadata,
        )
        code = users.ResendEmailCode(user_pb2.ResendEmailCodeRequest(user_id=created.user_id, return_code=True), metadata=metadata)
        verified = users.VerifyEmail(
            user_pb2.VerifyEmailRequest(user_id=created.user_id, verification_code=code.verification_code), metadata=metadata
        )
        result = {"userId": created.user_id, "verifiedOwner": verified.details.resource_owner, "hasCreationDate": verified.details.HasField("creation_date")}
        try:
            users.CreateHumanUser(
                user_pb2.CreateHumanUserRequest(user_name="python-bad", profile=user_pb2.Profile(first_name="", last_name="T"), email=user_pb2.Email(email="x@example.com")),
                metadata=metadata,
            )
        except grpc.RpcError as error:
            result["invalid"] = typed_error(error)
        try:
            users.VerifyEmail(user_pb2.VerifyEmailRequest(user_id="no-such-user", verification_code="ABC123"), metadata=metadata)
        except grpc.RpcError as error:
            result["missing"] = typed_error(error)
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
