/*
 * rdmock: runs librdkafka's mock Kafka cluster (rdkafka_mock.h) as a
 * process of its own, so that the Go tests of this project can talk to a
 * second broker implementation, written independently of kfake.
 *
 * Usage: rdmock [-brokers N] [-topic NAME:PARTITIONS[:REPLICAS]]...
 *
 * The brokers listen on ephemeral ports of 127.0.0.1. On start the program
 * prints one line "bootstrap HOST:PORT,HOST:PORT,..." and then reads
 * commands from stdin, one per line, answering each with exactly one line:
 * "ok", "ok VALUE" or "error MESSAGE". End of input (or "quit") stops the
 * cluster and exits, so a parent that dies takes the cluster with it.
 *
 * Commands (BROKER is a broker id, 1..N, or -1 for all where noted; ERR is
 * a Kafka error code, e.g. 6 for NOT_LEADER_OR_FOLLOWER, or -195 for
 * librdkafka's "drop the connection"):
 *
 *   topic NAME PARTITIONS [REPLICAS]   create a topic
 *   errors APIKEY ERR...               the next requests of APIKEY to any
 *                                      broker fail with these errors, in order
 *   broker_errors BROKER APIKEY ERR[:RTT_MS]...
 *                                      same for one broker, each answer
 *                                      optionally delayed by RTT_MS
 *   errstack BROKER APIKEY             "ok COUNT": errors still queued there
 *   clear APIKEY                       drop the cluster-wide queued errors
 *   leader TOPIC PARTITION BROKER      move the partition's leader
 *                                      (-1: no leader)
 *   follower TOPIC PARTITION BROKER    set the preferred read replica
 *   down BROKER | up BROKER            close a broker's connections and
 *                                      refuse new ones / accept them again
 *                                      (BROKER -1: all); leaders do not move
 *   rtt BROKER MS                      delay every answer of BROKER (-1: all)
 *   coordinator group|transaction KEY BROKER
 *                                      pin a group's or transactional id's
 *                                      coordinator
 *   apiversion APIKEY MIN MAX          restrict an API's versions (-1 -1:
 *                                      disable it)
 *   topic_error TOPIC ERR              Metadata reports ERR for the topic
 *   quit
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#define MAX_ARGS 256

static rd_kafka_mock_cluster_t *mc;

/* parse_long parses a whole decimal token into [lo, hi]. */
static int parse_long(const char *s, long lo, long hi, long *out) {
        char *end;
        long v;

        if (!s || !*s)
                return -1;
        errno = 0;
        v     = strtol(s, &end, 10);
        if (errno || *end || v < lo || v > hi)
                return -1;
        *out = v;
        return 0;
}

/* The reply functions return 0 so that a command can end with
 * "return reply_...(...)". */
static int reply_err(const char *what, const char *arg) {
        printf("error %s%s%s\n", what, arg ? ": " : "", arg ? arg : "");
        return 0;
}

static int reply_kerr(rd_kafka_resp_err_t err) {
        if (err)
                printf("error %s\n", rd_kafka_err2str(err));
        else
                printf("ok\n");
        return 0;
}

static int create_topic(const char *name, long parts, long replicas) {
        rd_kafka_resp_err_t err =
            rd_kafka_mock_topic_create(mc, name, (int)parts, (int)replicas);
        if (err) {
                fprintf(stderr, "rdmock: creating topic %s: %s\n", name,
                        rd_kafka_err2str(err));
                return -1;
        }
        return 0;
}

/* run executes one command; argv[0] is its name. It answers exactly one
 * line. */
