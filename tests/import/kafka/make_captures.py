#!/usr/bin/env python3
"""Writes the Kafka tolerance corpus: captures made with the printf formats of upstream's
ConsumerGroupCommand (Scala up to 3.7, Java from 3.8), plus the noise real captures carry.
Each directory is one `mqviz import` of all its .txt files; `expected.golden` is the output
(`cargo test -p mqviz-app import` compares; MQVIZ_BLESS=1 rewrites it)."""
import os

def pad(v, w):  # Java's %-Ns
    return v + " " * max(0, w - len(v))

def describe(rows, group_col=True, start=""):
    # "\n%-G s %-T s %-10s %-15s %-15s %-15s %-C s %-H s %s" (GROUP from 2.3)
    g = max([15] + [len(r[0]) for r in rows]); t = max([15] + [len(r[1]) for r in rows])
    c = max([15] + [len(r[6]) for r in rows]); h = max([15] + [len(r[7]) for r in rows])
    def line(r):
        cells = ([pad(r[0], g)] if group_col else []) + [pad(r[1], t), pad(r[2], 10), pad(r[3], 15), pad(r[4], 15), pad(r[5], 15), pad(r[6], c), pad(r[7], h), r[8]]
        return "\n" + " ".join(cells)
    head = ("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID")
    return start + line(head) + "".join(line(r) for r in rows) + "\n"

def members(rows, verbose, instance=False, kip1099=False):
    g = max([15] + [len(r[0]) for r in rows]); c = max([15] + [len(r[1]) for r in rows])
    i = max([17] + [len(r[2]) for r in rows]); h = max([15] + [len(r[3]) for r in rows]); cl = max([15] + [len(r[4]) for r in rows])
    def cells(r):
        out = [pad(r[0], g), pad(r[1], c)] + ([pad(r[2], i)] if instance else []) + [pad(r[3], h), pad(r[4], cl), pad(r[5], 15)]
        return " ".join(out) + " "
    if kip1099:
        head = cells(("GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS")) + "CURRENT-EPOCH   CURRENT-ASSIGNMENT   TARGET-EPOCH    TARGET-ASSIGNMENT"
    else:
        head = cells(("GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS")) + ("ASSIGNMENT" if verbose else "")
    out = "\n" + head + "\n"
    for r in rows:
        out += cells(r) + (r[6] if verbose or kip1099 else "") + "\n"
    return out

def state(rows, verbose=False):
    out = ""
    for r in rows:
        w = max(25, len(r[1]))
        f = lambda v: "\n" + pad(v[0], w) + " " + pad(v[1], 25) + " " + pad(v[2], 20) + " " + pad(v[3], 15) + " " + v[4] + ("".join(" " + pad(x, 15) for x in v[5:]) if verbose else "")
        head = ("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS") + (("GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH") if verbose else ())
        out += f(head) + f(r) + "\n"
    return out

def write(case, files):
    os.makedirs(case, exist_ok=True)
    for name, text in files.items():
        with open(os.path.join(case, name), "w") as fh:
            fh.write(text)

A = "consumer-billing-1-6f1c2a6e-8d2b-4a51-9b7e-2f4a0c9d1e11"
B = "consumer-billing-2-0b9e7d5c-3a4f-4e6b-8c21-7d6e5f4a3b22"
C = "consumer-billing-3-9a8b7c6d-5e4f-4321-8fed-cba987654333"

# 3.7: --describe, --members --verbose and --state of one group, read together.
write("describe-members-state-3.7", {
    "describe.txt": describe([
        ("billing", "orders", "0", "1195", "1200", "5", A, "/10.0.0.11", "consumer-billing-1"),
        ("billing", "orders", "1", "1180", "1180", "0", A, "/10.0.0.11", "consumer-billing-1"),
        ("billing", "orders", "2", "1150", "1210", "60", B, "/10.0.0.12", "consumer-billing-2"),
        ("billing", "payments", "0", "-", "40", "-", B, "/10.0.0.12", "consumer-billing-2"),
        ("billing", "-", "-", "-", "-", "-", C, "/10.0.0.13", "consumer-billing-3"),
    ]),
    "members.txt": members([
        ("billing", A, "", "/10.0.0.11", "consumer-billing-1", "2", "orders(0,1)"),
        ("billing", B, "", "/10.0.0.12", "consumer-billing-2", "2", "orders(2), payments(0)"),
        ("billing", C, "", "/10.0.0.13", "consumer-billing-3", "0", "-"),
    ], verbose=True),
    "state.txt": state([("billing", "kafka-1:9092  (1)", "range", "Stable", "3")]),
})

# --all-groups: the header per group, stderr warnings mixed in, a cut row, `-` owners, a
# CLIENT-ID with spaces, a CONSUMER-ID run into its HOST, and a shell prompt.
mixed = describe([
    ("shipping", "parcels", "0", "10", "12", "2", "ship-a-1f", "/10.1.0.1", "ship app a"),
    ("shipping", "parcels", "1", "8", "8", "0", "-", "-", "-"),
]) + "\nConsumer group 'archive' has no active members.\n" + describe([
    ("archive", "parcels", "0", "12", "12", "0", "-", "-", "-"),
    ("archive", "parcels", "1", "5", "8", "3", "-", "-", "-"),
]) + "\nWarning: Consumer group 'audit' is rebalancing.\n" + describe([
    ("audit", "parcels", "0", "11", "12", "1", "audit-consumer-7d0c1e2f-aaaa-bbbb-cccc-0123456789ab", "/10.2.0.9", "audit"),
]).replace("audit-consumer-7d0c1e2f-aaaa-bbbb-cccc-0123456789ab /10.2.0.9", "audit-consumer-7d0c1e2f-aaaa-bbbb-cccc-0123456789ab/10.2.0.9")
mixed = "$ kafka-consumer-groups.sh --bootstrap-server kafka-1:9092 --describe --all-groups\n" + mixed + "shipping        parcels         2          7\n"
write("describe-all-groups-3.6", {"describe.txt": mixed})

