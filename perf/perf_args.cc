// Parsing of the perf tools' command line (nccl-tests flags; see perf_args.h).
#include "perf_args.h"

#include <getopt.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "perf_datatype.h"

namespace {

bool ParseInt(const char* text, int min_value, int max_value, int* value) {
  char* end = nullptr;
  errno = 0;
  long parsed = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0') return false;
  if (parsed < min_value || parsed > max_value) return false;
  *value = static_cast<int>(parsed);
  return true;
}

bool ParseTypes(const char* text, std::vector<weftDataType_t>* types) {
  types->clear();
  if (std::strcmp(text, "all") == 0) {
    for (const PerfTypeInfo& info : PerfAllTypes()) {
      if (info.library_supports) types->push_back(info.type);
    }
    return true;
  }
  const PerfTypeInfo* info = PerfFindType(text);
  if (info == nullptr) return false;
  types->push_back(info->type);
  return true;
}

bool ParseOps(const char* text, std::vector<weftRedOp_t>* ops) {
  ops->clear();
  if (std::strcmp(text, "all") == 0) {
    for (const PerfOpInfo& info : PerfAllOps()) {
      if (info.library_supports) ops->push_back(info.op);
    }
    return true;
  }
  const PerfOpInfo* info = PerfFindOp(text);
  if (info == nullptr) return false;
  ops->push_back(info->op);
  return true;
}

const option kLongOptions[] = {
    {"minbytes", required_argument, nullptr, 'b'},
    {"maxbytes", required_argument, nullptr, 'e'},
    {"stepfactor", required_argument, nullptr, 'f'},
    {"stepbytes", required_argument, nullptr, 'i'},
    {"warmup_iters", required_argument, nullptr, 'w'},
    {"iters", required_argument, nullptr, 'n'},
    {"check", required_argument, nullptr, 'c'},
    {"datatype", required_argument, nullptr, 'd'},
    {"op", required_argument, nullptr, 'o'},
    {"average", required_argument, nullptr, 'a'},
    {"root", required_argument, nullptr, 'r'},
    {"output_file", required_argument, nullptr, 'J'},
    {"nonblocking", required_argument, nullptr, 'z'},
    {"registered", required_argument, nullptr, 'R'},
    {"device", required_argument, nullptr, 'D'},
    {"nthreads", required_argument, nullptr, 't'},
    {"ngpus", required_argument, nullptr, 'g'},
    {"agg_iters", required_argument, nullptr, 'm'},
    {"run_cycles", required_argument, nullptr, 'N'},
    {"parallel_init", required_argument, nullptr, 'p'},
    {"help", no_argument, nullptr, 'h'},
    {nullptr, 0, nullptr, 0},
};

std::string JoinArgs(int argc, char** argv) {
  std::string joined;
  for (int i = 1; i < argc; ++i) {
    if (i > 1) joined += ' ';
    joined += argv[i];
  }
  return joined;
}

}  // namespace

bool PerfParseBytes(const char* text, size_t* bytes) {
  char* end = nullptr;
  errno = 0;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text || text[0] == '-') return false;
  unsigned shift = 0;
  switch (*end) {
    case '\0':
      break;
    case 'k':
    case 'K':
      shift = 10;
      break;
    case 'm':
    case 'M':
      shift = 20;
      break;
    case 'g':
    case 'G':
      shift = 30;
      break;
    default:
      return false;
  }
  if (*end != '\0' && end[1] != '\0') return false;
  if (value > (std::numeric_limits<size_t>::max() >> shift)) return false;
  *bytes = static_cast<size_t>(value) << shift;
  return true;
}

