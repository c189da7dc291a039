// JSON records of the perf tools' results (see perf_json.h). Names and values
// never need escaping: they come from fixed tables of type and op names.
#include "perf_json.h"

PerfJsonWriter::~PerfJsonWriter() { Close(); }

bool PerfJsonWriter::Open(const std::string& path, const char* tool, int nranks) {
  file_ = std::fopen(path.c_str(), "w");
  if (file_ == nullptr) return false;
  tool_ = tool;
  nranks_ = nranks;
  records_ = 0;
  std::fprintf(file_, "[");
  return true;
}

void PerfJsonWriter::Add(const PerfResult& result) {
  if (file_ == nullptr) return;
  std::fprintf(file_,
               "%s\n  {\"tool\": \"%s\", \"size\": %zu, \"count\": %zu, \"type\": \"%s\", "
               "\"redop\": \"%s\", \"root\": %d, \"placement\": \"%s\", \"time_us\": %.3f, "
               "\"algbw\": %.6f, \"busbw\": %.6f, \"wrong\": ",
               records_ == 0 ? "" : ",", tool_.c_str(), result.bytes, result.count,
               result.type_name, result.op_name, result.root,
               result.in_place ? "in-place" : "out-of-place", result.time_us, result.algbw,
               result.busbw);
  if (result.wrong < 0) {
    std::fprintf(file_, "null");
  } else {
    std::fprintf(file_, "%lld", static_cast<long long>(result.wrong));
  }
  std::fprintf(file_, ", \"nranks\": %d}", nranks_);
  ++records_;
}

bool PerfJsonWriter::Close() {
  if (file_ == nullptr) return true;
  std::fprintf(file_, "%s]\n", records_ == 0 ? "" : "\n");
  const bool ok = std::ferror(file_) == 0;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  return ok && closed;
}
