#!/usr/bin/env python3
"""A loopback git server over smart HTTP for the controllers family's Argo CD (argocd.py).

Usage: gitserver.py ROOT CERT KEY PORT

Serves https://<host>/<path>.git from ROOT/<host>/<path>.git (bare repositories) on
127.0.0.1:PORT through git's own CGI program, git-http-backend (`git help http-backend`), so the
repository URLs fleetc writes (`gitops repo=`) are served unchanged once /etc/hosts points their
host at 127.0.0.1. Argo CD's repo server lists refs with go-git and fetches with the git CLI
(argo-cd v3.2.1 util/git/client.go: `listRemote`, `runCmdOutput`): both speak smart HTTP, which
git-http-backend answers (read-only: upload-pack only, receive-pack is off by default).
"""

import http.server
import os
import ssl
import subprocess
import sys
from pathlib import Path

BACKEND = "/usr/lib/git-core/git-http-backend"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    root = Path(".")

    def do_GET(self):
        self.cgi()

    def do_POST(self):
        self.cgi()

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def cgi(self):
        host = (self.headers.get("Host") or "").split(":")[0]
        path, _, query = self.path.partition("?")
        project = self.root / host
        if not host or not project.is_dir() or ".." in path:
            self.send_error(404)
            return
        data = self.body()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": str(project),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(data)),
            "REMOTE_ADDR": self.client_address[0],
            "SERVER_PROTOCOL": "HTTP/1.1",
            "GATEWAY_INTERFACE": "CGI/1.1",
        }
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        r = subprocess.run([BACKEND], input=data, env=env, capture_output=True)
        out = r.stdout
        sep = out.find(b"\r\n\r\n")
        head, rest = (out[:sep], out[sep + 4:]) if sep >= 0 else out.split(b"\n\n", 1) if b"\n\n" in out else (b"", out)
        status, headers = 200, []
        for ln in head.replace(b"\r\n", b"\n").split(b"\n"):
            if b":" not in ln:
                continue
            k, v = ln.split(b":", 1)
            k, v = k.decode().strip(), v.decode().strip()
            if k.lower() == "status":
                status = int(v.split()[0])
            else:
                headers.append((k, v))
        if r.returncode != 0 and not head:
            sys.stderr.write(r.stderr.decode(errors="replace"))
            self.send_error(500)
            return
        self.send_response(status)
        for k, v in headers:
            if k.lower() != "content-length":
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(rest)))
        self.end_headers()
        self.wfile.write(rest)


def main():
    root, cert, key, port = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    Handler.root = Path(root)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True

        def finish_request(self, request, client_address):
            # The TLS handshake in the connection's own thread, so a stalled client holds up
            # no one else.
            request.settimeout(60)
            try:
                request = ctx.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError) as e:
                sys.stderr.write(f"TLS handshake with {client_address}: {e}\n")
                return
            super().finish_request(request, client_address)

    server = Server(("127.0.0.1", port), Handler)
    print(f"git server on https://127.0.0.1:{port}, repositories under {root}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
