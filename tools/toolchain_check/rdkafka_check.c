/* rdkafka_check: proves that the system librdkafka (the C library Floe's kafka module wraps)
 * reads a topic from the test broker the way Floe will (ARCHITECTURE.md §1 "Fetch"):
 * isolation.level=read_committed, enable.auto.commit=false, auto.offset.reset=error, every
 * partition assigned explicitly from offset 0, read until each partition's position reached
 * the high watermark queried at start.
 *
 * Usage: rdkafka_check <bootstrap> <topic> [timeout-ms]
 * Output (stdout): one JSON line per record {"p":<partition>,"o":<offset>,"v":"<value>"}, then
 * {"positions":{"<p>":<position>,...},"high":{"<p>":<high watermark>,...}}.
 * Values are printed as JSON strings, bytes outside printable ASCII as \u00XX (Latin-1).
 * Exit status: 0 done, 1 usage, 2 Kafka error, 3 timeout before reaching the watermarks. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

static int64_t NowMs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void PrintJsonString(const unsigned char* p, size_t n) {
  putchar('"');
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = p[i];
    if (c == '"' || c == '\\') {
      printf("\\%c", c);
    } else if (c < 0x20 || c >= 0x7f) {
      printf("\\u%04x", c);
    } else {
      putchar(c);
    }
  }
  putchar('"');
}

static int Set(rd_kafka_conf_t* conf, const char* key, const char* value) {
  char err[512];
  if (rd_kafka_conf_set(conf, key, value, err, sizeof err) != RD_KAFKA_CONF_OK) {
    fprintf(stderr, "rdkafka_check: config %s=%s: %s\n", key, value, err);
    return -1;
  }
  return 0;
}

static void PrintPositions(const rd_kafka_topic_partition_list_t* pos, const int64_t* high) {
  printf("{\"positions\":{");
  for (int i = 0; i < pos->cnt; ++i) {
    printf("%s\"%" PRId32 "\":%" PRId64, i ? "," : "", pos->elems[i].partition,
           pos->elems[i].offset);
  }
  printf("},\"high\":{");
  for (int i = 0; i < pos->cnt; ++i) {
    printf("%s\"%" PRId32 "\":%" PRId64, i ? "," : "", pos->elems[i].partition, high[i]);
  }
  printf("}}\n");
}

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    fprintf(stderr, "usage: %s <bootstrap> <topic> [timeout-ms]\n", argv[0]);
    return 1;
  }
  const char* topic = argv[2];
  const int64_t timeout_ms = argc == 4 ? strtoll(argv[3], NULL, 10) : 60000;
  const int64_t deadline = NowMs() + timeout_ms;

  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  if (Set(conf, "bootstrap.servers", argv[1]) || Set(conf, "group.id", "floe-rdkafka-check") ||
      Set(conf, "isolation.level", "read_committed") ||
      Set(conf, "enable.auto.commit", "false") || Set(conf, "auto.offset.reset", "error") ||
      Set(conf, "enable.partition.eof", "false")) {
    rd_kafka_conf_destroy(conf);
    return 2;
  }
  char err[512];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (rk == NULL) {
    fprintf(stderr, "rdkafka_check: rd_kafka_new: %s\n", err);
    rd_kafka_conf_destroy(conf);
    return 2;
  }
  rd_kafka_poll_set_consumer(rk);
  int rc = 2;
  rd_kafka_topic_partition_list_t* parts = NULL;
  int64_t* high = NULL;

  /* Partition count from the topic's metadata. */
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, topic, NULL);
  const struct rd_kafka_metadata* md = NULL;
  rd_kafka_resp_err_t e = rd_kafka_metadata(rk, 0, rkt, &md, 10000);
  rd_kafka_topic_destroy(rkt);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR || md->topic_cnt != 1 || md->topics[0].err) {
    fprintf(stderr, "rdkafka_check: metadata for %s: %s\n", topic,
                rd_kafka_err2str(e ? e : md->topics[0].err));
    goto done;
  }
  const int n = md->topics[0].partition_cnt;
  parts = rd_kafka_topic_partition_list_new(n);
  high = calloc((size_t)(n > 0 ? n : 1), sizeof *high);
  for (int i = 0; i < n; ++i) {
    rd_kafka_topic_partition_list_add(parts, topic, md->topics[0].partitions[i].id)->offset = 0;
  }

  /* The high watermark of each partition, fixed before reading. */
  for (int i = 0; i < n; ++i) {
    int64_t lo = 0;
    e = rd_kafka_query_watermark_offsets(rk, topic, parts->elems[i].partition, &lo, &high[i],
                                         10000);
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
      fprintf(stderr, "rdkafka_check: watermarks of %s/%" PRId32 ": %s\n", topic,
              parts->elems[i].partition, rd_kafka_err2str(e));
      goto done;
    }
  }

  e = rd_kafka_assign(rk, parts);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
    fprintf(stderr, "rdkafka_check: assign: %s\n", rd_kafka_err2str(e));
    goto done;
  }

  for (;;) {
    /* Positions (next offset to read), which must move past transaction markers and aborted
     * records, not the last delivered offset + 1. */
    e = rd_kafka_position(rk, parts);
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
      fprintf(stderr, "rdkafka_check: position: %s\n", rd_kafka_err2str(e));
      goto done;
    }
    int reached = 1;
    for (int i = 0; i < n; ++i) {
      /* An empty partition (high watermark 0) has no position until something arrives. */
      if (high[i] > 0 && parts->elems[i].offset < high[i]) reached = 0;
    }
    if (reached) {
      rc = 0;
      break;
    }
    if (NowMs() > deadline) {
      fprintf(stderr, "rdkafka_check: timeout after %" PRId64 " ms\n", timeout_ms);
      rc = 3;
      break;
    }
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 200);
    if (m == NULL) continue;
    if (m->err) {
      fprintf(stderr, "rdkafka_check: consume %s/%" PRId32 ": %s\n", topic, m->partition,
              rd_kafka_message_errstr(m));
      rd_kafka_message_destroy(m);
      goto done;
    }
    printf("{\"p\":%" PRId32 ",\"o\":%" PRId64 ",\"v\":", m->partition, m->offset);
    PrintJsonString((const unsigned char*)m->payload, m->payload ? m->len : 0);
    printf("}\n");
    rd_kafka_message_destroy(m);
  }
  rd_kafka_position(rk, parts);
  PrintPositions(parts, high);

done:
  fflush(stdout);
  if (md != NULL) rd_kafka_metadata_destroy(md);
  if (parts != NULL) rd_kafka_topic_partition_list_destroy(parts);
  free(high);
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return rc;
}