static int run(int argc, char **argv) {
        const char *cmd = argv[0];
        long a, b, c;

        if (!strcmp(cmd, "topic")) {
                long replicas = 1;
                if (argc < 3 || argc > 4 ||
                    parse_long(argv[2], 1, 100000, &a) ||
                    (argc == 4 && parse_long(argv[3], 1, 1000, &replicas)))
                        return reply_err("usage", "topic NAME PARTITIONS [REPLICAS]");
                reply_kerr(rd_kafka_mock_topic_create(mc, argv[1], (int)a,
                                                      (int)replicas));

        } else if (!strcmp(cmd, "errors")) {
                rd_kafka_resp_err_t errs[MAX_ARGS];
                int i;
                if (argc < 3 || parse_long(argv[1], 0, SHRT_MAX, &a))
                        return reply_err("usage", "errors APIKEY ERR...");
                for (i = 2; i < argc; i++) {
                        if (parse_long(argv[i], INT_MIN, INT_MAX, &b))
                                return reply_err("bad error code", argv[i]);
                        errs[i - 2] = (rd_kafka_resp_err_t)b;
                }
                rd_kafka_mock_push_request_errors_array(mc, (int16_t)a,
                                                        (size_t)(argc - 2), errs);
                printf("ok\n");

        } else if (!strcmp(cmd, "broker_errors")) {
                int i;
                if (argc < 4 || parse_long(argv[1], 0, INT_MAX, &a) ||
                    parse_long(argv[2], 0, SHRT_MAX, &b))
                        return reply_err("usage",
                                         "broker_errors BROKER APIKEY ERR[:RTT_MS]...");
                /* Validate everything before pushing anything, so that a
                 * bad command leaves the stack as it was. */
                for (i = 3; i < argc; i++) {
                        char tok[64], *colon;
                        long rtt = 0;
                        if (strlen(argv[i]) >= sizeof(tok))
                                return reply_err("bad error", argv[i]);
                        strcpy(tok, argv[i]);
                        if ((colon = strchr(tok, ':'))) {
                                *colon = '\0';
                                if (parse_long(colon + 1, 0, 600000, &rtt))
                                        return reply_err("bad rtt", argv[i]);
                        }
                        if (parse_long(tok, INT_MIN, INT_MAX, &c))
                                return reply_err("bad error code", argv[i]);
                }
                /* The library takes (error, rtt) pairs as varargs; pushing
                 * them one at a time appends to the same stack. */
                for (i = 3; i < argc; i++) {
                        char tok[64], *colon;
                        long rtt = 0;
                        rd_kafka_resp_err_t err;
                        strcpy(tok, argv[i]);
                        if ((colon = strchr(tok, ':'))) {
                                *colon = '\0';
                                parse_long(colon + 1, 0, 600000, &rtt);
                        }
                        parse_long(tok, INT_MIN, INT_MAX, &c);
                        err = rd_kafka_mock_broker_push_request_error_rtts(
                            mc, (int32_t)a, (int16_t)b, 1,
                            (rd_kafka_resp_err_t)c, (int)rtt);
                        if (err)
                                return reply_kerr(err);
                }
                printf("ok\n");

        } else if (!strcmp(cmd, "errstack")) {
                size_t cnt = 0;
                rd_kafka_resp_err_t err;
                if (argc != 3 || parse_long(argv[1], 0, INT_MAX, &a) ||
                    parse_long(argv[2], 0, SHRT_MAX, &b))
                        return reply_err("usage", "errstack BROKER APIKEY");
                err = rd_kafka_mock_broker_error_stack_cnt(mc, (int32_t)a,
                                                           (int16_t)b, &cnt);
                if (err)
                        return reply_kerr(err);
                printf("ok %zu\n", cnt);

        } else if (!strcmp(cmd, "clear")) {
                if (argc != 2 || parse_long(argv[1], 0, SHRT_MAX, &a))
                        return reply_err("usage", "clear APIKEY");
                rd_kafka_mock_clear_request_errors(mc, (int16_t)a);
                printf("ok\n");

        } else if (!strcmp(cmd, "leader") || !strcmp(cmd, "follower")) {
                if (argc != 4 || parse_long(argv[2], 0, INT_MAX, &a) ||
                    parse_long(argv[3], -1, INT_MAX, &b))
                        return reply_err("usage", "leader|follower TOPIC PARTITION BROKER");
                if (!strcmp(cmd, "leader"))
                        reply_kerr(rd_kafka_mock_partition_set_leader(
                            mc, argv[1], (int32_t)a, (int32_t)b));
                else
                        reply_kerr(rd_kafka_mock_partition_set_follower(
                            mc, argv[1], (int32_t)a, (int32_t)b));

        } else if (!strcmp(cmd, "down") || !strcmp(cmd, "up")) {
                if (argc != 2 || parse_long(argv[1], -1, INT_MAX, &a))
                        return reply_err("usage", "down|up BROKER");
                if (!strcmp(cmd, "down"))
                        reply_kerr(rd_kafka_mock_broker_set_down(mc, (int32_t)a));
                else
                        reply_kerr(rd_kafka_mock_broker_set_up(mc, (int32_t)a));

        } else if (!strcmp(cmd, "rtt")) {
                if (argc != 3 || parse_long(argv[1], -1, INT_MAX, &a) ||
                    parse_long(argv[2], 0, 600000, &b))
                        return reply_err("usage", "rtt BROKER MS");
                reply_kerr(rd_kafka_mock_broker_set_rtt(mc, (int32_t)a, (int)b));

        } else if (!strcmp(cmd, "coordinator")) {
                if (argc != 4 ||
                    (strcmp(argv[1], "group") && strcmp(argv[1], "transaction")) ||
                    parse_long(argv[3], 0, INT_MAX, &a))
                        return reply_err("usage",
                                         "coordinator group|transaction KEY BROKER");
                reply_kerr(rd_kafka_mock_coordinator_set(mc, argv[1], argv[2],
                                                         (int32_t)a));

        } else if (!strcmp(cmd, "apiversion")) {
                if (argc != 4 || parse_long(argv[1], 0, SHRT_MAX, &a) ||
                    parse_long(argv[2], -1, SHRT_MAX, &b) ||
                    parse_long(argv[3], -1, SHRT_MAX, &c))
                        return reply_err("usage", "apiversion APIKEY MIN MAX");
                reply_kerr(rd_kafka_mock_set_apiversion(mc, (int16_t)a,
                                                        (int16_t)b, (int16_t)c));

        } else if (!strcmp(cmd, "topic_error")) {
                if (argc != 3 || parse_long(argv[2], INT_MIN, INT_MAX, &a))
                        return reply_err("usage", "topic_error TOPIC ERR");
                rd_kafka_mock_topic_set_error(mc, argv[1], (rd_kafka_resp_err_t)a);
                printf("ok\n");

        } else {
                reply_err("unknown command", cmd);
        }
        return 0;
}

