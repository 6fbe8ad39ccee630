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

from tsid_py.errors import InvalidParameterError

LOCALHOST = "127.0.0.1"
_PR_SET_PDEATHSIG = 1  # prctl option: the signal this process gets when its parent dies
ANSWER_WITHIN = 3.0  # [s] a server given by its address must answer within this (meshcat waits forever)


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


def check_server(zmq_url: str, timeout: float = ANSWER_WITHIN) -> str:
    """The page of the meshcat server at ``zmq_url``, asked for within ``timeout`` seconds.

    ``zmq_url`` is the ``zmq_url=tcp://HOST:PORT`` that ``meshcat-server`` prints. Raises
    InvalidParameterError for another kind of address (its ``web_url``, a page) and when no server
    answers in time (meshcat's own client would wait for an answer forever).
    """
    advice = "start `meshcat-server` and pass the zmq_url (tcp://...) it prints, not its web page"
    if not zmq_url.startswith("tcp://"):
        raise InvalidParameterError(f"meshcat server address {zmq_url}: not a ZMQ address; {advice}")
    import zmq

    socket: zmq.Socket = zmq.Context.instance().socket(zmq.REQ)
    socket.setsockopt(zmq.LINGER, 0)  # closing never waits for a request nobody took
    try:
        socket.connect(zmq_url)
        socket.send(b"url")
        if socket.poll(int(timeout * 1000)):
            return socket.recv().decode("utf-8")
    except zmq.ZMQError as error:  # a malformed address (no port, a bad host)
        raise InvalidParameterError(f"meshcat server address {zmq_url}: {error}; {advice}") from None
    finally:
        socket.close()
    raise InvalidParameterError(f"no meshcat server answered at {zmq_url} within {timeout:g} s: {advice}")


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