# Before 2.3: no GROUP column; the group comes from the --state capture.
write("describe-2.2-no-group-column", {
    "describe.txt": describe([
        ("", "events", "0", "100", "150", "50", "consumer-1-aaaa", "/192.168.1.5", "consumer-1"),
        ("", "events", "1", "90", "90", "0", "consumer-2-bbbb", "/192.168.1.6", "consumer-2"),
    ], group_col=False),
    "state.txt": state([("analytics", "kafka-0:9092  (0)", "roundrobin", "Stable", "2")]),
})

# 0.10.0-0.10.1: an OWNER column of `clientId_/host`.
owner = "%-30s %-30s %-10s %-15s %-15s %-15s %s"
lines = [owner % ("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "OWNER"),
         owner % ("legacy", "clicks", "0", "500", "520", "20", "consumer-1_/10.9.0.1"),
         owner % ("legacy", "clicks", "1", "480", "480", "0", "consumer-2_/10.9.0.2")]
write("describe-0.10.1-owner", {"describe.txt": "\n".join(lines) + "\n"})

# 3.8-3.9 --members --verbose lost the topic names; --describe names them.
write("members-3.9-nameless-with-describe", {
    "members.txt": members([
        ("billing", A, "", "/10.0.0.11", "consumer-billing-1", "2", "(0,1)"),
        ("billing", B, "", "/10.0.0.12", "consumer-billing-2", "1", "(2)"),
    ], verbose=True),
    "describe.txt": describe([
        ("billing", "orders", "0", "10", "10", "0", A, "/10.0.0.11", "consumer-billing-1"),
        ("billing", "orders", "1", "10", "10", "0", A, "/10.0.0.11", "consumer-billing-1"),
        ("billing", "orders", "2", "10", "10", "0", B, "/10.0.0.12", "consumer-billing-2"),
    ]),
})

# Up to 3.7 with static members and a CLIENT-ID with spaces; two instances share a client.id.
write("members-3.7-static-shared-client-id", {
    "members.txt": members([
        ("orders-svc", "host-a-11111111-2222-3333-4444-555555555555", "host-a", "/10.3.0.1", "order service", "2", "orders_3(1),orders_2(4)"),
        ("orders-svc", "host-b-66666666-7777-8888-9999-000000000000", "host-b", "/10.3.0.2", "order service", "1", "orders_2(0)"),
    ], verbose=True, instance=True),
})

# 4.x (KIP-1099) captured mid-reconciliation: fraud-3 joined, the group epoch went to 8 and the
# target gives it tx:1; fraud-1 (still at epoch 7) has not revoked tx:1 yet, so fraud-3 waits.
write("members-state-4.1-kip848-reconciling", {
    "members.txt": members([
        ("fraud", "Xk1pZ2y3QwWq0aB1cD2eFg", "", "/10.4.0.1", "fraud-1", "2", "7               tx:0,1               8               tx:0"),
        ("fraud", "Yl2qA3z4RxXr1bC2dE3fGh", "", "/10.4.0.2", "fraud-2", "1", "8               tx:2                 8               tx:2"),
        ("fraud", "Zm3rB4a5SyYs2cD3eF4gHi", "", "/10.4.0.3", "fraud-3", "0", "8               -                    8               tx:1"),
    ], verbose=False, kip1099=True),
    "state.txt": state([("fraud", "kafka-2:9092  (2)", "uniform", "Reconciling", "3", "8", "8")], verbose=True),
    "describe.txt": describe([
        ("fraud", "tx", "0", "3", "9", "6", "Xk1pZ2y3QwWq0aB1cD2eFg", "/10.4.0.1", "fraud-1"),
        ("fraud", "tx", "1", "4", "4", "0", "Xk1pZ2y3QwWq0aB1cD2eFg", "/10.4.0.1", "fraud-1"),
        ("fraud", "tx", "2", "5", "5", "0", "Yl2qA3z4RxXr1bC2dE3fGh", "/10.4.0.2", "fraud-2"),
        ("fraud", "-", "-", "-", "-", "-", "Zm3rB4a5SyYs2cD3eF4gHi", "/10.4.0.3", "fraud-3"),
    ]),
})

# 4.x (KIP-1099) members with epochs, and the verbose --state of a consumer-protocol group.
write("members-state-4.1-kip848", {
    "members.txt": members([
        ("fraud", "Xk1pZ2y3QwWq0aB1cD2eFg", "", "/10.4.0.1", "fraud-1", "2", "7               tx:0,1               7               tx:0,1"),
        ("fraud", "Yl2qA3z4RxXr1bC2dE3fGh", "", "/10.4.0.2", "fraud-2", "1", "7               tx:2                 7               tx:2"),
    ], verbose=False, kip1099=True),
    "state.txt": state([("fraud", "kafka-2:9092  (2)", "uniform", "Stable", "2", "7", "7")], verbose=True),
    "describe.txt": describe([
        ("fraud", "tx", "0", "3", "9", "6", "Xk1pZ2y3QwWq0aB1cD2eFg", "/10.4.0.1", "fraud-1"),
        ("fraud", "tx", "1", "4", "4", "0", "Xk1pZ2y3QwWq0aB1cD2eFg", "/10.4.0.1", "fraud-1"),
        ("fraud", "tx", "2", "5", "5", "0", "Yl2qA3z4RxXr1bC2dE3fGh", "/10.4.0.2", "fraud-2"),
    ]),
})
