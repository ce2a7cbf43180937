"""`warplint server` driven over stdio as an editor drives it: JSON-RPC messages with
Content-Length framing on the server's stdin and stdout."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from analyzer.api import Options, check_source
from analyzer.cli import main
from analyzer.server import (
    Scheduler,
    analyse_document,
    code_actions,
    code_points,
    document_diagnostics,
    suppression_edit,
    utf16_position,
)

# the server needs pygls (`warplint[lsp]`); everything else here runs without it
needs_pygls = pytest.mark.skipif(importlib.util.find_spec("pygls") is None, reason="pygls is not installed")

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 120  # seconds for one answer: the first analysis builds the parser

# Line 9 has a character outside the BMP before the conflicting read: 1 code point but
# 2 UTF-16 code units, so LSP characters there are one more than warplint's column - 1.
TRANSPOSE = """\
__global__ void transpose(float *out, const float *in, int n)
{
    __shared__ float tile[32][32];
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    /* \U0001d70b */ out[y * n + x] = tile[threadIdx.x][threadIdx.y];
}

void launch(float *out, const float *in)
{
    dim3 grid(32, 32), block(32, 32);
    transpose<<<grid, block>>>(out, in, 1024);
}
"""

# The padding is checked by re-analysing the kernel when that works; either way the fix
# (and so the quick fix) pads the last dimension by one element.
FIX_CHECKED = (
    "pad the last dimension: `__shared__ float tile[32][32 + 1]` (33 floats per row) "
    "makes this access conflict-free without making another access to `tile` worse"
)
FIX_UNCHECKED = (
    "padding the last dimension (`tile[...][32 + 1]`) or an XOR swizzle (index the column "
    "as `col ^ row`) may help; warplint could not re-analyse the kernel to check either"
)

NORM = """\
struct vec3d { float x, y, z; };

__global__ void norm(const vec3d *v, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = v[i].x + v[i].y + v[i].z;
}

void launch(const vec3d *v, float *out)
{
    norm<<<4, 256>>>(v, out);
}
"""


class Client:
    """A minimal LSP client: frames messages, reads the server's in a thread."""

    def __init__(self, *args: str) -> None:
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "analyzer", "server", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=ROOT,
            env=env,
        )
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        while True:
            headers = {}
            while True:
                line = stream.readline()
                if not line:
                    self.messages.put(None)
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.decode("ascii").partition(":")
                headers[name.strip().lower()] = value.strip()
            body = stream.read(int(headers["content-length"]))
            self.messages.put(json.loads(body.decode("utf-8")))

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        answer = self.wait(lambda m: m.get("id") == self.next_id and "method" not in m)
        assert "error" not in answer, answer
        return answer["result"]

    def wait(self, wanted: Any) -> dict[str, Any]:
        while True:
            try:
                message = self.messages.get(timeout=TIMEOUT)
            except queue.Empty:
                pytest.fail(f"no answer from the server in {TIMEOUT} s; stderr: {self.stderr()}")
            if message is None:
                pytest.fail(f"the server closed its output; stderr: {self.stderr()}")
            if wanted(message):
                return message

    def diagnostics(self, uri: str, fixed: bool = False) -> list[dict[str, Any]]:
        """The next diagnostics published for `uri`; with `fixed`, those published again once
        the fixes are verified (the server publishes the diagnostics first)."""
        message = self.wait(
            lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
        )
        return self.diagnostics(uri) if fixed else message["params"]["diagnostics"]

    def publication(self, uri: str) -> dict[str, Any]:
        """The next publishDiagnostics of `uri`: `uri`, `version` and `diagnostics`."""
        message = self.wait(
            lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
        )
        return message["params"]

    def drain(self, seconds: float) -> list[dict[str, Any]]:
        """Every message that arrives within `seconds`."""
        import time

        out, deadline = [], time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                message = self.messages.get(timeout=left)
            except queue.Empty:
                break
            if message is not None:
                out.append(message)
        return out

    def stderr(self) -> str:
        if self.proc.poll() is None:
            return "(still running)"
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode("utf-8", "replace")[-3000:]

    def close(self) -> int:
        if self.proc.poll() is None:
            self.proc.kill()
        return self.proc.wait(timeout=30)


