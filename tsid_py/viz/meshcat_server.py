"""A meshcat server that listens on 127.0.0.1 only, started as a child process.

``meshcat-server`` binds its ZMQ socket to 127.0.0.1 but its web server to every interface
(tornado's ``listen(port)``); this one binds both to the loopback interface, so a demo never
exposes a port to the network. ``python -m tsid_py.viz.meshcat_server`` runs it in the foreground.

The server does not outlive the process that started it: the parent stops it at exit and on
SIGTERM / SIGINT (the ``tsid-py`` command unwinds on those), and the server itself watches its
parent, so even after a SIGKILL of the parent it exits within a second (Linux also sends it
SIGTERM at once, ``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

LOCALHOST = "127.0.0.1"
_PR_SET_PDEATHSIG = 1  # prctl option: the signal this process gets when its parent dies


@dataclass
class LocalServer:
    """A running server: its process, the ZMQ address for clients, the page for browsers."""

    process: subprocess.Popen
    zmq_url: str
    web_url: str

    def stop(self) -> None:
        """Terminate the server process."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_local_server(timeout: float = 20.0) -> LocalServer:
    """Start the server in a child process and wait for its addresses."""
    process = subprocess.Popen(
        [sys.executable, "-u", "-m", "tsid_py.viz.meshcat_server", "--parent", str(os.getpid())],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    urls: dict[str, str] = {}
    while len(urls) < 2:
        line = process.stdout.readline()  # type: ignore[union-attr]  # stdout=PIPE
        if not line:
            process.wait(timeout=timeout)
            raise RuntimeError(f"the meshcat server exited with code {process.returncode}")
        key, _, value = line.strip().partition("=")
        if key in ("zmq_url", "web_url"):
            urls[key] = value
    server = LocalServer(process, urls["zmq_url"], urls["web_url"])
    atexit.register(server.stop)
    return server


def watch_parent(parent: int, period: float = 0.5) -> None:
    """Exit this process when ``parent`` is gone (a daemon thread polling it every ``period`` s)."""
    if sys.platform.startswith("linux"):  # the kernel's signal when the parent dies, at once
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)

    def poll() -> None:
        while os.getppid() == parent:
            time.sleep(period)
        os._exit(0)

    threading.Thread(target=poll, name="watch-parent", daemon=True).start()


def main(argv: list[str] | None = None) -> None:
    import argparse

    import tornado.web

    parser = argparse.ArgumentParser(description="a meshcat server on 127.0.0.1")
    parser.add_argument("--parent", type=int, default=None, help="exit when this process is gone")
    args = parser.parse_args(argv)
    if args.parent is not None:
        watch_parent(args.parent)
    signal.signal(signal.SIGTERM, lambda signum, frame: os._exit(0))
    from meshcat.servers import zmqserver

    class LoopbackApplication(tornado.web.Application):
        def listen(self, port: int, address: str = LOCALHOST, **kwargs):  # type: ignore[override]  # loopback only
            return super().listen(port, address=LOCALHOST, **kwargs)

    class LoopbackBridge(zmqserver.ZMQWebSocketBridge):
        def make_app(self):
            return LoopbackApplication(
                [
                    (
                        r"/static/(.*)",
                        zmqserver.StaticFileHandlerNoCache,
                        {"path": zmqserver.VIEWER_ROOT, "default_filename": zmqserver.VIEWER_HTML},
                    ),
                    (r"/", zmqserver.WebSocketHandler, {"bridge": self}),
                ]
            )

    bridge = LoopbackBridge(host=LOCALHOST)
    print(f"zmq_url={bridge.zmq_url}")
    print(f"web_url={bridge.web_url}")
    with contextlib.suppress(KeyboardInterrupt):
        bridge.run()


if __name__ == "__main__":
    main()
