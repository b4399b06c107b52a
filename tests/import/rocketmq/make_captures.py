#!/usr/bin/env python3
"""Writes the RocketMQ tolerance corpus: captures made with the printf formats of upstream's
ConsumerProgressSubCommand (4.7 to 5.x), ConsumerConnectionSubCommand (before and since 4.9.3)
and RebalanceImpl's log line, plus the noise real captures carry. Each directory is one
`mqviz import` of all its .txt files; `expected.golden` is the output
(`cargo test -p mqviz-app import` compares; MQVIZ_BLESS=1 rewrites it)."""
import os

def pad(v, w):  # Java's %-Ns / %-Nd
    v = str(v)
    return v + " " * max(0, w - len(v))

def front(s, n):  # UtilAll.frontStringAtLeast
    return s[:n]

def progress(rows, version, show_ip):
    """rows: (topic, broker, qid, broker_offset, consumer_offset, client_ip, inflight, last_time)."""
    width = 32 if version < (4, 9, 3) else 64
    always_ip = version < (4, 9, 0)  # before 4.9.0 #Client IP was printed without -s
    ip = show_ip or always_ip
    inflight = version >= (5, 1, 0)
    out = []
    head = pad("#Topic", width) + "  " + pad("#Broker Name", 32) + "  " + pad("#QID", 4) + "  " + pad("#Broker Offset", 20) + "  " + pad("#Consumer Offset", 20) + "  "
    if inflight:
        head += (pad("#Client IP", 20) + " " if ip else "") + pad("#Diff", 20) + " " + pad("#Inflight", 20) + "#LastTime"
    else:
        head += (pad("#Client IP", 20) + " " if ip else "") + pad("#Diff", 20) + "  #LastTime"
    out.append(head)
    total = 0
    inflight_total = 0
    for (t, b, q, bo, co, cip, infl, last) in rows:
        diff = bo - co
        total += diff
        inflight_total += infl
        line = pad(front(t, width), width) + "  " + pad(front(b, 32), 32) + "  " + pad(q, 4) + "  " + pad(bo, 20) + "  " + pad(co, 20) + "  "
        if inflight:
            line += (pad(cip or "N/A", 20) + " " if ip else "") + pad(diff, 20) + " " + pad(infl, 20) + " " + last
        else:
            line += (pad(cip or "N/A", 20) + " " if ip else "") + pad(diff, 20) + "  " + last
        out.append(line)
    out.append("")
    out.append("Consume TPS: 12.40")
    if version >= (5, 1, 0):
        out.append("Consume Diff Total: %d" % total)
        out.append("Consume Inflight Total: %d" % inflight_total)
    else:
        out.append("Diff Total: %d" % total)
    return "\n".join(out) + "\n"

def connection(conns, subs, model="CLUSTERING", where="CONSUME_FROM_LAST_OFFSET", old=False):
    """conns: (clientId, addr, language, version); subs: (topic, expression)."""
    out = ""
    if old:  # before 4.9.3: "%03d  %-32s %-22s %-8s %s", and "%nBelow is subscription:" with no newline
        for i, (c, a, l, v) in enumerate(conns, 1):
            out += "%03d  %s %s %s %s\n" % (i, pad(c, 32), pad(a, 22), pad(l, 8), v)
        out += "\nBelow is subscription:"
        for i, (t, e) in enumerate(subs, 1):
            out += "%03d  Topic: %s SubExpression: %s\n" % (i, pad(t, 40), e)
    else:
        out += "%s %s %s %s\n" % (pad("#ClientId", 36), pad("#ClientAddr", 22), pad("#Language", 10), "#Version")
        for (c, a, l, v) in conns:
            out += "%s %s %s %s\n" % (pad(c, 36), pad(a, 22), pad(l, 10), v)
        out += "\nBelow is subscription:\n"
        out += "%s %s\n" % (pad("#Topic", 20), "#SubExpression")
        for (t, e) in subs:
            out += "%s %s\n" % (pad(t, 20), e)
        out += "\n"
    out += "ConsumeType: CONSUME_PASSIVELY\nMessageModel: %s\nConsumeFromWhere: %s\n" % (model, where)
    return out

def mq(t, b, q):
    return "MessageQueue [topic=%s, brokerName=%s, queueId=%d]" % (t, b, q)

def rebalance(prefix, strategy, group, topic, client, mq_all, cid_all, result, v5=True):
    word = "client rebalanced" if v5 else "rebalanced"
    return "%s%s result changed. allocateMessageQueueStrategyName=%s, group=%s, topic=%s, clientId=%s, mqAllSize=%d, cidAllSize=%d, rebalanceResultSize=%d, rebalanceResultSet=[%s]\n" % (
        prefix, word, strategy, group, topic, client, mq_all, cid_all, len(result), ", ".join(mq(*r) for r in result))