@pytest.fixture
def client(tmp_path: Path):
    c = Client()
    result = c.request("initialize", {"processId": os.getpid(), "rootUri": tmp_path.as_uri(), "capabilities": {}})
    assert result["serverInfo"]["name"] == "warplint"
    c.notify("initialized", {})
    yield c
    c.close()


def open_document(client: Client, path: Path, text: str) -> str:
    uri = path.as_uri()
    client.notify(
        "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "cuda-cpp", "version": 1, "text": text}}
    )
    return uri


def rng(line: int, start: int, end_line: int, end: int) -> dict[str, Any]:
    return {"start": {"line": line, "character": start}, "end": {"line": end_line, "character": end}}


@needs_pygls
def test_server_publishes_a_bank_conflict_with_utf16_ranges_and_fixes_it(client: Client, tmp_path: Path) -> None:
    # the buffer is never saved: the server analyses the text it was sent
    uri = open_document(client, tmp_path / "transpose.cu", TRANSPOSE)
    diagnostics = client.diagnostics(uri, fixed=True)
    assert [(d["code"], d["source"], d["severity"], d["range"]) for d in diagnostics] == [
        ("WL101", "warplint", 2, rng(9, 30, 9, 60)),  # `tile[threadIdx.x][threadIdx.y]`
    ]
    d = diagnostics[0]
    assert d["message"] == "32-way bank conflict on `tile`: 32 wavefronts per request, ideal 1"
    # the first reference of `warplint explain WL101`
    assert d["codeDescription"] == {
        "href": "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#shared-memory-7-x"
    }
    related = [(r["location"]["range"], r["message"]) for r in d["relatedInformation"]]
    title = "warplint: pad `tile` (`32` -> `33`) [WL101]"
    assert related == [
        (rng(9, 30, 9, 60), "in kernel `transpose`"),
        (rng(9, 30, 9, 60), "lanes 0, 1, 2, …, 31 (32 lanes) hit bank 0 at 32 different words (0, 32, 64, …, 992)"),
        (rng(9, 30, 9, 60), "fix: " + (FIX_CHECKED if "pad the" in related[2][1] else FIX_UNCHECKED)),
        # the declarator `tile[32][32]`, when the analysis records the shared arrays
        *([(rng(2, 21, 2, 33), "`tile` declared here")] if len(related) == 5 else []),
        (rng(2, 30, 2, 32), title),  # its last dimension, that the quick fix changes
    ]

    actions = client.request(
        "textDocument/codeAction",
        {"textDocument": {"uri": uri}, "range": rng(9, 35, 9, 35), "context": {"diagnostics": diagnostics}},
    )
    assert len(actions) == 2  # the fix, then the suppression comment
    action = actions[0]
    assert actions[1]["title"] == "warplint: suppress WL101 on this line (`warplint: ignore[WL101]`)"
    assert actions[1]["edit"] == {
        "changes": {uri: [{"range": rng(9, 61, 9, 61), "newText": "  // warplint: ignore[WL101]"}]}
    }
    assert action["kind"] == "quickfix"
    assert action["title"] == title
    assert action["edit"] == {"changes": {uri: [{"range": rng(2, 30, 2, 32), "newText": "33"}]}}
    assert action["diagnostics"][0]["code"] == "WL101"

    # nothing to fix elsewhere: no action on the first line
    assert (
        client.request(
            "textDocument/codeAction",
            {"textDocument": {"uri": uri}, "range": rng(0, 0, 0, 5), "context": {"diagnostics": []}},
        )
        == []
    )

    # the editor applies the edit as an incremental change: the conflict is gone
    edit = action["edit"]["changes"][uri][0]
    client.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"range": edit["range"], "text": edit["newText"]}],
        },
    )
    assert client.diagnostics(uri) == []

    # saving publishes again (still clean)
    client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    assert client.diagnostics(uri) == []

    assert client.request("shutdown", None) is None
    client.notify("exit", None)
    assert client.proc.wait(timeout=30) == 0


