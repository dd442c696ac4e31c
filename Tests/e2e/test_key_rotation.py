"""Signing key rotation: the next key is published before it signs, `tessera keys
rotate` makes it current, tokens of the old key keep verifying, new tokens carry the
new kid. A second server on the same database shows the rotation at once, and the server
that was running signs with the new key within seconds (it re-reads the keys every 5 s)."""

import time


from e2e_support import Provider, unverified_header


def test_rotated_key_signs_new_tokens_and_old_tokens_still_verify(op, cli, start_server, alice_agent, first_client):
    before = alice_agent.tokens(first_client, scope="openid")
    old_kid = unverified_header(before["id_token"])["kid"]
    assert unverified_header(before["access_token"])["kid"] == old_kid
    published_before = {k["kid"] for k in op.jwks()["keys"]}
    assert old_kid in published_before

    new_kid = cli.rotate_keys()
    assert new_kid != old_kid
    assert new_kid in published_before, "the new key was not published ahead of its use"

    second = start_server(name="after-rotation")
    op2 = Provider(second.issuer)
    jwks2 = op2.jwks()
    kids2 = [k["kid"] for k in jwks2["keys"]]
    assert old_kid in kids2, "the retired key left the JWKS before its grace period"
    assert new_kid in kids2

    # The same browser session (it lives in the database) signs in silently at the second server.
    result = alice_agent.authorize(first_client, provider=op2, scope="openid")
    assert result.kind == "redirect" and result.code, result.describe()
    assert result.params["iss"] == op2.issuer
    after = op2.redeem(first_client, result)
    assert after.status_code == 200, after.text
    after = after.json()
    assert unverified_header(after["id_token"])["kid"] == new_kid
    assert unverified_header(after["access_token"])["kid"] == new_kid

    # The server that was running when the key rotated signs with the new key within seconds.
    deadline, kid = time.monotonic() + 15, old_kid
    while time.monotonic() < deadline and kid != new_kid:
        time.sleep(0.5)
        kid = unverified_header(alice_agent.tokens(first_client, scope="openid")["id_token"])["kid"]
    assert kid == new_kid, "the running server still signs with the retired key"

    # New tokens verify with the JWKS; so do the old ones, at both servers.
    op2.verify_id_token(after["id_token"], first_client, nonce=result.sent["nonce"], access_token=after["access_token"])
    header, claims = op2.verify_jwt(before["id_token"], jwks2)
    assert header["kid"] == old_kid and claims["iss"] == op.issuer
    op.verify_jwt(after["id_token"])  # the first server already published the new key
    op.verify_id_token(before["id_token"], first_client)

    # The old access token still works where it was issued.
    assert op.userinfo(before["access_token"]).status_code == 200
