// reduce_bench: single-thread throughput of weft's host reduction kernels
// (collectives/reduce_isa.h) for every datatype x op x ISA variant this CPU
// runs, at a cache-resident and a memory-bound size. Prints GB/s of one input
// buffer per second (dst = a op b reads two buffers and writes a third, so
// memory traffic is three times that) and each variant's gain over scalar.
//   reduce_bench [-d type|all] [-o op|all] [-s bytes[,bytes...]] [-t seconds]
#include <getopt.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "collectives/reduce.h"
#include "collectives/reduce_isa.h"

namespace {

struct Options {
  std::vector<weftDataType_t> types;
  std::vector<weftRedOp_t> ops;
  std::vector<size_t> sizes = {256u << 10, 64u << 20};
  double seconds = 0.05;  // minimum timed span per measurement
};

const weftRedOp_t kOps[] = {weftSum, weftProd, weftMax, weftMin};

bool parseSize(const std::string& text, size_t* out) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str()) return false;
  if (*end == 'K' || *end == 'k')
    v <<= 10, ++end;
  else if (*end == 'M' || *end == 'm')
    v <<= 20, ++end;
  else if (*end == 'G' || *end == 'g')
    v <<= 30, ++end;
  if (*end != '\0' || v == 0) return false;
  *out = static_cast<size_t>(v);
  return true;
}

bool parseArgs(int argc, char** argv, Options* o) {
  const char* typeName = "all";
  const char* opName = "all";
  int flag;
  while ((flag = getopt(argc, argv, "d:o:s:t:h")) != -1) {
    switch (flag) {
      case 'd':
        typeName = optarg;
        break;
      case 'o':
        opName = optarg;
        break;
      case 's': {
        o->sizes.clear();
        std::string list = optarg;
        size_t start = 0;
        while (start <= list.size()) {
          const size_t comma = std::min(list.find(',', start), list.size());
          size_t bytes = 0;
          if (!parseSize(list.substr(start, comma - start), &bytes)) return false;
          o->sizes.push_back(bytes);
          start = comma + 1;
        }
        break;
      }
      case 't':
        o->seconds = std::atof(optarg);
        break;
      default:
        return false;
    }
  }
  for (int t = 0; t < weftNumTypes; ++t) {
    const weftDataType_t dt = static_cast<weftDataType_t>(t);
    if (std::strcmp(typeName, "all") == 0 || std::strcmp(typeName, weft::datatypeName(dt)) == 0)
      o->types.push_back(dt);
  }
  for (weftRedOp_t op : kOps) {
    if (std::strcmp(opName, "all") == 0 || std::strcmp(opName, weft::redOpName(op)) == 0)
      o->ops.push_back(op);
  }
  return !o->types.empty() && !o->ops.empty() && o->seconds > 0;
}

// Inputs near 1 of every type (no subnormals, no overflow in a product), so
// that no variant meets slow floating-point assists.
void fill(weftDataType_t dt, std::vector<unsigned char>* buf, unsigned seed) {
  const size_t size = weft::datatypeSize(dt);
  const size_t count = buf->size() / size;
  unsigned x = seed;
  for (size_t i = 0; i < count; ++i) {
    x = x * 1664525u + 1013904223u;
    const unsigned small = (x >> 16) & 0x3F;
    unsigned char* p = buf->data() + i * size;
    switch (dt) {
      case weftFloat32: {
        const float v = 1.0f + static_cast<float>(small) / 64.0f;
        std::memcpy(p, &v, 4);
        break;
      }
      case weftFloat64: {
        const double v = 1.0 + small / 64.0;
        std::memcpy(p, &v, 8);
        break;
      }
      case weftFloat16: {
        const uint16_t v = static_cast<uint16_t>(0x3C00 | small);
        std::memcpy(p, &v, 2);
        break;
      }
      case weftBfloat16: {
        const uint16_t v = static_cast<uint16_t>(0x3F80 | (small & 0x7F));
        std::memcpy(p, &v, 2);
        break;
      }
      default:
        std::memset(p, 0, size);
        p[0] = static_cast<unsigned char>(small);
        break;
    }
  }
}

// Best-of-three GB/s of dst = a op b over `bytes` per buffer.
double measure(weft::ReduceIsa isa, weftDataType_t dt, weftRedOp_t op, unsigned char* dst,
               const unsigned char* a, const unsigned char* b, size_t bytes, double seconds) {
  using Clock = std::chrono::steady_clock;
  const size_t count = bytes / weft::datatypeSize(dt);
  weft::reduceElementsWith(isa, dt, op, dst, a, b, count);  // warm caches and pages
  double best = 0;
  for (int round = 0; round < 3; ++round) {
    size_t calls = 0;
    const Clock::time_point start = Clock::now();
    double elapsed = 0;
    do {
      weft::reduceElementsWith(isa, dt, op, dst, a, b, count);
      ++calls;
      elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    } while (elapsed < seconds / 3);
    best = std::max(best, static_cast<double>(bytes) * static_cast<double>(calls) / elapsed / 1e9);
  }
  return best;
}

std::string sizeText(size_t bytes) {
  char text[32];
  if (bytes % (1u << 20) == 0)
    std::snprintf(text, sizeof(text), "%zuM", bytes >> 20);
  else if (bytes % (1u << 10) == 0)
    std::snprintf(text, sizeof(text), "%zuK", bytes >> 10);
  else
    std::snprintf(text, sizeof(text), "%zu", bytes);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parseArgs(argc, argv, &options)) {
    std::fprintf(stderr,
                 "usage: %s [-d type|all] [-o sum|prod|max|min|all] [-s bytes,...] [-t seconds]\n",
                 argv[0]);
    return 2;
  }
  std::vector<weft::ReduceIsa> isas;
  for (int i = 0; i < weft::kNumReduceIsas; ++i) {
    if (weft::reduceIsaSupported(static_cast<weft::ReduceIsa>(i)))
      isas.push_back(static_cast<weft::ReduceIsa>(i));
  }
  std::printf("# reduce_bench: GB/s of one input buffer (dst = a op b; memory traffic is 3x)\n");
  std::printf("# variants on this CPU:");
  for (weft::ReduceIsa isa : isas) std::printf(" %s", weft::reduceIsaName(isa));
  std::printf(" (WEFT_REDUCE_ISA picks %s)\n", weft::reduceIsaName(weft::reduceIsaActive()));
  std::printf("%-9s %-5s %6s", "type", "op", "size");
  for (weft::ReduceIsa isa : isas) std::printf(" %9s", weft::reduceIsaName(isa));
  for (size_t i = 1; i < isas.size(); ++i)
    std::printf(" %7s", (std::string("x") + weft::reduceIsaName(isas[i])).c_str());
  std::printf("\n");

  for (size_t bytes : options.sizes) {
    std::vector<unsigned char> a(bytes), b(bytes), dst(bytes);
    for (weftDataType_t dt : options.types) {
      fill(dt, &a, 1);
      fill(dt, &b, 2);
      for (weftRedOp_t op : options.ops) {
        std::vector<double> rates;
        for (weft::ReduceIsa isa : isas)
          rates.push_back(
              measure(isa, dt, op, dst.data(), a.data(), b.data(), bytes, options.seconds));
        std::printf("%-9s %-5s %6s", weft::datatypeName(dt), weft::redOpName(op),
                    sizeText(bytes).c_str());
        for (double r : rates) std::printf(" %9.2f", r);
        for (size_t i = 1; i < rates.size(); ++i) std::printf(" %6.1fx", rates[i] / rates[0]);
        std::printf("\n");
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