static void usage(void) {
        fprintf(stderr,
                "usage: rdmock [-brokers N] [-topic NAME:PARTITIONS[:REPLICAS]]...\n");
        exit(2);
}

int main(int argc, char **argv) {
        char errstr[512];
        char line[8192];
        long brokers = 3;
        rd_kafka_conf_t *conf;
        rd_kafka_t *rk;
        int i;

        /* Topics are created after the cluster starts; remember them. */
        const char *topics[MAX_ARGS];
        int ntopics = 0;

        for (i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "-brokers") && i + 1 < argc) {
                        if (parse_long(argv[++i], 1, 64, &brokers))
                                usage();
                } else if (!strcmp(argv[i], "-topic") && i + 1 < argc &&
                           ntopics < MAX_ARGS) {
                        topics[ntopics++] = argv[++i];
                } else {
                        usage();
                }
        }

        /* The mock cluster lives inside a client instance; this one is
         * never used to produce anything. */
        conf = rd_kafka_conf_new();
        if (rd_kafka_conf_set(conf, "log_level", "4", errstr, sizeof(errstr)))
                fprintf(stderr, "rdmock: %s\n", errstr);
        rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
        if (!rk) {
                fprintf(stderr, "rdmock: %s\n", errstr);
                return 1;
        }
        mc = rd_kafka_mock_cluster_new(rk, (int)brokers);
        if (!mc) {
                fprintf(stderr, "rdmock: could not start the mock cluster\n");
                return 1;
        }

        for (i = 0; i < ntopics; i++) {
                char spec[512], *name = spec, *p;
                long parts = 1, replicas = 1;
                if (strlen(topics[i]) >= sizeof(spec))
                        usage();
                strcpy(spec, topics[i]);
                if (!(p = strchr(spec, ':')))
                        usage();
                *p++ = '\0';
                {
                        char *q = strchr(p, ':');
                        if (q) {
                                *q++ = '\0';
                                if (parse_long(q, 1, 1000, &replicas))
                                        usage();
                        }
                }
                if (parse_long(p, 1, 100000, &parts))
                        usage();
                if (create_topic(name, parts, replicas))
                        return 1;
        }

        printf("bootstrap %s\n", rd_kafka_mock_cluster_bootstraps(mc));
        fflush(stdout);

        while (fgets(line, sizeof(line), stdin)) {
                char *args[MAX_ARGS], *tok, *save = NULL;
                int n = 0;
                for (tok = strtok_r(line, " \t\r\n", &save); tok && n < MAX_ARGS;
                     tok = strtok_r(NULL, " \t\r\n", &save))
                        args[n++] = tok;
                if (n == 0)
                        continue;
                if (!strcmp(args[0], "quit")) {
                        printf("ok\n");
                        fflush(stdout);
                        break;
                }
                run(n, args);
                fflush(stdout);
        }

        rd_kafka_mock_cluster_destroy(mc);
        rd_kafka_destroy(rk);
        return 0;
}
