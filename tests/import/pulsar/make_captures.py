#!/usr/bin/env python3
"""Writes the Pulsar tolerance corpus: what `pulsar-admin topics stats`, `stats-internal`,
`partitioned-stats --per-partition` and `partitioned-stats-internal` print, made the way upstream
makes it (see FORMAT.md for the sources): the CLI deserialises the broker's answer into its own
TopicStatsImpl / PersistentTopicInternalStats / Partitioned*Stats and prints it with Jackson's
DefaultPrettyPrinter (ObjectMapperFactory.create(): NON_NULL inclusion), so nulls vanish, field
order is the CLI class's declaration order with getter-only properties last, and the key-hash
ranges come from the broker's own selector code, re-implemented here (Murmur3_32Hash, the 2.x
consistent-hashing ring over [0, 2^31-1] and the 4.0 ring over [1, 65535]).
Each directory is one `mqviz import` of all its .txt files; `expected.golden` is the output
(`cargo test -p mqviz-app import` compares; MQVIZ_BLESS=1 rewrites it)."""
import os

# --- Jackson DefaultPrettyPrinter (2-space objects, " : ", inline arrays "[ a, b ]", "{ }", "[ ]")

def jdouble(x):  # java.lang.Double.toString for the values used here
    x = float(x)
    if x == 0:
        return "0.0"
    if 1e-3 <= abs(x) < 1e7:
        r = repr(x)
        return r if ("." in r or "e" in r) else r + ".0"
    m, e = ("%.16e" % x).split("e")
    m = repr(float(m))
    return "%sE%d" % (m, int(e))

def jstr(s):
    out = '"'
    for ch in s:
        if ch == '"' or ch == "\\":
            out += "\\" + ch
        elif ord(ch) < 0x20:
            out += "\\u%04x" % ord(ch)
        else:
            out += ch  # Jackson writes non-ASCII (e.g. U+2025) as raw UTF-8
    return out + '"'

class D(float):
    """A Java double (so 12 prints as 12.0)."""