bool PerfParseArgs(int argc, char** argv, PerfArgs* args, std::string* error) {
  bool factor_given = false;
  bool step_given = false;
  int flag = 0;
  args->command_line = JoinArgs(argc, argv);
  optind = 1;
  opterr = 0;
  while ((flag = getopt_long(argc, argv, ":b:e:f:i:w:n:c:d:o:a:r:J:z:R:D:t:g:m:N:p:h", kLongOptions,
                             nullptr)) != -1) {
    const char* value = optarg;
    bool ok = true;
    int number = 0;
    switch (flag) {
      case 'b':
        ok = PerfParseBytes(value, &args->min_bytes);
        break;
      case 'e':
        ok = PerfParseBytes(value, &args->max_bytes);
        break;
      case 'i':
        ok = PerfParseBytes(value, &args->step_bytes) && args->step_bytes > 0;
        step_given = true;
        break;
      case 'f':
        ok = ParseInt(value, 1, 1 << 20, &number);
        args->step_factor = static_cast<size_t>(number);
        factor_given = true;
        break;
      case 'w':
        ok = ParseInt(value, 0, 1 << 30, &args->warmup_iters);
        break;
      case 'n':
        ok = ParseInt(value, 1, 1 << 30, &args->iters);
        break;
      case 'c':
        ok = ParseInt(value, 0, 1, &number);
        args->check = number != 0;
        break;
      case 'd':
        ok = ParseTypes(value, &args->types);
        break;
      case 'o':
        ok = ParseOps(value, &args->ops);
        break;
      case 'a':
        ok = ParseInt(value, 0, 3, &number);
        args->average = static_cast<PerfAverage>(number);
        break;
      case 'r':
        ok = ParseInt(value, 0, 1 << 30, &args->root);
        break;
      case 'J':
        args->json_path = value;
        ok = !args->json_path.empty();
        break;
      case 'z':
        ok = ParseInt(value, 0, 1, &number);
        args->nonblocking = number != 0;
        break;
      case 'R':
        ok = ParseInt(value, 0, 1, &number);
        args->registered = number != 0;
        break;
      case 'D':
        ok = ParseInt(value, 0, 1, &number);
        args->device = number != 0;
        break;
      case 't':
        ok = ParseInt(value, 1, 1024, &args->nthreads);
        break;
      case 'g':
        ok = ParseInt(value, 1, 1024, &args->ngpus);
        break;
      case 'm':
        ok = ParseInt(value, 1, 1 << 20, &args->agg_iters);
        break;
      case 'N':
        ok = ParseInt(value, 0, 1 << 30, &args->run_cycles);
        break;
      case 'p':
        ok = ParseInt(value, 0, 1, &number);
        args->parallel_init = number != 0;
        break;
      case 'h':
        args->help = true;
        return true;
      case ':':
        *error = std::string("option ") + argv[optind - 1] + " needs a value";
        return false;
      default:
        *error = std::string("unknown option ") + argv[optind - 1];
        return false;
    }
    if (!ok) {
      *error = std::string("bad value '") + value + "' for -" + static_cast<char>(flag);
      return false;
    }
  }
  if (optind < argc) {
    *error = std::string("unexpected argument '") + argv[optind] + "'";
    return false;
  }
  if (step_given && !factor_given) args->step_factor = 1;
  if (args->min_bytes > args->max_bytes) {
    *error = "minbytes (-b) is larger than maxbytes (-e)";
    return false;
  }
  if (PerfRanksPerProcess(*args) > 1024) {
    *error = "-t x -g asks for more than 1024 ranks in one process";
    return false;
  }
  if (args->device && PerfRanksPerProcess(*args) > 1) {
    *error =
        "device buffers (-D 1) run one rank per process: start one process per GPU "
        "(weft-run -n N or mpirun) instead of -t or -g above 1";
    return false;
  }
  if (args->nonblocking && args->agg_iters > 1) {
    *error = "-m above 1 groups blocking calls (weftGroupStart/End); it does not go with -z 1";
    return false;
  }
  if (args->device && (args->nonblocking || args->registered)) {
    *error = "device buffers (-D 1) go with neither -z 1 nor -R 1 (calls on a stream never block)";
    return false;
  }
  return true;
}

std::vector<size_t> PerfSizeList(const PerfArgs& args) {
  std::vector<size_t> sizes;
  size_t size = args.min_bytes;
  while (size <= args.max_bytes) {
    sizes.push_back(size);
    size_t next = 0;
    if (args.step_factor > 1) {
      if (size == 0) {
        next = 1;
      } else if (size > std::numeric_limits<size_t>::max() / args.step_factor) {
        break;
      } else {
        next = size * args.step_factor;
      }
    } else {
      if (size > std::numeric_limits<size_t>::max() - args.step_bytes) break;
      next = size + args.step_bytes;
    }
    size = next;
  }
  return sizes;
}

const char* PerfAverageName(PerfAverage average) {
  switch (average) {
    case PerfAverage::kRank0:
      return "rank0";
    case PerfAverage::kMean:
      return "avg";
    case PerfAverage::kMin:
      return "min";
    case PerfAverage::kMax:
      return "max";
  }
  return "?";
}

void PerfPrintUsage(FILE* out, const char* prog) {
  std::fprintf(out,
               "usage: %s [options]\n"
               "  -b, --minbytes <bytes>      smallest size (K/M/G = 1024-based). Default 32M\n"
               "  -e, --maxbytes <bytes>      largest size. Default 32M\n"
               "  -f, --stepfactor <n>        multiply the size by n each step. Default 2\n"
               "  -i, --stepbytes <bytes>     add this each step (when -f is not given). "
               "Default 1M\n"
               "  -w, --warmup_iters <n>      untimed calls per size. Default 5\n"
               "  -n, --iters <n>             timed calls per size. Default 20\n"
               "  -c, --check <0/1>           check results after timing. Default 1\n"
               "  -d, --datatype <type|all>   int8 uint8 int32 uint32 int64 uint64 half float\n"
               "                              double bfloat16. Default float\n"
               "  -o, --op <op|all>           sum prod max min avg band bor bxor\n"
               "                              (the last three: integer types). Default sum\n"
               "  -a, --average <0/1/2/3>     time across ranks: 0 rank0, 1 avg, 2 min, 3 max. "
               "Default 1\n"
               "  -r, --root <rank>           root of broadcast and reduce. Default 0\n"
               "  -J, --output_file <file>    also write the results as JSON\n"
               "  -z, --nonblocking <0/1>     use the *Async + weftWait forms. Default 0\n"
               "  -R, --registered <0/1>      1: buffers from weftHostAlloc, which the ranks of\n"
               "                              a node map into each other. Default 0\n"
               "  -D, --device <0/1>          1: buffers from cudaMalloc, every call on one CUDA\n"
               "                              stream, timed to its completion. Default 0\n"
               "  -t, --nthreads <n>          ranks per process, one thread each. Default 1\n"
               "  -g, --ngpus <n>             ranks per thread in nccl-tests; here -t x -g ranks\n"
               "                              per process, one thread each (host buffers). "
               "Default 1\n"
               "  -m, --agg_iters <n>         calls per timed iteration, grouped in one\n"
               "                              weftGroupStart/End. Default 1\n"
               "  -N, --run_cycles <n>        run the sweep n times, 0 = until killed. Default 1\n"
               "  -p, --parallel_init <0/1>   accepted for nccl-tests scripts: a process's ranks\n"
               "                              always join in parallel\n"
               "  -h, --help                  this text\n"
               "Launch with weft-run -n N, mpirun (MPI builds), torchrun-style environment\n"
               "(RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), or alone for one rank.\n",
               prog);
}
