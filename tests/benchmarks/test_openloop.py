"""The benchmark's open-loop generator measures what a merchant would wait: from the moment a
request was due, so a server that falls behind shows its queue instead of slowing the sender."""
import socket
import ssl
import subprocess
import threading
import time

import pytest

from benchmarks import openloop

REQUEST = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


@pytest.fixture
def serial_server():
    """Answers one connection at a time, each after `delay` seconds: at most 1/delay a second.
    With state["tls"] set to a server context, over TLS."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(512)
    listener.settimeout(0.2)
    state = {"delay": 0.0, "stop": False, "tls": None, "handshakes": [], "requests": []}

    def serve():
        while not state["stop"]:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            if state["tls"] is not None:
                conn.settimeout(5)
                try:
                    conn = state["tls"].wrap_socket(conn, server_side=True)
                except ssl.SSLError:  # a client that does not trust us: it closes, we go on
                    conn.close()
                    continue
                state["handshakes"].append(conn.session_reused)
            with conn:
                state["requests"].append(conn.recv(4096))
                time.sleep(state["delay"])
                body = b'{"ok": true}'
                conn.sendall(b"HTTP/1.1 201 Created\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body))
                conn.sendall(body)  # the head and body in two writes, as a server may send them

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1], state
    state["stop"] = True
    thread.join()
    listener.close()


def test_a_server_that_keeps_up_answers_every_request_quickly(serial_server):
    port, _ = serial_server

    result = openloop.run(port, rate=100, duration=1, requests=[REQUEST], timeout=5)

    assert result["scheduled"] == result["answered"] == result["ok"] == 100
    assert result["statuses"] == {"201": 100}
    assert result["p99_ms"] < 500


def test_latency_counts_from_the_scheduled_time_so_a_queue_shows(serial_server):
    port, state = serial_server
    state["delay"] = 0.02  # at most 50 a second, asked for 100

    result = openloop.run(port, rate=100, duration=1, requests=[REQUEST], timeout=5)

    # A closed-loop client would wait its turn and report about 20 ms per request. Sent on
    # schedule, the last requests wait behind about 50 others: a second of queue.
    assert result["answered"] == 100
    assert result["p50_ms"] > 200
    assert result["max_ms"] > 800
    assert result["lateness_p99_ms"] < 100  # the generator itself kept the schedule
    assert result["achieved_send_rate"] > 80


def test_a_refused_connection_is_counted_as_an_error():
    spare = socket.socket()
    spare.bind(("127.0.0.1", 0))
    port = spare.getsockname()[1]  # bound, not listening: connections are refused
    try:
        result = openloop.run(port, rate=50, duration=0.2, requests=[REQUEST], timeout=2)
    finally:
        spare.close()

    assert result["answered"] == 0
    assert result["errors"] == {"ECONNREFUSED": 10}


@pytest.fixture
def certificate(tmp_path):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert, key)
    return server, cert


def test_over_tls_every_request_makes_a_handshake_of_its_own_and_is_answered(serial_server, certificate):
    port, state = serial_server
    state["tls"], cert = certificate

    result = openloop.run(port, rate=50, duration=0.4, requests=[REQUEST], timeout=5,
                          tls=ssl.create_default_context(cafile=str(cert)))

    assert result["errors"] == {}
    assert result["scheduled"] == result["answered"] == result["ok"] == 20
    assert state["handshakes"] == [False] * 20  # a full handshake each time, as the SDK's urlopen makes
    assert state["requests"] == [REQUEST] * 20  # the request went through the TLS layer whole


def test_over_tls_a_server_it_does_not_trust_is_an_error(serial_server, certificate):
    port, state = serial_server
    state["tls"], _ = certificate

    result = openloop.run(port, rate=50, duration=0.1, requests=[REQUEST], timeout=5,
                          tls=ssl.create_default_context())

    assert result["answered"] == 0
    assert result["errors"] == {"SSLCertVerificationError": 5}