def dump(v, level=0):
    pad = "  " * (level + 1)
    if isinstance(v, dict):
        if not v:
            return "{ }"
        items = [pad + jstr(k) + " : " + dump(x, level + 1) for k, x in v.items() if x is not None]
        return "{\n" + ",\n".join(items) + "\n" + "  " * level + "}"
    if isinstance(v, list):  # the array indenter is inline: no newline, no extra nesting
        if not v:
            return "[ ]"
        return "[ " + ", ".join(dump(x, level) for x in v) + " ]"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, D):
        return jdouble(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return jstr(v)
    raise TypeError(v)

def pretty(v):  # CliCommand.print: System.out.println(writer.writeValueAsString(item))
    return dump(v) + "\n"

# --- java.util.HashMap iteration order (the partitions / subscriptions / cursors maps are HashMaps)

def java_string_hash(s):
    h = 0
    for ch in s:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h

def hashmap_order(keys):
    cap = 16
    while len(keys) > cap * 0.75:
        cap *= 2
    def bucket(k):
        h = java_string_hash(k)
        return (h ^ (h >> 16)) & (cap - 1)
    return sorted(keys, key=lambda k: (bucket(k), keys.index(k)))

def ordered(d):
    return {k: d[k] for k in hashmap_order(list(d))}

# --- org.apache.pulsar.common.util.Murmur3_32Hash.makeHash (seed 0, masked to a non-negative int)

def murmur3_32(data):
    M = 0xFFFFFFFF
    def rotl(x, r):
        return ((x << r) | (x >> (32 - r))) & M
    def mix_k1(k1):
        k1 = (k1 * 0xCC9E2D51) & M
        k1 = rotl(k1, 15)
        return (k1 * 0x1B873593) & M
    h1, n = 0, len(data)
    for i in range(0, n - n % 4, 4):
        h1 ^= mix_k1(int.from_bytes(data[i:i + 4], "little"))
        h1 = (rotl(h1, 13) * 5 + 0xE6546B64) & M
    k1 = 0
    for i, b in enumerate(data[n - n % 4:]):
        k1 ^= b << (i * 8)
    h1 ^= mix_k1(k1)
    h1 ^= n
    h1 ^= h1 >> 16
    h1 = (h1 * 0x85EBCA6B) & M
    h1 ^= h1 >> 13
    h1 = (h1 * 0xC2B2AE35) & M
    h1 ^= h1 >> 16
    return h1 & 0x7FFFFFFF

def ranges_2x_consistent(names, points=100):
    """2.x-3.x ConsistentHashingStickyKeyConsumerSelector (the AUTO_SPLIT default since
    subscriptionKeySharedUseConsistentHashing=true): ring points murmur(name + i) over [0, 2^31-1];
    getConsumerKeyHashRanges gives [prev+1, point] per ring point, one range per point (adjacent
    ranges of one consumer are not joined) and nothing for the tail after the last point."""
    ring = {}
    for n in names:
        for i in range(points):
            h = murmur3_32((n + str(i)).encode())
            ring.setdefault(h, [])
            if n not in ring[h]:
                ring[h].append(n)
                ring[h].sort()
    out = {n: [] for n in names}
    start = 0
    for h in sorted(ring):
        for n in ring[h]:
            out[n].append((start, h))
        start = h + 1
    return out

def ranges_40_consistent(names, points=100, hi=65535):
    """4.0 ConsistentHashingStickyKeyConsumerSelector (PIP-379): keyHashRange [1, 65535], ring
    point = murmur(name \\0 nameIndex \\0 i) % 65535 + 1 (0 -> 1), first consumer keeps a
    colliding point, adjacent ranges of one consumer are joined, the tail wraps to the first."""
    ring = {}
    for n in names:
        for i in range(points):
            h = murmur3_32((n + "\0" + "0" + "\0" + str(i)).encode()) % hi + 1
            ring.setdefault(h, n)
    out = {n: [] for n in names}
    start, last, prev = 1, -1, None
    for h in sorted(ring):
        c = ring[h]
        if c == prev:
            out[c][-1] = (out[c][-1][0], h)
        else:
            out[c].append((start, h))
        last, start, prev = h, h + 1, c
    first = ring[min(ring)]
    if last != hi:
        if first == prev and out[first][-1][1] == last:
            out[first][-1] = (out[first][-1][0], hi)
        else:
            out[first].append((last + 1, hi))
    for n in out:
        out[n].sort()
    return out

def range_str(r):  # org.apache.pulsar.client.api.Range.toString
    return "[%d, %d]" % r

# --- ManagedCursorImpl.getIndividuallyDeletedMessages(): ConcurrentOpenLongPairRangeSet.toString
# joins Guava Range.toString ("(l:e‥l:e]", U+2025) with "," (no space).

def deleted(ranges, dots="\u2025", sep=","):
    return "[" + sep.join("(%s%s%s]" % (a, dots, b) for a, b in ranges) + "]"

def write(case, files):
    os.makedirs(case, exist_ok=True)
    for name, text in files.items():
        with open(os.path.join(case, name), "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)

# --- per-version shapes (field order = the CLI's class; see FORMAT.md)

def compaction():
    return {"lastCompactionRemovedEventCount": 0, "lastCompactionSucceedTimestamp": 0,
            "lastCompactionFailedTimestamp": 0, "lastCompactionDurationTimeInMills": 0}

def consumer_30(c):
    return {
        "msgRateOut": D(c.get("rate", 0)), "msgThroughputOut": D(c.get("rate", 0) * 212.5),
        "bytesOutCounter": c["out"] * 212, "msgOutCounter": c["out"], "msgRateRedeliver": D(0),
        "messageAckRate": D(c.get("rate", 0)), "chunkedMessageRate": D(0),
        "consumerName": c["name"], "availablePermits": c["permits"], "unackedMessages": c.get("unacked", 0),
        "avgMessagesPerEntry": 1 if c["out"] else 0, "blockedConsumerOnUnackedMsgs": False,
        "readPositionWhenJoining": c.get("joined"),
        "lastAckedTimestamp": c["acked"], "lastConsumedTimestamp": c["consumed"],
        "lastConsumedFlowTimestamp": c["flow"], "keyHashRanges": c.get("ranges"), "metadata": {},
        "address": c["address"], "connectedSince": c["since"], "clientVersion": c["client"],
        "lastAckedTime": iso_ms(c["acked"]), "lastConsumedTime": iso_ms(c["consumed"]),
    }

def subscription_30(s, consumers):
    return {
        "msgRateOut": D(sum(c.get("rate", 0) for c in s["consumers"])),
        "msgThroughputOut": D(sum(c.get("rate", 0) * 212.5 for c in s["consumers"])),
        "bytesOutCounter": s["out"] * 212, "msgOutCounter": s["out"], "msgRateRedeliver": D(0),
        "messageAckRate": D(sum(c.get("rate", 0) for c in s["consumers"])), "chunkedMessageRate": 0,
        "msgBacklog": s["backlog"], "backlogSize": s["backlog"] * 212, "earliestMsgPublishTimeInBacklog": 0,
        "msgBacklogNoDelayed": s["backlog"], "blockedSubscriptionOnUnackedMsgs": False, "msgDelayed": 0,
        "unackedMessages": s.get("unacked", 0), "type": s["type"], "activeConsumerName": s.get("active"),
        "msgRateExpired": D(0), "totalMsgExpired": 0, "lastExpireTimestamp": 0,
        "lastConsumedFlowTimestamp": s["flow"], "lastConsumedTimestamp": s["consumed"],
        "lastAckedTimestamp": s["acked"], "lastMarkDeleteAdvancedTimestamp": s["acked"],
        "consumers": consumers, "isDurable": True, "isReplicated": False, "allowOutOfOrderDelivery": False,
        "keySharedMode": s.get("mode"), "consumersAfterMarkDeletePosition": s.get("after", {}),
        "nonContiguousDeletedMessagesRanges": s.get("holes", 0),
        "nonContiguousDeletedMessagesRangesSerializedSize": s.get("holes", 0) * 16,
        "delayedMessageIndexSizeInBytes": 0, "subscriptionProperties": {},
        "filterProcessedMsgCount": 0, "filterAcceptedMsgCount": 0, "filterRejectedMsgCount": 0,
        "filterRescheduledMsgCount": 0, "durable": True, "replicated": False,
    }

def topic_30(t, subs, owner=True):
    return {
        "msgRateIn": D(t.get("rate_in", 0)), "msgThroughputIn": D(t.get("rate_in", 0) * 212.5),
        "msgRateOut": D(t.get("rate_out", 0)), "msgThroughputOut": D(t.get("rate_out", 0) * 212.5),
        "bytesInCounter": t["in"] * 212, "msgInCounter": t["in"], "bytesOutCounter": t["out"] * 212,
        "msgOutCounter": t["out"], "averageMsgSize": D(212.0 if t.get("rate_in") else 0),
        "msgChunkPublished": False, "storageSize": t["storage"], "backlogSize": t["backlog_bytes"],
        "publishRateLimitedTimes": 0, "earliestMsgPublishTimeInBacklogs": 0, "offloadedStorageSize": 0,
        "lastOffloadLedgerId": 0, "lastOffloadSuccessTimeStamp": 0, "lastOffloadFailureTimeStamp": 0,
        "ongoingTxnCount": 0, "abortedTxnCount": 0, "committedTxnCount": 0,
        "publishers": t.get("publishers", []), "waitingPublishers": 0, "subscriptions": ordered(subs),
        "replication": {}, "deduplicationStatus": "Disabled" if owner else None,
        "nonContiguousDeletedMessagesRanges": t.get("holes", 0),
        "nonContiguousDeletedMessagesRangesSerializedSize": t.get("holes", 0) * 16,
        "delayedMessageIndexSizeInBytes": 0, "compaction": compaction(),
        "ownerBroker": t.get("owner") if owner else None,
    }

def ledger(lid, entries, size):
    return {"ledgerId": lid, "entries": entries, "size": size, "offloaded": False, "underReplicated": False}

def cursor(c, active=None):
    return {
        "markDeletePosition": c["md"], "readPosition": c["read"], "waitingReadOp": c.get("waiting", False),
        "pendingReadOps": 0, "messagesConsumedCounter": c["consumed"], "cursorLedger": c["cl"],
        "cursorLedgerLastEntry": c["cle"], "individuallyDeletedMessages": c.get("deleted", "[]"),
        "lastLedgerSwitchTimestamp": c["switched"], "state": "Open", "active": active,
        "numberOfEntriesSinceFirstNotAckedMessage": c["since_first"],
        "totalNonContiguousDeletedMessagesRange": c.get("holes", 0),
        "subscriptionHavePendingRead": c.get("waiting", False), "subscriptionHavePendingReplayRead": False,
        "properties": {},
    }

def internal(m, cursors):
    return {
        "entriesAddedCounter": m["added"], "numberOfEntries": sum(l["entries"] for l in m["ledgers"]) + m["current"],
        "totalSize": sum(l["size"] for l in m["ledgers"]) + m["current_size"],
        "currentLedgerEntries": m["current"], "currentLedgerSize": m["current_size"],
        "lastLedgerCreatedTimestamp": m["created"], "waitingCursorsCount": m.get("waiting", 0),
        "pendingAddEntriesCount": 0, "lastConfirmedEntry": m["lce"], "state": "LedgerOpened",
        # the open ledger is listed last, with entries 0 / size 0 until it is closed
        "ledgers": m["ledgers"] + [ledger(m["open"], 0, 0)],
        "cursors": ordered(cursors), "schemaLedgers": m.get("schema", []),
        "compactedLedger": {"ledgerId": -1, "entries": -1, "size": -1, "offloaded": False, "underReplicated": False},
    }

import datetime

def iso_ms(ms, nanos=None):  # org.apache.pulsar.common.util.DateFormatter.format in a UTC JVM
    t = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
    s = t.strftime("%Y-%m-%dT%H:%M:%S")
    frac = ("%09d" % nanos) if nanos is not None else ("%03d" % (ms % 1000))
    frac = frac.rstrip("0")
    return s + ("." + frac if frac else "") + "Z"

# === 1. 3.0: partitioned-stats --per-partition and partitioned-stats-internal of a Failover sub.
# Both consumers are connected to every partition; the dispatcher sorts them by priority then name
# and makes consumers[partitionIndex % 2] active (AbstractDispatcherSingleActiveConsumer).

TOPIC = "persistent://acme/retail/orders"
W1, W2 = "billing-worker-1", "billing-worker-2"
T0 = 1715673600000  # 2024-05-14T08:00:00Z
parts = [
    # open ledger, entries in it, closed ledgers (id, entries), markDelete, read, holes (ranges), active
    dict(open=57, current=1203, closed=[(41, 5000)], md="57:1180", read="57:1203", holes=[], active=W1,
         cl=63, cle=118, waiting=True),
    dict(open=58, current=1190, closed=[(44, 4980)], md="58:1150", read="58:1190",
         holes=[("58:1152", "58:1157")], active=W2, cl=64, cle=97, waiting=True),
    # lagging: nothing of ledger 59 acknowledged, the mark-delete is the last entry of ledger 47
    dict(open=59, current=1175, closed=[(47, 5011)], md="47:5010", read="59:1000", holes=[], active=W1,
         cl=65, cle=41, waiting=False),
]

def entry_of(pos):
    return int(pos.split(":")[1])

per_stats, per_internal = {}, {}
agg = dict(backlog=0, out=0, inn=0, storage=0, holes=0, rate=0.0,
           cons=[dict(rate=0.0, out=0, permits=0), dict(rate=0.0, out=0, permits=0)])
for i, p in enumerate(parts):
    name = "%s-partition-%d" % (TOPIC, i)
    lce = "%d:%d" % (p["open"], p["current"] - 1)
    last_closed = p["closed"][-1]
    if p["md"].startswith("%d:" % p["open"]):
        backlog = (p["current"] - 1) - entry_of(p["md"])
    else:  # mark-delete on the last entry of the previous ledger: the whole open ledger is backlog
        backlog = p["current"]
    acked_in_holes = sum(entry_of(b) - entry_of(a) for a, b in p["holes"])
    backlog -= acked_in_holes
    total = sum(e for _, e in p["closed"]) + p["current"]
    out = total - backlog
    ts = T0 + 86400000 * 3 + i * 911
    rate = 4.3 if backlog < 100 else 0.0
    last = ts if backlog < 100 else ts - 3600000  # the lagging partition's consumer is stuck
    cons = []
    for w in (W1, W2):
        is_active = w == p["active"]
        dispatched = (entry_of(p["read"]) - (entry_of(p["md"]) + 1)) if p["md"].startswith("%d:" % p["open"]) else entry_of(p["read"])
        permits = (1000 - min(dispatched - acked_in_holes, 1000)) if is_active else 1000
        cons.append(consumer_30(dict(
            name=w, out=out if is_active else 0, rate=rate if is_active else 0,
            permits=permits, acked=last - 1200 if is_active else 0, consumed=last - 800 if is_active else 0,
            flow=ts - 700, address="/10.12.4.%d:%d" % (21 if w == W1 else 22, 40100 + i),
            since=iso_ms(T0 + 5000 + (0 if w == W1 else 2400), nanos=(5000 + (0 if w == W1 else 2400)) % 1000 * 1000000 + 118233 + i),
            client="Pulsar-Java-v3.0.5")))
        a = agg["cons"][0 if w == W1 else 1]
        a["permits"] += permits
        a["rate"] += rate if is_active else 0
        a["out"] += out if is_active else 0
    sub = subscription_30(dict(type="Failover", active=p["active"], backlog=backlog, out=out,
                               consumers=[{"rate": rate}], flow=ts - 700,
                               consumed=last - 800, acked=last - 1200, holes=len(p["holes"])), cons)
    per_stats[name] = topic_30(dict(rate_out=rate, rate_in=0, **{"in": total},
                                    out=out, storage=total * 212, backlog_bytes=backlog * 212,
                                    holes=len(p["holes"]), owner="broker-%d.pulsar.svc.cluster.local:8080" % (i % 2)),
                               {"billing": sub})
    agg["backlog"] += backlog
    agg["rate"] += rate
    agg["out"] += out
    agg["inn"] += total
    agg["storage"] += total * 212
    agg["holes"] += len(p["holes"])
    c = dict(md=p["md"], read=p["read"], consumed=out, cl=p["cl"], cle=p["cle"], waiting=p["waiting"],
             deleted=deleted(p["holes"]), switched=iso_ms(T0 + 86400000 * 3 - 3600000 + i * 1234),
             since_first=(entry_of(p["read"]) - entry_of(p["md"]) if p["md"].startswith("%d:" % p["open"])
                          else entry_of(p["read"]) + 1), holes=len(p["holes"]))
    per_internal[name] = internal(dict(
        added=total, ledgers=[ledger(lid, e, e * 212) for lid, e in p["closed"]], open=p["open"],
        current=p["current"], current_size=p["current"] * 212, lce=lce,
        created=iso_ms(T0 + 86400000 * 2 + i * 60017), waiting=1 if p["waiting"] else 0), {"billing": cursor(c)})

def anonymous_consumer_30(a):
    # SubscriptionStatsImpl.add -> ConsumerStatsImpl.add copies rates, counters, permits and unacked
    # only: the aggregated consumers have no consumerName/address/metadata (index-aligned sums).
    return {"msgRateOut": D(a["rate"]), "msgThroughputOut": D(a["rate"] * 212.5), "bytesOutCounter": a["out"] * 212,
            "msgOutCounter": a["out"], "msgRateRedeliver": D(0), "messageAckRate": D(a["rate"]),
            "chunkedMessageRate": D(0), "availablePermits": a["permits"], "unackedMessages": 0, "avgMessagesPerEntry": 0,
            "blockedConsumerOnUnackedMsgs": False, "lastAckedTimestamp": 0, "lastConsumedTimestamp": 0,
            "lastConsumedFlowTimestamp": 0, "lastAckedTime": "1970-01-01T00:00:00Z",
            "lastConsumedTime": "1970-01-01T00:00:00Z"}

agg_sub = subscription_30(dict(type="Failover", backlog=agg["backlog"], out=agg["out"], consumers=[{"rate": agg["rate"]}],
                               flow=0, consumed=0, acked=0, holes=agg["holes"]),
                          [anonymous_consumer_30(a) for a in agg["cons"]])
agg_sub["lastMarkDeleteAdvancedTimestamp"] = 0
partitioned = topic_30(dict(rate_out=agg["rate"], **{"in": agg["inn"]}, out=agg["out"], storage=agg["storage"],
                            backlog_bytes=agg["backlog"] * 212, holes=agg["holes"]), {"billing": agg_sub}, owner=False)
partitioned["metadata"] = {"partitions": 3}
partitioned["partitions"] = ordered(per_stats)
write("stats-3.0-failover-partitioned", {
    "partitioned-stats.txt": "pulsar@pulsar-toolset-0:/pulsar$ bin/pulsar-admin topics partitioned-stats --per-partition %s\n" % TOPIC
                             + pretty(partitioned),
    "partitioned-stats-internal.txt": "pulsar@pulsar-toolset-0:/pulsar$ bin/pulsar-admin topics partitioned-stats-internal %s\n" % TOPIC
                                      + pretty({"metadata": {"partitions": 3}, "partitions": ordered(per_internal)}),
})

# === 2. 2.10: stats + stats-internal of a Key_Shared AUTO_SPLIT subscription, default broker config
# (consistent hashing: ranges are in [0, 2^31-1], ~100 per consumer), keyHashRanges as strings,
# Java-client generated consumer names, a trimmed first ledger (128) that positions still name, and
# individuallyDeletedMessages pasted with ".." (see FORMAT.md: upstream prints U+2025).

TOPIC2 = "persistent://acme/retail/payments"
K = ["a3f9c", "5d21e", "9b07f"]
T2 = 1710145800000  # 2024-03-11T08:30:00Z
ranges2 = ranges_2x_consistent(K)
md2 = "149:2391"
holes2 = [("149:2392", "149:2399"), ("157:-1", "157:380"), ("157:384", "157:700")]
# acked in holes: 7 + 381 + 316 = 704; entries after md: 8 (149:2392..2399) + 742 (157:0..741) = 750
backlog2 = 750 - 704
joined2 = {"a3f9c": "128:1200", "5d21e": "149:2200", "9b07f": "157:650"}
unacked2 = {"a3f9c": 12, "5d21e": 30, "9b07f": 4}
now2 = T2 + 3600000 * 3

def consumer_210(n, i):
    out = [2841, 2507, 91][i]
    return {
        "msgRateOut": D([11.683342, 9.450011, 0.516667][i]), "msgThroughputOut": D([2483.21, 2008.13, 109.79][i]),
        "bytesOutCounter": out * 212, "msgOutCounter": out, "msgRateRedeliver": D(0),
        "messageAckRate": D([11.45001, 9.216677, 0.483334][i]), "chunkedMessageRate": D(0),
        "consumerName": n, "availablePermits": 1000 - unacked2[n] - [3, 0, 0][i],
        "unackedMessages": unacked2[n], "avgMessagesPerEntry": 1, "blockedConsumerOnUnackedMsgs": False,
        "readPositionWhenJoining": joined2[n], "lastAckedTimestamp": now2 - [412, 388, 9120][i],
        "lastConsumedTimestamp": now2 - [201, 173, 8866][i],
        "keyHashRanges": [range_str(r) for r in ranges2[n]], "metadata": {},
        # address/connectedSince/clientVersion are getter-only properties in 2.10: printed last
        "address": "/10.42.3.%d:%d" % (17 + i, 51234 + 7 * i),
        "connectedSince": iso_ms(T2 - [7200000, 3600000, 600000][i] + 118 + i * 5),
        "clientVersion": "2.10.4",
    }

sub2 = {
    "msgRateOut": D(21.65002), "msgThroughputOut": D(4601.13), "bytesOutCounter": 5439 * 212,
    "msgOutCounter": 5439, "msgRateRedeliver": D(0), "messageAckRate": D(21.150021), "chunkedMessageRate": 0,
    "msgBacklog": backlog2, "backlogSize": backlog2 * 212, "earliestMsgPublishTimeInBacklog": 0,
    "msgBacklogNoDelayed": backlog2, "blockedSubscriptionOnUnackedMsgs": False, "msgDelayed": 0,
    "unackedMessages": sum(unacked2.values()), "type": "Key_Shared", "msgRateExpired": D(0),
    "totalMsgExpired": 0, "lastExpireTimestamp": 0, "lastConsumedFlowTimestamp": now2 - 140,
    "lastConsumedTimestamp": now2 - 173, "lastAckedTimestamp": now2 - 388,
    "lastMarkDeleteAdvancedTimestamp": now2 - 5921,
    "consumers": [consumer_210(n, i) for i, n in enumerate(K)],
    "isDurable": True, "isReplicated": False, "allowOutOfOrderDelivery": False, "keySharedMode": "AUTO_SPLIT",
    # recentlyJoinedConsumers: 9b07f joined at 157:650, after the mark-delete 149:2391
    "consumersAfterMarkDeletePosition": {"9b07f": "157:650"},
    "nonContiguousDeletedMessagesRanges": 3, "nonContiguousDeletedMessagesRangesSerializedSize": 52,
    "durable": True, "replicated": False,
}
stats2 = {
    "msgRateIn": D(22.016683), "msgThroughputIn": D(4667.54), "msgRateOut": D(21.65002),
    "msgThroughputOut": D(4601.13), "bytesInCounter": 9142 * 212, "msgInCounter": 9142,
    "bytesOutCounter": 5439 * 212, "msgOutCounter": 5439, "averageMsgSize": D(212.0), "msgChunkPublished": False,
    "storageSize": 6142 * 212, "backlogSize": backlog2 * 212, "publishRateLimitedTimes": 0,
    "earliestMsgPublishTimeInBacklogs": 0, "offloadedStorageSize": 0, "lastOffloadLedgerId": 0,
    "lastOffloadSuccessTimeStamp": 0, "lastOffloadFailureTimeStamp": 0,
    "publishers": [{
        "accessMode": "Shared", "msgRateIn": D(22.016683), "msgThroughputIn": D(4667.54),
        "averageMsgSize": D(212.0), "chunkedMessageRate": D(0), "producerId": 0, "supportsPartialProducer": False,
        "metadata": {}, "address": "/10.42.1.9:38012", "connectedSince": iso_ms(T2 - 86400000 + 42),
        "clientVersion": "2.10.4", "producerName": "payments-gw-7-12",
    }],
    "waitingPublishers": 0, "subscriptions": {"ledger-sync": sub2}, "replication": {},
    "deduplicationStatus": "Disabled", "nonContiguousDeletedMessagesRanges": 3,
    "nonContiguousDeletedMessagesRangesSerializedSize": 52, "compaction": compaction(),
}
internal2 = internal(dict(
    added=9142,  # counts the 3000 entries of the trimmed ledger 128 too
    ledgers=[ledger(141, 3000, 3000 * 212), ledger(149, 2400, 2400 * 212)], open=157, current=742,
    current_size=742 * 212, lce="157:741", created=iso_ms(T2 + 3600000 * 2 + 5123), waiting=1), {
    "ledger-sync": cursor(dict(md=md2, read="157:742", consumed=5393, cl=162, cle=27, waiting=True,
                               deleted=deleted(holes2, dots=".."), switched=iso_ms(T2 + 3600000 * 2 + 907),
                               since_first=750, holes=3)),
})
noise2 = ("[root@pulsar-toolset-0 pulsar]# bin/pulsar-admin topics stats %s\n" % TOPIC2
          + "2024-03-11T11:30:04,512+0000 [main] WARN  org.apache.pulsar.common.util.SecurityUtility"
            " - Conscrypt isn't available. Using JDK default security provider.\n"
          + "java.lang.reflect.InvocationTargetException: null\n"
          + "\tat jdk.internal.reflect.NativeMethodAccessorImpl.invoke0(Native Method) ~[?:?]\n"
          + "\tat org.apache.pulsar.common.util.SecurityUtility.loadConscryptProvider(SecurityUtility.java:124)"
            " ~[org.apache.pulsar-pulsar-common-2.10.4.jar:2.10.4]\n"
          + "Caused by: java.lang.UnsatisfiedLinkError: Failed to load any of the given libraries:"
            " [conscrypt_openjdk_jni-linux-aarch_64, conscrypt_openjdk_jni-linux-aarch_64_fedora, conscrypt_openjdk_jni]\n"
          + "\t... 27 more\n")
write("stats-2.10-key-shared-strings", {
    "stats.txt": noise2 + pretty(stats2),
    "stats-internal.txt": "[root@pulsar-toolset-0 pulsar]# bin/pulsar-admin topics stats-internal %s\n" % TOPIC2
                          + pretty(internal2),
})

# === 3. 4.0 broker, 4.1 pulsar-admin: Key_Shared AUTO_SPLIT (PIP-379 ranges in [1, 65535] as
# keyHashRangeArrays, plus the same ranges as keyHashRanges strings -- upstream fills only one of
# the two per consumer, see FORMAT.md), fields this 4.0 parser has never seen (4.1 additions printed
# at their defaults because the 4.0 broker does not send them), and a Shared subscription whose
# consumers have all left (a durable cursor at "203:-1", nothing acknowledged).

TOPIC3 = "persistent://acme/retail/inventory"
W = ["inventory-worker-0", "inventory-worker-1", "inventory-worker-2"]
T3 = 1748937600000  # 2025-06-03T08:00:00Z
ranges3 = ranges_40_consistent(W)
BOTH_RANGE_FIELDS = True  # False: what a 4.0 broker really sends (keyHashRangeArrays only)
# worker-0 still holds 2 unacked messages of one hash that moved to worker-2 when it joined
draining = next(a for a, b in ranges3[W[2]] if b - a >= 40 and a > 20000) + 17
md3, read3, lce3 = "219:1520", "219:1600", "219:1640"
holes3 = [("219:1523", "219:1530")]
backlog3 = (1640 - 1520) - 7
unacked3 = [30, 25, 17]  # (1521..1599) - 7 acked = 72 dispatched and unacked
now3 = T3 + 3600000 * 5

def consumer_41(n, i):
    out = [1843, 1610, 417][i]
    c = {
        "msgRateOut": D([6.900004, 6.133338, 2.566668][i]), "msgThroughputOut": D([1466.25, 1303.33, 545.42][i]),
        "bytesOutCounter": out * 212, "msgOutCounter": out, "msgRateRedeliver": D(0),
        "messageAckRate": D([6.716671, 5.983337, 2.450001][i]), "chunkedMessageRate": D(0),
        "consumerName": n, "availablePermits": 1000 - unacked3[i], "unackedMessages": unacked3[i],
        "avgMessagesPerEntry": 1, "blockedConsumerOnUnackedMsgs": False,
        "drainingHashesCount": 1 if i == 0 else 0, "drainingHashesClearedTotal": [37, 12, 0][i],
        "drainingHashesUnackedMessages": 2 if i == 0 else 0,
        "drainingHashes": [{"hash": draining, "unackMsgs": 2, "blockedAttempts": 4}] if i == 0 else [],
        "address": "/10.20.7.%d:%d" % (31 + i, 46120 + 11 * i),
        "connectedSince": iso_ms(T3 - [86400000, 86000000, 1800000][i], nanos=[118344521, 902113006, 40087712][i]),
        "clientVersion": "Pulsar-Java-v4.0.4",
        "lastAckedTimestamp": now3 - [233, 310, 501][i], "lastConsumedTimestamp": now3 - [120, 144, 398][i],
        "firstMessagesSentTimestamp": 0, "lastConsumedFlowTimestamp": now3 - [610, 655, 1990][i],
        "firstConsumedFlowTimestamp": 0,
        "keyHashRangeArrays": [list(r) for r in ranges3[n]],
        "keyHashRanges": [range_str(r) for r in ranges3[n]] if BOTH_RANGE_FIELDS else None,
        "metadata": {"app": "inventory-sync", "zone": "eu-west-1%s" % "abc"[i]},
    }
    c["lastAckedTime"] = iso_ms(c["lastAckedTimestamp"])
    c["lastConsumedTime"] = iso_ms(c["lastConsumedTimestamp"])
    return c

def subscription_41(s, consumers):
    return {
        "msgRateOut": D(s["rate"]), "msgThroughputOut": D(s["rate"] * 212.5), "bytesOutCounter": s["out"] * 212,
        "msgOutCounter": s["out"], "msgRateRedeliver": D(0), "messageAckRate": D(s["ack"]),
        "chunkedMessageRate": D(0), "msgBacklog": s["backlog"], "backlogSize": s["backlog"] * 212,
        "earliestMsgPublishTimeInBacklog": 0, "msgBacklogNoDelayed": s["backlog"],
        "blockedSubscriptionOnUnackedMsgs": False, "msgDelayed": 0, "msgInReplay": s.get("replay", 0),
        "unackedMessages": s["unacked"], "type": s["type"], "msgRateExpired": D(0), "msgExpired": 0,
        "totalMsgExpired": 0, "lastExpireTimestamp": 0, "lastConsumedFlowTimestamp": s["flow"],
        "lastConsumedTimestamp": s["consumed"], "lastAckedTimestamp": s["acked"],
        "lastMarkDeleteAdvancedTimestamp": s["advanced"], "consumers": consumers, "isDurable": True,
        "isReplicated": False, "allowOutOfOrderDelivery": False, "keySharedMode": s.get("mode"),
        "consumersAfterMarkDeletePosition": {}, "drainingHashesCount": s.get("draining", 0),
        "drainingHashesClearedTotal": s.get("cleared", 0), "drainingHashesUnackedMessages": 2 * s.get("draining", 0),
        "nonContiguousDeletedMessagesRanges": s.get("holes", 0),
        "nonContiguousDeletedMessagesRangesSerializedSize": s.get("holes", 0) * 16,
        "delayedMessageIndexSizeInBytes": 0, "subscriptionProperties": {},
        "filterProcessedMsgCount": 0, "filterAcceptedMsgCount": 0, "filterRejectedMsgCount": 0,
        "filterRescheduledMsgCount": 0, "dispatchThrottledMsgEventsBySubscriptionLimit": 0,
        "dispatchThrottledBytesEventsBySubscriptionLimit": 0, "dispatchThrottledMsgEventsByTopicLimit": 0,
        "dispatchThrottledBytesEventsByTopicLimit": 0, "dispatchThrottledMsgEventsByBrokerLimit": 0,
        "dispatchThrottledBytesEventsByBrokerLimit": 0,
        # getter-only (Lombok isDurable()/isReplicated()): their order is not stable between runs
        "replicated": False, "durable": True,
    }

total3 = 5000 + 1641
subs3 = {
    "stock-sync": subscription_41(dict(
        rate=15.60001, ack=15.150009, out=3870, backlog=backlog3, unacked=sum(unacked3), type="Key_Shared",
        mode="AUTO_SPLIT", flow=now3 - 610, consumed=now3 - 120, acked=now3 - 233, advanced=now3 - 1874,
        draining=1, cleared=49, holes=1, replay=3), [consumer_41(n, i) for i, n in enumerate(W)]),
    # all consumers gone, the dispatcher is still there, so the type is still "Shared" ("None" when
    # no consumer has attached since the topic was loaded)
    "audit": subscription_41(dict(rate=0, ack=0, out=0, backlog=total3, unacked=0, type="Shared",
                                  flow=T3 - 86400000 * 6, consumed=0, acked=0, advanced=0), []),
}
stats3 = {
    "msgRateIn": D(16.016675), "msgThroughputIn": D(3395.54), "msgRateOut": D(15.60001),
    "msgThroughputOut": D(3315.0), "bytesInCounter": total3 * 212, "msgInCounter": total3,
    "systemTopicBytesInCounter": 0, "bytesOutCounter": 3870 * 212, "msgOutCounter": 3870,
    "bytesOutInternalCounter": 0, "averageMsgSize": D(212.0), "msgChunkPublished": False,
    "storageSize": total3 * 212, "backlogSize": total3 * 212, "backlogQuotaLimitSize": 10737418240,
    "backlogQuotaLimitTime": -1, "oldestBacklogMessageAgeSeconds": -1, "publishRateLimitedTimes": 0,
    "earliestMsgPublishTimeInBacklogs": 0, "offloadedStorageSize": 0, "lastOffloadLedgerId": 0,
    "lastOffloadSuccessTimeStamp": 0, "lastOffloadFailureTimeStamp": 0, "ongoingTxnCount": 0,
    "abortedTxnCount": 0, "committedTxnCount": 0,
    "publishers": [{
        "accessMode": "Shared", "msgRateIn": D(16.016675), "msgThroughputIn": D(3395.54),
        "averageMsgSize": D(212.0), "chunkedMessageRate": D(0), "producerId": 3, "supportsPartialProducer": False,
        "producerName": "inventory-feed-2-7", "address": "/10.20.5.14:39170",
        "connectedSince": iso_ms(T3 - 86400000 * 2, nanos=554012877), "clientVersion": "Pulsar-Java-v4.0.4",
        "metadata": {},
    }],
    "waitingPublishers": 0, "subscriptions": ordered(subs3), "replication": {},
    "deduplicationStatus": "Disabled", "nonContiguousDeletedMessagesRanges": 1,
    "nonContiguousDeletedMessagesRangesSerializedSize": 16, "delayedMessageIndexSizeInBytes": 0,
    "compaction": compaction(), "ownerBroker": "broker-2.pulsar.svc.cluster.local:8080",
    "topicCreationTimeStamp": 0, "lastPublishTimeStamp": 0,
}
internal3 = internal(dict(
    added=total3, ledgers=[ledger(203, 5000, 5000 * 212)], open=219, current=1641, current_size=1641 * 212,
    lce=lce3, created=iso_ms(T3 + 3600000 + 40511), waiting=1,
    schema=[ledger(17, 1, 96)]), {
    "stock-sync": cursor(dict(md=md3, read=read3, consumed=3827, cl=224, cle=301, waiting=True,
                              deleted=deleted(holes3), switched=iso_ms(T3 + 3600000 + 41007),
                              since_first=80, holes=1), active=True),
    "audit": cursor(dict(md="203:-1", read="203:0", consumed=0, cl=-1, cle=-1,
                         switched=iso_ms(T3 - 86400000 * 6 + 2212), since_first=total3 + 1), active=False),
})
internal3["cursors"]["audit"]["state"] = "NoLedger"
write("stats-4.0-key-shared-arrays", {
    "stats.txt": pretty(stats3),
    "stats-internal.txt": pretty(internal3),
})

# === 4. A lone `topics stats` (3.x) of an Exclusive subscription, after a mistyped topic: nothing
# here says where the cursor is -- no stats-internal, so no positions.

TOPIC4 = "persistent://acme/ops/audit-log"
T4 = 1731920400000  # 2024-11-18T09:00:00Z
cons4 = consumer_30(dict(name="archiver-1", out=18211, rate=2.2, permits=642, acked=T4 - 950,
                         consumed=T4 - 910, flow=T4 - 4200, address="/10.12.9.40:52117",
                         since=iso_ms(T4 - 86400000, nanos=771520334), client="Pulsar-Java-v3.0.7"))
sub4 = subscription_30(dict(type="Exclusive", active="archiver-1", backlog=1284, out=18211,
                            consumers=[{"rate": 2.2}], flow=T4 - 4200, consumed=T4 - 910, acked=T4 - 950), [cons4])
stats4 = topic_30(dict(rate_in=2.4, rate_out=2.2, **{"in": 19495}, out=18211, storage=19495 * 212,
                       backlog_bytes=1284 * 212, owner="broker-1.pulsar.svc.cluster.local:8080"), {"archiver": sub4})
write("stats-only-exclusive", {
    "stats.txt": "$ pulsar-admin topics stats persistent://acme/ops/audit-logs\n"
                 "Topic not found\n\nReason: Topic not found\n"
                 "$ pulsar-admin topics stats %s\n" % TOPIC4 + pretty(stats4) + "$ \n",
})
