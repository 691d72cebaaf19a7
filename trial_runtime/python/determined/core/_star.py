"""The transport of DistributedContext's collectives: a TCP star.

Member 0 of a group (the chief, or a node's local chief) listens on a port
of its own and every other member holds one connection to it; gather() sends
each member's object to the hub, broadcast() sends the hub's object to every
member. The hub publishes "host:port" and a fresh 32-byte secret in the
allocation's rendezvous store on the master (readable with this allocation's
token only); a member proves it read them by sending the secret first, so
nothing else that reaches the port can inject objects. Objects are pickled,
as in Determined: the ranks of one trial trust each other.

A star costs one round trip per member per collective, against the master's
store's two HTTP requests per rank (and its 10,000 keys per allocation); see
docs/migrating-from-determined.md for the numbers.
"""

import hmac
import json
import os
import pickle
import socket
import struct
from typing import Any, List, Optional

_HEADER = struct.Struct("!Q")
_MAX_FRAME = 1 << 34


class CollectiveTimeout(RuntimeError):
    pass


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            raise ConnectionError("the peer closed the connection (did another rank exit?)")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def send_frame(sock: socket.socket, payload: bytes) -> None:
    sock.sendall(_HEADER.pack(len(payload)) + payload)


def recv_frame(sock: socket.socket) -> bytes:
    (size,) = _HEADER.unpack(_recv_exact(sock, _HEADER.size))
    if size > _MAX_FRAME:
        raise ConnectionError(f"a frame of {size} bytes is more than this transport takes")
    return _recv_exact(sock, size)


class Star:
    """One group of `count` members; member 0 is the hub. Not thread-safe: one
    collective at a time, called by every member in the same order."""

    def __init__(self, store, key: str, member: int, count: int, hub_host: str, bind_host: str,
                 timeout_s: float) -> None:
        self.member, self.count = member, count
        self._timeout = timeout_s
        self._peers: List[socket.socket] = []  # hub: members 1..count-1 in order
        self._hub: Optional[socket.socket] = None
        if count == 1:
            return
        if member == 0:
            self._serve(store, key, hub_host, bind_host)
        else:
            self._join(store, key)

    def _serve(self, store, key: str, hub_host: str, bind_host: str) -> None:
        secret = os.urandom(32).hex()
        server = socket.create_server((bind_host, 0), backlog=self.count)
        server.settimeout(self._timeout)
        try:
            store.set(key, json.dumps({"host": hub_host, "port": server.getsockname()[1],
                                       "secret": secret}).encode())
            by_member = {}
            while len(by_member) < self.count - 1:
                try:
                    conn, _ = server.accept()
                except socket.timeout:
                    raise CollectiveTimeout(f"{self.count - 1 - len(by_member)} of {self.count - 1} ranks "
                                            f"did not join {key} within {self._timeout:.0f} s") from None
                conn.settimeout(min(10.0, self._timeout))  # a silent stranger is dropped soon
                try:
                    hello = json.loads(recv_frame(conn))
                    peer = int(hello["member"])
                    ok = hmac.compare_digest(str(hello["secret"]), secret) and 0 < peer < self.count
                except (OSError, ValueError, KeyError, TypeError):
                    ok = False
                if not ok or peer in by_member:
                    conn.close()  # not one of ours: ignored
                    continue
                conn.settimeout(self._timeout)
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                by_member[peer] = conn
            self._peers = [by_member[m] for m in range(1, self.count)]
        finally:
            server.close()

    def _join(self, store, key: str) -> None:
        hub = json.loads(store.get(key, self._timeout))
        conn = socket.create_connection((hub["host"], hub["port"]), timeout=self._timeout)
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        send_frame(conn, json.dumps({"member": self.member, "secret": hub["secret"]}).encode())
        self._hub = conn

    def gather(self, obj: Any) -> Optional[List[Any]]:
        if self.count == 1:
            return [obj]
        try:
            if self.member == 0:
                return [obj] + [pickle.loads(recv_frame(p)) for p in self._peers]
            send_frame(self._hub, pickle.dumps(obj))
            return None
        except socket.timeout:
            raise CollectiveTimeout(f"gather: a rank did not answer within {self._timeout:.0f} s") from None

    def broadcast(self, obj: Any) -> Any:
        if self.count == 1:
            return obj
        try:
            if self.member == 0:
                payload = pickle.dumps(obj)
                for p in self._peers:
                    send_frame(p, payload)
                return obj
            return pickle.loads(recv_frame(self._hub))
        except socket.timeout:
            raise CollectiveTimeout(f"broadcast: no answer within {self._timeout:.0f} s") from None

    def close(self) -> None:
        for s in self._peers + ([self._hub] if self._hub else []):
            s.close()
        self._peers, self._hub = [], None