@needs_pygls
def test_server_offers_align_16_for_a_misaligned_struct(client: Client, tmp_path: Path) -> None:
    uri = open_document(client, tmp_path / "norm.cu", NORM)
    diagnostics = client.diagnostics(uri, fixed=True)
    wl301 = [d for d in diagnostics if d["code"] == "WL301"]
    assert [d["range"] for d in wl301] == [rng(5, 13, 5, 19)]  # `v[i].x`
    actions = client.request(
        "textDocument/codeAction",
        {"textDocument": {"uri": uri}, "range": rng(5, 13, 5, 13), "context": {"diagnostics": wl301}},
    )
    assert [(a["title"], a["edit"]) for a in actions if a.get("isPreferred")] == [
        (
            "warplint: align `struct vec3d` (`struct` -> `struct __align__(16)`) [WL301]",
            {"changes": {uri: [{"range": rng(0, 0, 0, 6), "newText": "struct __align__(16)"}]}},
        )
    ]
    # applied, the struct is 16 bytes, one load per element: no WL301 any more
    client.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"text": NORM.replace("struct vec3d", "struct __align__(16) vec3d")}],
        },
    )
    assert [d["code"] for d in client.diagnostics(uri) if d["code"] == "WL301"] == []
    client.request("shutdown", None)
    client.notify("exit", None)
    assert client.proc.wait(timeout=30) == 0


@needs_pygls
def test_server_reports_a_syntax_error_of_the_buffer(client: Client, tmp_path: Path) -> None:
    uri = open_document(client, tmp_path / "broken.cu", "__global__ void k(float *a) { a[threadIdx.x] = ; }\n")
    diagnostics = client.diagnostics(uri)
    assert [(d["code"], d["severity"], d["range"]["start"]) for d in diagnostics] == [
        ("WL901", 1, {"line": 0, "character": 47})
    ]  # the stray `;`


@needs_pygls
def test_server_honours_the_configuration_of_the_document_s_folder(client: Client, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.warplint]\nignore = ["bank-conflict"]\n')
    uri = open_document(client, tmp_path / "transpose.cu", TRANSPOSE)
    assert client.diagnostics(uri) == []  # WL101 is ignored there, as `check` would ignore it
    # a broken configuration is one error on the first line, read again at the next edit
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\nselect = 3\n")
    client.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": TRANSPOSE + "\n"}]},
    )
    (broken,) = client.diagnostics(uri)
    assert (broken["code"], broken["severity"], broken["range"]) == ("config", 1, rng(0, 0, 0, 0))
    assert "pyproject.toml:2:" in broken["message"]


@needs_pygls
def test_server_hovers_an_access_with_its_cost_and_lanes_picture(client: Client, tmp_path: Path) -> None:
    uri = open_document(client, tmp_path / "transpose.cu", TRANSPOSE)
    assert client.publication(uri)["version"] == 1

    def hover(line: int, character: int) -> Any:
        where = {"line": line, "character": character}
        return client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": where})

    shared = hover(9, 40)  # inside `tile[threadIdx.x][threadIdx.y]`, after a surrogate pair
    assert shared["contents"]["kind"] == "markdown"
    value = shared["contents"]["value"]
    assert value.startswith("**warplint**: shared load `tile[threadIdx.x][threadIdx.y]` in kernel `transpose`: ")
    assert "32 wavefronts per request, ideal 1 (32x the ideal)" in value
    assert "```text\n" in value and "the costliest request: 32 wavefronts, ideal 1" in value
    assert "global store `out[y * n + x]`" in hover(9, 15)["contents"]["value"]
    assert hover(0, 3) is None  # no access there


@needs_pygls
def test_server_pads_a_macro_size_and_suppresses_by_comment(client: Client, tmp_path: Path) -> None:
    text = TRANSPOSE.replace("__global__", "#define TILE_DIM 32\n__global__", 1).replace(
        "tile[32][32]", "tile[TILE_DIM][TILE_DIM]"
    )
    uri = open_document(client, tmp_path / "macro.cu", text)
    (diagnostic,) = client.diagnostics(uri, fixed=True)
    actions = client.request(
        "textDocument/codeAction",
        {"textDocument": {"uri": uri}, "range": rng(10, 40, 10, 40), "context": {"diagnostics": [diagnostic]}},
    )
    assert [a["title"] for a in actions] == [
        "warplint: pad `tile` (`TILE_DIM` -> `TILE_DIM + 1`) [WL101]",
        "warplint: suppress WL101 on this line (`warplint: ignore[WL101]`)",
    ]
    assert actions[0]["edit"]["changes"][uri] == [{"range": rng(3, 36, 3, 44), "newText": "TILE_DIM + 1"}]
    (suppress,) = actions[1]["edit"]["changes"][uri]
    client.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"range": suppress["range"], "text": suppress["newText"]}],
        },
    )
    published = client.publication(uri)
    assert (published["version"], published["diagnostics"]) == (2, [])


