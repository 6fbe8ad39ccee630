"""A meshcat server that listens on 127.0.0.1 only, started as a child process.

``meshcat-server`` binds its ZMQ socket to 127.0.0.1 but its web server to every interface
(tornado's ``listen(port)``); this one binds both to the loopback interface, so a demo never
exposes a port to the network. ``python -m tsid_py.viz.meshcat_server`` runs it in the foreground.
"""

from __future__ import annotations

import atexit
import contextlib
import subprocess
import sys
from dataclasses import dataclass

LOCALHOST = "127.0.0.1"


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
        [sys.executable, "-u", "-m", "tsid_py.viz.meshcat_server"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    urls = {}
    while len(urls) < 2:
        line = process.stdout.readline()
        if not line:
            process.wait(timeout=timeout)
            raise RuntimeError(f"the meshcat server exited with code {process.returncode}")
        key, _, value = line.strip().partition("=")
        if key in ("zmq_url", "web_url"):
            urls[key] = value
    server = LocalServer(process, urls["zmq_url"], urls["web_url"])
    atexit.register(server.stop)
    return server


def main() -> None:
    import tornado.web
    from meshcat.servers import zmqserver

    class LoopbackApplication(tornado.web.Application):
        def listen(self, port: int, address: str = LOCALHOST, **kwargs):
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
