#!/usr/bin/env python3
"""Simulated RoCE fabric for bench/perf.sh: N nodes' sysfs trees, their `ethtool -S` and one NX-OS
switch's `show` outputs, with counters a writer advances every PERIOD seconds (1 by default).

  fabric.py DIR N [PERIOD]   set up DIR, then advance every counter every PERIOD seconds (by
                             PERIOD seconds' worth) until killed

bench/perf.sh gives its INTERVAL as PERIOD: a reader polling every 5 s sees each change once, as
at 1 Hz, and 512 nodes' 7 680 file replacements happen every 5 s instead of every second (~0.6 of
one of this box's two cores, most of it the kernel's, that the monitor under test had to share).

Per node i (netdev enp<i>s0, RDMA device rocep11s0):
  DIR/n<i>/sys/class/infiniband/rocep11s0/ports/1/{hw_counters/*,counters/*,state,gid_attrs/ndevs/0}
  DIR/n<i>/sys/class/net/enp<i>s0/statistics/*
  DIR/ethtool/enp<i>s0        what `ethtool -S enp<i>s0` prints (bench/perf/bin/ethtool cats it):
                              a real mlx5 `ethtool -S` (ethtool-S_mlx5.txt, 751 counters) plus
                              the PFC priority 3 and pause-storm counters of a PFC-enabled port
The switch (edge ports Ethernet1/1-32, internal ii1/1/1-6):
  DIR/switch/{queuing,pfc,flowcontrol}.txt   NX-OS 7.x formats (src/collect/demo/render.rs)
Files are replaced atomically (write + rename), as sysfs never shows a half-written value.
Every sysfs file holds the values of the same tick (the counters change once a PERIOD, at the
same time for every reader), so rocetop and the `watch` baseline read the same data.
"""
import os
import sys
import time

HW = ("duplicate_request implied_nak_seq_err local_ack_timeout_err np_cnp_sent np_ecn_marked_roce_packets "
      "out_of_buffer out_of_sequence packet_seq_err req_cqe_error req_cqe_flush_error req_remote_access_errors "
      "req_remote_invalid_request resp_cqe_error resp_cqe_flush_error resp_local_length_error "
      "resp_remote_access_errors rnr_nak_retry_err roce_adp_retrans roce_adp_retrans_to roce_slow_restart "
      "roce_slow_restart_cnps roce_slow_restart_trans rp_cnp_handled rp_cnp_ignored rx_atomic_requests "
      "rx_dct_connect rx_icrc_encapsulated rx_read_requests rx_write_requests").split()
IB = ("VL15_dropped excessive_buffer_overrun_errors link_downed link_error_recovery local_link_integrity_errors "
      "multicast_rcv_packets multicast_xmit_packets port_rcv_constraint_errors port_rcv_data port_rcv_errors "
      "port_rcv_packets port_rcv_remote_physical_errors port_rcv_switch_relay_errors port_xmit_constraint_errors "
      "port_xmit_data port_xmit_discards port_xmit_packets port_xmit_wait symbol_error unicast_rcv_packets "
      "unicast_xmit_packets").split()
NET = ("collisions multicast rx_bytes rx_compressed rx_crc_errors rx_dropped rx_errors rx_fifo_errors "
       "rx_frame_errors rx_length_errors rx_missed_errors rx_nohandler rx_over_errors rx_packets "
       "tx_aborted_errors tx_bytes tx_carrier_errors tx_compressed tx_dropped tx_errors tx_fifo_errors "
       "tx_heartbeat_errors tx_packets tx_window_errors").split()
# Counters that move, per second (scaled per node so nodes differ): the rest stay as they are.
HW_RATE = {"np_cnp_sent": 40, "np_ecn_marked_roce_packets": 55, "rp_cnp_handled": 35, "out_of_sequence": 1}
IB_RATE = {"port_xmit_data": 75_000_000, "port_rcv_data": 70_000_000, "port_xmit_packets": 73_000,
           "port_rcv_packets": 68_000, "unicast_xmit_packets": 73_000, "unicast_rcv_packets": 68_000}
NET_RATE = {"rx_bytes": 2_000_000, "tx_bytes": 2_500_000, "rx_packets": 1_900, "tx_packets": 2_100}
ETH_EXTRA = ["rx_prio3_pause", "rx_prio3_pause_duration", "rx_prio3_pause_transition", "tx_prio3_pause",
             "tx_prio3_pause_duration", "tx_prio3_pause_transition", "tx_pause_storm_warning_events",
             "tx_pause_storm_error_events"]
