# An independent Kafka client for the rdmock tests: kafka-python (Debian's
# python3-kafka), driven by the Go tests through JSON lines whose keys,
# values and header values are base64, so that any bytes survive.
#
#   consume BOOTSTRAP TOPIC COUNT TIMEOUT_S   print COUNT records (or fewer at
#                                             the timeout) of every partition,
#                                             from the beginning
#   produce BOOTSTRAP TOPIC                   send the records read on stdin,
#                                             one JSON object a line, in order,
#                                             and print each one's partition
#                                             and offset
#   committed BOOTSTRAP GROUP TOPIC PARTITIONS
#                                             print the group's committed
#                                             offset of each partition
#                                             (-1 for none)
import base64
import json
import sys
import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition


def b64(b):
    return None if b is None else base64.b64encode(b).decode()


def unb64(s):
    return None if s is None else base64.b64decode(s)


def consume(bootstrap, topic, count, timeout):
    c = KafkaConsumer(bootstrap_servers=bootstrap.split(","),
                      enable_auto_commit=False, group_id=None,
                      auto_offset_reset="earliest")
    deadline = time.time() + timeout
    parts = None
    while parts is None and time.time() < deadline:
        parts = c.partitions_for_topic(topic)
        if parts is None:
            time.sleep(0.1)
    if parts is None:
        sys.exit("no metadata for topic " + topic)
    c.assign([TopicPartition(topic, p) for p in sorted(parts)])
    c.seek_to_beginning()
    n = 0
    while n < count and time.time() < deadline:
        for tp, recs in c.poll(timeout_ms=200).items():
            for r in recs:
                print(json.dumps({
                    "partition": r.partition, "offset": r.offset,
                    "key": b64(r.key), "value": b64(r.value),
                    "headers": [[k, b64(v)] for k, v in (r.headers or [])],
                }))
                n += 1
    sys.stdout.flush()
    c.close()


def produce(bootstrap, topic):
    p = KafkaProducer(bootstrap_servers=bootstrap.split(","), acks="all",
                      max_in_flight_requests_per_connection=1, retries=5,
                      linger_ms=5)
    futures = []
    for line in sys.stdin:
        m = json.loads(line)
        futures.append(p.send(topic, key=unb64(m.get("key")),
                              value=unb64(m.get("value")),
                              partition=m.get("partition"),
                              headers=[(k, unb64(v)) for k, v in m.get("headers") or []]))
    p.flush(timeout=30)
    for f in futures:
        md = f.get(timeout=30)
        print(json.dumps({"partition": md.partition, "offset": md.offset}))
    sys.stdout.flush()
    p.close()


def committed(bootstrap, group, topic, partitions):
    c = KafkaConsumer(bootstrap_servers=bootstrap.split(","), group_id=group,
                      enable_auto_commit=False)
    for p in range(partitions):
        off = c.committed(TopicPartition(topic, p))
        print(json.dumps({"partition": p, "offset": -1 if off is None else off}))
    sys.stdout.flush()
    c.close()


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "consume":
        consume(args[0], args[1], int(args[2]), float(args[3]))
    elif cmd == "produce":
        produce(args[0], args[1])
    elif cmd == "committed":
        committed(args[0], args[1], args[2], int(args[3]))
    else:
        sys.exit("unknown command " + cmd)
