"""Schemathesis hooks of the native sign-in API fuzz pass (test_native_auth.py), loaded by
`schemathesis run` through SCHEMATHESIS_HOOKS.

Three requests in four get the registered first-party client's id, so that they get past
the client check into the flows; the rest keep whatever was generated."""

import os
import zlib

import schemathesis


@schemathesis.hook
def before_call(context, case, kwargs):
    body = case.body
    if isinstance(body, dict) and "client_id" in body and zlib.crc32(repr(sorted(body.items(), key=str)).encode()) % 4:
        body["client_id"] = os.environ["NATIVE_FUZZ_CLIENT_ID"]
