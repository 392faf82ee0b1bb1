// floe_loadgen: the steady-load producer of bench/freshness.py, compiled so that
// producing ~200k records/s does not take a core from Floe and the broker on a 2-core
// machine (the Python producer did).
//
// Produces `--rate` records per second for `--seconds` into `--topic`: record k is pool
// record k % n, to partition k % partitions, with an explicit CreateTime (the wall clock,
// ms, when its burst was due; the producer checks every ~1 ms). Idempotent, so each
// partition's offsets follow the order of the produce calls. Writes the CreateTimes to
// `--times` as (int64 ms, int64 count) pairs, little-endian, one per burst in produce
// order: record k's time is the pair that covers k. Prints one JSON line
// {"sent": N, "seconds": S} and exits 0 once every record is acknowledged; 1 on any
// delivery error or when records are left unacknowledged.
//
// --pool: records as (uint32 little-endian length, bytes) back to back.
#include <librdkafka/rdkafka.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

namespace {

std::atomic<int64_t> g_failed{0};

void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* m, void*) {
  if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    if (g_failed.fetch_add(1) == 0) {
      std::cerr << "floe_loadgen: delivery failed: " << rd_kafka_err2str(m->err) << "\n";
    }
  }
}

bool ReadPool(const std::string& path, std::vector<std::string>* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t pos = 0;
  while (pos + 4 <= all.size()) {
    uint32_t len = 0;
    for (int b = 0; b < 4; ++b) {
      len |= static_cast<uint32_t>(static_cast<uint8_t>(all[pos + b])) << (8 * b);
    }
    pos += 4;
    if (len > all.size() - pos) return false;
    out->push_back(all.substr(pos, len));
    pos += len;
  }
  return pos == all.size() && !out->empty();
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  std::string bootstrap, topic, pool_path, times_path;
  int partitions = 16;
  int64_t rate = 0;
  double seconds = 0;
  CLI::App app{"Steady-load producer for bench/freshness.py"};
  app.add_option("--bootstrap", bootstrap)->required();
  app.add_option("--topic", topic)->required();
  app.add_option("--partitions", partitions)->check(CLI::PositiveNumber);
  app.add_option("--rate", rate, "records per second")
      ->required()
      ->check(CLI::PositiveNumber);
  app.add_option("--seconds", seconds)->required()->check(CLI::PositiveNumber);
  app.add_option("--pool", pool_path, "records: (uint32 LE length, bytes)*")->required();
  app.add_option("--times", times_path, "output: (int64 ms, int64 count)* per burst")
      ->required();
  CLI11_PARSE(app, argc, argv);

  std::vector<std::string> pool;
  if (!ReadPool(pool_path, &pool)) {
    std::cerr << "floe_loadgen: " << pool_path
              << " is not a pool of length-prefixed records\n";
    return 2;
  }
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  const std::pair<const char*, const char*> settings[] = {
      {"bootstrap.servers", bootstrap.c_str()},
      {"enable.idempotence", "true"},
      {"linger.ms", "5"},
      {"compression.type", "none"},
      {"queue.buffering.max.messages", "1000000"},
  };
  for (const auto& [k, v] : settings) {
    if (rd_kafka_conf_set(conf, k, v, err, sizeof(err)) != RD_KAFKA_CONF_OK) {
      std::cerr << "floe_loadgen: " << k << ": " << err << "\n";
      return 2;
    }
  }
  rd_kafka_conf_set_dr_msg_cb(conf, OnDelivery);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
  if (rk == nullptr) {
    std::cerr << "floe_loadgen: " << err << "\n";
    return 2;
  }

  std::vector<int64_t> bursts;  // ms, count, ms, count, ...
  const auto start = std::chrono::steady_clock::now();
  int64_t sent = 0;
  while (true) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed >= seconds) break;
    const auto due = static_cast<int64_t>(elapsed * static_cast<double>(rate));
    const int64_t ts = NowMs();
    const int64_t before = sent;
    while (sent < due) {
      const std::string& v = pool[static_cast<size_t>(sent) % pool.size()];
      const rd_kafka_resp_err_t e =
          rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic.c_str()),
                            RD_KAFKA_V_PARTITION(static_cast<int32_t>(sent % partitions)),
                            RD_KAFKA_V_VALUE(const_cast<char*>(v.data()), v.size()),
                            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                            RD_KAFKA_V_TIMESTAMP(ts), RD_KAFKA_V_END);
      if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        rd_kafka_poll(rk, 10);
        continue;
      }
      if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
        std::cerr << "floe_loadgen: produce: " << rd_kafka_err2str(e) << "\n";
        return 1;
      }
      ++sent;
    }
    if (sent > before) {
      bursts.push_back(ts);
      bursts.push_back(sent - before);
    }
    rd_kafka_poll(rk, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rd_kafka_flush(rk, 60000);
  const int left = rd_kafka_outq_len(rk);
  rd_kafka_destroy(rk);
  if (left > 0 || g_failed.load() > 0) {
    std::cerr << "floe_loadgen: " << left << " records unacknowledged, "
              << g_failed.load() << " failed\n";
    return 1;
  }
  std::ofstream out(times_path, std::ios::binary);
  for (int64_t x : bursts) {
    uint8_t b[8];
    for (int k = 0; k < 8; ++k) {
      b[k] = static_cast<uint8_t>(static_cast<uint64_t>(x) >> (8 * k));
    }
    out.write(reinterpret_cast<const char*>(b), 8);
  }
  if (!out.flush()) {
    std::cerr << "floe_loadgen: cannot write " << times_path << "\n";
    return 2;
  }
  std::printf("{\"sent\": %lld, \"seconds\": %.3f}\n", static_cast<long long>(sent),
              wall);
  return 0;
}
