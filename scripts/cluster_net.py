#!/usr/bin/env python3
"""Hosts on one machine for `make test-cluster` (scripts/cluster.py): network namespaces joined
by veth pairs to a bridge, on the test's own private subnet. Root only (iproute2, util-linux).

Nothing is added to the machine's own network namespace: the bridge lives in a "switch"
namespace of its own, and each host's end of its link is created straight in the host's
namespace (`ip -n SWITCH link add ... peer name eth0 netns HOST`), so the machine's interfaces,
routes and firewall are never touched and the test's traffic cannot leave its bridge.

Every name starts with `ppc<pid>-` (the harness's PID): a harness killed before its cleanup
leaves namespaces that the next run removes (`sweep_stale`), once their owner is gone.

A host can run programs in a PID and UTS namespace of its own as well (`Host.spawn(...,
own_pids=True)`): then its host name is its own, and a worker on it cannot see the processes of
another host, as on separate machines (a worker rescues at once only the jobs of dead workers of
its own PID space; those of another host wait for their lease to expire).

A slow link (`Network.add_host(..., slow=(delay, loss))`) is made of two TAP devices in place of
the veth pair, one in the host and one on the bridge, and a relay process that copies Ethernet
frames between them, holding each frame the host sends for `delay` seconds and dropping a
`loss` share of them: `tc qdisc netem` on the host's interface egress, for kernels without the
sch_netem module (this machine's has none). Run as `cluster_net.py relay SWITCH_NS TAP HOST_NS
TAP DELAY LOSS SEED`.
"""

import ctypes
import fcntl
import heapq
import os
import random
import select
import signal
import struct
import subprocess
import sys
import time

NETNS_DIR = "/var/run/netns"
NAME_PREFIX = "ppc"
CLONE_NEWNET = 0x40000000
TUNSETIFF = 0x400454CA
IFF_TAP = 0x0002
IFF_NO_PI = 0x1000


def run(*args, check=True):
    """Runs a command (iproute2 and friends), raising with its standard error on failure."""
    result = subprocess.run(args, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: exit {result.returncode}: {result.stderr.strip()}")
    return result.stdout


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def namespace_pids(namespace):
    """The processes in a network namespace (`ip netns pids`), but this one (the harness, which
    entered the ctl host's)."""
    return [int(pid) for pid in run("ip", "netns", "pids", namespace, check=False).split() if int(pid) != os.getpid()]


def kill_processes(namespace):
    """SIGKILLs every process in a network namespace."""
    for pid in namespace_pids(namespace):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def kill_namespace(namespace):
    """SIGKILLs every process in a network namespace, then deletes it."""
    kill_processes(namespace)
    run("ip", "netns", "del", namespace, check=False)


def sweep_stale():
    """Deletes the namespaces of earlier harness runs whose process is gone."""
    if not os.path.isdir(NETNS_DIR):
        return
    for name in os.listdir(NETNS_DIR):
        if not name.startswith(NAME_PREFIX) or "-" not in name:
            continue
        owner = name[len(NAME_PREFIX) : name.index("-")]
        if owner.isdigit() and int(owner) != os.getpid() and not pid_alive(int(owner)):
            kill_namespace(name)


_libc = ctypes.CDLL(None, use_errno=True)


def setns(path):
    """Moves the calling thread into the network namespace at `path`."""
    fd = os.open(path, os.O_RDONLY)
    try:
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"setns {path}: {os.strerror(error)}")
    finally:
        os.close(fd)


class Host:
    """One host: a network namespace with an address on the bridge."""

    def __init__(self, network, name, index, address):
        self.network = network
        self.name = name
        self.index = index
        self.address = address
        self.namespace = f"{network.prefix}-{name}"
        self.link = f"s{index}"  # its end on the bridge, in the switch namespace
        self.relay = None

    def command(self, args, own_pids=False):
        """The argv that runs `args` inside this host."""
        prefix = ["ip", "netns", "exec", self.namespace]
        if own_pids:
            # PID 1 of the new PID space is a shell that sets the host name, starts `args` and
            # waits for it; killing the shell kills the whole host. `args` is not PID 1 itself:
            # PID 1 ignores a signal it has no handler for yet, so a SIGTERM sent while a program
            # starts up would be lost.
            prefix += [
                "unshare", "--pid", "--fork", "--mount-proc", "--uts", "--kill-child",
                "sh", "-c", 'hostname "$0" || exit 1; "$@" & wait $!', self.name,
            ]  # fmt: skip
        return prefix + list(args)

    def spawn(self, args, own_pids=False, **popen):
        """Starts `args` inside this host, in a new session (its own process group)."""
        return subprocess.Popen(self.command(args, own_pids), start_new_session=True, **popen)

    def cut(self):
        """Takes the host's link down on the bridge's side (`ip link set … down`)."""
        run("ip", "-n", self.network.switch, "link", "set", self.link, "down")

    def restore(self):
        run("ip", "-n", self.network.switch, "link", "set", self.link, "up")


