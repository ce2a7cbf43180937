"""How long an editor waits for diagnostics after quick edits: `warplint server` over stdio.

    python benchmarks/lsp_latency.py [--file FILE] [-I DIR ...] [--edits 5] [--gap-ms 50] [--debounce-ms N]

Starts `python -m analyzer server` as an editor would, opens FILE (by default
`samples/003_matmul_shared_tiles.cu` of this repository; a corpus file such as
cuda-samples' `reduction_kernel.cu` with `--file`), waits for its first diagnostics, then sends
`--edits` full-text changes `--gap-ms` apart (each appends a comment line, as typing would) and
prints the time from the last edit to the diagnostics published for its version, the time
one analysis of the file takes (the first diagnostics after opening), and every version
that was published (only the last one should be: the server analyses the latest text only).
`-I DIR` is passed to the server, as `check` takes it (cuda-samples' files need
`-I .../cuda-samples/Common`). Where `/proc` tells it (Linux), the server process's CPU time
(user + system) over each of the two intervals is printed too: the fairer figure on a machine
that other work shares.

Issue 16's target: diagnostics for the last of five edits 50 ms apart within 1 s of that edit,
when one analysis of the file takes under 1 s.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_FILE = ROOT / "samples" / "003_matmul_shared_tiles.cu"
TIMEOUT = 300.0  # seconds to wait for any one answer


class Server:
    """`warplint server` on pipes: framed JSON-RPC out, a reader thread for what comes back."""

    def __init__(self, server_args: list[str]) -> None:
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "analyzer", "server", *server_args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.inbox: queue.Queue[tuple[float, dict[str, Any]] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        while True:
            length = 0
            while True:
                line = stream.readline()
                if not line:
                    self.inbox.put(None)
                    return
                if not line.strip():
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            message = json.loads(stream.read(length))
            self.inbox.put((time.monotonic(), message))

    def send(self, message: dict[str, Any]) -> float:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()
        return time.monotonic()

    def next(self) -> tuple[float, dict[str, Any]]:
        item = self.inbox.get(timeout=TIMEOUT)
        if item is None:
            raise SystemExit("the server closed its output")
        return item

    def published(self, uri: str) -> tuple[float, dict[str, Any]]:
        """The next publishDiagnostics of `uri` (when it arrived, its params)."""
        while True:
            at, message = self.next()
            if message.get("method") == "textDocument/publishDiagnostics" and message["params"]["uri"] == uri:
                return at, message["params"]

    def cpu_seconds(self) -> float | None:
        """The server process's CPU time so far (user + system), None where `/proc` does not say."""
        try:
            with open(f"/proc/{self.proc.pid}/stat", encoding="ascii") as stat:
                fields = stat.read().rpartition(")")[2].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime

    def stop(self) -> None:
        self.send({"id": 99, "method": "shutdown", "params": None})
        self.send({"method": "exit", "params": None})
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def _spent(before: float | None, after: float | None) -> float | None:
    return None if before is None or after is None else round(after - before, 3)


def measure(
    path: Path, edits: int, gap: float, debounce_ms: int | None, server_args: list[str] | None = None
) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8", errors="replace")
    uri = path.resolve().as_uri()
    server = Server(server_args or [])
    options = {} if debounce_ms is None else {"debounceMs": debounce_ms}
    server.send(
        {
            "id": 1,
            "method": "initialize",
            "params": {"processId": os.getpid(), "capabilities": {}, "initializationOptions": options},
        }
    )
    while server.next()[1].get("id") != 1:
        pass
    server.send({"method": "initialized", "params": {}})
    document = {"uri": uri, "languageId": "cuda-cpp", "version": 1, "text": text}
    cpu_opened = server.cpu_seconds()
    opened = server.send({"method": "textDocument/didOpen", "params": {"textDocument": document}})
    first, params = server.published(uri)
    cpu_first = server.cpu_seconds()
    one_analysis = first - opened
    versions = [params.get("version")]
    last_sent = 0.0
    cpu_last_sent: float | None = None
    for version in range(2, edits + 2):
        change = {"text": text + f"\n// edit {version}\n"}
        last_sent = server.send(
            {
                "method": "textDocument/didChange",
                "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]},
            }
        )
        if version == edits + 1:
            cpu_last_sent = server.cpu_seconds()
        time.sleep(gap)
    while True:
        at, params = server.published(uri)
        versions.append(params.get("version"))
        if params.get("version") == edits + 1:
            break
    cpu_published = server.cpu_seconds()
    server.stop()
    return {
        "file": str(path),
        "one_analysis_s": round(one_analysis, 3),
        "last_edit_to_diagnostics_s": round(at - last_sent, 3),
        "one_analysis_cpu_s": _spent(cpu_opened, cpu_first),
        "last_edit_to_diagnostics_cpu_s": _spent(cpu_last_sent, cpu_published),
        "published_versions": versions,
        "diagnostics": len(params["diagnostics"]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE, help="the document to open and edit")
    parser.add_argument(
        "-I", dest="include", action="append", default=[], metavar="DIR", help="an include folder for the server"
    )
    parser.add_argument("--edits", type=int, default=5, help="how many quick edits (default 5)")
    parser.add_argument("--gap-ms", type=float, default=50.0, help="milliseconds between edits (default 50)")
    parser.add_argument("--debounce-ms", type=int, default=None, help="the server's debounce (default: its own)")
    args = parser.parse_args(argv)
    server_args = [arg for folder in args.include for arg in ("-I", folder)]
    result = measure(args.file, args.edits, args.gap_ms / 1000, args.debounce_ms, server_args)
    print(f"file: {result['file']}")
    print(
        f"one analysis (open -> first diagnostics): {result['one_analysis_s']:.3f} s"
        f"{_cpu(result['one_analysis_cpu_s'])}"
    )
    print(f"published versions: {result['published_versions']}")
    print(
        f"last of {args.edits} edits {args.gap_ms:g} ms apart -> its diagnostics: "
        f"{result['last_edit_to_diagnostics_s']:.3f} s{_cpu(result['last_edit_to_diagnostics_cpu_s'])}"
    )
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


def _cpu(seconds: float | None) -> str:
    return "" if seconds is None else f" (server CPU {seconds:.3f} s)"


if __name__ == "__main__":
    raise SystemExit(main())
