"""A Hugging Face hub on 127.0.0.1 for tests: the routes huggingface_hub (2.x) calls to load a
model, answered from repositories held in memory. Point the app at it with HF_ENDPOINT.

Routes (read from huggingface_hub's hf_api.py / file_download.py / _snapshot_download.py):
  GET  /api/models/<repo>[/revision/<rev>]    model_info: sha, siblings with sizes (blobs=True),
                                               safetensors parameter counts
  GET  /api/models/<repo>/tree/<rev>           list_repo_tree: files with size, oid, lfs
  HEAD /<repo>/resolve/<rev>/<file>            metadata: X-Repo-Commit, ETag, Content-Length,
                                               X-Linked-Etag and X-Linked-Size for LFS files
  GET  /<repo>/resolve/<rev>/<file>            the bytes (Range honoured)
Every GET of a file is recorded in `downloads`, so a test can see that no weight was fetched.
`cut` names files whose download stops half-way, every time (the network gone past that byte).
"""
from __future__ import annotations

import hashlib
import json
import re
import struct
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlparse

_DTYPE_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I8": 1, "U8": 1, "BOOL": 1}
_LFS_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".h5", ".msgpack", ".onnx")


@dataclass
class Repo:
    files: dict[str, bytes]
    sha: str = ""

    def __post_init__(self):
        digest = hashlib.sha1()
        for name in sorted(self.files):
            digest.update(name.encode() + hashlib.sha256(self.files[name]).digest())
        self.sha = digest.hexdigest()        # 40 hex digits: a commit hash to huggingface_hub


def repo_from_folder(folder: Path) -> Repo:
    return Repo({p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()})


def _safetensors_parameters(data: bytes) -> dict[str, int]:
    """{dtype: parameter count} from a safetensors header (what the hub's listing reports)."""
    (length,) = struct.unpack("<Q", data[:8])
    counts: dict[str, int] = {}
    for key, entry in json.loads(data[8:8 + length]).items():
        if key != "__metadata__":
            count = 1
            for dim in entry["shape"]:
                count *= int(dim)
            counts[entry["dtype"]] = counts.get(entry["dtype"], 0) + count
    return counts


def _is_lfs(name: str) -> bool:
    return name.endswith(_LFS_SUFFIXES)


@dataclass
class Hub:
    repos: dict[str, Repo] = field(default_factory=dict)
    cut: set[tuple[str, str]] = field(default_factory=set)      # (repo id, file name)
    downloads: list[tuple[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def model_info(self, repo_id: str) -> dict:
        repo = self.repos[repo_id]
        siblings, parameters = [], {}
        for name, data in sorted(repo.files.items()):
            sibling = {"rfilename": name, "size": len(data), "blobId": hashlib.sha1(data).hexdigest()}
            if _is_lfs(name):
                sibling["lfs"] = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest(), "pointerSize": 134}
            siblings.append(sibling)
            if name.endswith(".safetensors"):
                for dtype, count in _safetensors_parameters(data).items():
                    parameters[dtype] = parameters.get(dtype, 0) + count
        info = {"id": repo_id, "modelId": repo_id, "sha": repo.sha, "private": False, "gated": False,
                "disabled": False, "tags": [], "siblings": siblings}
        if parameters:
            info["safetensors"] = {"parameters": parameters, "total": sum(parameters.values())}
        return info

    def tree(self, repo_id: str) -> list[dict]:
        entries = []
        for name, data in sorted(self.repos[repo_id].files.items()):
            entry = {"type": "file", "oid": hashlib.sha1(data).hexdigest(), "size": len(data), "path": name}
            if _is_lfs(name):
                entry["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 134}
            entries.append(entry)
        return entries


class _Handler(BaseHTTPRequestHandler):
    hub: Hub
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):     # quiet: a test reads `downloads`, not a log
        pass

    def _send(self, status: int, body: bytes = b"", headers: dict | None = None, head: bool = False):
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, str(value))
        self.send_header("Content-Length", str((headers or {}).get("Content-Length", len(body))))
        self.end_headers()
        if not head and body:
            self.wfile.write(body)

    def _json(self, payload, repo: Repo | None = None):
        headers = {"Content-Type": "application/json"}
        if repo is not None:
            headers["X-Repo-Commit"] = repo.sha
        self._send(200, json.dumps(payload).encode(), headers)

    def _not_found(self, code: str = "RepoNotFound", head: bool = False):
        self._send(404, b'{"error": "not found"}', {"X-Error-Code": code, "X-Error-Message": "not found",
                                                   "Content-Type": "application/json"}, head=head)

    def _repo_id(self, rest: str) -> str | None:
        for repo_id in sorted(self.hub.repos, key=len, reverse=True):
            if rest == repo_id or rest.startswith(repo_id + "/"):
                return repo_id
        return None

    def do_GET(self):
        self._route(head=False)

    def do_HEAD(self):
        self._route(head=True)

    def _route(self, head: bool):
        path = unquote(urlparse(self.path).path)
        if path.startswith("/api/models/"):
            rest = path[len("/api/models/"):]
            repo_id = self._repo_id(rest)
            if repo_id is None:
                return self._not_found(head=head)
            tail = rest[len(repo_id):]
            if tail in ("", "/") or re.fullmatch(r"/revision/[^/]+", tail):
                return self._json(self.hub.model_info(repo_id), self.hub.repos[repo_id])
            if re.fullmatch(r"/tree/[^/]+/?", tail):
                return self._json(self.hub.tree(repo_id), self.hub.repos[repo_id])
            return self._not_found("EntryNotFound", head)
        match = re.fullmatch(r"/(.+?)/resolve/([^/]+)/(.+)", path)
        repo_id = match and self._repo_id(match.group(1) + "/resolve")
        if not match or repo_id is None or match.group(1) != repo_id:
            return self._not_found(head=head)
        self._file(self.hub.repos[repo_id], repo_id, match.group(3), head)

    def _file(self, repo: Repo, repo_id: str, name: str, head: bool):
        data = repo.files.get(name)
        if data is None:
            return self._send(404, b"", {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": repo.sha}, head=head)
        etag = hashlib.sha256(data).hexdigest() if _is_lfs(name) else hashlib.sha1(data).hexdigest()
        headers = {"X-Repo-Commit": repo.sha, "ETag": f'"{etag}"', "Accept-Ranges": "bytes",
                   "Content-Type": "application/octet-stream"}
        if _is_lfs(name):
            headers.update({"X-Linked-Etag": f'"{etag}"', "X-Linked-Size": len(data)})
        if head:
            headers["Content-Length"] = len(data)
            return self._send(200, b"", headers, head=True)
        with self.hub.lock:
            self.hub.downloads.append((repo_id, name))
        start = 0
        ranged = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range", ""))
        if ranged:
            start = int(ranged.group(1))
        if (repo_id, name) in self.hub.cut:
            half = len(data) // 2
            if start >= half:                       # nothing more ever arrives past the cut
                self.close_connection = True
                self.connection.shutdown(2)
                return
            self.send_response(206 if start else 200)
            for key, value in headers.items():
                self.send_header(key, str(value))
            self.send_header("Content-Length", str(len(data) - start))
            self.end_headers()
            self.wfile.write(data[start:half])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
            return
        if start:
            headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
        self._send(206 if start else 200, data[start:], headers)


class HubServer:
    """with HubServer(hub) as server: ... server.url is the HF_ENDPOINT to use."""

    def __init__(self, hub: Hub):
        handler = type("Handler", (_Handler,), {"hub": hub})
        self.hub = hub
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "HubServer":
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        return False