@needs_pygls
def test_five_quick_edits_publish_diagnostics_for_the_last_version_only(client: Client, tmp_path: Path) -> None:
    uri = open_document(client, tmp_path / "transpose.cu", TRANSPOSE)
    assert client.publication(uri)["version"] == 1
    for version in range(2, 7):
        client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"text": TRANSPOSE + "//" * version}],
            },
        )
        time.sleep(0.05)
    versions = []
    while not versions or versions[-1] != 6:
        last = client.publication(uri)
        versions.append(last["version"])
    assert set(versions) <= {1, 6}  # (1: the opened text, published again with its fix)
    assert [d["code"] for d in last["diagnostics"]] == ["WL101"]
    later = [m for m in client.drain(1.0) if m.get("method") == "textDocument/publishDiagnostics"]
    assert {m["params"]["version"] for m in later} <= {6}  # nothing stale afterwards either


# ----------------------------------------------------------------------------- without a client


def test_utf16_positions_count_surrogate_pairs_and_clamp_to_the_text() -> None:
    lines = ["a\U0001d70bb", "xy"]
    assert utf16_position(lines, 1, 1) == {"line": 0, "character": 0}
    assert utf16_position(lines, 1, 3) == {"line": 0, "character": 3}  # after the pair
    assert utf16_position(lines, 9, 1) == {"line": 1, "character": 0}


def test_a_macro_dimension_is_padded_in_its_own_spelling(tmp_path: Path) -> None:
    text = TRANSPOSE.replace("__global__", "#define W 32\n__global__", 1).replace("tile[32][32]", "tile[W][W]")
    path = str(tmp_path / "macro.cu")
    fixed = document_diagnostics(check_source(path, text), text, "file:///macro.cu")
    assert [(f.diagnostic["code"], f.diagnostic["range"]) for f in fixed] == [("WL101", rng(10, 30, 10, 60))]
    # the document reads `W` where the preprocessed text reads `32`: `W + 1`, never `33`
    assert fixed[0].edits == [{"range": rng(3, 29, 3, 30), "newText": "W + 1"}]
    assert [a["title"] for a in code_actions(fixed, "file:///macro.cu", rng(0, 0, 20, 0))] == [
        "warplint: pad `tile` (`W` -> `W + 1`) [WL101]"
    ]


def test_a_dimension_written_as_an_expression_gets_plus_padding(tmp_path: Path) -> None:
    text = TRANSPOSE.replace("tile[32][32]", "tile[32][16 * 2]")
    fixed = document_diagnostics(check_source(str(tmp_path / "e.cu"), text), text, "file:///e.cu")
    assert [f.edits for f in fixed] == [[{"range": rng(2, 30, 2, 36), "newText": "16 * 2 + 1"}]]
    assert [a["title"] for a in code_actions(fixed, "file:///e.cu", rng(9, 40, 9, 40))] == [
        "warplint: pad `tile` (`16 * 2` -> `16 * 2 + 1`) [WL101]"
    ]


# ----------------------------------------------------------------------------- the rules' edits


def _wl301_edits(text: str, tmp_path: Path) -> list[tuple[str, tuple]]:
    report = check_source(str(tmp_path / "s.cu"), text)
    return [
        (f.code, tuple((report.locate(e.span).line, report.locate(e.span).column, e.text, e.old) for e in f.edits))
        for f in report.findings
        if f.code == "WL301"
    ]


def test_align_edit_goes_after_the_keyword_of_the_one_definition(tmp_path: Path) -> None:
    for keyword in ("struct", "class"):
        text = NORM.replace("struct vec3d {", f"{keyword} vec3d {{ public:")
        assert _wl301_edits(text, tmp_path) == [("WL301", ((1, 1, f"{keyword} __align__(16)", keyword),))]
    # a 24-byte struct: the fix and the edit say 16 (two 16-byte loads for 32 bytes)
    text = NORM.replace("float x, y, z;", "float x, y, z, a, b, c;")
    assert _wl301_edits(text, tmp_path) == [("WL301", ((1, 1, "struct __align__(16)", "struct"),))]