class Network:
    """A bridge in a switch namespace, and hosts on 10.77.0.0/24 joined to it."""

    def __init__(self, subnet="10.77.0"):
        sweep_stale()
        self.prefix = f"{NAME_PREFIX}{os.getpid()}"
        self.subnet = subnet
        self.switch = f"{self.prefix}-sw"
        self.namespaces = []
        self.hosts = {}
        self._add_namespace(self.switch)
        run("ip", "-n", self.switch, "link", "add", "br0", "type", "bridge")
        run("ip", "-n", self.switch, "link", "set", "br0", "up")

    def _add_namespace(self, namespace):
        run("ip", "netns", "add", namespace)
        self.namespaces.append(namespace)
        run("ip", "-n", namespace, "link", "set", "lo", "up")

    def add_host(self, name, index, slow=None):
        """A host `name` at SUBNET.index, linked to the bridge by a veth pair, or by a relayed
        TAP pair with `slow=(delay_seconds, loss_share)`."""
        host = Host(self, name, index, f"{self.subnet}.{index}")
        self._add_namespace(host.namespace)
        if slow is None:
            run("ip", "-n", self.switch, "link", "add", host.link, "type", "veth", "peer", "name", "eth0",
                "netns", host.namespace)  # fmt: skip
        else:
            run("ip", "-n", self.switch, "tuntap", "add", "dev", host.link, "mode", "tap")
            run("ip", "-n", host.namespace, "tuntap", "add", "dev", "eth0", "mode", "tap")
            delay, loss = slow
            host.relay = subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "relay", self.switch, host.link, host.namespace, "eth0",
                 str(delay), str(loss), str(index)],
                start_new_session=True,
            )  # fmt: skip
        run("ip", "-n", self.switch, "link", "set", host.link, "master", "br0")
        run("ip", "-n", self.switch, "link", "set", host.link, "up")
        run("ip", "-n", host.namespace, "addr", "add", f"{host.address}/24", "dev", "eth0")
        run("ip", "-n", host.namespace, "link", "set", "eth0", "up")
        self.hosts[name] = host
        return host

    def enter(self, host):
        """Moves this thread (and the threads and processes it starts later) into `host`."""
        setns(os.path.join(NETNS_DIR, host.namespace))

    def close(self):
        """Kills every process left in the namespaces and deletes them (and so their links)."""
        for host in self.hosts.values():
            if host.relay is not None and host.relay.poll() is None:
                host.relay.kill()
                host.relay.wait()
        for namespace in reversed(self.namespaces):
            kill_namespace(namespace)
        self.namespaces = []


# MARK: - The slow link's relay


def open_tap(namespace, name):
    """Opens the TAP device `name` of `namespace`, from this process's own namespace after."""
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    try:
        setns(os.path.join(NETNS_DIR, namespace))
        fd = os.open("/dev/net/tun", os.O_RDWR)
        fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TAP | IFF_NO_PI))
    finally:
        if _libc.setns(home, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns back")
        os.close(home)
    return fd


def relay(switch_namespace, switch_tap, host_namespace, host_tap, delay, loss, seed):
    """Copies frames between the two TAPs until SIGTERM: the host's held `delay` seconds and a
    `loss` share of them dropped (its egress, as netem on its interface); the bridge's at once."""
    bridge = open_tap(switch_namespace, switch_tap)
    host = open_tap(host_namespace, host_tap)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    chance = random.Random(int(seed))
    held = []  # (due, sequence, frame)
    sequence = 0
    while True:
        timeout = max(0.0, held[0][0] - time.monotonic()) if held else None
        ready, _, _ = select.select([bridge, host], [], [], timeout)
        if bridge in ready:
            os.write(host, os.read(bridge, 65536))
        if host in ready:
            frame = os.read(host, 65536)
            if chance.random() >= loss:
                sequence += 1
                heapq.heappush(held, (time.monotonic() + delay, sequence, frame))
        now = time.monotonic()
        while held and held[0][0] <= now:
            try:
                os.write(bridge, heapq.heappop(held)[2])
            except OSError:
                pass  # the bridge side is down: the frame is lost, as on a wire


if __name__ == "__main__":
    if len(sys.argv) == 9 and sys.argv[1] == "relay":
        relay(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], float(sys.argv[6]), float(sys.argv[7]), sys.argv[8])
    else:
        sys.exit("usage: cluster_net.py relay SWITCH_NS TAP HOST_NS TAP DELAY LOSS SEED")
