#!/usr/bin/env python3
"""Writes the hand-made hwloc XML machines of this folder (see README.md).

They are cut down from the JUWELS Booster export of the shared topology
collection (juwels-booster-4xa100-4xhdr200.hwloc.xml): the same hwloc 2.0
layout (Package > Group per NUMA node > host bridge > root port > Broadcom
PEX switch ports > devices) and the same PCI ids, with one PU per NUMA node,
no caches, and the GPUs, HCAs and link speeds each case needs. Run it from
anywhere; it rewrites the .hwloc.xml files next to itself."""

import os

GEN4 = 31.507692  # PCIe Gen4 x16, GB/s as hwloc writes it
GEN5 = 63.015385  # PCIe Gen5 x16

A100 = "0302 [10de:20b0] [10de:144e] a1"
H100 = "0302 [10de:2330] [10de:16c1] a1"
CX6 = "0207 [15b3:101b] [119f:1bc8] 00"  # ConnectX-6 HDR, Gen4
CX7 = "0207 [15b3:1021] [15b3:0041] 00"  # ConnectX-7 NDR, Gen5
ROOT_PORT = "0604 [1022:1483] [1458:1000] 00"
PEX_GEN4 = "0604 [1000:c010] [1000:100b] b0"
PEX_GEN5 = "0604 [1000:c030] [1000:100b] b0"


class Xml:
    """Numbers gp_index per object, as hwloc requires it unique."""

    def __init__(self):
        self.next_index = 2

    def gp(self):
        self.next_index += 1
        return self.next_index

    def host_bridge(self, buses, children):
        return (f'<object type="Bridge" gp_index="{self.gp()}" bridge_type="0-1" depth="0" '
                f'bridge_pci="0000:[{buses}]">{children}</object>')

    def bridge(self, busid, buses, depth, speed, children, ids=PEX_GEN4):
        return (f'<object type="Bridge" gp_index="{self.gp()}" bridge_type="1-1" depth="{depth}" '
                f'bridge_pci="0000:[{buses}]" pci_busid="0000:{busid}" pci_type="{ids}" '
                f'pci_link_speed="{speed:.6f}">{children}</object>')

    def device(self, busid, pci_type, speed, children=""):
        return (f'<object type="PCIDev" gp_index="{self.gp()}" pci_busid="0000:{busid}" '
                f'pci_type="{pci_type}" pci_link_speed="{speed:.6f}">{children}</object>')

    def hca(self, busid, index, pci_type, speed):
        net = f'<object type="OSDev" gp_index="{self.gp()}" name="ib{index}" osdev_type="2"/>'
        rdma = (f'<object type="OSDev" gp_index="{self.gp()}" name="mlx5_{index}" osdev_type="3">'
                '<info name="Port1State" value="4"/></object>')
        return self.device(busid, pci_type, speed, net + rdma)

    def machine(self, packages):
        """packages: per package, per NUMA node, the I/O XML attached there."""
        numa_count = sum(len(p) for p in packages)

        def sets(first, count):
            bits = ((1 << count) - 1) << first
            mask = f"0x{bits:08x}"
            return (f'cpuset="{mask}" complete_cpuset="{mask}" nodeset="{mask}" '
                    f'complete_nodeset="{mask}"')

        everything = f"0x{(1 << numa_count) - 1:08x}"
        out = ['<?xml version="1.0" encoding="UTF-8"?>',
               '<!DOCTYPE topology SYSTEM "hwloc2.dtd">', '<topology version="2.0">',
               f'<object type="Machine" os_index="0" {sets(0, numa_count)} '
               f'allowed_cpuset="{everything}" allowed_nodeset="{everything}" gp_index="1">']
        numa = 0
        for p, nodes in enumerate(packages):
            out.append(f'<object type="Package" os_index="{p}" {sets(numa, len(nodes))} '
                       f'gp_index="{self.gp()}">')
            for io in nodes:
                out.append(f'<object type="Group" {sets(numa, 1)} gp_index="{self.gp()}" '
                           'kind="1001" subkind="0">')
                out.append(f'<object type="NUMANode" os_index="{numa}" {sets(numa, 1)} '
                           f'gp_index="{self.gp()}" local_memory="68719476736"/>')
                out.append(f'<object type="PU" os_index="{numa}" {sets(numa, 1)} '
                           f'gp_index="{self.gp()}"/>')
                if io:
                    out.append(io)
                out.append('</object>')
                numa += 1
            out.append('</object>')
        out += ['</object>', '</topology>', '']
        return "\n".join(out)

    def switch(self, root_busid, bus, ports, speed=GEN4, ids=PEX_GEN4):
        """Root port -> PEX upstream port -> one downstream port per (device
        XML builder, port link speed). Devices sit on buses bus+2, bus+3, ..."""
        last = bus + 1 + len(ports)
        downs = ""
        for i, (make, port_speed) in enumerate(ports):
            dev_bus = bus + 2 + i
            downs += self.bridge(f"{bus + 1:02x}:{i:02x}.0", f"{dev_bus:02x}-{dev_bus:02x}", 3,
                                 port_speed, make(f"{dev_bus:02x}:00.0"), ids)
        upstream = self.bridge(f"{bus:02x}:00.0", f"{bus + 1:02x}-{last:02x}", 2, speed, downs,
                               ids)
        return self.bridge(root_busid, f"{bus:02x}-{last:02x}", 1, speed, upstream, ROOT_PORT)

    def root_port(self, root_busid, bus, make, speed):
        """A device alone on a root port, on bus `bus`."""
        return self.bridge(root_busid, f"{bus:02x}-{bus:02x}", 1, speed,
                           make(f"{bus:02x}:00.0"), ROOT_PORT)


