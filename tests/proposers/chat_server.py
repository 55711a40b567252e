"""A chat-completions server on 127.0.0.1 (stdlib http.server in a thread) that answers
with scripted replies: the openai proposer's tests, the demo's and the secrets scan use it."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    body: dict[str, Any] | str | None = None  # a str is sent as an HTML page
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


def completion(
    content: str | None, finish_reason: str = "stop", prompt_tokens: int = 1200, completion_tokens: int = 80
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1767225600,
        "model": "served-model-2026",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def error(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    return Reply({"error": {"message": message, "type": "test"}}, status, headers or {})


class ChatServer:
    """Answers POST /v1/chat/completions with scripted replies, in order."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[dict[str, Any]] = []
        self.released = threading.Event()  # ends a delayed reply early at teardown
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                server.requests.append(
                    {
                        "path": self.path,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "body": body,
                    }
                )
                reply = server.replies.pop(0) if server.replies else error(500, "no scripted reply")
                if reply.delay:
                    server.released.wait(reply.delay)
                html = isinstance(reply.body, str)
                data = (reply.body if isinstance(reply.body, str) else json.dumps(reply.body)).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "text/html" if html else "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (timeout): nothing to answer
                    pass

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler
