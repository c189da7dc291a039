// Which processes of a launch are standbys (core/launch_env.h): weft-run's
// WEFT_STANDBY=1, or the launcher's last WEFT_STANDBYS processes; a standby
// is refused by weftCommInitFromEnv with the call to make instead, and a
// count that leaves no rank, or one given to weft-run, is refused by name.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <weft/weft.h>

#include <string>
#include <utility>
#include <vector>

#include "single_rank_comm.h"

namespace {

using weft_test::failedWith;

// Sets variables for one test and unsets them after.
class Env {
 public:
  using Vars = std::vector<std::pair<const char*, const char*>>;
  explicit Env(Vars vars) : vars_(std::move(vars)) {
    for (const auto& v : vars_) setenv(v.first, v.second, 1);
  }
  Env(const char* name, const char* value) : Env(Vars{{name, value}}) {}
  ~Env() {
    for (const auto& v : vars_) unsetenv(v.first);
  }

 private:
  Vars vars_;
};

int launchedAsStandby() {
  int standby = -1;
  EXPECT_EQ(weftStandbyLaunched(&standby), weftSuccess) << weftGetLastError(nullptr);
  return standby;
}

TEST(StandbyLaunch, TheLaunchersLastProcessesAreStandbys) {
  Env env({{"WEFT_ROOT_ADDR", "127.0.0.1:1"}, {"SLURM_NTASKS", "5"}, {"WEFT_STANDBYS", "2"}});
  for (const char* rank : {"0", "2"}) {
    Env r("SLURM_PROCID", rank);
    EXPECT_EQ(launchedAsStandby(), 0) << rank;
  }
  for (const char* rank : {"3", "4"}) {
    Env r("SLURM_PROCID", rank);
    EXPECT_EQ(launchedAsStandby(), 1) << rank;
    weftComm_t comm = nullptr;
    EXPECT_TRUE(failedWith(weftCommInitFromEnv(&comm), weftInvalidUsage, "weftStandbyWait"));
    EXPECT_EQ(comm, nullptr);
  }
}

TEST(StandbyLaunch, WeftRunsStandbysSaySo) {
  EXPECT_EQ(launchedAsStandby(), 0);
  Env env("WEFT_STANDBY", "1");
  EXPECT_EQ(launchedAsStandby(), 1);
}

TEST(StandbyLaunch, CountsThatCannotWorkAreRefused) {
  int standby = 0;
  {
    Env env({{"WEFT_ROOT_ADDR", "127.0.0.1:1"},
             {"SLURM_NTASKS", "3"},
             {"SLURM_PROCID", "0"},
             {"WEFT_STANDBYS", "3"}});
    EXPECT_TRUE(
        failedWith(weftStandbyLaunched(&standby), weftInvalidArgument, "WEFT_STANDBYS=3 leaves"));
  }
  {
    Env env({{"WEFT_ROOT_ADDR", "127.0.0.1:1"},
             {"SLURM_NTASKS", "3"},
             {"SLURM_PROCID", "0"},
             {"WEFT_STANDBYS", "many"}});
    EXPECT_TRUE(failedWith(weftStandbyLaunched(&standby), weftInvalidArgument, "WEFT_STANDBYS"));
  }
  {
    weftUniqueId id;
    ASSERT_EQ(weftGetUniqueId(&id), weftSuccess);
    char hex[WEFT_UNIQUE_ID_BYTES * 2 + 1];
    ASSERT_EQ(weftUniqueIdToString(&id, hex, sizeof(hex)), weftSuccess);
    Env env({{"WEFT_UNIQUE_ID", hex},
             {"WEFT_RANK", "0"},
             {"WEFT_WORLD_SIZE", "2"},
             {"WEFT_STANDBYS", "1"}});
    EXPECT_TRUE(failedWith(weftStandbyLaunched(&standby), weftInvalidArgument, "weft-run"));
  }
  EXPECT_TRUE(failedWith(weftStandbyLaunched(nullptr), weftInvalidArgument, "standby"));
}

}  // namespace