def gpu(kind, speed):
    return lambda x: lambda busid: x.device(busid, kind, speed)


def hca(index, kind, speed):
    return lambda x: lambda busid: x.hca(busid, index, kind, speed)


def near_slow_far_fast():
    """(a) Each H100 shares a Gen5 switch with one HCA: on package 0 a Gen4
    ConnectX-6 (31.5 GB/s), on package 1 a Gen5 ConnectX-7 (63 GB/s)."""
    x = Xml()
    pkg0 = x.host_bridge("00-07", x.switch("00:01.1", 0x01, [
        (gpu(H100, GEN5)(x), GEN5), (hca(0, CX6, GEN4)(x), GEN4)], GEN5, PEX_GEN5))
    pkg1 = x.host_bridge("80-87", x.switch("80:01.1", 0x81, [
        (gpu(H100, GEN5)(x), GEN5), (hca(1, CX7, GEN5)(x), GEN5)], GEN5, PEX_GEN5))
    return x.machine([[pkg0, ""], [pkg1, ""]])


def numa_node_vs_package():
    """(b) Two packages of two NUMA nodes (NPS2), Gen4 throughout. NUMA 0:
    a switch with two A100 and mlx5_0, and an A100 on another host bridge.
    NUMA 1 and 2: one A100 each. NUMA 3: a switch with an A100 and mlx5_1."""
    x = Xml()
    numa0 = x.host_bridge("00-07", x.switch("00:01.1", 0x01, [
        (gpu(A100, GEN4)(x), GEN4), (hca(0, CX6, GEN4)(x), GEN4), (gpu(A100, GEN4)(x), GEN4)]))
    numa0 += x.host_bridge("10-17", x.root_port("10:01.1", 0x11, gpu(A100, GEN4)(x), GEN4))
    numa1 = x.host_bridge("40-47", x.switch("40:01.1", 0x41, [(gpu(A100, GEN4)(x), GEN4)]))
    numa2 = x.host_bridge("80-87", x.switch("80:01.1", 0x81, [(gpu(A100, GEN4)(x), GEN4)]))
    numa3 = x.host_bridge("c0-c7", x.switch("c0:01.1", 0xc1, [
        (hca(1, CX6, GEN4)(x), GEN4), (gpu(A100, GEN4)(x), GEN4)]))
    return x.machine([[numa0, numa1], [numa2, numa3]])


def only_near_nic():
    """(c) One host bridge: GPU 03 shares a switch with the Gen5 mlx5_0 (its
    only near NIC); GPU 07 sits on its own root port, PHB to both mlx5_0
    (63 GB/s) and the Gen4 mlx5_1 on a third root port (31.5 GB/s)."""
    x = Xml()
    io = x.switch("00:01.1", 0x01, [(gpu(H100, GEN5)(x), GEN5), (hca(0, CX7, GEN5)(x), GEN5)],
                  GEN5, PEX_GEN5)
    io += x.root_port("00:03.1", 0x07, gpu(H100, GEN5)(x), GEN5)
    io += x.root_port("00:05.1", 0x08, hca(1, CX6, GEN4)(x), GEN4)
    return x.machine([[x.host_bridge("00-0f", io), ""], ["", ""]])


def only_near_nic_chain():
    """(d) The rule repeated: in one Gen5 PEX switch tree, GPU 05 shares a
    sub-switch with mlx5_0, GPU 09 has a sub-switch of its own and mlx5_1 a
    third (both PXB to GPU 09); GPU 10 on its own root port is PHB to mlx5_0
    and mlx5_1 (63 GB/s) and to the Gen4 mlx5_2 (31.5 GB/s)."""
    x = Xml()

    def port(busid, buses, depth, child):
        return x.bridge(busid, buses, depth, GEN5, child, PEX_GEN5)

    sub_a = port("03:00.0", "04-06", 3,
                 port("04:00.0", "05-05", 4, gpu(H100, GEN5)(x)("05:00.0")) +
                 port("04:01.0", "06-06", 4, hca(0, CX7, GEN5)(x)("06:00.0")))
    sub_b = port("07:00.0", "08-09", 3, port("08:00.0", "09-09", 4, gpu(H100, GEN5)(x)("09:00.0")))
    sub_c = port("0a:00.0", "0b-0c", 3, port("0b:00.0", "0c-0c", 4,
                                             hca(1, CX7, GEN5)(x)("0c:00.0")))
    tree = (port("02:00.0", "03-06", 2, sub_a) + port("02:01.0", "07-09", 2, sub_b) +
            port("02:02.0", "0a-0c", 2, sub_c))
    top = x.bridge("00:01.1", "01-0c", 1, GEN5, port("01:00.0", "02-0c", 1, tree), ROOT_PORT)
    io = top + x.root_port("00:03.1", 0x10, gpu(H100, GEN5)(x), GEN5)
    io += x.root_port("00:05.1", 0x11, hca(2, CX6, GEN4)(x), GEN4)
    return x.machine([[x.host_bridge("00-1f", io), ""], ["", ""]])


CASES = {
    "near-slow-nic-far-fast-nic.hwloc.xml": near_slow_far_fast,
    "numa-node-vs-package.hwloc.xml": numa_node_vs_package,
    "only-near-nic.hwloc.xml": only_near_nic,
    "only-near-nic-chain.hwloc.xml": only_near_nic_chain,
}

if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    for name, make in CASES.items():
        with open(os.path.join(here, name), "w") as f:
            f.write(make())
        print("wrote", name)