ETH_RATE = {"rx_packets": 70_000, "tx_packets": 75_000, "rx_bytes": 280_000_000, "tx_bytes": 300_000_000,
            "rx_packets_phy": 70_000, "tx_packets_phy": 75_000, "rx_bytes_phy": 280_000_000,
            "tx_bytes_phy": 300_000_000, "rx_vport_rdma_unicast_packets": 68_000,
            "rx_vport_rdma_unicast_bytes": 278_000_000, "tx_vport_rdma_unicast_packets": 73_000,
            "tx_vport_rdma_unicast_bytes": 298_000_000, "rx_prio3_bytes": 278_000_000,
            "rx_prio3_packets": 68_000, "tx_prio3_bytes": 298_000_000, "tx_prio3_packets": 73_000,
            "rx_prio3_pause": 120, "rx_prio3_pause_duration": 9_000, "rx_prio3_pause_transition": 60,
            "tx_prio3_pause": 90, "tx_prio3_pause_duration": 7_000, "tx_prio3_pause_transition": 45}
EDGE = [f"Ethernet1/{p}" for p in range(1, 33)]
INTERNAL = [f"ii1/1/{p}" for p in range(1, 7)]


def put(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


class Node:
    def __init__(self, d, i, template):
        self.i = i
        self.scale = 1 + (i % 7) / 10
        port = f"{d}/n{i}/sys/class/infiniband/rocep11s0/ports/1"
        self.netdev = f"enp{i}s0"
        self.hw, self.ib = f"{port}/hw_counters", f"{port}/counters"
        self.net = f"{d}/n{i}/sys/class/net/{self.netdev}/statistics"
        for p in (self.hw, self.ib, self.net, f"{port}/gid_attrs/ndevs"):
            os.makedirs(p, exist_ok=True)
        put(f"{port}/state", "4: ACTIVE\n")
        put(f"{port}/gid_attrs/ndevs/0", self.netdev + "\n")
        put(f"{self.hw}/lifespan", "10\n")
        self.values = {}
        for dirname, names in ((self.hw, HW), (self.ib, IB), (self.net, NET)):
            for n in names:
                v = 1000 * i + len(n)
                self.values[(dirname, n)] = v
                put(f"{dirname}/{n}", f"{v}\n")
        # ethtool: fixed text between the moving counters, joined once a second
        self.eth_path = f"{d}/ethtool/{self.netdev}"
        self.eth_static, self.eth_moving = [], []
        buf = []
        for name, v in template:
            if name in ETH_RATE:
                self.eth_static.append("".join(buf))
                buf = []
                self.eth_moving.append([name, v])
            else:
                buf.append(f"     {name}: {v}\n")
        self.eth_static.append("".join(buf))

    def tick(self, period):
        s = self.scale * period
        for dirname, rates in ((self.hw, HW_RATE), (self.ib, IB_RATE), (self.net, NET_RATE)):
            for n, r in rates.items():
                k = (dirname, n)
                self.values[k] += int(r * s)
                put(f"{dirname}/{n}", f"{self.values[k]}\n")
        out = ["NIC statistics:\n"]
        for st, mv in zip(self.eth_static, self.eth_moving):
            mv[1] += int(ETH_RATE[mv[0]] * s)
            out.append(st)
            out.append(f"     {mv[0]}: {mv[1]}\n")
        out.append(self.eth_static[-1])
        put(self.eth_path, "".join(out))


RULE = "+-------------------------------------------------------------------+"


def qos_box(title, pk, by, dp, db):
    rows = [RULE, f"|{title:^67}|", RULE,
            "|                |  Unicast       | OOBFC Unicast  |  Multicast     |", RULE]
    for label, v in (("Tx Pkts ", pk), ("Tx Byts ", by), ("Dropped Pkts ", dp), ("Dropped Byts ", db)):
        rows.append(f"|{label:>16}|{v:>16}|{0:>16}|{0:>16}|")
    return "\n".join(rows) + "\n"


class Switch:
    def __init__(self, d):
        self.d = f"{d}/switch"
        os.makedirs(self.d, exist_ok=True)
        self.t = 0

    def tick(self, period):
        self.t += period
        t = self.t
        q = ["\nslot  1\n=======\n\n"]
        for k, p in enumerate(EDGE):
            tx = 1_000_000 + t * (70_000 + k)
            q.append(f"\nEgress Queuing for {p} [System]\n" + "-" * 78 + "\n"
                     "QoS-Group# Bandwidth% PrioLevel                Shape                   QLimit\n"
                     "                                   Min          Max        Units   \n" + "-" * 78 + "\n")
            for g, bw in ((3, 50), (2, 0), (1, 0), (0, 50)):
                q.append(f"      {g}            {bw:>2}         -           -            -     -            9(D)\n")
            for g in range(4):
                mul = 1 if g == 3 else 0.01
                q.append(qos_box(f"QOS GROUP {g}", int(tx * mul), int(tx * mul * 4000), t * (g == 3), t * 4000 * (g == 3)))
            q.append(qos_box("CONTROL QOS GROUP", 10 * t, 1000 * t, 0, 0))
            q.append(qos_box("SPAN QOS GROUP", 0, 0, 0, 0))
            q.append(RULE + "\n\n")
            q.append("\nPort Egress Statistics\n" + "-" * 56 + "\nPause Flush Drop Pkts                    0\n"
                     f"WRED Drop Pkts                  {t * 3:>10}\nWRED Non ECN Drop Pkts                   0\n\n\n")
            q.append(f"Ingress Queuing for {p}\n" + "-" * 53 + "\nQoS-Group#                 Pause                    \n"
                     "           Buff Size       Pause Th      Resume Th  \n" + "-" * 53 + "\n"
                     "      3          95680          34320          30160\n      2              0              0              0\n"
                     "      1              0              0              0\n      0              0              0              0\n\n\n")
            q.append("Port Ingress Statistics\n" + "-" * 56 + f"\nIngress MMU Drop Pkts           {t:>10}\n"
                     f"Ingress MMU Drop Bytes          {t * 4000:>10}\n\n\n")
            q.append("PFC Statistics\n" + "-" * 78 + f"\nTxPPP:            {t * 90:>10}, RxPPP:            {t * 120:>10}\n"
                     + "-" * 78 + "\n COS QOS Group        PG   TxPause   TxCount         RxPause         RxCount\n")
            for cos in range(8):
                qg, pg, tx_, rx_ = ("3", "3", t * 90, t * 120) if cos == 3 else ("0", "-", 0, 0)
                st = "Active" if cos == 3 else "Inactive"
                q.append(f"     {cos}         {qg}         {pg}  {st:>8} {tx_:>9}        {st:>8} {rx_:>15}\n")
            q.append("-" * 78 + "\n\n")
        put(f"{self.d}/queuing.txt", "".join(q))
        pfc = ["\n" + "=" * 60 + "\nPort               Mode Oper(VL bmap)  RxPPP      TxPPP     \n" + "=" * 60 + "\n\n"]
        for k, p in enumerate(EDGE + INTERNAL):
            pfc.append(f"{p:<19}Auto On  (8)   {t * (120 + k):<11}{t * (90 + k):<10}\n")
        put(f"{self.d}/pfc.txt", "".join(pfc))
        fc = ["\n" + "-" * 80 + "\nPort         Send FlowControl  Receive FlowControl  RxPause TxPause\n"
              "             admin    oper     admin    oper\n" + "-" * 80 + "\n"]
        for p in EDGE:
            short = p.replace("Ethernet", "Eth", 1)
            fc.append(f"{short:<13}off      off      off      off         {0:<7} {0:<7}\n")
        put(f"{self.d}/flowcontrol.txt", "".join(fc))


def main():
    d, n = sys.argv[1], int(sys.argv[2])
    period = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    here = os.path.dirname(os.path.abspath(__file__))
    template = []
    with open(os.path.join(here, "ethtool-S_mlx5.txt")) as f:
        for line in f:
            name, _, v = line.strip().rpartition(":")
            if name:
                template.append((name.strip(), int(v)))
    template += [(x, 0) for x in ETH_EXTRA]
    os.makedirs(f"{d}/ethtool", exist_ok=True)
    nodes = [Node(d, i, template) for i in range(1, n + 1)]
    sw = Switch(d)
    nxt = time.time()
    while True:
        for node in nodes:
            node.tick(period)
        sw.tick(period)
        put(f"{d}/ready", f"{time.time()}\n")
        nxt += period
        time.sleep(max(0.0, nxt - time.time()))


if __name__ == "__main__":
    main()
