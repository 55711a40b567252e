"""Serve the pinned local model as an OpenAI-compatible endpoint on 127.0.0.1.

    python3 templates/local_model/fetch_weights.py     # once: about 491 MB, sha256-checked
    python3 templates/local_model/serve.py             # http://127.0.0.1:8089/v1 until Ctrl-C

It runs llama.cpp's server through ``xllamacpp`` (``pip install 'harnessgit[local-model]'``),
listening on 127.0.0.1 only, with no API key (harnessgit's openai proposer needs none
for a loopback ``base_url``). ``/v1/chat/completions`` and ``/v1/models`` answer.
Replies are capped at ``--max-tokens`` tokens (default 512): a longer one stops with
``finish_reason = "length"``, which harnessgit refuses as truncated. One request is
served at a time (``--parallel`` raises that; each slot shares ``--ctx``).

Exit codes: 0 stopped by Ctrl-C or SIGTERM, 3 the weights or xllamacpp missing, or the
server did not come up.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fetch_weights import is_fetched, weights_path

DEFAULT_PORT = 8089


def params_for(weights: Path, port: int, *, ctx: int, max_tokens: int, parallel: int, threads: int) -> Any:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(weights)
    params.hostnames = ["127.0.0.1"]  # loopback only
    params.port = port
    params.n_ctx = ctx * parallel
    params.n_parallel = parallel
    params.n_predict = max_tokens
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.verbosity = -1
    return params


def wait_until_ready(url: str, timeout: float) -> None:
    """Until ``GET {url}/models`` answers (the model is loaded), or RuntimeError."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=5) as reply:
                json.load(reply)
                return
        except (urllib.error.URLError, OSError, ValueError) as error:
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"the server at {url} did not answer within {timeout:g} s: {error}"
                ) from None
            time.sleep(0.2)


def start(
    port: int = DEFAULT_PORT,
    weights: Path | None = None,
    *,
    ctx: int = 4096,
    max_tokens: int = 512,
    parallel: int = 1,
    threads: int = 2,
    ready_timeout: float = 300,
) -> tuple[Any, str]:
    """Start the server in this process; returns it (kept alive by the caller: the server
    stops when it is garbage-collected) and its base URL, once the model answers."""
    weights = weights or weights_path()
    if not weights.is_file():
        raise RuntimeError(f"no weights at {weights}: run templates/local_model/fetch_weights.py first")
    try:
        import xllamacpp
    except ImportError:
        raise RuntimeError("xllamacpp is not installed: pip install 'harnessgit[local-model]'") from None
    params = params_for(weights, port, ctx=ctx, max_tokens=max_tokens, parallel=parallel, threads=threads)
    server = xllamacpp.Server(params)
    url = f"http://127.0.0.1:{port}/v1"
    wait_until_ready(url, ready_timeout)
    return server, url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Serve the pinned local model on 127.0.0.1 (OpenAI-compatible)."
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    parser.add_argument("--weights", type=Path, help="GGUF file (default: fetch_weights.py's cache)")
    parser.add_argument("--ctx", type=int, default=4096, help="context tokens per request (default 4096)")
    parser.add_argument("--max-tokens", type=int, default=512, help="most tokens in one reply (default 512)")
    parser.add_argument("--parallel", type=int, default=1, help="requests served at once (default 1)")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads (default 2)")
    args = parser.parse_args(argv)
    if args.weights is None and not is_fetched():
        print(
            "serve: the weights are not fetched: run templates/local_model/fetch_weights.py", file=sys.stderr
        )
        return 3
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    started = time.monotonic()
    try:
        server, url = start(
            args.port,
            args.weights,
            ctx=args.ctx,
            max_tokens=args.max_tokens,
            parallel=args.parallel,
            threads=args.threads,
        )
    except RuntimeError as error:
        print(f"serve: {error}", file=sys.stderr)
        return 3
    print(f"serving {url} (loaded in {time.monotonic() - started:.1f} s); Ctrl-C stops it", flush=True)
    try:
        while not stop.wait(1):
            pass
    except KeyboardInterrupt:
        pass
    del server
    return 0


if __name__ == "__main__":
    sys.exit(main())
