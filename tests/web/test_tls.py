"""`specd ui --tls-cert/--tls-key`: the page and its token over HTTPS, for a team that opens it from a phone.

A real server with a certificate made for the test (openssl, which .ci/run installs), and the two clients of
the control plane: a browser's request and `specd approve --server URL` from another shell.
"""

from __future__ import annotations

import http.client
import ssl
import subprocess
from pathlib import Path

import pytest
from web_harness import DEADLINE, Server, Site


@pytest.fixture(scope="module")
def pem(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    where = tmp_path_factory.mktemp("tls")
    cert, key = where / "cert.pem", where / "key.pem"
    made = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
                           "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
                           "-addext", "subjectAltName=IP:127.0.0.1"], capture_output=True, check=False)
    assert made.returncode == 0, made.stderr
    return cert, key


def test_the_page_is_served_over_https_and_its_cookie_never_goes_out_in_plain_text(
        site: Site, pem: tuple[Path, Path]) -> None:
    cert, key = pem
    server = Server(site, "--host", "0.0.0.0", "--token", "a-long-token-chosen-by-me", "--tls-cert", str(cert),
                    "--tls-key", str(key))
    try:
        assert server.url.startswith("https://0.0.0.0:"), server.url
        trusted = ssl.create_default_context(cafile=str(cert))
        connection = http.client.HTTPSConnection("127.0.0.1", server.port, timeout=DEADLINE, context=trusted)
        connection.request("GET", f"/?token={server.token}")
        first = connection.getresponse()
        first.read()
        assert first.status == 303
        cookie = first.getheader("set-cookie") or ""
        assert "HttpOnly" in cookie
        assert "Secure" in cookie  # a browser never sends it over http://
        connection.request("GET", "/", headers={"Cookie": f"specd_ui={server.token}"})
        assert connection.getresponse().status == 200
        plain = http.client.HTTPConnection("127.0.0.1", server.port, timeout=DEADLINE)
        plain.request("GET", f"/?token={server.token}")
        with pytest.raises((http.client.HTTPException, ConnectionError)):  # no page, and no token, in plain HTTP
            plain.getresponse()
    finally:
        err = server.stop()
    assert "plain HTTP" not in err  # a token chosen, and TLS: nothing to warn about


def test_an_answer_from_another_shell_trusts_the_servers_certificate_only_when_told(
        site: Site, pem: tuple[Path, Path]) -> None:
    cert, key = pem
    server = Server(site, "--tls-cert", str(cert), "--tls-key", str(key))
    try:
        plain = site.specd("approve", "waits", "--server", server.url.replace("https://", "http://"))
        assert plain.returncode == 2, plain.stdout + plain.stderr
        assert "an https:// one when it was started with --tls-cert" in plain.stderr
        untrusted = site.specd("approve", "waits", "--server", server.url)
        assert untrusted.returncode == 2, untrusted.stdout + untrusted.stderr
        assert "showed a certificate this machine does not trust" in untrusted.stderr
        assert "SSL_CERT_FILE=" in untrusted.stderr  # the fix
        trusted = site.specd("approve", "waits", "--server", server.url, env={"SSL_CERT_FILE": str(cert)})
        assert trusted.returncode == 0, trusted.stdout + trusted.stderr
    finally:
        server.stop()


def test_a_certificate_without_its_key_or_a_file_that_is_none_is_bad_input(site: Site, tmp_path: Path,
                                                                         pem: tuple[Path, Path]) -> None:
    cert, _ = pem
    alone = site.specd("serve", "--port", "0", "--tls-cert", str(cert))
    assert alone.returncode == 2
    assert "pass --tls-cert and --tls-key together" in alone.stderr
    junk = tmp_path / "junk.pem"
    junk.write_text("not a key\n", encoding="utf-8")
    bad = site.specd("serve", "--port", "0", "--tls-cert", str(cert), "--tls-key", str(junk))
    assert bad.returncode == 2
    assert f"--tls-key {junk}: not a certificate and its key" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_a_token_in_plain_http_beyond_loopback_is_warned_about(site: Site) -> None:
    exposed = Server(site, "--host", "0.0.0.0", "--token", "a-long-token-chosen-by-me")
    err = exposed.stop()
    assert "in plain HTTP: anyone on the network between you and this machine can read the token" in err
    assert "--tls-cert and --tls-key" in err