def test_no_align_edit_where_the_definition_is_not_one_plain_struct(tmp_path: Path) -> None:
    typedef = NORM.replace("struct vec3d { float x, y, z; };", "typedef struct { float x, y, z; } vec3d;")
    assert _wl301_edits(typedef, tmp_path) == [("WL301", ())]
    aligned4 = NORM.replace("struct vec3d", "struct __align__(4) vec3d", 1)
    assert _wl301_edits(aligned4, tmp_path) == [("WL301", ())]
    float3 = NORM.replace("struct vec3d { float x, y, z; };\n", "").replace("vec3d", "float3")
    assert _wl301_edits(float3, tmp_path) == [("WL301", ())]  # the fix is `float4`, not an edit


def test_server_without_pygls_is_a_clear_error_with_exit_2(monkeypatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "pygls", None)  # `import pygls` raises ImportError
    assert main(["server"]) == 2
    assert capsys.readouterr().err == "warplint: error: `warplint server` needs pygls: pip install 'warplint[lsp]'\n"


def test_the_scheduler_debounces_quick_edits_into_one_analysis() -> None:
    started, published = [], []

    async def edits() -> None:
        scheduler = Scheduler(lambda uri, text: started.append(text) or text, lambda *a: published.append(a), 0.15)
        for version in range(1, 6):
            scheduler.changed("file:///k.cu", f"v{version}", version)
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.6)

    asyncio.run(edits())
    assert started == ["v5"]
    assert published == [("file:///k.cu", 5, "v5")]


def test_the_scheduler_cancels_the_analysis_of_an_older_version() -> None:
    started, finished, published = [], [], []

    def analyse(uri: str, text: str) -> str:
        started.append(text)
        deadline = time.monotonic() + 0.6
        while time.monotonic() < deadline:  # Python steps: the cancellation lands between them
            time.sleep(0.005)
        finished.append(text)
        return text

    async def edits() -> None:
        scheduler = Scheduler(analyse, lambda *a: published.append(a), debounce=0.0)
        for version in range(1, 6):
            scheduler.changed("file:///k.cu", f"v{version}", version)
            await asyncio.sleep(0.05)
        await asyncio.sleep(2.0)

    asyncio.run(edits())
    assert started[0] == "v1" and started[-1] == "v5"
    assert finished == ["v5"]  # v1 was stopped when v2 came, the others never started or were stopped
    assert published == [("file:///k.cu", 5, "v5")]


def test_suppression_comments_go_at_the_end_of_the_line_or_into_the_one_there() -> None:
    lines = ["  s[tid] = 0;", "  t[tid] = 0;  // warplint: ignore[WL201]", "  #define X(a) s[a] \\"]
    assert suppression_edit(lines, 0, "WL101") == {
        "range": rng(0, 13, 0, 13),
        "newText": "  // warplint: ignore[WL101]",
    }
    assert suppression_edit(lines, 1, "WL101") == {"range": rng(1, 40, 1, 40), "newText": ",WL101"}
    assert suppression_edit(lines, 1, "WL201") is None  # already silenced there
    assert suppression_edit(lines, 2, "WL101") is None  # a comment would swallow the next line


def test_lsp_characters_become_code_point_columns() -> None:
    lines = ["a\U0001d70bb"]
    assert [code_points(lines, 0, c) for c in (0, 1, 3, 9)] == [1, 2, 3, 4]


TWO_INSTANCES = """\
template <int S>
__global__ void scale(float *out)
{
    __shared__ float s[32 * S];
    s[threadIdx.x * S] = 1.0f;
    out[threadIdx.x] = s[threadIdx.x];
}

void launch(float *out)
{
    scale<2><<<1, 32>>>(out);
    scale<4><<<1, 32>>>(out);
}
"""


def test_the_server_shows_one_diagnostic_per_place_as_check_prints(tmp_path: Path) -> None:
    # two instances conflict at one place (2-way and 4-way): one diagnostic, the worst, as `check`
    path = tmp_path / "two.cu"
    result = analyse_document(path.as_uri(), str(path), TWO_INSTANCES, lambda _: Options())
    assert not isinstance(result, str)
    assert [(d.diagnostic["code"], d.diagnostic["range"], d.diagnostic["message"]) for d in result.fixed] == [
        ("WL101", rng(4, 4, 4, 22), "4-way bank conflict on `s`: 4 wavefronts per request, ideal 1")
    ]
    assert [(i["kernel"], i["cost"]) for i in result.report.findings[0].args["instances"]] == [
        ("scale<2>", 2),
        ("scale<4>", 4),
    ]
