"""The SDK's command-line example (Examples/, `tessera-example`), built as an app builds it — a
package of its own depending on the repository's root package — and run against the release server: a
native sign-in, a refresh, Native SSO between two apps of a vendor, and a partner's sign-in
approved in the operator's authenticator app. So the code the docs show compiles and works.

scripts/test builds it in the SDK's build folder (`swift build --package-path Examples --scratch-path
.build --build-tests`) before the e2e suite and sets TESSERA_EXAMPLE_BIN to it; built as docs/sdk.md
shows, it is in Examples/.build, where this suite looks without the variable."""

import os
import subprocess
from pathlib import Path

import pytest

from conftest import PASSWORD
from e2e_support import ROOT, random_token

EXAMPLE = Path(os.environ.get("TESSERA_EXAMPLE_BIN") or ROOT / "Examples" / ".build" / "debug" / "tessera-example")


@pytest.fixture(scope="module")
def example_apps(cli):
    """The clients the example signs in to, with the IDs it names, and a person with a password."""
    native = dict(public=True, first_party=True)
    cli.add_client("Example Mail", client_id="example-mail", redirect_uris=["com.example.mail:/callback"],
                   device_sso_group="example-vendor", scopes=["openid", "email", "offline_access", "device_sso"], **native)
    cli.add_client("Example Calendar", client_id="example-calendar", redirect_uris=["com.example.calendar:/callback"],
                   device_sso_group="example-vendor", scopes=["openid", "email", "offline_access", "device_sso"], **native)
    cli.add_client("Example Bank", client_id="example-bank", redirect_uris=["com.example.bank:/callback"],
                   authenticator=True, **native)
    cli.add_client("Example Shop", client_id="example-shop", redirect_uris=["com.example.shop:/callback"], public=True)
    return cli.add_user(f"example-{random_token(6).lower()}@example.com", PASSWORD, "Erin Example")


def test_the_command_line_example_runs_every_flow_against_the_server(op, example_apps, tmp_path):
    assert EXAMPLE.exists(), f"no example binary at {EXAMPLE}: build it with swift build --package-path Examples"
    done = subprocess.run([str(EXAMPLE), op.issuer, example_apps["email"], "--shared", str(tmp_path / "device-session.json")],
                          input=PASSWORD + "\n", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    lines = done.stdout.splitlines()
    email = example_apps["email"]
    assert lines[0] == f"signed in: {email} (amr pwd)"
    assert lines[1] == "refreshed: new access token"
    assert lines[2] == f"native sso: calendar signed in as {email}"
    assert lines[3] == "approval: Example Shop asks for openid email"
    assert lines[4] == f"partner signed in: {email}"
    assert lines[5] == "signed out everywhere on the device"
    # The shared file held the device session only while it was live.
    assert not (tmp_path / "device-session.json").exists()
