"""The merchant's webhook receiver for the benchmark and the fault run: a trivial HTTP server
on loopback, in a process of its own (asyncio, one thread) so its cost is not the gateway's.

    python -m benchmarks.receiver --port 8392

For every request it records when its first byte arrived, its X-Service-Event-Id, a hash of
its body and what it answered. The answer depends on the mode, which the driver changes with
`POST /_mode/ok|error|hang`:

- ok: 200 {"ok":true} (after `--delay` seconds, to keep deliveries in flight for a while);
- error: 500;
- hang: reads the request and says nothing for `--hang-seconds` (longer than the gateway's
  10 s timeout), then closes the connection.

`GET /_stats` answers counts; `POST /_dump?path=FILE` writes every record as JSON lines.
"""
from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import time
from urllib.parse import parse_qs, urlsplit

OK = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\nConnection: close\r\n\r\n{"ok":true}'
ERROR = (b'HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: 14\r\n'
         b'Connection: close\r\n\r\n{"ok":false}\r\n')


class State:
    def __init__(self, hang_seconds: float, delay: float = 0.0):
        self.mode = "ok"
        self.hang_seconds = hang_seconds
        self.delay = delay
        # (first byte time, event id, sha256 of body prefix, answer: 200 / 500 / "hang")
        self.records: list[tuple[float, str, str, object]] = []

    def stats(self) -> dict:
        delivered: dict[str, int] = {}
        bodies: dict[str, set] = {}
        for _, event_id, digest, answer in self.records:
            bodies.setdefault(event_id, set()).add(digest)
            if answer == 200:
                delivered[event_id] = delivered.get(event_id, 0) + 1
        return {
            "mode": self.mode,
            "requests": len(self.records),
            "events_seen": len(bodies),
            "events_acknowledged": len(delivered),
            "acknowledged_requests": sum(delivered.values()),
            "duplicate_acknowledgements": sum(n - 1 for n in delivered.values()),
            "events_with_differing_bodies": sum(1 for d in bodies.values() if len(d) > 1),
            "answered_500": sum(1 for r in self.records if r[3] == 500),
            "hung": sum(1 for r in self.records if r[3] == "hang"),
        }


class Handler(asyncio.Protocol):
    def __init__(self, state: State):
        self.state = state
        self.buffer = b""
        self.first_byte = None
        self.transport = None
        self.done = False

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if self.first_byte is None:
            self.first_byte = time.time()
        if self.done:
            return
        self.buffer += data
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return
        head = self.buffer[:end].decode("latin-1")
        lines = head.split("\r\n")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length") or 0)
        if len(self.buffer) - end - 4 < length:
            return
        self.done = True
        body = self.buffer[end + 4: end + 4 + length]
        method, target = lines[0].split(" ")[:2]
        if target.startswith("/_"):
            self._control(method, target)
            return
        event_id = headers.get("x-service-event-id", "")
        digest = hashlib.sha256(body).hexdigest()[:16]
        mode = self.state.mode
        if mode == "hang":
            self.state.records.append((self.first_byte, event_id, digest, "hang"))
            asyncio.get_running_loop().call_later(self.state.hang_seconds, self.transport.close)
            return
        answer = 200 if mode == "ok" else 500
        self.state.records.append((self.first_byte, event_id, digest, answer))
        if self.state.delay:
            asyncio.get_running_loop().call_later(self.state.delay, self._answer, answer)
        else:
            self._answer(answer)

    def _answer(self, answer: int) -> None:
        self.transport.write(OK if answer == 200 else ERROR)
        self.transport.close()

    def _control(self, method: str, target: str) -> None:
        parts = urlsplit(target)
        if method == "POST" and parts.path.startswith("/_mode/"):
            self.state.mode = parts.path.rsplit("/", 1)[1]
            payload = {"mode": self.state.mode}
        elif parts.path == "/_stats":
            payload = self.state.stats()
        elif method == "POST" and parts.path == "/_dump":
            path = parse_qs(parts.query)["path"][0]
            with open(path, "w") as f:
                for first, event_id, digest, answer in self.state.records:
                    f.write(json.dumps([first, event_id, digest, answer]) + "\n")
            payload = {"written": len(self.state.records)}
        elif method == "POST" and parts.path == "/_reset":
            self.state.records.clear()
            payload = {"reset": True}
        else:
            payload = {"error": "unknown control path"}
        body = json.dumps(payload).encode()
        self.transport.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                             b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        self.transport.close()


async def serve(port: int, hang_seconds: float, delay: float) -> None:
    state = State(hang_seconds, delay)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: Handler(state), "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--hang-seconds", type=float, default=15.0)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each answer (ok and error)")
    args = parser.parse_args()
    asyncio.run(serve(args.port, args.hang_seconds, args.delay))


if __name__ == "__main__":
    main()
