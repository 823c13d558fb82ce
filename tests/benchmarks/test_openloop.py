"""The benchmark's open-loop generator measures what a merchant would wait: from the moment a
request was due, so a server that falls behind shows its queue instead of slowing the sender."""
import socket
import threading
import time

import pytest

from benchmarks import openloop

REQUEST = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


@pytest.fixture
def serial_server():
    """Answers one connection at a time, each after `delay` seconds: at most 1/delay a second."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(512)
    listener.settimeout(0.2)
    state = {"delay": 0.0, "stop": False}

    def serve():
        while not state["stop"]:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.recv(4096)
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