def write(case, files):
    os.makedirs(case, exist_ok=True)
    for name, text in files.items():
        with open(os.path.join(case, name), "w") as fh:
            fh.write(text)

T = "OrderTopic"
G = "billing_group"
C1, C2 = "10.0.0.11@31415", "10.0.0.12@27182"
TS = "2026-12-05 10:31:07"

# 4.9.7: consumerProgress -s true (64-wide topics, #Client IP, no #Inflight, "Diff Total") with
# the 4.9.3+ consumerConnection of the same group.
rows = []
for b, ip in (("broker-a", "10.0.0.11"), ("broker-b", "10.0.0.12")):
    for q in range(4):
        rows.append((T, b, q, 1200 + q, 1190 + q, ip, 0, TS))
rows.append(("%RETRY%" + G, "broker-a", 0, 3, 1, "10.0.0.11", 0, TS))
write("progress-connection-4.9.7", {
    "connection.txt": connection([(C1, "10.0.0.11:53211", "JAVA", "V4_9_7"), (C2, "10.0.0.12:41100", "JAVA", "V4_9_7")],
                                 [("%RETRY%" + G, "*"), (T, "TagA || TagB")]),
    "progress.txt": "RocketMQLog:WARN No appenders could be found for logger (io.netty.util.internal.PlatformDependent0).\n"
                    "RocketMQLog:WARN Please initialize the logger system properly.\n" + progress(rows, (4, 9, 7), True),
})

# 5.1: consumerProgress without -s (#Inflight, "Consume Diff Total"), one negative Diff, and the
# clients' rebalance log naming the strategy and the owners.
rows = []
for q in range(4):
    rows.append((T, "broker-a", q, 500 + q, 480 + q if q != 3 else 510, None, 2, TS if q else "N/A"))
rows.append(("%RETRY%" + G, "broker-a", 0, 0, 0, None, 0, "N/A"))
log = ""
log += "2026-12-05 10:30:01,114 INFO RebalanceService - " + rebalance("", "AVG_BY_CIRCLE", G, T, C1, 4, 1, [(T, "broker-a", q) for q in range(4)])
log += "2026-12-05 10:30:02,301 INFO main - some other log line\n"
log += "2026-12-05 10:30:21,118 INFO RebalanceService - " + rebalance("", "AVG_BY_CIRCLE", G, T, C1, 4, 2, [(T, "broker-a", 0), (T, "broker-a", 2)])
log += "2026-12-05 10:30:21,140 INFO RebalanceService - " + rebalance("", "AVG_BY_CIRCLE", G, T, C2, 4, 2, [(T, "broker-a", 1), (T, "broker-a", 3)])
log += "2026-12-05 10:30:22,000 INFO RebalanceService - broker rebalanced result changed. allocateMessageQueueStrategyName=AVG, group=%s, topic=%s, clientId=%s, assignmentSet=[]\n" % (G, T, C2)
write("progress-log-5.1-inflight", {
    "progress.txt": progress(rows, (5, 1, 4), False),
    "rebalance.log": log,
})
os.rename(os.path.join("progress-log-5.1-inflight", "rebalance.log"), os.path.join("progress-log-5.1-inflight", "rebalance.txt"))

# 4.7.1: topics cut to 32 characters and #Client IP always printed, with the old %03d
# consumerConnection whose table has the full name (its first row glued to the heading).
LONG = "com_example_payments_settlement_topic_v2"
rows = [(LONG, "broker-a", q, 90 + q, 80 + q, "10.0.0.21" if q < 2 else "10.0.0.22", 0, TS) for q in range(4)]
write("progress-connection-4.7-cut", {
    "connection.txt": connection([("10.0.0.21@9001", "10.0.0.21:50001", "JAVA", "V4_7_1"), ("10.0.0.22@9002", "10.0.0.22:50002", "JAVA", "V4_7_1")],
                                 [(LONG, "*"), ("%RETRY%settle", "*")], old=True),
    "progress.txt": progress(rows, (4, 7, 1), False),
})

# 5.3: consumerProgress -s true alone, cut in the middle (the footer disagrees), with a shell
# prompt; the group is named by its %RETRY% row and the members by their #Client IP.
rows = [(T, "broker-a", q, 40 + q, 40 + q - (q % 3), "10.0.0.31" if q % 2 else "10.0.0.32", 0, TS) for q in range(6)]
rows.append(("%RETRY%audit", "broker-a", 0, 0, 0, "10.0.0.31", 0, "N/A"))
text = progress(rows, (5, 3, 1), True).split("\n")
cut = "\n".join(text[:3] + text[4:])  # one row missing: the footer's total no longer agrees
write("progress-5.3-alone-cut", {
    "progress.txt": "[admin@ops ~]$ sh bin/mqadmin consumerProgress -n 10.0.0.1:9876 -g audit -s true\n" + cut,
})
